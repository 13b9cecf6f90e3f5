#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every public declaration of common/lab has a brief description: the first
# sentence of its comment, which Doxygen shows in every list of members (a
# comment of only @param lines leaves the lists blank). Runs Doxygen with XML
# output over the headers and reads the XML.
#
#   docs/check_briefs.sh HEADER_DIR WORK_DIR
#
# Exits 1 and lists the declarations without one.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
headers=$(cd "$1" && pwd)
work=$2
mkdir -p "$work"
{
    cat "$repo/docs/Doxyfile"
    echo "GENERATE_XML = YES"
    echo "GENERATE_HTML = NO"
    echo "WARN_AS_ERROR = NO"
    echo "WARNINGS = NO"
} >"$work/Doxyfile"
(cd "$repo" && LAB_DOCS_OUT="$work" LAB_DOCS_INPUT="$headers" LAB_DOCS_MAINPAGE="" \
    doxygen "$work/Doxyfile" >/dev/null 2>&1)
# A declaration is a <memberdef> (function, variable, type, enum value) or a
# <compounddef> of a class or struct; public ones only.
missing=$(awk '
    function check(what) { if (brief !~ /<para>/) print FILENAME ": " what }
    /<compounddef / {
        compound = ($0 ~ /kind="(class|struct|union)"/); cname = ""; cbrief = ""; in_cbrief = 0
    }
    /<compoundname>/ { cname = $0; gsub(/.*<compoundname>|<\/compoundname>.*/, "", cname) }
    /<memberdef / {
        member = 1; public = ($0 ~ /prot="public"/); mname = ""; args = ""; brief = ""; in_brief = 0; seen = 0
        next
    }
    /<\/memberdef>/ { member = 0; next }
    member && mname == "" && /<name>/ { mname = $0; gsub(/.*<name>|<\/name>.*/, "", mname) }
    member && /<argsstring>/ { args = $0 }
    member && !seen && /<briefdescription>/ { in_brief = 1 }
    member && in_brief { brief = brief $0 }
    member && in_brief && /<\/briefdescription>/ {
        in_brief = 0; seen = 1
        # Deleted and defaulted special members need no words of their own.
        if (public && args !~ /=( )?(delete|default)/) check(mname)
    }
    !member && compound && /<briefdescription>/ { in_cbrief = 1; cbrief = "" }
    !member && compound && in_cbrief { cbrief = cbrief $0 }
    !member && compound && in_cbrief && /<\/briefdescription>/ {
        in_cbrief = 0; compound = 0
        if (cbrief !~ /<para>/) print FILENAME ": " cname
    }
' "$work"/xml/*.xml | sed "s#^$work/xml/##" | sort -u)
if [ -n "$missing" ]; then
    echo "These public declarations have no brief description (start their comment with a sentence):"
    echo "$missing"
    exit 1
fi
echo "every public declaration in $1 has a brief description"
