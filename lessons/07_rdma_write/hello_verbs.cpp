// SPDX-License-Identifier: MIT
// Lesson 07, variant: hello verbs, the whole program in raw verbs in one file.
//
// Nothing comes from common/: all ten steps are plain ibv_* calls, and a TCP socket carries
// what each QP must know of the other (LID, QPN, PSN, GID, MTU, and the server's buffer
// address, rkey and length). The client then puts "hello verbs" into the server's memory
// with one RDMA WRITE. README.md maps each block to the lesson that teaches it.
//
// Run:   ./lab run 07_rdma_write/hello_verbs                  (server and client)
// By hand: 07_hello_verbs [-d DEV] [-i PORT] [-g GID] [-p TCP] [--timeout SECONDS]   (server)
//          07_hello_verbs [the same flags] [--wrong-rkey] SERVER                     (client)

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr char kGreeting[] = "hello verbs";  // 12 bytes with its terminating zero
constexpr char kPeerGone[] =
    "the peer closed the connection (hint: did the other side exit or crash? its output says why)";

// Every failure ends the program with one line: what failed, the errno text, a likely cause.
// The kernel then releases whatever verbs objects and sockets the process still held.
[[noreturn]] void quit(const std::string& line, int status = 1) {
    std::fprintf(stderr, "error: %s\n", line.c_str());
    std::exit(status);
}
void require(bool ok, const std::string& line, int status = 1) {
    if (!ok) {
        quit(line, status);
    }
}
// A verb that returns an int gives 0 or an errno value; a socket call gives -1 and sets errno.
void check(int result, const std::string& call, const std::string& hint) {
    if (result != 0) {
        const int error = result > 0 ? result : (errno != 0 ? errno : EIO);
        quit(call + " failed: " + std::strerror(error) + " (hint: " + hint + ")");
    }
}
// A verb that returns a pointer gives nullptr on failure, and errno says why.
template <typename T>
T* check_ptr(T* object, const std::string& call, const std::string& hint) {
    check(object == nullptr ? -1 : 0, call, hint);
    return object;
}

// The flags of every lesson (lesson 01), parsed by hand; bad input exits with status 2.
struct Settings {
    std::string device, server;  // -d: empty means the first; SERVER: empty means "be the server"
    int ib_port = 1, gid_index = -1;     // -i; -g: -1 means the RoCE v2 entry with an IPv4 address
    int tcp_port = 18515, timeout = 20;  // -p: the TCP port; --timeout: seconds, for every wait
    bool wrong_rkey = false;             // --wrong-rkey: the client spoils the rkey it writes with
};

Settings parse(int argc, char** argv) {
    Settings s;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        const auto value = [&] {  // the word after the flag
            require(i + 1 < argc, flag + " needs a value (run with --help for usage)", 2);
            return std::string(argv[++i]);
        };
        const auto number = [&](int low, int high) {
            const std::string text = value();
            int n = 0;
            const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
            require(error == std::errc{} && *end == '\0' && n >= low && n <= high,
                    flag + " wants a number from " + std::to_string(low) + " to " +
                        std::to_string(high) + ", not '" + text + "' (run with --help for usage)",
                    2);
            return n;
        };
        if (flag == "-h" || flag == "--help") {
            std::printf(
                "usage: 07_hello_verbs [-d DEV] [-i PORT] [-g GID_INDEX] [-p TCP_PORT] "
                "[--timeout SECONDS] [--wrong-rkey] [SERVER]\n(SERVER: be its client)\n");
            std::exit(0);
        } else if (flag == "--wrong-rkey") {
            s.wrong_rkey = true;
        } else if (flag == "-d" || flag == "--ib-dev") {
            s.device = value();
        } else if (flag == "-i" || flag == "--ib-port") {
            s.ib_port = number(1, 255);
        } else if (flag == "-g" || flag == "--gid-idx") {
            s.gid_index = number(0, INT_MAX);
        } else if (flag == "-p" || flag == "--port") {
            s.tcp_port = number(1, 65535);
        } else if (flag == "--timeout") {
            s.timeout = number(1, 3600);
        } else {
            require(!flag.starts_with('-') && s.server.empty(),
                    "unexpected '" + flag + "' (run with --help for usage)", 2);
            s.server = flag;
        }
    }
    return s;
}

