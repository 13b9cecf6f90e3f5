// SPDX-License-Identifier: MIT
// The instructor's own check of exercise 06, kept out of the student edition
// (./lab export --student). It is part of check_06_recover_qp.cpp (included
// at its end, so it uses that file's helpers): ./lab test runs it against the
// solution, ./lab grade --class and the Gradescope package against every
// submission. Worth what grading/points.conf gives "hidden:*".

// PSNs at the ends of their 24 bits, where a PSN kept in the wrong type or
// not masked shows.
TEST_CASE("hidden: recover_qp with new PSNs at the ends of their range", "[ex06][hidden]") {
    recover_with_psns(0x000001, 0xfffff0);
}
