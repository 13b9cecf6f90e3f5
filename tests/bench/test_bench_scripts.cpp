// SPDX-License-Identifier: MIT
// The benchmark scripts (bench/*.sh) on the rxe device: a measured program
// that fails leaves its row without a figure ("n/a") and says so, instead of
// ending ./lab bench without a word.
#include <string>

#include "support/catch.hpp"
#include "support/process.hpp"

using lab::test::run;
using namespace std::chrono_literals;

TEST_CASE("bench/ex04_throughput.sh: a program that fails gives n/a rows and says why", "[bench]") {
    // ib_send_bw still runs, once per size; the program measured is /bin/false.
    const auto result = run({"/usr/bin/env", "BENCH_EX04_PROGRAM=/bin/false", "BENCH_REPS=1",
                             LAB_SOURCE_DIR "/bench/ex04_throughput.sh", LAB_BUILD_DIR},
                            240s);
    INFO("stdout: " << result.out << "\nstderr: " << result.err);
    CHECK(result.exit_code == 1);
    for (const std::string size : {"64B", "1024B", "4096B"}) {
        CHECK(result.out.find("ex04_send_bw_" + size + " - ") != std::string::npos);
    }
    CHECK(result.out.find(" n/a\n") != std::string::npos);
    CHECK(result.err.find("bench/ex04: false failed") != std::string::npos);
    CHECK(result.err.find("nothing measured") != std::string::npos);
}
