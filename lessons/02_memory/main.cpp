// SPDX-License-Identifier: MIT
// Lesson 02: memory — steps 4 and 5 of the verbs flow.
//
// Allocates a protection domain (PD) and registers a buffer in it as a memory
// region (MR) with several sets of access flags, printing the keys each
// registration gets: the lkey that local work requests name, the rkey a peer
// names in RDMA reads, writes and atomics. Then it shows three refusals with
// their real error codes: remote write access without local write (EINVAL),
// a PD that still has MRs (EBUSY), and more pinned memory than RLIMIT_MEMLOCK
// allows (ENOMEM) — including why root does not see that last one. Last, two
// flags not every device offers, and a zero-based region made with ibv_reg_mr_iova.
//
// Run:   ./lab run 02_memory               (first device, a 4096-byte buffer)
//        ./lab run 02_memory -d rxe0 -s 65536
//
// The ten steps: 1 device list, 2 open, 3 query, 4 PD, 5 MR, 6 CQ, 7 QP,
// 8 INIT/RTR/RTS, 9 post and poll, 10 clean up. This lesson does 4, 5 and 10.

#include <infiniband/verbs.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/device.hpp"
#include "lab/options.hpp"
#include "lab/report.hpp"
#include "lab/resources.hpp"
#include "lab/verbs.hpp"

