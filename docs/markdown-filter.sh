#!/usr/bin/env bash
# Doxygen input filter for the Markdown pages (FILTER_PATTERNS in docs/Doxyfile).
# The READMEs link files by their place in the repository, which reads well
# on a forge; in the built documentation (a flat html/ folder):
#  - a slide deck, e.g. [slides/01_devices.md](../../slides/01_devices.md),
#    becomes the rendered deck, labelled as such: ./lab slides writes
#    build/site/slides/NAME.html next to build/site/docs/html/ (Doxygen would
#    otherwise look for a page of that name, and fail);
#  - a diagram, e.g. (../../docs/diagrams/qp_states.svg), becomes its bare name,
#    which Doxygen finds in IMAGE_PATH and copies next to the pages;
#  - a lesson's README, e.g. (lessons/05_exchange/README.md#addressing), becomes
#    the lesson's page, lesson_05_exchange.html#addressing (the page label
#    given below): Doxygen 1.9.8 cannot resolve the file's path once the page
#    has a label, and 1.9.4 left links with an anchor pointing at the .md file;
#  - an inline code span that starts with "::" (an IPv4-mapped GID such as
#    `::ffff:a.b.c.d`) gets an invisible joiner between the colons: Doxygen
#    would take "::ffff" for a link to a symbol and warn.
# Generated from the sources, so that they cannot go stale:
#  - a lesson's README gets the page name lesson_NN_name, and a closing
#    section that links the headers of common/ its main.cpp includes
#    (docs/course_map.sh; the header pages link back, docs/header-filter.sh);
#  - the line "<!-- the decks -->" of docs/slides.md becomes the list of every
#    deck in slides/, with the cheat sheet.
# shellcheck disable=SC2016 # the backquotes are literal Markdown, not commands
set -euo pipefail
file=$1
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lesson=
case "$file" in
*lessons/[0-9][0-9]_*/README.md)
    lesson=$(basename "$(dirname "$file")")
    ;;
esac

rewrite() {
    sed -E \
        -e 's#\[([^]]*/)?slides/([0-9A-Za-z_]+)\.md\]\(#[the slides, \2.html](#g' \
        -e 's#\]\(([^)]*/)?slides/([0-9A-Za-z_]+)\.md\)#](../../slides/\2.html)#g' \
        -e 's#\]\(([^)]*/)?docs/diagrams/([0-9A-Za-z_]+\.svg)\)#](\2)#g' \
        -e 's|\]\(([^)]*/)?lessons/([0-9][0-9]_[0-9A-Za-z_]+)/README\.md(#[^)]*)?\)|](lesson_\2.html\3)|g' \
        -e 's#`::#`:\&zwj;:#g'
}

deck_list() {
    local deck name title
    for deck in "$repo"/slides/[0-9]*.md "$repo"/slides/ex[0-9]*.md; do
        [ -f "$deck" ] || continue
        name=$(basename "$deck" .md)
        title=$(sed -n 's/^title: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$deck" | head -n 1)
        echo "- [${title:-$name}](../../slides/$name.html) ([PDF](../../slides/$name.pdf), [handout](../../slides/$name-handout.pdf))"
    done
    echo "- [The verbs cheat sheet](../../slides/cheatsheet.pdf) (one page, PDF; also as a page here: @ref cheatsheet)"
}

{
    if [ -n "$lesson" ]; then
        # The page name: the first heading gets {#lesson_NN_name} unless it has one.
        awk -v label="lesson_$lesson" 'done == 0 && /^# / { if ($0 !~ /\{#/) $0 = $0 " {#" label "}"; done = 1 } { print }' "$file"
        echo
        echo "## The course library in this lesson"
        echo
        echo "The headers of \`common/\` that \`main.cpp\` includes (each page says which lesson taught it):"
        echo
        "$repo/docs/course_map.sh" headers "$lesson" | while read -r header; do
            echo "- @ref $header \"lab/$header\""
        done
    elif [ "$(basename "$file")" = slides.md ] && [ "$(basename "$(dirname "$file")")" = docs ]; then
        while IFS= read -r line; do
            if [ "$line" = '<!-- the decks -->' ]; then deck_list; else printf '%s\n' "$line"; fi
        done <"$file"
    else
        cat "$file"
    fi
} | rewrite
