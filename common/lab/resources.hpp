// SPDX-License-Identifier: MIT
/**
 * @file resources.hpp
 * @brief RAII owners for verbs objects (each taught by the lesson named on it).
 *
 * Every verbs object must be destroyed, and in the reverse order of creation:
 * a QP before the CQs it uses, an MR before its PD, everything before the
 * device context. A lesson declares its owners in creation order, so C++
 * destroys them in the right order when they go out of scope. Cleanup is the
 * last of the ten steps, and it happens even when a step in between throws.
 *
 * The deleters never throw (they run during unwinding); a failed destroy is
 * reported on stderr, because it usually means an object still in use, e.g.
 * ibv_dealloc_pd on a PD that still has a registered MR (EBUSY, lesson 02).
 */
#pragma once

#include <infiniband/verbs.h>

#include <memory>
#include <span>
#include <string_view>
#include <utility>

namespace lab {

/// Print "warning: <verb> failed: <errno text>" when a destroy verb returns non-zero.
void warn_if_failed(int result, std::string_view verb) noexcept;

/// @cond INTERNAL
template <auto Destroy, const char* Name>
struct VerbsDeleter {
    template <typename T>
    void operator()(T* object) const noexcept {
        warn_if_failed(Destroy(object), Name);
    }
};
inline constexpr char kCloseDevice[] = "ibv_close_device";
inline constexpr char kDeallocPd[] = "ibv_dealloc_pd";
inline constexpr char kDeregMr[] = "ibv_dereg_mr";
inline constexpr char kDestroyCompChannel[] = "ibv_destroy_comp_channel";
inline constexpr char kDestroyCq[] = "ibv_destroy_cq";
inline constexpr char kDestroyQp[] = "ibv_destroy_qp";
inline constexpr char kDestroySrq[] = "ibv_destroy_srq";
inline constexpr char kDestroyAh[] = "ibv_destroy_ah";
/// @endcond

/// Owns an ibv_context from ibv_open_device (lesson 01); closed by ibv_close_device.
using Context = std::unique_ptr<ibv_context, VerbsDeleter<ibv_close_device, kCloseDevice>>;
/// Owns a protection domain from ibv_alloc_pd (lesson 02).
using ProtectionDomain = std::unique_ptr<ibv_pd, VerbsDeleter<ibv_dealloc_pd, kDeallocPd>>;
/// Owns a memory region from ibv_reg_mr (lesson 02).
using MemoryRegion = std::unique_ptr<ibv_mr, VerbsDeleter<ibv_dereg_mr, kDeregMr>>;
/// Owns a completion channel from ibv_create_comp_channel (lesson 03).
using CompletionChannel =
    std::unique_ptr<ibv_comp_channel, VerbsDeleter<ibv_destroy_comp_channel, kDestroyCompChannel>>;
/// Owns a completion queue from ibv_create_cq (lesson 03).
using CompletionQueue = std::unique_ptr<ibv_cq, VerbsDeleter<ibv_destroy_cq, kDestroyCq>>;
/// Owns a queue pair from ibv_create_qp (lesson 04).
using QueuePair = std::unique_ptr<ibv_qp, VerbsDeleter<ibv_destroy_qp, kDestroyQp>>;
/// Owns a shared receive queue from ibv_create_srq (exercise 03).
using SharedReceiveQueue = std::unique_ptr<ibv_srq, VerbsDeleter<ibv_destroy_srq, kDestroySrq>>;
/// Owns an address handle from ibv_create_ah (exercise 02).
using AddressHandle = std::unique_ptr<ibv_ah, VerbsDeleter<ibv_destroy_ah, kDestroyAh>>;

/**
 * @brief Runs a function when it goes out of scope, also while an exception
 *        unwinds it (lesson 02 lowers a limit and drops a capability for a
 *        test, and puts both back this way).
 *
 * The function runs in a destructor, so it must not throw: report a failure
 * with warn_if_failed() instead.
 */
template <typename Undo>
class OnScopeExit {
  public:
    /// Runs @p undo at the end of the scope.
    explicit OnScopeExit(Undo undo) noexcept : undo_(std::move(undo)) {}
    /// Runs the undo (which must not throw: it runs during unwinding too).
    ~OnScopeExit() { undo_(); }
    OnScopeExit(const OnScopeExit&) = delete;
    OnScopeExit& operator=(const OnScopeExit&) = delete;

  private:
    Undo undo_;
};

/**
 * @brief Owns the array from ibv_get_device_list (lesson 01); freed by ibv_free_device_list.
 *
 * The ibv_device pointers in it stay valid only while the list lives, but a
 * context opened from one of them does not need the list any more.
 */
class DeviceList {
  public:
    /// Calls ibv_get_device_list; throws lab::Error when it fails.
    DeviceList();
    /// Free the list with ibv_free_device_list.
    ~DeviceList();
    DeviceList(const DeviceList&) = delete;
    DeviceList& operator=(const DeviceList&) = delete;

    /// The devices found, possibly none; valid while this list lives.
    [[nodiscard]] std::span<ibv_device* const> devices() const& noexcept {
        return {devices_, static_cast<std::size_t>(count_)};
    }
    /// A temporary list is freed at the end of the statement: its devices would dangle.
    std::span<ibv_device* const> devices() const&& = delete;

  private:
    ibv_device** devices_ = nullptr;
    int count_ = 0;
};

}  // namespace lab
