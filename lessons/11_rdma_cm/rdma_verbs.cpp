// SPDX-License-Identifier: MIT
// Lesson 11, variant: the same kind of connection with librdmacm's own data
// path, the helpers of <rdma/rdma_verbs.h>, next to the verbs main.cpp uses.
//
// main.cpp reacts to every CM event itself and posts with ibv_post_send /
// ibv_poll_cq. Here rdma_create_ep does steps 1-7 in one call (device, PD, CQs
// and a QP for the id), the id is synchronous (each rdma_cm call returns once
// its event has come), and four calls replace the verbs of step 9:
//   rdma_post_recv / rdma_post_send       build one SGE and call ibv_post_recv / ibv_post_send
//   rdma_get_recv_comp / rdma_get_send_comp   wait on the id's CQ for one completion
// What that costs: the waits have no timeout (ibv_get_cq_event blocks), so this
// program arms a watchdog (alarm) for --timeout; and one SGE per work request.
//
// Run:   ./lab run 11_rdma_cm/rdma_verbs        (server and client in one go)
//        ./lab shell PROGRAM [-p PORT]          server: answers one client
//        ./lab shell PROGRAM [-p PORT] SERVER   client, in a second terminal; SERVER is an IP
//                                address of the server's RDMA netdev (10.77.0.1 in the lab machine)

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "lab/check.hpp"
#include "lab/options.hpp"

