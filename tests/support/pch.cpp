// SPDX-License-Identifier: MIT
// The target lab_test_pch compiles the tests' precompiled header (tests/CMakeLists.txt);
// a library needs a source file, and this empty one is it.
