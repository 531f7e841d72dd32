// Clocks for records and reports.
//
// monotonic_ns() is CLOCK_MONOTONIC. Every allocation and free takes one reading, so on x86-64 it
// reads the time-stamp counter and places it on a line that the reporter thread fits to
// CLOCK_MONOTONIC twice a second (tsc_clock.h): a plain rdtsc costs a third to a half of the
// vDSO's clock_gettime. Until a line is fitted, when the counter is not one the kernel itself
// keeps time by, and whenever a reading falls outside the line's period or races its update, the
// reading is the vDSO's clock_gettime. Both are async-signal-safe and never wait.
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
// The line in use, under a sequence number (odd while the reporter rewrites it). mult 0: none.
struct alignas(64) PublishedLine {
    std::atomic<uint32_t> seq{0};
    std::atomic<uint64_t> base_tsc{0}, base_ns{0}, mult{0}, max_ticks{0};
};
extern PublishedLine g_line;
} // namespace tsc

inline uint64_t monotonic_ns() {
#if defined(__x86_64__)
    tsc::PublishedLine &p = tsc::g_line;
    const uint32_t seq = p.seq.load(std::memory_order_acquire);
    tsc::Line l;
    l.mult = p.mult.load(std::memory_order_relaxed);
    if (l.mult != 0 && (seq & 1) == 0) {
        l.base_tsc = p.base_tsc.load(std::memory_order_relaxed);
        l.base_ns = p.base_ns.load(std::memory_order_relaxed);
        l.max_ticks = p.max_ticks.load(std::memory_order_relaxed);
        const uint64_t now = __rdtsc();
        std::atomic_thread_fence(std::memory_order_acquire);
        // One try: a reading that races the update takes the vDSO (a signal handler must not spin
        // on a writer it interrupted).
        if (p.seq.load(std::memory_order_relaxed) == seq && tsc::holds_at(l, now)) return tsc::ns_at(l, now);
    }
#endif
    return vdso_monotonic_ns();
}

inline uint64_t wall_ns() {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

} // namespace vramtrace
