// SPDX-License-Identifier: MIT
#include "trace.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "lab/check.hpp"
#include "lab/device.hpp"

namespace lab::grade {

namespace {

constexpr std::size_t kMaxListLength = 1 << 16;  // a longer list is a loop in the program's memory
constexpr std::size_t kMaxSges = 1024;

enum class Hook { post_send, post_recv, post_srq_recv, modify_qp, modify_srq };
constexpr std::size_t kHeadBytes = 16;  // of each message, read at the post

struct Breakpoint {
    Hook hook;
    std::uintptr_t address = 0;  // in the traced program
    long original = 0;           // the word the trap instruction replaced
};

// What differs between the two architectures the course runs on: the trap
// instruction, where the program counter stands after it, and the registers
// that carry a function's first three arguments.
#if defined(__x86_64__)
constexpr long kTrapMask = 0xff;  // int3, one byte
constexpr long kTrap = 0xcc;
constexpr std::uintptr_t kPcPastTrap = 1;  // rip points past the int3
std::uintptr_t program_counter(const user_regs_struct& regs) {
    return regs.rip;
}
void set_program_counter(user_regs_struct& regs, std::uintptr_t at) {
    regs.rip = at;
}
std::uintptr_t argument(const user_regs_struct& regs, int index) {
    return index == 0 ? regs.rdi : index == 1 ? regs.rsi : regs.rdx;
}
#elif defined(__aarch64__)
constexpr long kTrapMask = 0xffffffff;  // brk #0, one 4-byte instruction
constexpr long kTrap = 0xd4200000;
constexpr std::uintptr_t kPcPastTrap = 0;  // pc stays on the brk
std::uintptr_t program_counter(const user_regs_struct& regs) {
    return regs.pc;
}
void set_program_counter(user_regs_struct& regs, std::uintptr_t at) {
    regs.pc = at;
}
std::uintptr_t argument(const user_regs_struct& regs, int index) {
    return regs.regs[index];
}
#endif
#if defined(__x86_64__) || defined(__aarch64__)
constexpr bool kCanTrace = true;
long with_trap(long original) {
    return (original & ~kTrapMask) | kTrap;
}

// PTRACE_GETREGSET works on both (arm64 has no PTRACE_GETREGS).
bool get_registers(pid_t thread, user_regs_struct& regs) {
    iovec vector{&regs, sizeof regs};
    return ::ptrace(PTRACE_GETREGSET, thread, NT_PRSTATUS, &vector) == 0;
}
bool set_registers(pid_t thread, user_regs_struct& regs) {
    iovec vector{&regs, sizeof regs};
    return ::ptrace(PTRACE_SETREGSET, thread, NT_PRSTATUS, &vector) == 0;
}
#else
constexpr bool kCanTrace = false;
#endif

// Where function @p pointer of this process lives: its library file and offset.
struct Location {
    dev_t device = 0;
    ino_t inode = 0;
    std::uintptr_t offset = 0;
};

Location locate(const void* pointer, const char* what) {
    Dl_info info{};
    if (pointer == nullptr || ::dladdr(pointer, &info) == 0 || info.dli_fname == nullptr) {
        throw lab::Error(std::string("cannot find ") + what + " in the verbs libraries");
    }
    struct stat file {};
    if (::stat(info.dli_fname, &file) != 0) {
        lab::fail(std::string("stat ") + info.dli_fname, errno);
    }
    return {file.st_dev, file.st_ino,
            reinterpret_cast<std::uintptr_t>(pointer) -
                reinterpret_cast<std::uintptr_t>(info.dli_fbase)};
}

// The address where @p location is mapped in process @p pid: the start of the
// file's mapping at offset 0 (its load base) plus the offset.
std::uintptr_t address_in(pid_t pid, const Location& location) {
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    while (std::getline(maps, line)) {
        std::istringstream fields(line);
        std::string range, permissions, offset, device;
        unsigned long inode = 0;
        fields >> range >> permissions >> offset >> device >> inode;
        const std::size_t colon = device.find(':');
        if (inode != location.inode || colon == std::string::npos ||
            std::stoul(offset, nullptr, 16) != 0) {
            continue;
        }
        const unsigned major = std::stoul(device.substr(0, colon), nullptr, 16);
        const unsigned minor = std::stoul(device.substr(colon + 1), nullptr, 16);
        if (makedev(major, minor) != location.device) {
            continue;
        }
        return std::stoull(range.substr(0, range.find('-')), nullptr, 16) + location.offset;
    }
    throw lab::Error("the program has not loaded the verbs provider (did it open the device?)");
}

// Read @p size bytes at @p address of @p pid into @p into; false when unreadable.
bool read_memory(pid_t pid, std::uintptr_t address, void* into, std::size_t size) {
    iovec local{into, size};
    iovec remote{reinterpret_cast<void*>(address), size};
    return ::process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

template <typename T>
bool read_struct(pid_t pid, std::uintptr_t address, T& into) {
    return read_memory(pid, address, &into, sizeof into);
}

std::vector<ibv_sge> read_sges(pid_t pid, std::uintptr_t address, int count) {
    std::vector<ibv_sge> sges;
    if (count <= 0 || address == 0) {
        return sges;
    }
    sges.resize(std::min<std::size_t>(static_cast<std::size_t>(count), kMaxSges));
    if (!read_memory(pid, address, sges.data(), sges.size() * sizeof(ibv_sge))) {
        sges.clear();
    }
    return sges;
}

std::uint32_t qp_num_at(pid_t pid, std::uintptr_t qp_address) {
    ibv_qp qp{};
    return read_struct(pid, qp_address, qp) ? qp.qp_num : 0;
}

// Where each hooked function is, found once through this process's own
// device context (the program under test loads the same libraries).
const std::vector<std::pair<Hook, Location>>& locations() {
    static const std::vector<std::pair<Hook, Location>> found = [] {
        const lab::Context context = lab::open_device("");
        return std::vector<std::pair<Hook, Location>>{
            {Hook::post_send,
             locate(reinterpret_cast<const void*>(context->ops.post_send), "post_send")},
            {Hook::post_recv,
             locate(reinterpret_cast<const void*>(context->ops.post_recv), "post_recv")},
            {Hook::post_srq_recv,
             locate(reinterpret_cast<const void*>(context->ops.post_srq_recv), "post_srq_recv")},
            {Hook::modify_qp, locate(::dlsym(RTLD_DEFAULT, "ibv_modify_qp"), "ibv_modify_qp")},
            {Hook::modify_srq, locate(::dlsym(RTLD_DEFAULT, "ibv_modify_srq"), "ibv_modify_srq")},
        };
    }();
    return found;
}

#if defined(__x86_64__)
// Do what the instruction under the int3 would have done, so that the thread
// can go on without a single step (half the stops). Only the first
// instructions seen in rdma-core's functions: endbr64, push of a register,
// mov (%rdi),%rax. Anything else is stepped over for real.
bool emulate_first_instruction(pid_t thread, const Breakpoint& breakpoint, user_regs_struct& regs) {
    unsigned char code[8];
    std::memcpy(code, &breakpoint.original, sizeof code);
    unsigned long long* pushed = nullptr;
    std::size_t length = 0;
    if (code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa) {
        regs.rip = breakpoint.address + 4;  // endbr64: nothing to do
        return set_registers(thread, regs);
    }
    if (code[0] == 0x48 && code[1] == 0x8b && code[2] == 0x07) {  // mov (%rdi),%rax
        errno = 0;
        const long value = ::ptrace(PTRACE_PEEKDATA, thread, regs.rdi, nullptr);
        if (errno != 0) {
            return false;
        }
        regs.rax = static_cast<unsigned long long>(value);
        regs.rip = breakpoint.address + 3;
        return set_registers(thread, regs);
    }
    unsigned long long* const low[] = {&regs.rax, &regs.rcx, &regs.rdx, &regs.rbx,
                                       &regs.rsp, &regs.rbp, &regs.rsi, &regs.rdi};
    unsigned long long* const high[] = {&regs.r8,  &regs.r9,  &regs.r10, &regs.r11,
                                        &regs.r12, &regs.r13, &regs.r14, &regs.r15};
    if (code[0] >= 0x50 && code[0] <= 0x57) {
        pushed = low[code[0] - 0x50];
        length = 1;
    } else if (code[0] == 0x41 && code[1] >= 0x50 && code[1] <= 0x57) {
        pushed = high[code[1] - 0x50];
        length = 2;
    }
    if (pushed == nullptr || pushed == &regs.rsp) {
        return false;
    }
    const unsigned long long value = *pushed;
    regs.rsp -= 8;
    if (::ptrace(PTRACE_POKEDATA, thread, regs.rsp, value) != 0) {
        return false;
    }
    regs.rip = breakpoint.address + length;
    return set_registers(thread, regs);
}
#else
// Elsewhere every first instruction is stepped over for real.
bool emulate_first_instruction(pid_t, const Breakpoint&, user_regs_struct&) {
    return false;
}
#endif

}  // namespace

std::string read_program_memory(pid_t pid, std::uint64_t address, std::size_t size) {
    std::string bytes(size, '\0');
    if (!read_memory(pid, static_cast<std::uintptr_t>(address), bytes.data(), size)) {
        return {};
    }
    return bytes;
}

std::uint64_t PostedRequest::length() const {
    std::uint64_t total = 0;
    for (const ibv_sge& sge : sges) {
        total += sge.length;
    }
    return total;
}

Tracer::Tracer(pid_t pid, unsigned watch) : pid_(pid), watch_(watch) {
    if (!kCanTrace) {
        throw lab::Error("tracing a student's program needs x86-64 or arm64");
    }
    thread_ = std::thread([this] { run(); });
    std::unique_lock lock(mutex_);
    armed_changed_.wait(lock, [this] { return armed_ || !problem_.empty(); });
    if (!armed_) {
        const std::string why = problem_;
        lock.unlock();
        thread_.join();
        throw lab::Error("cannot watch the program's work requests: " + why);
    }
}

Tracer::~Tracer() {
    // The thread ends when the program does; the owner stops the program first.
    if (thread_.joinable()) {
        thread_.join();
    }
}

std::vector<PostedRequest> Tracer::take_requests() {
    std::lock_guard lock(mutex_);
    return std::exchange(requests_, {});
}

std::vector<QpChange> Tracer::take_qp_changes() {
    std::lock_guard lock(mutex_);
    return std::exchange(qp_changes_, {});
}

std::vector<SrqChange> Tracer::take_srq_changes() {
    std::lock_guard lock(mutex_);
    return std::exchange(srq_changes_, {});
}

std::string Tracer::problem() {
    std::lock_guard lock(mutex_);
    return problem_;
}

void Tracer::run() {
#if defined(__x86_64__) || defined(__aarch64__)
    const auto give_up = [this](const std::string& why) {
        std::lock_guard lock(mutex_);
        problem_ = why.empty() ? "unknown" : why;
        armed_changed_.notify_all();
    };
    std::vector<Breakpoint> breakpoints;
    try {
        std::vector<std::pair<Hook, Location>> hooks;
        for (const auto& [hook, location] : locations()) {
            const unsigned bit = hook == Hook::post_send       ? kSends
                                 : hook == Hook::post_recv     ? kReceives
                                 : hook == Hook::post_srq_recv ? kSharedReceives
                                 : hook == Hook::modify_qp     ? kQpChanges
                                                               : kSrqChanges;
            if (watch_ & bit) {
                hooks.emplace_back(hook, location);
            }
        }
        if (::ptrace(PTRACE_SEIZE, pid_, nullptr, PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE) != 0) {
            lab::fail("ptrace(PTRACE_SEIZE)", errno);
        }
        ::ptrace(PTRACE_INTERRUPT, pid_, nullptr, nullptr);
        int status = 0;
        if (::waitpid(pid_, &status, __WALL | __WNOTHREAD) != pid_ || !WIFSTOPPED(status)) {
            throw lab::Error("the program ended before it could be watched");
        }
        for (const auto& [hook, location] : hooks) {
            Breakpoint breakpoint{hook, address_in(pid_, location), 0};
            errno = 0;
            breakpoint.original = ::ptrace(PTRACE_PEEKTEXT, pid_, breakpoint.address, nullptr);
            if (errno != 0) {
                lab::fail("ptrace(PTRACE_PEEKTEXT)", errno);
            }
            if (::ptrace(PTRACE_POKETEXT, pid_, breakpoint.address,
                         with_trap(breakpoint.original)) != 0) {
                lab::fail("ptrace(PTRACE_POKETEXT)", errno);
            }
            breakpoints.push_back(breakpoint);
        }
        ::ptrace(PTRACE_CONT, pid_, nullptr, nullptr);
    } catch (const std::exception& error) {
        ::ptrace(PTRACE_DETACH, pid_, nullptr, nullptr);
        give_up(error.what());
        return;
    }
    {
        std::lock_guard lock(mutex_);
        armed_ = true;
        armed_changed_.notify_all();
    }

    std::size_t calls = 0;
    const auto on_breakpoint = [&](pid_t thread, const Breakpoint& breakpoint,
                                   const user_regs_struct& registers) {
        const pid_t process = pid_;
        if (breakpoint.hook == Hook::modify_qp) {
            QpChange change;
            change.qp_num = qp_num_at(process, argument(registers, 0));
            change.mask = static_cast<int>(argument(registers, 2));
            read_struct(process, argument(registers, 1), change.attr);
            std::lock_guard lock(mutex_);
            qp_changes_.push_back(change);
            return;
        }
        if (breakpoint.hook == Hook::modify_srq) {
            SrqChange change;
            change.mask = static_cast<int>(argument(registers, 2));
            read_struct(process, argument(registers, 1), change.attr);
            std::lock_guard lock(mutex_);
            srq_changes_.push_back(change);
            return;
        }
        (void)thread;
        std::vector<PostedRequest> seen;
        const std::size_t call = calls++;
        const std::uint32_t qp_num =
            breakpoint.hook == Hook::post_srq_recv ? 0 : qp_num_at(process, argument(registers, 0));
        std::uintptr_t next = argument(registers, 1);
        for (std::size_t position = 0; next != 0 && position < kMaxListLength; ++position) {
            PostedRequest request;
            request.call = call;
            request.position = position;
            request.qp_num = qp_num;
            if (breakpoint.hook == Hook::post_send) {
                ibv_send_wr wr{};
                if (!read_struct(process, next, wr)) {
                    break;
                }
                request.queue = PostedRequest::Queue::send;
                request.wr_id = wr.wr_id;
                request.opcode = wr.opcode;
                request.send_flags = wr.send_flags;
                request.sges =
                    read_sges(process, reinterpret_cast<std::uintptr_t>(wr.sg_list), wr.num_sge);
                request.remote_addr = wr.wr.rdma.remote_addr;
                request.rkey = wr.wr.rdma.rkey;
                request.remote_qpn = wr.wr.ud.remote_qpn;
                request.remote_qkey = wr.wr.ud.remote_qkey;
                if (wr.opcode == IBV_WR_LOCAL_INV || wr.opcode == IBV_WR_SEND_WITH_INV) {
                    request.invalidate_rkey = wr.invalidate_rkey;
                }
                if (wr.opcode == IBV_WR_BIND_MW) {
                    request.bind_rkey = wr.bind_mw.rkey;
                    request.bind_addr = wr.bind_mw.bind_info.addr;
                    request.bind_length = wr.bind_mw.bind_info.length;
                    request.bind_access = wr.bind_mw.bind_info.mw_access_flags;
                }
                if (!request.sges.empty()) {
                    request.head.resize(std::min<std::size_t>(kHeadBytes, request.sges[0].length));
                    if (!read_memory(process, request.sges[0].addr, request.head.data(),
                                     request.head.size())) {
                        request.head.clear();
                    }
                }
                next = reinterpret_cast<std::uintptr_t>(wr.next);
            } else {
                ibv_recv_wr wr{};
                if (!read_struct(process, next, wr)) {
                    break;
                }
                request.queue = breakpoint.hook == Hook::post_recv
                                    ? PostedRequest::Queue::receive
                                    : PostedRequest::Queue::shared_receive;
                request.wr_id = wr.wr_id;
                request.sges =
                    read_sges(process, reinterpret_cast<std::uintptr_t>(wr.sg_list), wr.num_sge);
                next = reinterpret_cast<std::uintptr_t>(wr.next);
            }
            seen.push_back(std::move(request));
        }
        std::lock_guard lock(mutex_);
        requests_.insert(requests_.end(), std::make_move_iterator(seen.begin()),
                         std::make_move_iterator(seen.end()));
    };

    for (;;) {
        // Look first (WNOWAIT): the program's own exit is left for its parent to collect.
        siginfo_t info{};
        if (::waitid(P_ALL, 0, &info, WEXITED | WSTOPPED | __WALL | __WNOTHREAD | WNOWAIT) != 0) {
            if (errno == EINTR) {
                continue;
            }
            return;  // no tracee left
        }
        const pid_t thread = info.si_pid;
        const bool gone =
            info.si_code == CLD_EXITED || info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED;
        if (gone && thread == pid_) {
            return;  // ending this thread detaches: the parent then reaps the program
        }
        int status = 0;
        if (::waitpid(thread, &status, __WALL | __WNOTHREAD) != thread || gone) {
            continue;
        }
        if (!WIFSTOPPED(status)) {
            continue;
        }
        const int signal_number = WSTOPSIG(status);
        const int event = status >> 16;
        if (event != 0) {  // a new thread, an interrupt or a group stop: let it run
            ::ptrace(PTRACE_CONT, thread, nullptr, nullptr);
            continue;
        }
        if (signal_number == SIGTRAP) {
            user_regs_struct registers{};
            get_registers(thread, registers);
            const Breakpoint* hit = nullptr;
            for (const Breakpoint& breakpoint : breakpoints) {
                if (program_counter(registers) - kPcPastTrap == breakpoint.address) {
                    hit = &breakpoint;
                }
            }
            if (hit != nullptr) {
                on_breakpoint(thread, *hit, registers);
                if (emulate_first_instruction(thread, *hit, registers)) {
                    ::ptrace(PTRACE_CONT, thread, nullptr, nullptr);
                    continue;
                }
                // Step over the real first instruction, then put the trap back.
                ::ptrace(PTRACE_POKETEXT, thread, hit->address, hit->original);
                set_program_counter(registers, hit->address);
                set_registers(thread, registers);
                ::ptrace(PTRACE_SINGLESTEP, thread, nullptr, nullptr);
                int step_status = 0;
                ::waitpid(thread, &step_status, __WALL | __WNOTHREAD);
                if (WIFSTOPPED(step_status)) {
                    ::ptrace(PTRACE_POKETEXT, thread, hit->address, with_trap(hit->original));
                    ::ptrace(PTRACE_CONT, thread, nullptr, nullptr);
                } else if (thread == pid_) {
                    return;
                }
                continue;
            }
        }
        ::ptrace(PTRACE_CONT, thread, nullptr, signal_number);  // its own signal: deliver it
    }
#endif
}

}  // namespace lab::grade
