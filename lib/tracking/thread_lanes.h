// Thread lanes: a small index per thread, so that the tracking tables can keep per-thread state
// (counters, peak-site sums, event-ring cursors) that only one thread ever writes. The allocation
// path then writes no cache line that other threads write too, beyond each device's one atomic
// word (device_counters.h).
//
// A thread takes the lowest free lane the first time it asks and gives it back when it exits (a
// pthread key destructor), so a pool of short-lived threads reuses a few lanes. The state a lane
// indexes is never reset: the next owner keeps adding to it, which is right for sums. Handing a
// lane over is a release/acquire pair on its flag, so everything the old owner wrote happens before
// anything the new owner writes.
//
// Threads beyond kLanes at once, and a thread that calls in again after its lane was given back
// (a thread_local destructor that frees device memory), get kSharedLane: state under that index is
// written by several threads, so its users guard it with a lock.
#pragma once

#include <cstdint>

namespace vramtrace::lanes {

constexpr unsigned kLanes = 256;
constexpr unsigned kSharedLane = kLanes;
constexpr unsigned kAllLanes = kLanes + 1; // size of a per-lane array, the shared lane included

namespace detail {
// kAllLanes + lane while this thread holds `lane` (kSharedLane included); other values: none yet,
// or given back at thread exit (thread_lanes.cpp).
extern constinit thread_local unsigned t_lane __attribute__((tls_model("initial-exec")));
constexpr unsigned kHeldBase = kAllLanes;
unsigned take_this_thread_lane();
extern uint32_t g_serial[kLanes]; // lane_serial's counts
} // namespace detail

// This thread's lane in [0, kLanes], taking one on the first call. Never blocks; calls no malloc
// after the first call of the process (pthread_key_create, pthread_setspecific). Inline: every
// table of the allocation path asks, and a held lane is one thread-local read.
inline unsigned this_thread_lane() {
    const unsigned held = detail::t_lane - detail::kHeldBase;
    return held < kAllLanes ? held : detail::take_this_thread_lane();
}

// This thread's lane if it holds one, else kSharedLane; takes none. Safe in a signal handler.
unsigned held_lane();

// Lanes taken now (diagnostics and tests).
unsigned lanes_in_use();

// How many times `lane` (< kLanes) has been taken: a lane's owner tells by it whether state it keeps
// there was left by an earlier thread. Read by the owner only.
inline uint32_t lane_serial(unsigned lane) { return lane < kLanes ? detail::g_serial[lane] : 0; }

} // namespace vramtrace::lanes
