// The grading scripts: grading/run-checks.sh runs a check program check by
// check, records each result and never waits forever; grading/grade.sh
// refuses bad input with one clear line.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/catch.hpp"
#include "support/process.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kRunChecks = std::string(LAB_SOURCE_DIR) + "/grading/run-checks.sh";
const std::string kGrade = std::string(LAB_SOURCE_DIR) + "/grading/grade.sh";

std::string read_text(const fs::path& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

// A fresh folder under the build tree (the micro-VM can write there).
fs::path scratch(const std::string& name) {
    const fs::path path = fs::path(LAB_BUILD_DIR) / "tests" / "grading-scratch" / name;
    fs::remove_all(path);
    fs::create_directories(path);
    return path;
}

}  // namespace

TEST_CASE("run-checks.sh runs every check of the skeleton and names its TODOs", "[grading][rxe]") {
    const fs::path out = scratch("skeleton");
    const std::string checks = lab::test::program("tests/check_ex01_noncontiguous_sge");
    const auto result = lab::test::run({kRunChecks, out.string(), "01_noncontiguous_sge=" + checks},
                                       std::chrono::seconds(400));
    INFO(result.out << result.err);
    REQUIRE_FALSE(result.timed_out);
    CHECK(result.exit_code == 0);
    const std::string results = read_text(out / "01_noncontiguous_sge" / "results.tsv");
    INFO(results);
    CHECK(lab::test::lines(results).size() >= 10);
    CHECK(results.find("pass\tvalidate_layout rejects layouts that cannot work") !=
          std::string::npos);
    CHECK(results.find("fail\tgather_write: zero-copy, every layout byte-exact\tTODO: "
                       "gather_write is not written yet") != std::string::npos);
    CHECK(result.out.find("  FAIL  scatter_read") != std::string::npos);
    CHECK(fs::file_size(out / "01_noncontiguous_sge" / "check-1.xml") > 0);
    // Catch2 reports an unexpected exception as <error>, a failed CHECK as <failure>.
    const std::string report = read_text(out / "01_noncontiguous_sge" / "check-2.xml");
    CHECK(report.find("TODO: block_sges is not written yet") != std::string::npos);
}

TEST_CASE("run-checks.sh stops a check that hangs and a program that crashes",
          "[grading][bad-input]") {
    const fs::path out = scratch("hang");
    // A stand-in for a check program: one check, which never finishes.
    const fs::path hangs = out / "hangs.sh";
    std::ofstream(hangs)
        << "#!/bin/sh\n"
           "[ \"$1\" = --list-test-names-only ] && { echo 'waits forever'; exit 1; }\n"
           "exec sleep 600\n";
    fs::permissions(hangs, fs::perms::owner_all);
    const fs::path crashes = out / "crashes.sh";
    std::ofstream(crashes) << "#!/bin/sh\nkill -SEGV $$\n";
    fs::permissions(crashes, fs::perms::owner_all);

    const auto result =
        lab::test::run({"/usr/bin/env", "RDMA_LAB_CHECK_TIMEOUT=2", kRunChecks, out.string(),
                        "01_a=" + hangs.string(), "02_b=" + crashes.string()},
                       std::chrono::seconds(60));
    INFO(result.out << result.err);
    REQUIRE_FALSE(result.timed_out);
    CHECK(result.exit_code == 0);
    CHECK(read_text(out / "01_a" / "results.tsv")
              .rfind("timeout\twaits forever\tno result within 2 s", 0) == 0);
    CHECK(read_text(out / "02_b" / "results.tsv").find("crashes on start") != std::string::npos);
}

TEST_CASE("grade.sh refuses bad input with one line", "[grading][bad-input]") {
    struct Case {
        std::vector<std::string> args;
        std::string expected;
    };
    const std::vector<Case> cases = {
        {{"/no/such/folder"}, "'/no/such/folder' is not a folder"},
        {{"--bogus"}, "unknown option '--bogus'"},
        {{"--junit"}, "--junit needs a file name"},
        {{".", "."}, "one folder only"},
    };
    for (const auto& test_case : cases) {
        std::vector<std::string> argv = {kGrade};
        argv.insert(argv.end(), test_case.args.begin(), test_case.args.end());
        const auto result = lab::test::run(argv, std::chrono::seconds(20));
        INFO(result.err);
        CHECK(result.exit_code == 2);
        CHECK(result.err.find(test_case.expected) != std::string::npos);
        CHECK(lab::test::lines(result.err).size() == 1);
    }
}