// What one side tells the other (lesson 05): 48 bytes, no padding, every number in network
// byte order. What arrives is untrusted input: decode() checks every range.
struct Endpoint {
    std::uint32_t lid, qpn, psn, mtu;  // LID (0 on RoCE), QP number, first PSN, an ibv_mtu
    std::uint32_t rkey, length;        // the server's buffer: its rkey, its length ...
    std::uint64_t addr;                // ... and its address (all 0 from the client)
    ibv_gid gid;                       // the GID (on RoCE, an IP address)
};
static_assert(sizeof(Endpoint) == 48);

Endpoint byte_order(Endpoint e, bool to_network) {
    for (std::uint32_t* field : {&e.lid, &e.qpn, &e.psn, &e.mtu, &e.rkey, &e.length}) {
        *field = to_network ? htonl(*field) : ntohl(*field);
    }
    e.addr = to_network ? htobe64(e.addr) : be64toh(e.addr);
    return e;
}

Endpoint decode(const Endpoint& received) {
    const Endpoint p = byte_order(received, false);
    require(p.lid <= 0xffff && p.qpn <= 0xffffff && p.psn <= 0xffffff && p.mtu >= IBV_MTU_256 &&
                p.mtu <= IBV_MTU_4096,
            "the peer sent something else than this program's message (hint: is the peer "
            "07_hello_verbs, on the same -p?)");
    return p;
}

// The TCP side (lesson 05). Every wait ends: at --timeout, or when the peer's socket closes.
bool readable_in_time(int fd, const Settings& settings) {
    pollfd ready{fd, POLLIN, 0};
    return poll(&ready, 1, settings.timeout * 1000) == 1;
}

int accept_client(const Settings& settings) {
    const std::string port = std::to_string(settings.tcp_port);
    const int listener = socket(AF_INET, SOCK_STREAM, 0);
    check(listener < 0 ? -1 : 0, "socket", "is the process out of file descriptors?");
    const int yes = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(settings.tcp_port));
    check(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address),
          "bind(TCP port " + port + ")",
          "another server holds the port: stop it or choose another -p");
    check(listen(listener, 1), "listen", "is the system out of sockets?");
    std::printf("server: waiting for a client on TCP port %s\n", port.c_str());
    require(readable_in_time(listener, settings),
            "no client connected to TCP port " + port +
                " within --timeout (hint: start the client, with this host's address)");
    const int connection = accept(listener, nullptr, nullptr);
    check(connection < 0 ? -1 : 0, "accept", "did the client give up?");
    close(listener);
    return connection;
}