namespace {

std::string access_names(int access) {
    if (access == 0) {
        return "0 (local read only)";
    }
    std::string names;
    const auto add = [&](int flag, const char* name) {
        if (access & flag) {
            names += names.empty() ? "" : "|";
            names += name;
        }
    };
    add(IBV_ACCESS_LOCAL_WRITE, "LOCAL_WRITE");
    add(IBV_ACCESS_REMOTE_READ, "REMOTE_READ");
    add(IBV_ACCESS_REMOTE_WRITE, "REMOTE_WRITE");
    add(IBV_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC");
    add(IBV_ACCESS_ZERO_BASED, "ZERO_BASED");
    add(IBV_ACCESS_ON_DEMAND, "ON_DEMAND");
    return names;
}

void print_mr(const ibv_mr& mr, int access) {
    std::printf("\t%-50s addr %p length %zu lkey 0x%08x rkey 0x%08x\n",
                access_names(access).c_str(), mr.addr, mr.length, mr.lkey, mr.rkey);
}

std::string limit_text(rlim_t bytes) {
    return bytes == RLIM_INFINITY ? "unlimited" : std::to_string(bytes / 1024) + " KiB";
}

// CAP_IPC_LOCK lets a process lock memory beyond RLIMIT_MEMLOCK; root has it.
// The kernel checks the *effective* set, so a root process can switch it off
// and on again (it stays in the permitted set) to see what a normal user sees.
bool has_ipc_lock() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    lab::check(static_cast<int>(syscall(SYS_capget, &header, data)), "capget");
    return (data[0].effective & (1u << CAP_IPC_LOCK)) != 0;
}

// Switches it on or off: 0, or -1 and errno. It throws nothing: a guard calls it.
int set_ipc_lock(bool enabled) noexcept {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    const auto bit = 1u << CAP_IPC_LOCK;
    if (syscall(SYS_capget, &header, data) != 0) {
        return -1;
    }
    data[0].effective = enabled ? data[0].effective | bit : data[0].effective & ~bit;
    return static_cast<int>(syscall(SYS_capset, &header, data));
}

// One attempt to register @p buffer, undone at once: returns 0 or the errno.
int try_register(ibv_pd* pd, std::span<std::byte> buffer, int access) {
    ibv_mr* mr = ibv_reg_mr(pd, buffer.data(), buffer.size(), access);
    if (mr == nullptr) {
        return errno;
    }
    lab::check(ibv_dereg_mr(mr), "ibv_dereg_mr");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line("Lesson 02: protection domains and memory regions",
                                  lab::kDevice | lab::kSize);
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        // Steps 1-3 (lesson 01): open the device, check the port and the GID.
        lab::Context context = lab::open_device(options.device);
        const lab::GidChoice gid =
            lab::choose_gid(context.get(), options.ib_port, options.gid_index);
        std::printf("Steps 1-3: opened %s, port %u, GID index %d\n",
                    ibv_get_device_name(context->device), unsigned(options.ib_port), gid.index);

        // Step 4: allocate a protection domain. A PD groups the objects that
        // may be used together: a QP can only use MRs of its own PD.
        lab::ProtectionDomain pd(lab::check_ptr(ibv_alloc_pd(context.get()), "ibv_alloc_pd"));
        std::printf("Step 4: ibv_alloc_pd: PD handle %u\n", pd->handle);

        // Step 5: register memory. ibv_reg_mr pins the pages (they cannot be
        // swapped out or moved while the device may access them) and returns
        // two keys: lkey for our own work requests, rkey for a peer's.
        std::vector<std::byte> buffer(options.size);
        const int access_sets[] = {
            0,                       // the device may only read: enough for a buffer we send from
            IBV_ACCESS_LOCAL_WRITE,  // the device may write into it: receive buffers
            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,  // a peer may RDMA-read it
            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                IBV_ACCESS_REMOTE_ATOMIC,  // a peer may write and run atomics too
        };
        std::printf("Step 5: ibv_reg_mr of one %zu-byte buffer, four times:\n", buffer.size());
        std::vector<lab::MemoryRegion> regions;
        for (const int access : access_sets) {
            regions.emplace_back(
                lab::check_ptr(ibv_reg_mr(pd.get(), buffer.data(), buffer.size(), access),
                               "ibv_reg_mr", "is the memlock limit ('ulimit -l') too low?"));
            print_mr(*regions.back(), access);
        }
        std::printf("\tthe same memory may be registered many times; each MR has its own keys\n");
        // VmPin: the kernel counts every page each MR's range touches.
        std::printf("\tpinned by this process (VmPin): %s, whole pages for each MR\n",
                    lab::pinned_memory().c_str());

        // Refusal 1: a region a peer may write into (or run atomics on) must
        // also be writable by the local device; the kernel checks this.
        std::printf("Refusals, with the error codes the verbs return:\n");
        for (const int access : {int(IBV_ACCESS_REMOTE_WRITE), int(IBV_ACCESS_REMOTE_ATOMIC)}) {
            const int refused = try_register(pd.get(), buffer, access);
            if (refused == 0) {
                throw lab::Error("ibv_reg_mr with " + access_names(access) +
                                 " alone was accepted, but the verbs specification forbids it");
            }
            std::printf("\tibv_reg_mr(%s without LOCAL_WRITE): %s\n", access_names(access).c_str(),
                        lab::errno_text(refused).c_str());
        }

        // Refusal 2: a PD cannot go while objects in it (our four MRs) exist.
        // ibv_dealloc_pd returns the errno value itself, not -1.
        const int busy = ibv_dealloc_pd(pd.get());
        if (busy == 0) {
            pd.release();  // it is gone after all; do not free it twice
            throw lab::Error("ibv_dealloc_pd succeeded although the PD still had MRs");
        }
        std::printf("\tibv_dealloc_pd(PD with %zu MRs): %s\n", regions.size(),
                    lab::errno_text(busy).c_str());

        // Refusal 3: pinned memory counts against RLIMIT_MEMLOCK ('ulimit -l').
        // Lower our own soft limit to 64 KiB and try to register 1 MiB. The guards
        // put the limit and the capability back at the block's end, on an exception too.
        int over_limit = 0;
        {
            rlimit original{};
            lab::check(getrlimit(RLIMIT_MEMLOCK, &original), "getrlimit(RLIMIT_MEMLOCK)");
            rlimit lowered = original;
            lowered.rlim_cur = std::min<rlim_t>(64 * 1024, original.rlim_max);
            lab::check(setrlimit(RLIMIT_MEMLOCK, &lowered), "setrlimit(RLIMIT_MEMLOCK)");
            const lab::OnScopeExit restore_limit([&original] {
                lab::warn_if_failed(setrlimit(RLIMIT_MEMLOCK, &original), "setrlimit");
            });
            std::printf("\tRLIMIT_MEMLOCK: %s; lowered to %s for this test\n",
                        limit_text(original.rlim_cur).c_str(),
                        limit_text(lowered.rlim_cur).c_str());
            std::vector<std::byte> large(1024 * 1024);
            const bool had_ipc_lock = has_ipc_lock();
            over_limit = try_register(pd.get(), large, IBV_ACCESS_LOCAL_WRITE);
            std::printf("\tibv_reg_mr(1 MiB), CAP_IPC_LOCK %s: %s\n", had_ipc_lock ? "on" : "off",
                        over_limit == 0 ? "succeeded" : lab::errno_text(over_limit).c_str());
            if (had_ipc_lock) {
                // Root (or a container with --cap-add IPC_LOCK) is not limited.
                // Switch the capability off and see what every other user sees.
                lab::check(set_ipc_lock(false), "capset");
                const lab::OnScopeExit restore_capability(
                    [] { lab::warn_if_failed(set_ipc_lock(true), "capset"); });
                over_limit = try_register(pd.get(), large, IBV_ACCESS_LOCAL_WRITE);
                std::printf("\tibv_reg_mr(1 MiB), CAP_IPC_LOCK off: %s\n",
                            over_limit == 0 ? "succeeded" : lab::errno_text(over_limit).c_str());
            }
        }
        if (over_limit != ENOMEM) {
            throw lab::Error(
                "registering above RLIMIT_MEMLOCK without CAP_IPC_LOCK did not fail "
                "with ENOMEM");
        }
        std::printf(
            "\tthe fix: raise the limit ('ulimit -l unlimited', memlock in "
            "/etc/security/limits.conf, 'docker run --ulimit memlock=-1'); "
            "CAP_IPC_LOCK bypasses it\n");

        // Flags not every device offers, so the lesson prints the answer. ZERO_BASED: a peer
        // addresses the region from 0 (docs/devices.md#zero-based-mr). ON_DEMAND (ODP): pages
        // are faulted in when touched, if odp_caps say so (docs/devices.md#odp).
        std::printf("Flags this device and kernel may not offer:\n");
        ibv_device_attr_ex attr_ex{};
        lab::check(ibv_query_device_ex(context.get(), nullptr, &attr_ex), "ibv_query_device_ex");
        for (const int access : {IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED,
                                 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND}) {
            const int answer = try_register(pd.get(), buffer, access);
            std::printf("\tibv_reg_mr(%s): %s\n", access_names(access).c_str(),
                        answer == 0 ? "accepted" : lab::errno_text(answer).c_str());
        }
        std::printf("\todp_caps.general_caps: %s\n",
                    attr_ex.odp_caps.general_caps & IBV_ODP_SUPPORT ? "ODP_SUPPORT" : "no ODP");
        // The portable zero-based region: ibv_reg_mr_iova names the address a peer
        // uses; iova keeps the buffer's offset in its page, so 0 needs alignment.
        std::vector<std::byte> backing;
        const std::span<std::byte> aligned = lab::page_aligned(backing, options.size);
        lab::MemoryRegion zero_based(lab::check_ptr(
            ibv_reg_mr_iova(pd.get(), aligned.data(), aligned.size(), /*iova=*/0,
                            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
            "ibv_reg_mr_iova", "iova and the buffer must sit at the same offset in a page"));
        std::printf("\tibv_reg_mr_iova(iova 0): rkey 0x%08x, remote addresses 0 to %zu\n",
                    zero_based->rkey, options.size - 1);
        lab::check(ibv_dereg_mr(zero_based.release()), "ibv_dereg_mr");

        // Step 10: clean up — every MR first, then the PD that holds them.
        for (lab::MemoryRegion& region : regions) {
            lab::check(ibv_dereg_mr(region.release()), "ibv_dereg_mr");
        }
        std::printf("Step 10: ibv_dereg_mr on %zu MRs\n", regions.size());
        lab::check(ibv_dealloc_pd(pd.release()), "ibv_dealloc_pd");
        std::printf("\tibv_dealloc_pd: done (no MR left in it)\n");
        return 0;
    });
}
