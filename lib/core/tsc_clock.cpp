#include "core/tsc_clock.h"

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

enum class State { Unchecked, Refused, Sampling };

// Touched by the calibrating thread only (describe() reads them at exit, after the reporter).
State g_state = State::Unchecked;
Sample g_previous;
Line g_current;
char g_why[96] = "vDSO: not calibrated yet";

void publish(const Line &l) {
    const uint32_t s = g_line.seq.load(std::memory_order_relaxed);
    g_line.seq.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release); // the odd number is seen before the fields
    g_line.base_tsc.store(l.base_tsc, std::memory_order_relaxed);
    g_line.base_ns.store(l.base_ns, std::memory_order_relaxed);
    g_line.max_ticks.store(l.max_ticks, std::memory_order_relaxed);
    g_line.mult.store(l.mult, std::memory_order_relaxed);
    g_line.seq.store(s + 2, std::memory_order_release);
    g_current = l;
}

#if defined(__x86_64__)
bool invariant_tsc() {
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1; // "TscInvariant": constant rate in every P-, C- and T-state
}

// The kernel's clocksource: "tsc" means it checked that the counters agree across cores.
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

// Read both clocks as close together as this thread can: the counter between two vDSO readings,
// the closest pair of five.
Sample take_sample() {
    Sample best;
    uint64_t best_gap = UINT64_MAX;
    for (int i = 0; i < 5; ++i) {
        const uint64_t before = vdso_monotonic_ns();
        const uint64_t t = __rdtsc();
        const uint64_t after = vdso_monotonic_ns();
        if (after - before < best_gap) {
            best_gap = after - before;
            best.tsc = t;
            best.ns = before + (after - before) / 2;
        }
    }
    return best;
}

// ns per read of each clock, the best of five alternated runs of 1,000 reads (a preemption in one run
// does not decide): a counter that a hypervisor traps is not cheaper.
bool counter_is_cheaper(uint64_t *counter_ns, uint64_t *vdso_ns) {
    constexpr int kReads = 1000;
    volatile uint64_t sink = 0;
    uint64_t best_counter = UINT64_MAX, best_vdso = UINT64_MAX;
    for (int run = 0; run < 5; ++run) {
        const uint64_t t0 = vdso_monotonic_ns();
        for (int i = 0; i < kReads; ++i) sink = sink + __rdtsc();
        const uint64_t t1 = vdso_monotonic_ns();
        for (int i = 0; i < kReads; ++i) sink = sink + vdso_monotonic_ns();
        const uint64_t t2 = vdso_monotonic_ns();
        if (t1 - t0 < best_counter) best_counter = t1 - t0;
        if (t2 - t1 < best_vdso) best_vdso = t2 - t1;
    }
    *counter_ns = best_counter / kReads;
    *vdso_ns = best_vdso / kReads;
    return best_counter < best_vdso;
}
#endif

bool may_use_counter() {
    if (!config().tsc_clock) {
        snprintf(g_why, sizeof g_why, "vDSO: VRAMTRACE_TSC=0");
        return false;
    }
#if defined(__x86_64__)
    if (!invariant_tsc()) {
        snprintf(g_why, sizeof g_why, "vDSO: no invariant TSC");
        return false;
    }
    char source[32];
    if (!kernel_keeps_time_by_tsc(source, sizeof source)) {
        snprintf(g_why, sizeof g_why, "vDSO: clocksource %s", source);
        return false;
    }
    uint64_t counter_ns = 0, vdso_ns = 0;
    if (!counter_is_cheaper(&counter_ns, &vdso_ns)) {
        snprintf(g_why, sizeof g_why, "vDSO: a counter read (%llu ns) is no cheaper than clock_gettime (%llu ns)",
                 static_cast<unsigned long long>(counter_ns), static_cast<unsigned long long>(vdso_ns));
        return false;
    }
    return true;
#else
    snprintf(g_why, sizeof g_why, "vDSO: not x86-64");
    return false;
#endif
}

} // namespace

void calibrate() {
#if defined(__x86_64__)
    if (g_state == State::Refused) return;
    if (g_state == State::Unchecked) {
        if (!may_use_counter()) {
            g_state = State::Refused;
            return;
        }
        g_state = State::Sampling;
        g_previous = take_sample();
        return;
    }
    const Sample now = take_sample();
    Line next = next_line(g_current, g_previous, now, kLineHoldNs);
    if (next.mult == 0 && g_current.mult != 0) {
        // The rate moved (or the samples are out of order): readers go back to the vDSO, and the
        // next calibration starts a fresh line from this sample.
        publish(Line{});
        snprintf(g_why, sizeof g_why, "vDSO: the counter's rate changed; fitting again");
    } else if (next.mult != 0) {
        publish(next);
        snprintf(g_why, sizeof g_why, "tsc line, %.6f ns per tick", static_cast<double>(next.mult) / 4294967296.0);
    }
    g_previous = now;
#endif
}

const char *describe() { return g_why; }

void reset() {
    // Also where a fork child starts: the parent's reporter may have been half-way through
    // publish(), so the sequence number is made even here rather than moved on by two.
    g_line.mult.store(0, std::memory_order_relaxed);
    g_line.seq.store((g_line.seq.load(std::memory_order_relaxed) | 1) + 1, std::memory_order_release);
    g_current = Line{};
    g_state = State::Unchecked;
    g_previous = Sample{};
    snprintf(g_why, sizeof g_why, "vDSO: not calibrated yet");
}

} // namespace vramtrace::tsc
