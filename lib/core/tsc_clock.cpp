#include "core/tsc_clock.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "core/clock.h"
#include "core/config.h"

namespace vramtrace::tsc {

PublishedLine g_line;

namespace {

enum State : int { kUnchecked, kRefused, kSampling };

// Written by the calibrating thread only. g_why is written before g_state turns kRefused and never
// after, so describe() (the exiting thread) reads it whole.
std::atomic<int> g_state{kUnchecked};
std::atomic<uint64_t> g_drops{0};
Sample g_previous;
Line g_current;
char g_why[96] = "";

// A sample whose two vDSO readings lie further apart than this (a preemption, a hypervisor's steal)
// would bend the line: the calibration is skipped.
constexpr uint64_t kMaxSampleGapNs = 2000;

void write_copy(LineCopy &c, const Line &l) {
    c.base_tsc.store(l.base_tsc, std::memory_order_relaxed);
    c.base_ns.store(l.base_ns, std::memory_order_relaxed);
    c.max_ticks.store(l.max_ticks, std::memory_order_relaxed);
    c.mult.store(l.mult, std::memory_order_relaxed);
}

void refuse(const char *why) {
    snprintf(g_why, sizeof g_why, "vDSO: %s", why);
    g_state.store(kRefused, std::memory_order_release);
}

#if defined(__x86_64__)
bool invariant_tsc() {
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1; // "TscInvariant": constant rate in every P-, C- and T-state
}

// The kernel's clocksource: "tsc" means it checked that the counters agree across cores. Read at
// every calibration: the kernel's watchdog may give up on the counter later.
bool kernel_keeps_time_by_tsc(char *name, size_t capacity) {
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(name, capacity, "unreadable");
        return false;
    }
    ssize_t n = read(fd, name, capacity - 1);
    close(fd);
    if (n < 0) n = 0;
    name[n] = 0;
    if (n > 0 && name[n - 1] == '\n') name[n - 1] = 0;
    return strcmp(name, "tsc") == 0;
}

// Both clocks at about the same instant: the counter between two vDSO readings, the closest pair of
// five. Returns false when even that pair is kMaxSampleGapNs apart.
bool take_sample(Sample *out) {
    uint64_t best_gap = UINT64_MAX;
    for (int i = 0; i < 5; ++i) {
        const uint64_t before = vdso_monotonic_ns();
        const uint64_t t = __rdtsc();
        const uint64_t after = vdso_monotonic_ns();
        if (after - before < best_gap) {
            best_gap = after - before;
            out->tsc = t;
            out->ns = before + (after - before) / 2;
        }
    }
    return best_gap <= kMaxSampleGapNs;
}

// The value readings of the line in use have reached by now (0 without one).
uint64_t line_now() {
    const uint64_t t = __rdtsc();
    return holds_at(g_current, t) ? ns_at(g_current, t) : 0;
}

#endif

// Readings outside any line stay at or above what the line in use has reached.
void drop_line() {
#if defined(__x86_64__)
    const uint64_t reached = line_now();
    if (reached > g_line.floor_ns.load(std::memory_order_relaxed))
        g_line.floor_ns.store(reached, std::memory_order_relaxed);
#endif
    publish(Line{});
}

} // namespace

void publish(const Line &l) {
    // The latch: readers follow the sequence number's low bit to the copy not being written.
    const uint32_t s = g_line.seq.load(std::memory_order_relaxed);
    const uint32_t first = (s & 1) ? s + 1 : s + 2; // the next even number
    g_line.seq.store(first - 1, std::memory_order_relaxed); // odd: readers on copy 1
    std::atomic_thread_fence(std::memory_order_release);
    write_copy(g_line.copy[0], l);
    g_line.seq.store(first, std::memory_order_release); // even: readers on copy 0, the new line
    write_copy(g_line.copy[1], l);
    g_current = l;
}

void calibrate() {
#if defined(__x86_64__)
    int state = g_state.load(std::memory_order_relaxed);
    if (state == kRefused) return;
    if (state == kUnchecked) {
        if (!config().tsc_clock) return refuse("VRAMTRACE_TSC=0");
        if (!invariant_tsc()) return refuse("no invariant TSC");
    }
    char source[32];
    if (!kernel_keeps_time_by_tsc(source, sizeof source)) {
        char why[64];
        snprintf(why, sizeof why, "clocksource %s", source);
        if (g_current.mult != 0) drop_line();
        return refuse(why);
    }
    Sample now;
    if (!take_sample(&now)) return; // the line in use (if any) holds until the next calibration
    if (state == kUnchecked) {
        g_previous = now;
        g_state.store(kSampling, std::memory_order_relaxed);
        return;
    }
    const Line next = next_line(g_current, g_previous, now, __rdtsc(),
                                g_line.floor_ns.load(std::memory_order_relaxed), kLineHoldNs);
    if (next.mult != 0) {
        publish(next);
    } else if (g_current.mult != 0) {
        // The rate moved (or the samples are out of order): readers go to the vDSO, no lower than
        // the line had reached, and the next calibration fits a fresh line from this sample.
        drop_line();
        g_drops.fetch_add(1, std::memory_order_relaxed);
    }
    g_previous = now;
#endif
}

const char *describe() {
    if (g_state.load(std::memory_order_acquire) == kRefused) return g_why;
    static char text[96];
    Line l;
    uint32_t seq = 0;
    if (read_copy(g_line, &l, &seq) && l.mult != 0) {
        snprintf(text, sizeof text, "tsc line, %.6f ns per tick", static_cast<double>(l.mult) / 4294967296.0);
    } else if (const uint64_t drops = g_drops.load(std::memory_order_relaxed)) {
        snprintf(text, sizeof text, "vDSO: the counter's rate moved; line dropped %llu time(s), fitting again",
                 static_cast<unsigned long long>(drops));
    } else {
        snprintf(text, sizeof text, "vDSO: not calibrated yet");
    }
    return text;
}

void reset() {
    // Also where a fork child starts: the parent's reporter may have been half-way through
    // publish(), leaving the sequence number odd; publish() starts from either parity.
    drop_line();
    g_previous = Sample{};
    g_drops.store(0, std::memory_order_relaxed);
    g_state.store(kUnchecked, std::memory_order_release);
}

} // namespace vramtrace::tsc
