// SPDX-License-Identifier: MIT
/**
 * @file catch.hpp
 * @brief Include this, not Catch2 directly: it works with Catch2 v2 and v3.
 */
#pragma once

#if LAB_CATCH_VERSION >= 3
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#else
#include <catch2/catch.hpp>
#endif
