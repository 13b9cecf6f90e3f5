# SPDX-License-Identifier: MIT
# Tests of the slides and the reference documentation (label docs). The drift
# test and the Doxygen check need no npm, Chromium or network; the
# slides_layout tests install what they need on first use.

# Code quoted on the slides still appears in the lessons it quotes (the drift
# check), and every image a deck shows exists.
lab_add_test(test_slide_code docs/test_slide_code.cpp
  LABELS docs unit TIMEOUT 30)

# Every lesson's README is a core of seven sections (at most 1,500 words of
# prose) with its self-check answers folded under the questions, then Deeper
# sections; and no page a student reads points at the instructor's material.
lab_add_test(test_docs_pages docs/test_docs_pages.cpp
  LABELS docs unit TIMEOUT 30)

# Every term is defined where it is first used: the first lesson README to
# use a glossary term the test watches (the headers on the wire, RETH, ImmDt,
# ..., and abbreviations such as PSN or RNR) defines it there or links its
# row in docs/glossary.md. Proved first on made-up READMEs.
lab_add_test(test_terms docs/test_terms.cpp
  LABELS docs unit TIMEOUT 30)

# Every public declaration in common/ has a Doxygen comment (warnings are
# errors); skipped where doxygen is not installed. It needs no device: label
# host runs it at native speed on the build host (in the release's userland
# with --distro), not in the emulated micro-VM, where the whole site took
# ten times as long.
add_test(NAME docs_doxygen_common
  COMMAND "${CMAKE_CURRENT_SOURCE_DIR}/docs/check_doxygen.sh"
          "${PROJECT_SOURCE_DIR}" "${CMAKE_CURRENT_BINARY_DIR}/doxygen-check")
set_tests_properties(docs_doxygen_common PROPERTIES
  LABELS "docs;host" TIMEOUT 600 SKIP_RETURN_CODE 77)

# The layout of the rendered slides, measured in a headless Chromium: no
# content over a slide's frame or on its footer, no text smaller than the
# footer (16 px or more). The first run installs Chromium (apt) and Marp with
# playwright-core (npm ci). Label host: ./lab test runs them on the build host.
# slides_layout_fixture proves the check catches each kind of broken slide.
foreach(mode IN ITEMS fixture decks)
  add_test(NAME slides_layout_${mode}
    COMMAND "${CMAKE_CURRENT_SOURCE_DIR}/docs/check_slides.sh" ${mode}
            "${PROJECT_SOURCE_DIR}" "${CMAKE_CURRENT_BINARY_DIR}/slides-${mode}")
  set_tests_properties(slides_layout_${mode} PROPERTIES
    LABELS "docs;slides;host" TIMEOUT 900 SKIP_RETURN_CODE 77 RESOURCE_LOCK slides_npm)
endforeach()

# The Chinese edition (docs/translating.md): docs/twins.md lists every page
# that needs a Chinese twin; a translated page must not drift from its English
# twin (headings, code without comments, links and anchors, tables, the twin
# links at the top), and every Chinese page uses the terms of
# docs/glossary.md. Each check is first proved on small fixtures.
lab_add_test(test_translation docs/test_translation.cpp
  LABELS docs unit TIMEOUT 60)
