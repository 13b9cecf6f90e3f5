// SPDX-License-Identifier: MIT
// Lesson 07's hello world in raw verbs, in one file, nothing from common/: TCP carries what each
// QP must know of the other, then the client writes "hello verbs" into the server's memory.

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;
constexpr char kGreeting[] = "hello verbs";  // 12 bytes with its terminating zero
constexpr std::uint8_t kPort = 1;            // the device's first port
constexpr char kPeerGone[] = "the peer closed the connection (hint: its output says why)";

// A failure ends the program with one line (the kernel releases what the process held).
void require(bool ok, const std::string& line, int status = 1) {
    if (!ok) {
        std::fprintf(stderr, "error: %s\n", line.c_str());
        std::exit(status);
    }
}
// Int verbs return 0 or an errno value; socket calls -1, pointer verbs nullptr, and set errno.
void check(int result, const std::string& call, const std::string& hint) {
    const int error = result > 0 ? result : (errno != 0 ? errno : EIO);
    require(result == 0, call + " failed: " + std::strerror(error) + " (hint: " + hint + ")");
}
template <typename T>
T* check_ptr(T* object, const std::string& call, const std::string& hint) {
    check(object == nullptr ? -1 : 0, call, hint);
    return object;
}
// The flags (lesson 01 names them), parsed by hand; bad input exits with status 2.
struct Settings {
    std::string device, server;  // -d: empty means the first; SERVER: empty means "be the server"
    int gid_index = -1, tcp_port = 18515, timeout = 20;  // -g (-1: by type), -p, --timeout (s)
};
Settings parse(int argc, char** argv) {
    Settings s;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        const auto number = [&](int low, int high) {  // the number after the flag
            const std::string text = i + 1 < argc ? argv[++i] : "";
            const long n = std::strtol(text.c_str(), nullptr, 10);  // all digits: text is n
            require(text == std::to_string(n) && n >= low && n <= high,
                    flag + " wants a number from " + std::to_string(low) + " to " +
                        std::to_string(high) + ", not '" + text + "'",
                    2);
            return static_cast<int>(n);
        };
        if (flag == "-h" || flag == "--help") {
            std::printf(
                "usage: %s [-d DEV] [-g GID_INDEX] [-p TCP_PORT] [--timeout SECONDS] "
                "[SERVER]\n(no SERVER: the server; the server's IPv4 address: the client)\n",
                argv[0]);
            std::exit(0);
        } else if (flag == "-d" || flag == "--ib-dev") {
            require(i + 1 < argc, flag + " needs a value", 2);
            s.device = argv[++i];
        } else if (flag == "-g" || flag == "--gid-idx") {
            s.gid_index = number(0, 255);  // sgid_index is 8 bits
        } else if (flag == "-p" || flag == "--port") {
            s.tcp_port = number(1, 65535);
        } else if (flag == "--timeout") {
            s.timeout = number(1, 3600);
        } else {
            require(!flag.starts_with('-') && s.server.empty(), "unexpected '" + flag + "'", 2);
            s.server = flag;
        }
    }
    return s;
}

// What one side tells the other (lesson 05): 40 bytes, no padding, in network byte order.
struct Endpoint {
    std::uint32_t qpn, psn, mtu, rkey;  // QP number, first PSN, an ibv_mtu, the server's rkey
    std::uint64_t addr;                 // the server's buffer (rkey and addr are 0 from the client)
    ibv_gid gid;                        // the GID, on RoCE an IP address (InfiniBand: a LID too)
};
Endpoint byte_order(Endpoint e, bool to_network) {
    for (std::uint32_t* field : {&e.qpn, &e.psn, &e.mtu, &e.rkey}) {
        *field = to_network ? htonl(*field) : ntohl(*field);
    }
    e.addr = to_network ? htobe64(e.addr) : be64toh(e.addr);
    return e;
}