namespace {

constexpr std::string_view kHello = "hello through rdma_post_send";
constexpr std::string_view kReply = "and back through rdma_post_send";

struct FreeAddressInfo {
    void operator()(rdma_addrinfo* info) const { rdma_freeaddrinfo(info); }
};
struct DestroyEndpoint {
    void operator()(rdma_cm_id* id) const { rdma_destroy_ep(id); }
};
struct DeregisterMessages {
    void operator()(ibv_mr* mr) const { rdma_dereg_mr(mr); }
};
using AddressInfo = std::unique_ptr<rdma_addrinfo, FreeAddressInfo>;
using Endpoint = std::unique_ptr<rdma_cm_id, DestroyEndpoint>;
using Messages = std::unique_ptr<ibv_mr, DeregisterMessages>;

// Nothing in rdma_verbs.h takes a timeout: the watchdog ends a wait for a peer
// that never answers (or died) with one line, as every lesson does.
void arm_watchdog(std::chrono::seconds timeout) {
    std::signal(SIGALRM, [](int) {
        constexpr char kLine[] =
            "error: no answer within --timeout (hint: rdma_get_request, rdma_connect and "
            "rdma_get_*_comp wait without a timeout; is the peer running?)\n";
        (void)!write(STDERR_FILENO, kLine, sizeof kLine - 1);
        _exit(1);
    });
    alarm(static_cast<unsigned>(std::max<long long>(1, timeout.count())));
}

// Step 1: rdma_getaddrinfo turns "address, port" into what rdma_create_ep wants.
AddressInfo resolve(const std::string& server, std::uint16_t port) {
    rdma_addrinfo hints{};
    hints.ai_port_space = RDMA_PS_TCP;  // reliable connected, as TCP
    if (server.empty()) {
        hints.ai_flags = RAI_PASSIVE;  // an address to listen on: all of them
    }
    rdma_addrinfo* info = nullptr;
    const std::string service = std::to_string(port);
    lab::check(
        rdma_getaddrinfo(server.empty() ? nullptr : server.c_str(), service.c_str(), &hints, &info),
        "rdma_getaddrinfo", "is SERVER an IP address of an RDMA netdev?");
    return AddressInfo(info);
}

// Steps 2-7: the QP every id gets. sq_sig_all: every send completes, which
// rdma_get_send_comp waits for.
ibv_qp_init_attr qp_attributes() {
    ibv_qp_init_attr attributes{};
    attributes.cap.max_send_wr = 1;
    attributes.cap.max_recv_wr = 1;
    attributes.cap.max_send_sge = 1;
    attributes.cap.max_recv_sge = 1;
    attributes.qp_type = IBV_QPT_RC;
    attributes.sq_sig_all = 1;
    return attributes;
}

// Step 9: one completion of the id's send or receive CQ, checked.
void check_completion(int polled, const ibv_wc& completion, const char* what) {
    lab::check(polled < 0 ? -1 : 0, what);
    if (completion.status != IBV_WC_SUCCESS) {
        throw lab::Error(std::string(what) +
                         ": work completion failed: " + ibv_wc_status_str(completion.status));
    }
}

int run_server(const lab::Options& options) {
    const AddressInfo address = resolve("", options.tcp_port);
    ibv_qp_init_attr attributes = qp_attributes();
    rdma_cm_id* raw = nullptr;
    // Steps 2-7 for the listening id: the QP attributes are kept for the ids it accepts.
    lab::check(rdma_create_ep(&raw, address.get(), nullptr, &attributes), "rdma_create_ep");
    const Endpoint listener(raw);
    lab::check(rdma_listen(listener.get(), 0), "rdma_listen", "is the port in use?");
    std::printf("server: listening on rdma_cm port %u\n", unsigned(options.tcp_port));
    std::fflush(stdout);

    // Step 8: a client's request arrives as an id with its own QP (in INIT).
    lab::check(rdma_get_request(listener.get(), &raw), "rdma_get_request");
    const Endpoint client(raw);
    std::vector<char> buffer(options.size);
    // Step 5: rdma_reg_msgs is ibv_reg_mr on the id's PD with local write access.
    const Messages mr(
        lab::check_ptr(rdma_reg_msgs(client.get(), buffer.data(), buffer.size()), "rdma_reg_msgs"));
    // The receive goes in before rdma_accept, so the client's send finds it.
    lab::check(rdma_post_recv(client.get(), nullptr, buffer.data(), buffer.size(), mr.get()),
               "rdma_post_recv");
    lab::check(rdma_accept(client.get(), nullptr), "rdma_accept");
    std::printf("server: accepted; QP 0x%x is in RTS\n", client->qp->qp_num);

    ibv_wc completion{};
    check_completion(rdma_get_recv_comp(client.get(), &completion), completion,
                     "rdma_get_recv_comp");
    std::printf("server: received %u bytes: \"%s\"\n", completion.byte_len, buffer.data());
    std::memcpy(buffer.data(), kReply.data(), kReply.size() + 1);  // a string_view literal's zero
    lab::check(rdma_post_send(client.get(), nullptr, buffer.data(), kReply.size() + 1, mr.get(), 0),
               "rdma_post_send");
    check_completion(rdma_get_send_comp(client.get(), &completion), completion,
                     "rdma_get_send_comp");
    std::printf("server: replied \"%s\"\n", kReply.data());
    rdma_disconnect(client.get());
    return 0;  // Step 10: the owners deregister and destroy, in reverse order
}

int run_client(const lab::Options& options) {
    const AddressInfo address = resolve(options.server, options.tcp_port);
    // Steps 2-8: rdma_create_ep resolves the address and route and creates the
    // QP; rdma_connect takes it to RTS. A server not listening yet refuses
    // (ECONNREFUSED): a refused id cannot connect again, so each try takes a new one,
    // with fresh attributes: rdma_create_ep writes the CQs it made into them, and
    // those go with the refused id.
    Endpoint server;
    for (;;) {
        rdma_cm_id* raw = nullptr;
        ibv_qp_init_attr attributes = qp_attributes();
        lab::check(rdma_create_ep(&raw, address.get(), nullptr, &attributes), "rdma_create_ep");
        server.reset(raw);
        if (rdma_connect(server.get(), nullptr) == 0) {
            break;
        }
        lab::check(errno == ECONNREFUSED ? 0 : -1, "rdma_connect");
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    std::printf("client: connected; QP 0x%x is in RTS\n", server->qp->qp_num);

    // Two buffers in one registration: the reply lands in the first, the hello
    // leaves from the second. A buffer with a receive posted on it belongs to
    // the device until that receive completes: writing into it, or sending
    // from it, races with whatever arrives.
    std::vector<char> buffer(2 * options.size);
    char* const reply = buffer.data();
    char* const hello = buffer.data() + options.size;
    const Messages mr(
        lab::check_ptr(rdma_reg_msgs(server.get(), buffer.data(), buffer.size()), "rdma_reg_msgs"));
    // The receive for the reply first, so that it is there when the reply comes.
    lab::check(rdma_post_recv(server.get(), nullptr, reply, options.size, mr.get()),
               "rdma_post_recv");
    std::memcpy(hello, kHello.data(), kHello.size() + 1);
    lab::check(rdma_post_send(server.get(), nullptr, hello, kHello.size() + 1, mr.get(), 0),
               "rdma_post_send");
    ibv_wc completion{};
    check_completion(rdma_get_send_comp(server.get(), &completion), completion,
                     "rdma_get_send_comp");
    std::printf("client: sent \"%s\"\n", hello);
    check_completion(rdma_get_recv_comp(server.get(), &completion), completion,
                     "rdma_get_recv_comp");
    std::printf("client: received %u bytes: \"%s\"\n", completion.byte_len, reply);
    rdma_disconnect(server.get());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line("Lesson 11 variant: rdma_cm's own data path (rdma_verbs.h)",
                                  lab::kTcpPort | lab::kSize | lab::kTimeout | lab::kServerArg);
    const lab::Options options = command_line.parse(argc, argv);
    return lab::run_main([&] {
        if (options.size < kReply.size() + 1 || options.size < kHello.size() + 1) {
            throw lab::Error("--size " + std::to_string(options.size) +
                             " cannot hold the messages (hint: at least 64)");
        }
        arm_watchdog(std::chrono::duration_cast<std::chrono::seconds>(options.timeout));
        return options.is_server() ? run_server(options) : run_client(options);
    });
}