int connect_to_server(const Settings& settings) {
    const std::string port = std::to_string(settings.tcp_port);
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int error = getaddrinfo(settings.server.c_str(), port.c_str(), &hints, &found);
    require(error == 0, "getaddrinfo(" + settings.server + ") failed: " + gai_strerror(error) +
                            " (hint: SERVER is the server's host name or IP address)");
    const auto deadline = Clock::now() + std::chrono::seconds(settings.timeout);
    int connection = -1;
    while (connection < 0 && Clock::now() < deadline) {  // the server may not listen yet
        connection = socket(found->ai_family, SOCK_STREAM, 0);
        check(connection < 0 ? -1 : 0, "socket", "is the process out of file descriptors?");
        if (connect(connection, found->ai_addr, found->ai_addrlen) != 0) {
            close(connection);
            connection = -1;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    freeaddrinfo(found);
    require(connection >= 0,
            "could not connect to " + settings.server + ":" + port +
                " within --timeout (hint: is the server running, with the same -p?)");
    return connection;
}

// Send @p size bytes of @p mine and receive as many into @p theirs: both sides call it, and
// neither goes on before the other got this far (with one byte, that is a barrier).
// MSG_NOSIGNAL: a vanished peer gives an error here, not a SIGPIPE that ends us silently.
void swap_bytes(int fd, const void* mine, void* theirs, std::size_t size, const Settings& s) {
    require(send(fd, mine, size, MSG_NOSIGNAL) == static_cast<ssize_t>(size), kPeerGone);
    for (std::size_t got = 0; got < size;) {
        require(readable_in_time(fd, s),
                "no answer from the peer within --timeout (hint: is it stopped?)");
        const ssize_t n = recv(fd, static_cast<char*>(theirs) + got, size - got, 0);
        require(n > 0, kPeerGone);
        got += static_cast<std::size_t>(n);
    }
}
void barrier(int fd, const Settings& settings) {
    char byte = 'b';
    swap_bytes(fd, &byte, &byte, 1, settings);
}

// Step 9's wait (lesson 03): busy-poll the CQ for one completion; every 1024 empty polls, look
// at the clock and at the peer's socket (-1: none). It closes the moment the peer is gone,
// sooner than an error completion comes (docs/devices.md#dead-peer).
ibv_wc wait_for_completion(ibv_cq* cq, int peer_fd, const Settings& settings) {
    const auto deadline = Clock::now() + std::chrono::seconds(settings.timeout);
    ibv_wc wc{};
    for (unsigned empty = 1;; ++empty) {
        const int found = ibv_poll_cq(cq, 1, &wc);
        if (found != 0) {  // one completion, or a negative number: an error
            check(found < 0 ? -1 : 0, "ibv_poll_cq", "a CQ overrun: more completions than entries");
            return wc;
        }
        if (empty % 1024 == 0) {
            pollfd peer{peer_fd, POLLRDHUP, 0};
            require(poll(&peer, 1, 0) != 1, kPeerGone);
            require(Clock::now() < deadline,
                    "no completion within --timeout (hint: is the peer stopped?)");
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // every line reaches a pipe at once
    const Settings settings = parse(argc, argv);
    const bool is_server = settings.server.empty();
    const auto port_number = static_cast<std::uint8_t>(settings.ib_port);

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
    ibv_context* context =
        check_ptr(ibv_open_device(*device), "ibv_open_device", "is /dev/infiniband readable?");
    ibv_free_device_list(devices);  // the context does not need the list

    // Step 3 (lesson 01): the port, and a GID chosen by type, never by a fixed index: the
    // RoCE v2 entry with an IPv4 address (on InfiniBand, the first entry).
    ibv_port_attr port{};
    check(ibv_query_port(context, port_number, &port), "ibv_query_port", "is -i a port of it?");
    int gid_index = settings.gid_index;
    ibv_gid_entry gid{};
    for (int i = 0; gid_index < 0 && i < port.gid_tbl_len; ++i) {
        if (ibv_query_gid_ex(context, port_number, i, &gid, 0) == 0 &&
            (port.link_layer == IBV_LINK_LAYER_INFINIBAND ||
             (gid.gid_type == IBV_GID_TYPE_ROCE_V2 &&
              IN6_IS_ADDR_V4MAPPED(reinterpret_cast<const in6_addr*>(gid.gid.raw))))) {
            gid_index = i;
        }
    }
    require(gid_index >= 0,
            "port " + std::to_string(settings.ib_port) +
                " has no RoCE v2 GID with an IPv4 address (hint: is its netdev up, with an " +
                "address? -g chooses an entry)");
    check(ibv_query_gid_ex(context, port_number, gid_index, &gid, 0),
          "ibv_query_gid_ex(GID index " + std::to_string(gid_index) + ")",
          "./lab run 01_devices lists the valid GID indexes of the port");
    char gid_text[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, gid.gid.raw, gid_text, sizeof gid_text);
    std::printf("Step 1-3: %s port %d, GID index %d (%s), active MTU %d\n",
                ibv_get_device_name(context->device), port_number, gid_index, gid_text,
                128 << port.active_mtu);

    // Steps 4-5 (lessons 02 and 07): a protection domain and the buffer. The peer may write the
    // server's, which takes REMOTE_WRITE and with it LOCAL_WRITE; the client's is only read.
    ibv_pd* pd = check_ptr(ibv_alloc_pd(context), "ibv_alloc_pd", "is the device still there?");
    std::vector<char> buffer(64);
    const int access = is_server ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE : 0;
    ibv_mr* mr = check_ptr(ibv_reg_mr(pd, buffer.data(), buffer.size(), access), "ibv_reg_mr",
                           "is 'ulimit -l' (locked memory) too small?");
    std::printf("Step 4-5: PD, and %zu bytes registered: lkey 0x%x, rkey 0x%x\n", buffer.size(),
                mr->lkey, mr->rkey);

    // Steps 6-7 (lessons 03-04): a CQ for all that can be outstanding (the write, step 10's
    // marker; no channel: this program polls), and an RC QP with as many send slots. Its one
    // receive slot stays unused: a write consumes no receive.
    ibv_cq* cq = check_ptr(ibv_create_cq(context, 2, nullptr, nullptr, 0), "ibv_create_cq",
                           "is the size above the device's max_cqe?");
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = cq;
    init.cap.max_send_wr = 2;
    init.cap.max_recv_wr = init.cap.max_send_sge = init.cap.max_recv_sge = 1;
    init.qp_type = IBV_QPT_RC;
    ibv_qp* qp = check_ptr(ibv_create_qp(pd, &init), "ibv_create_qp",
                           "are the sizes within max_qp_wr and max_sge?");
    std::printf("Step 6-7: CQ of %d entries, RC QP 0x%06x\n", cq->cqe, qp->qp_num);

    // Step 8a (lesson 04): RESET -> INIT: the port, and what the peer may do to our memory.
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.qp_access_flags = is_server ? IBV_ACCESS_REMOTE_WRITE : 0;
    attr.port_num = port_number;
    check(ibv_modify_qp(qp, &attr,
                        IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
          "ibv_modify_qp(RESET->INIT)", "is the port number valid?");

    // Step 8b (lesson 05): QPN, PSN, LID, GID, MTU and the server's buffer, over TCP.
    const Endpoint mine{.lid = port.lid,
                        .qpn = qp->qp_num,
                        .psn = std::random_device{}() & 0xffffff,
                        .mtu = port.active_mtu,
                        .rkey = is_server ? mr->rkey : 0,
                        .length = is_server ? static_cast<std::uint32_t>(buffer.size()) : 0,
                        .addr = is_server ? reinterpret_cast<std::uintptr_t>(buffer.data()) : 0,
                        .gid = gid.gid};
    std::printf("Step 8: local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x\n", mine.lid, mine.qpn,
                mine.psn);
    const int connection = is_server ? accept_client(settings) : connect_to_server(settings);
    const Endpoint sent = byte_order(mine, true);
    Endpoint received{};
    swap_bytes(connection, &sent, &received, sizeof sent, settings);
    const Endpoint peer = decode(received);
    inet_ntop(AF_INET6, peer.gid.raw, gid_text, sizeof gid_text);
    std::printf("Step 8: remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", peer.lid,
                peer.qpn, peer.psn, gid_text);

    // Step 8c (lesson 04): INIT -> RTR: the path to the peer (RoCE has no LIDs: a global route
    // header with its GID), its QPN and first PSN, and the smaller of the two MTUs.
    const auto path_mtu = static_cast<ibv_mtu>(std::min(mine.mtu, peer.mtu));
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = path_mtu;
    attr.dest_qp_num = peer.qpn;
    attr.rq_psn = peer.psn;
    attr.ah_attr.is_global = 1;
    attr.ah_attr.grh.dgid = peer.gid;
    attr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(gid_index);
    attr.ah_attr.grh.hop_limit = 64;
    attr.ah_attr.dlid = static_cast<std::uint16_t>(peer.lid);  // what InfiniBand routes by
    attr.ah_attr.port_num = port_number;
    attr.max_dest_rd_atomic = 1;  // reads and atomics it answers at once (lesson 09)
    attr.min_rnr_timer = 12;      // 0.64 ms: a send that found no receive waits (lesson 06)
    check(ibv_modify_qp(qp, &attr,
                        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                            IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
          "ibv_modify_qp(INIT->RTR)", "check the peer's GID and QPN, and -g");

    // Step 8d (lesson 04): RTR -> RTS: our first PSN; wait about 67 ms for an ACK (timeout
    // 14 is 4.096 us * 2^14) and resend 6 times before the write fails; a write meets no RNR.
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
    std::printf("Step 8: QP is in RTS, path MTU %d\n", 128 << path_mtu);
    barrier(connection, settings);  // both QPs are ready

    // Step 9 (lesson 07): the client writes; the server's CPU takes no part, and learns over
    // TCP that the bytes are there.
    if (is_server) {
        barrier(connection, settings);
        std::printf("Step 9: the server's buffer holds \"%s\"\n", buffer.data());
    } else {
        std::memcpy(buffer.data(), kGreeting, sizeof kGreeting);
        ibv_sge sge{reinterpret_cast<std::uintptr_t>(buffer.data()), sizeof kGreeting, mr->lkey};
        ibv_send_wr wr{};
        wr.wr_id = 1;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.wr.rdma.remote_addr = peer.addr;
        wr.wr.rdma.rkey = settings.wrong_rkey ? peer.rkey ^ 0x5a : peer.rkey;
        ibv_send_wr* bad_wr = nullptr;
        check(ibv_post_send(qp, &wr, &bad_wr), "ibv_post_send(IBV_WR_RDMA_WRITE)",
              "is the send queue full?");
        const ibv_wc wc = wait_for_completion(cq, connection, settings);
        require(wc.status == IBV_WC_SUCCESS,
                std::string("RDMA write: work completion failed: ") + ibv_wc_status_str(wc.status) +
                    (wc.status == IBV_WC_REM_ACCESS_ERR
                         ? " (hint: the peer refused: wrong rkey, an address outside its region, "
                           "or a region registered without the remote access this operation needs)"
                         : " (hint: lesson 04's table says what each status means)"));
        std::printf("Step 9: RDMA WRITE of \"%s\" to addr 0x%llx, rkey 0x%x completed: %s\n",
                    kGreeting, static_cast<unsigned long long>(peer.addr), wr.wr.rdma.rkey,
                    ibv_wc_status_str(wc.status));
        barrier(connection, settings);  // tells the server: look now
    }

    // Step 10: an orderly end. ERR stops the QP (no peer can write into the buffer any more)
    // and flushes what is posted. Completions come in order: once a marker posted last has
    // come back flushed, nothing posted before it can touch the buffer. Then destroy
    // everything in the reverse order of creation (lesson 02 says why).
    attr.qp_state = IBV_QPS_ERR;
    check(ibv_modify_qp(qp, &attr, IBV_QP_STATE), "ibv_modify_qp(ERR)", "");
    ibv_send_wr marker{};  // a SEND with no data: num_sge 0
    marker.wr_id = 0xd1a1;
    marker.opcode = IBV_WR_SEND;
    marker.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad_wr = nullptr;
    check(ibv_post_send(qp, &marker, &bad_wr), "ibv_post_send(marker)", "a full send queue?");
    const ibv_wc flushed = wait_for_completion(cq, -1, settings);
    require(flushed.wr_id == marker.wr_id && flushed.status == IBV_WC_WR_FLUSH_ERR,
            "step 10: a completion that is not the marker's flush (hint: was something else "
            "still posted?)");
    std::printf("Step 10: QP in ERR, marker 0x%llx came back: %s\n",
                static_cast<unsigned long long>(flushed.wr_id), ibv_wc_status_str(flushed.status));
    check(ibv_destroy_qp(qp), "ibv_destroy_qp", "");
    check(ibv_destroy_cq(cq), "ibv_destroy_cq", "is a QP still using it?");
    check(ibv_dereg_mr(mr), "ibv_dereg_mr", "");
    check(ibv_dealloc_pd(pd), "ibv_dealloc_pd", "is an MR or QP still in it?");
    check(ibv_close_device(context), "ibv_close_device", "");
    close(connection);
    std::printf("Step 10: QP, CQ, MR, PD and device context destroyed\n");
    return 0;
}