// Every socket wait (lesson 05) ends at --timeout, or when there is something to read.
void wait_readable(int fd, const Settings& s, const std::string& what) {
    pollfd ready{fd, POLLIN, 0};
    require(poll(&ready, 1, s.timeout * 1000) == 1, what + " within --timeout");
}
// The server accepts one client on TCP port -p; the client connects, every 100 ms until then.
int connect_tcp(const Settings& s) {
    sockaddr_in address{AF_INET, htons(static_cast<std::uint16_t>(s.tcp_port)), {}, {}};
    const std::string port = std::to_string(s.tcp_port);
    if (!s.server.empty()) {
        require(inet_pton(AF_INET, s.server.c_str(), &address.sin_addr) == 1,
                "SERVER is an IPv4 address such as 10.77.0.1, not '" + s.server + "'", 2);
        for (int tries = 1;; ++tries) {
            const int fd = socket(AF_INET, SOCK_STREAM, 0);
            check(fd < 0 ? -1 : 0, "socket", "is the process out of file descriptors?");
            if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
                return fd;
            }
            close(fd);
            require(tries < s.timeout * 10, "could not connect to " + s.server + ":" + port +
                                                " within --timeout (hint: is the server running?)");
            usleep(100'000);
        }
    }
    const int listener = socket(AF_INET, SOCK_STREAM, 0);
    check(listener < 0 ? -1 : 0, "socket", "is the process out of file descriptors?");
    const int yes = 1;  // bind even while the last run's connection lingers in TIME_WAIT
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    check(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address),
          "bind(TCP port " + port + ")",
          "another server holds the port: stop it or choose another -p");
    check(listen(listener, 1), "listen", "is the system out of sockets?");
    std::printf("server: waiting for a client on TCP port %s\n", port.c_str());
    wait_readable(listener, s, "no client connected to TCP port " + port);
    const int connection = accept(listener, nullptr, nullptr);
    check(connection < 0 ? -1 : 0, "accept", "did the client give up?");
    close(listener);
    return connection;
}
// Send and receive @p size bytes (one: a barrier); MSG_NOSIGNAL: no SIGPIPE if the peer left.
void swap_bytes(int fd, const void* mine, void* theirs, std::size_t size, const Settings& s) {
    require(send(fd, mine, size, MSG_NOSIGNAL) == static_cast<ssize_t>(size), kPeerGone);
    for (std::size_t got = 0; got < size;) {
        wait_readable(fd, s, "no answer from the peer");  // is it stopped?
        const ssize_t n = recv(fd, static_cast<char*>(theirs) + got, size - got, 0);
        require(n > 0, kPeerGone);
        got += static_cast<std::size_t>(n);
    }
}
}  // namespace

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // every line reaches a pipe at once
    const Settings settings = parse(argc, argv);
    const bool is_server = settings.server.empty();

    // Steps 1-2 (lesson 01): the list of devices; open the one -d names, else the first.
    int count = 0;
    ibv_device** devices = check_ptr(ibv_get_device_list(&count), "ibv_get_device_list",
                                     "the kernel has no RDMA support: run ./lab doctor");
    ibv_device** device = std::find_if(devices, devices + count, [&](ibv_device* candidate) {
        return settings.device.empty() || settings.device == ibv_get_device_name(candidate);
    });
    require(count > 0, "no RDMA device found (hint: run ./lab doctor)");
    require(device != devices + count, "unknown RDMA device '" + settings.device +
                                           "' (hint: ibv_devices lists the devices here)");
    ibv_context* ctx = check_ptr(ibv_open_device(*device), "ibv_open_device", "run ./lab doctor");
    ibv_free_device_list(devices);  // the context does not need the list

    // Step 3 (lesson 01): port 1, and the GID -g names, else the RoCE v2 one with an IPv4 address.
    ibv_port_attr port{};
    check(ibv_query_port(ctx, kPort, &port), "ibv_query_port", "has the device a port 1?");
    int gid_index = settings.gid_index;
    ibv_gid_entry gid{};
    for (int i = 0; gid_index < 0 && i < std::min(port.gid_tbl_len, 256); ++i) {
        if (ibv_query_gid_ex(ctx, kPort, i, &gid, 0) == 0 && gid.gid_type == IBV_GID_TYPE_ROCE_V2 &&
            IN6_IS_ADDR_V4MAPPED(reinterpret_cast<const in6_addr*>(gid.gid.raw))) {
            gid_index = i;
        }
    }
    require(gid_index >= 0, "port 1 has no RoCE v2 GID with an IPv4 address (hint: -g picks one)");
    check(ibv_query_gid_ex(ctx, kPort, gid_index, &gid, 0),
          "ibv_query_gid_ex(GID index " + std::to_string(gid_index) + ")", "is -g too large?");
    char gid_text[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, gid.gid.raw, gid_text, sizeof gid_text);
    std::printf("Step 1-3: %s port 1, GID index %d (%s), active MTU %d\n",
                ibv_get_device_name(ctx->device), gid_index, gid_text, 128 << port.active_mtu);

    // Steps 4-5 (lessons 02, 07): a PD and a buffer; the server's takes remote (so local) writes.
    ibv_pd* pd = check_ptr(ibv_alloc_pd(ctx), "ibv_alloc_pd", "is the device still there?");
    char buffer[64] = {};
    const int access = is_server ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE : 0;
    ibv_mr* mr = check_ptr(ibv_reg_mr(pd, buffer, sizeof buffer, access), "ibv_reg_mr",
                           "is 'ulimit -l' (locked memory) too small?");
    std::printf("Step 4-5: PD, and %zu bytes registered: lkey 0x%x, rkey 0x%x\n", sizeof buffer,
                mr->lkey, mr->rkey);

    // Steps 6-7 (lessons 03-04): a CQ for the one write, an RC QP with one slot of each kind.
    ibv_cq* cq = check_ptr(ibv_create_cq(ctx, 1, nullptr, nullptr, 0), "ibv_create_cq",
                           "is the device still there?");
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = cq;
    init.cap.max_send_wr = init.cap.max_recv_wr = init.cap.max_send_sge = init.cap.max_recv_sge = 1;
    init.qp_type = IBV_QPT_RC;
    ibv_qp* qp = check_ptr(ibv_create_qp(pd, &init), "ibv_create_qp",
                           "are the sizes within max_qp_wr and max_sge?");
    std::printf("Step 6-7: CQ with cqe %d, RC QP 0x%06x\n", cq->cqe, qp->qp_num);

    // Step 8a (lesson 04): RESET -> INIT: the port, and what the peer may do to our memory.
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.qp_access_flags = is_server ? IBV_ACCESS_REMOTE_WRITE : 0;
    attr.port_num = kPort;
    check(ibv_modify_qp(qp, &attr,
                        IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
          "ibv_modify_qp(RESET->INIT)", "is the port number valid?");

    // Step 8b (lesson 05): QPN, a random first PSN, MTU, the server's buffer and GID, over TCP.
    const Endpoint mine{.qpn = qp->qp_num,
                        .psn = std::random_device{}() & 0xffffff,
                        .mtu = port.active_mtu,
                        .rkey = is_server ? mr->rkey : 0,
                        .addr = is_server ? reinterpret_cast<std::uintptr_t>(buffer) : 0,
                        .gid = gid.gid};
    std::printf("Step 8: local address:  QPN 0x%06x, PSN 0x%06x\n", mine.qpn, mine.psn);
    const int connection = connect_tcp(settings);
    Endpoint peer = byte_order(mine, true);
    swap_bytes(connection, &peer, &peer, sizeof peer, settings);
    peer = byte_order(peer, false);  // untrusted input: check it (an ibv_mtu is 1 to 5)
    require(peer.qpn <= 0xffffff && peer.psn <= 0xffffff && peer.mtu >= 1 && peer.mtu <= 5,
            "the peer sent something else (hint: is it 07_hello_verbs?)");
    inet_ntop(AF_INET6, peer.gid.raw, gid_text, sizeof gid_text);
    std::printf("Step 8: remote address: QPN 0x%06x, PSN 0x%06x, GID %s\n", peer.qpn, peer.psn,
                gid_text);

    // Step 8c (lesson 04): INIT -> RTR: the peer's QPN, PSN and GID (in a GRH), the smaller MTU.
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = static_cast<ibv_mtu>(std::min(mine.mtu, peer.mtu));
    attr.dest_qp_num = peer.qpn;
    attr.rq_psn = peer.psn;
    attr.ah_attr.is_global = 1;
    attr.ah_attr.grh.dgid = peer.gid;
    attr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(gid_index);
    attr.ah_attr.grh.hop_limit = 64;
    attr.ah_attr.port_num = kPort;
    attr.max_dest_rd_atomic = 1;  // reads and atomics it answers at once (lesson 09)
    attr.min_rnr_timer = 12;      // 0.64 ms: a send that found no receive waits (lesson 06)
    check(ibv_modify_qp(qp, &attr,
                        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                            IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
          "ibv_modify_qp(INIT->RTR)", "check the peer's GID and QPN, and -g");

    // Step 8d (lesson 04): RTR -> RTS: our PSN; resend 6 times after 4.096 us * 2^14 (67 ms).
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn = mine.psn;
    attr.max_rd_atomic = 1;
    attr.timeout = 14;
    attr.retry_cnt = 6;
    attr.rnr_retry = 0;
    check(ibv_modify_qp(qp, &attr,
                        IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                            IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC),
          "ibv_modify_qp(RTR->RTS)", "are timeout, retry_cnt and rnr_retry in range?");
    std::printf("Step 8: QP is in RTS, path MTU %d\n", 128 << attr.path_mtu);
    char byte = 'b';
    swap_bytes(connection, &byte, &byte, 1, settings);  // a barrier: both QPs are ready

    // Step 9 (lesson 07): the client writes; the server's CPU takes no part, TCP tells it when.
    if (is_server) {
        swap_bytes(connection, &byte, &byte, 1, settings);  // the client says: look now
        std::printf("Step 9: the server's buffer holds \"%s\"\n", buffer);
    } else {
        std::memcpy(buffer, kGreeting, sizeof kGreeting);
        ibv_sge sge{reinterpret_cast<std::uintptr_t>(buffer), sizeof kGreeting, mr->lkey};
        ibv_send_wr wr{};
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.wr.rdma.remote_addr = peer.addr;
        wr.wr.rdma.rkey = peer.rkey;
        ibv_send_wr* bad_wr = nullptr;
        check(ibv_post_send(qp, &wr, &bad_wr), "ibv_post_send(IBV_WR_RDMA_WRITE)",
              "is the send queue full?");
        const auto deadline = Clock::now() + std::chrono::seconds(settings.timeout);
        ibv_wc wc{};
        int found = 0;
        while ((found = ibv_poll_cq(cq, 1, &wc)) == 0) {  // busy-poll the CQ (lesson 03)
            require(Clock::now() < deadline, "no completion within --timeout");
        }
        check(found < 0 ? -1 : 0, "ibv_poll_cq", "a CQ overrun: more completions than entries");
        require(wc.status == IBV_WC_SUCCESS,
                std::string("RDMA write: work completion failed: ") + ibv_wc_status_str(wc.status) +
                    " (hint: lesson 04's table says what each status means)");
        std::printf("Step 9: RDMA WRITE of \"%s\" with rkey 0x%x completed: %s\n", kGreeting,
                    wr.wr.rdma.rkey, ibv_wc_status_str(wc.status));
        swap_bytes(connection, &byte, &byte, 1, settings);  // tells the server: look now
    }

    // Step 10 (lesson 02): destroy all in reverse order; nothing is posted, nothing to drain.
    check(ibv_destroy_qp(qp), "ibv_destroy_qp", "is the QP still attached to something?");
    check(ibv_destroy_cq(cq), "ibv_destroy_cq", "is a QP still using it?");
    check(ibv_dereg_mr(mr), "ibv_dereg_mr", "is a memory window still bound to it?");
    check(ibv_dealloc_pd(pd), "ibv_dealloc_pd", "is an MR or QP still in it?");
    check(ibv_close_device(ctx), "ibv_close_device", "is an object of it still alive?");
    close(connection);
    std::printf("Step 10: QP, CQ, MR, PD and device context destroyed\n");
    return 0;
}
