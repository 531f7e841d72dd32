// Clocks for records and reports.
//
// monotonic_ns() is CLOCK_MONOTONIC. Every allocation and free takes one reading, so on x86-64 it
// reads the time-stamp counter and places it on a line that the reporter thread fits to
// CLOCK_MONOTONIC twice a second (tsc_clock.h): a plain rdtsc costs half of the vDSO's
// clock_gettime (16 against 28 ns on the H200). Until a line is fitted, when the counter is not
// one the kernel itself keeps time by, and when a reading falls outside the line's period, the
// reading is the vDSO's clock_gettime, never below what the line gave before. Both are
// async-signal-safe and never wait. The counter read is not ordered after earlier loads (an
// lfence would cost what it saves), so readings on two threads may disagree with the order of
// their memory operations by the CPU's out-of-order window; a free's time is never before its
// allocation's (core/tracker.cpp takes the later of the two).
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "core/tsc_line.h"

namespace vramtrace {

inline uint64_t vdso_monotonic_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

namespace tsc {
// The line in use, as a latch: two copies under one sequence number. While the reporter rewrites
// one copy (tsc_clock.cpp, publish), the sequence number sends readers to the other, so a reader
// never waits and never takes a half-written line. floor_ns: a time readings have reached that
// a reading outside every line must not go below (the last value of a dropped line).
struct LineCopy {
    std::atomic<uint64_t> base_tsc{0}, base_ns{0}, mult{0}, max_ticks{0};
};
struct alignas(64) PublishedLine {
    std::atomic<uint32_t> seq{0};
    std::atomic<uint64_t> floor_ns{0};
    LineCopy copy[2];
};
extern PublishedLine g_line;

inline bool read_copy(const PublishedLine &p, Line *l, uint32_t *seq_out) {
    const uint32_t seq = p.seq.load(std::memory_order_acquire);
    *seq_out = seq;
    const LineCopy &c = p.copy[seq & 1];
    l->mult = c.mult.load(std::memory_order_relaxed);
    l->base_tsc = c.base_tsc.load(std::memory_order_relaxed);
    l->base_ns = c.base_ns.load(std::memory_order_relaxed);
    l->max_ticks = c.max_ticks.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    return p.seq.load(std::memory_order_relaxed) == seq;
}
} // namespace tsc

inline uint64_t monotonic_ns() {
#if defined(__x86_64__)
    const tsc::PublishedLine &p = tsc::g_line;
    tsc::Line l;
    // Three tries: a retry reads the copy the writer is not touching. A line published after the
    // copy was read and before the counter was (the thread preempted in between) sends the reading
    // round again: the old line, run on to a later counter, can be above the new one there, and the
    // thread's next reading would step back. Only a writer that publishes during each of three
    // tries sends this reading to the vDSO.
    for (int tries = 0; tries < 3; ++tries) {
        uint32_t seq;
        if (!tsc::read_copy(p, &l, &seq)) continue;
        if (l.mult == 0) break;
        const uint64_t now = __rdtsc();
        if (p.seq.load(std::memory_order_relaxed) != seq) continue;
        // A counter read that the CPU ran ahead of the loads can be just before a new base.
        if (now < l.base_tsc) return l.base_ns;
        if (now - l.base_tsc <= l.max_ticks) return tsc::ns_at(l, now);
        const uint64_t last = tsc::ns_at(l, l.base_tsc + l.max_ticks); // the expired line's end
        const uint64_t v = vdso_monotonic_ns();
        return v > last ? v : last;
    }
    const uint64_t v = vdso_monotonic_ns(), floor = p.floor_ns.load(std::memory_order_relaxed);
    return v > floor ? v : floor;
#else
    return vdso_monotonic_ns();
#endif
}

inline uint64_t wall_ns() {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

} // namespace vramtrace
