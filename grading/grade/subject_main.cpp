#include "subject_main.hpp"

#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdio>
#include <exception>
#include <new>

#include "lab/check.hpp"
#include "lab/device.hpp"

namespace lab::grade {

namespace {

constexpr int kChannelFd = 3;

std::string hex_of(const ibv_gid& gid) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string text;
    for (const std::uint8_t byte : gid.raw) {
        text += kDigits[byte >> 4];
        text += kDigits[byte & 15];
    }
    return text;
}

ibv_gid gid_of(const std::string& text) {
    if (text.size() != 32) {
        throw lab::Error("a GID field must have 32 hex digits");
    }
    ibv_gid gid{};
    for (std::size_t i = 0; i < 16; ++i) {
        gid.raw[i] = static_cast<std::uint8_t>(std::stoul(text.substr(2 * i, 2), nullptr, 16));
    }
    return gid;
}

}  // namespace

Message Link::receive() {
    auto message = channel_.receive(std::chrono::minutes(1));
    if (!message) {
        throw lab::Error("the check sent nothing for a minute");
    }
    return *message;
}

Message Link::expect(std::string_view name) {
    Message message = receive();
    if (message.name() != name) {
        throw lab::Error("the check sent '" + message.name() + "', expected '" + std::string(name) +
                         "'");
    }
    return message;
}

Message& add_address(Message& message, const lab::PeerAddress& address) {
    return message.add(address.qp_num).add(address.psn).add(address.lid).add(hex_of(address.gid));
}

lab::PeerAddress address_from(const Message& message, std::size_t first) {
    lab::PeerAddress address;
    address.qp_num = static_cast<std::uint32_t>(message.number(first));
    address.psn = static_cast<std::uint32_t>(message.number(first + 1));
    address.lid = static_cast<std::uint16_t>(message.number(first + 2));
    address.gid = gid_of(message.text(first + 3));
    return address;
}

void connect_to_check(Link& link, ibv_qp* qp, const lab::LocalPort& local, const ibv_gid& gid,
                      int access) {
    const lab::PeerAddress ours{qp->qp_num, lab::random_psn(), 0, gid};
    Message message{"address"};
    link.send(add_address(message, ours));
    const lab::PeerAddress theirs = address_from(link.expect("address"), 1);
    lab::move_to_init(qp, local.port, access);
    lab::move_to_rtr(qp, local, theirs);
    lab::move_to_rts(qp, ours.psn);
}

int subject_main(int argc, char** argv, const Scenarios& scenarios) {
    struct stat channel_stat {};
    if (argc != 2 || ::fstat(kChannelFd, &channel_stat) != 0 || !S_ISSOCK(channel_stat.st_mode)) {
        std::fprintf(stderr,
                     "error: this program is your exercise built for grading; the checks start it "
                     "(./lab grade). Run your exercise with ./lab run instead.\n");
        return 2;
    }
    const auto scenario = scenarios.find(argv[1]);
    if (scenario == scenarios.end()) {
        std::fprintf(stderr, "error: no scenario '%s' in this program\n", argv[1]);
        return 2;
    }
    Link link(kChannelFd);
    const auto report_error = [&link](const std::string& text) {
        try {
            link.send({"error", text});
        } catch (...) {  // the check is gone: nobody to tell
        }
        return 1;
    };
    try {
        link.send({"hello", scenario->first});
        scenario->second(link);
        link.send({"done"});
        return 0;
    } catch (const ChannelClosed&) {
        return 3;  // the check is gone: nobody to tell
    } catch (const std::bad_alloc&) {
        return report_error("out of memory (std::bad_alloc)");
    } catch (const std::exception& error) {
        return report_error(error.what());
    } catch (...) {
        return report_error("an exception that is not a std::exception");
    }
}

}  // namespace lab::grade
