#!/bin/sh
# Doxygen input filter for the Markdown pages (FILTER_PATTERNS in docs/Doxyfile).
# The READMEs link files by their place in the repository, which reads well
# on a forge; in the built documentation (a flat html/ folder):
#  - a slide deck, e.g. (../../slides/01_devices.md), becomes the rendered deck:
#    ./lab slides writes build/site/slides/NAME.html next to build/site/docs/html/
#    (Doxygen would otherwise look for a page of that name, and fail);
#  - a diagram, e.g. (../../docs/diagrams/qp_states.svg), becomes its bare name,
#    which Doxygen finds in IMAGE_PATH and copies next to the pages;
#  - an inline code span that starts with "::" (an IPv4-mapped GID such as
#    `::ffff:a.b.c.d`) gets an invisible joiner between the colons: Doxygen
#    would take "::ffff" for a link to a symbol and warn.
# shellcheck disable=SC2016 # the backquotes are literal Markdown, not commands
exec sed -E \
    -e 's#\]\(([^)]*/)?slides/([0-9A-Za-z_]+)\.md\)#](../../slides/\2.html)#g' \
    -e 's#\]\(([^)]*/)?docs/diagrams/([0-9A-Za-z_]+\.svg)\)#](\2)#g' \
    -e 's#`::#`:\&zwj;:#g' \
    "$1"
