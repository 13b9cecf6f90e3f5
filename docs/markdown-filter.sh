#!/bin/sh
# Doxygen input filter for the Markdown pages (FILTER_PATTERNS in docs/Doxyfile).
# A README links a slide deck by its source, e.g. (../../slides/01_devices.md),
# which reads well on a forge; in the built documentation the link goes to the
# rendered deck instead: ./lab slides writes build/site/slides/NAME.html next to
# build/site/docs/html/. (Doxygen would otherwise look for a page of that name.)
exec sed -E 's#\]\(([^)]*/)?slides/([0-9A-Za-z_]+)\.md\)#](../../slides/\2.html)#g' "$1"
