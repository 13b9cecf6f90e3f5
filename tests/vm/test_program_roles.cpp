// SPDX-License-Identifier: MIT
// Whether a program runs as a server and a client is declared once, in the
// build (the target property LAB_SERVER_CLIENT, written to programs.tsv), and
// read by ./lab run, vm/two-hosts.sh and docker/class through
// vm/program-role.sh. These checks keep that declaration true: a program is
// listed as a server and a client exactly when its command line takes the
// SERVER argument.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/process.hpp"

using lab::test::run;

namespace {

struct Listed {
    std::string target, role, file;
};

std::vector<Listed> listed_programs() {
    std::ifstream list(LAB_BUILD_DIR "/programs.tsv");
    REQUIRE(list.good());
    std::vector<Listed> programs;
    std::string line;
    while (std::getline(list, line)) {
        std::istringstream fields(line);
        Listed entry;
        std::getline(fields, entry.target, '\t');
        std::getline(fields, entry.role, '\t');
        std::getline(fields, entry.file, '\t');
        programs.push_back(entry);
    }
    return programs;
}

const std::string kRoleScript = LAB_SOURCE_DIR "/vm/program-role.sh";

}  // namespace

TEST_CASE("programs.tsv lists every lesson, with the role its command line has", "[unit]") {
    const auto programs = listed_programs();
    int lessons = 0;
    int pairs = 0;
    for (const auto& program : programs) {
        INFO(program.target);
        CHECK((program.role == "server-client" || program.role == "one-process"));
        if (program.file.find("/lessons/") == std::string::npos) {
            continue;  // exercises and solutions: built only when asked for, so --help may not run
        }
        ++lessons;
        const auto help = run({program.file, "--help"});
        REQUIRE(help.exit_code == 0);
        const bool takes_server = help.out.find("SERVER") != std::string::npos;
        CHECK(takes_server == (program.role == "server-client"));
        pairs += program.role == "server-client" ? 1 : 0;
    }
    CHECK(lessons >= 12);
    CHECK(pairs >= 8);  // lessons 05 to 12
}

TEST_CASE("vm/program-role.sh answers from programs.tsv", "[unit]") {
    const auto pair = run({kRoleScript, LAB_BUILD_DIR "/lessons/06_send_recv/06_send_recv"});
    CHECK(pair.exit_code == 0);
    CHECK(pair.out == "server-client\n");
    const auto single = run({kRoleScript, LAB_BUILD_DIR "/lessons/01_devices/01_devices"});
    CHECK(single.exit_code == 0);
    CHECK(single.out == "one-process\n");
    const auto unknown = run({kRoleScript, LAB_BUILD_DIR "/no-such-program"});
    CHECK(unknown.exit_code == 1);
    CHECK(unknown.out.empty());
}
