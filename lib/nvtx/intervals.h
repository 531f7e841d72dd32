// NVTX start/end ranges (nvtxRangeStart*/End, which may start on one thread and end on another):
// kept as time intervals for the timeline, never attached to allocations. At most kMaxIntervals
// per process; later starts are counted (intervals_dropped) and get range id 0, whose end is ignored.
#pragma once

#include <cstdint>

namespace vramtrace::nvtx {

constexpr uint32_t kMaxIntervals = 4096;

struct Interval {
    uint16_t domain = 0;
    uint32_t name = 0;        // range_table.h name id
    uint32_t category = 0;    // nvtxEventAttributes_t::category; 0: none
    uint64_t start_ns = 0;    // CLOCK_MONOTONIC
    uint64_t end_ns = 0;      // 0: still open at the dump
    uint32_t start_thread = 0;
    uint32_t end_thread = 0;
};

// The nvtxRangeId_t of the new interval (its index + 1), 0 when the table is full.
uint64_t start_interval(uint16_t domain, uint32_t name, uint32_t category = 0);
void end_interval(uint64_t id);

// Calls fn(const Interval&) for every interval started so far, in start order.
template <class Fn> void for_each_interval(Fn &&fn);
uint32_t interval_count();
const Interval &interval_at(uint32_t index);
uint64_t intervals_dropped();

template <class Fn> void for_each_interval(Fn &&fn) {
    for (uint32_t i = 0, n = interval_count(); i < n; ++i) fn(interval_at(i));
}

} // namespace vramtrace::nvtx
