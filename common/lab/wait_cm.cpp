// SPDX-License-Identifier: MIT
// The rdma_cm side of lab::PeerWatch (lesson 11), apart from wait.cpp: only a
// program that watches an rdma_cm connection links this file, and librdmacm.
#include <rdma/rdma_cma.h>

#include "lab/check.hpp"
#include "lab/resources.hpp"
#include "lab/wait.hpp"

namespace lab {

PeerWatch::PeerWatch(rdma_event_channel* channel, rdma_cm_id* id) noexcept
    : fd_(channel->fd),
      gone_events_(POLLIN),
      connection_ended_(&PeerWatch::cm_connection_ended),
      cm_channel_(channel),
      cm_id_(id) {}

bool PeerWatch::cm_connection_ended(const PeerWatch& watch) {
    rdma_cm_event* event = nullptr;
    check(rdma_get_cm_event(watch.cm_channel_, &event), "rdma_get_cm_event");
    const rdma_cm_event_type type = event->event;
    rdma_cm_id* const about = event->id;
    if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
        // A new id for someone else's connection: refuse it, then free it.
        warn_if_failed(rdma_reject(about, nullptr, 0), "rdma_reject");
        check(rdma_ack_cm_event(event), "rdma_ack_cm_event");
        warn_if_failed(rdma_destroy_id(about), "rdma_destroy_id");
        return false;
    }
    check(rdma_ack_cm_event(event), "rdma_ack_cm_event");
    return about == watch.cm_id_ &&
           (type == RDMA_CM_EVENT_DISCONNECTED || type == RDMA_CM_EVENT_REJECTED ||
            type == RDMA_CM_EVENT_UNREACHABLE || type == RDMA_CM_EVENT_CONNECT_ERROR ||
            type == RDMA_CM_EVENT_DEVICE_REMOVAL);
}

}  // namespace lab
