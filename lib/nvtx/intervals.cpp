// NVTX start/end intervals (see intervals.h).
#include "nvtx/intervals.h"

#include <atomic>

#include "core/clock.h"
#include "core/thread_state.h"

namespace vramtrace::nvtx {
namespace {
Interval g_intervals[kMaxIntervals];
std::atomic<uint32_t> g_next{0};        // slots handed out
std::atomic<uint32_t> g_published{0};   // slots whose start is written, in order
std::atomic<uint64_t> g_dropped{0};
} // namespace

uint64_t start_interval(uint16_t domain, uint32_t name, uint32_t category) {
    uint32_t i = g_next.fetch_add(1, std::memory_order_relaxed);
    if (i >= kMaxIntervals) {
        g_next.store(kMaxIntervals, std::memory_order_relaxed);
        g_dropped.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }
    Interval &v = g_intervals[i];
    v.domain = domain;
    v.name = name;
    v.category = category;
    v.start_thread = current_tid();
    v.start_ns = monotonic_ns();
    // Publish in slot order, so that a reader sees a prefix of complete starts.
    for (uint32_t expected = i; !g_published.compare_exchange_weak(expected, i + 1, std::memory_order_release,
                                                                   std::memory_order_relaxed);
         expected = i) {
    }
    return uint64_t{i} + 1;
}

void end_interval(uint64_t id) {
    if (id == 0 || id > g_published.load(std::memory_order_acquire)) return;
    Interval &v = g_intervals[id - 1];
    if (v.end_ns != 0) return;
    v.end_thread = current_tid();
    __atomic_store_n(&v.end_ns, monotonic_ns(), __ATOMIC_RELEASE);
}

uint32_t interval_count() { return g_published.load(std::memory_order_acquire); }
const Interval &interval_at(uint32_t index) { return g_intervals[index]; }
uint64_t intervals_dropped() { return g_dropped.load(std::memory_order_relaxed); }

} // namespace vramtrace::nvtx
