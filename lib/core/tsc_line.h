// A straight line from the CPU's time-stamp counter to CLOCK_MONOTONIC nanoseconds, and the rule that
// moves it on at each calibration (tsc_clock.h). Pure arithmetic: no clock is read here.
//
//   ns = base_ns + ((tsc - base_tsc) * mult) >> 32        mult: nanoseconds per tick, 32.32 fixed point
//
// A line holds for max_ticks after its base; a reader past that takes the vDSO's clock instead (but
// never less than the line's last value), so a line that is no longer moved on cannot drift far from
// CLOCK_MONOTONIC.
#pragma once

#include <cstdint>

namespace vramtrace::tsc {

// One reading of both clocks at (about) the same instant.
struct Sample {
    uint64_t tsc = 0;
    uint64_t ns = 0; // CLOCK_MONOTONIC
};

struct Line {
    uint64_t base_tsc = 0;
    uint64_t base_ns = 0;
    uint64_t mult = 0;      // ns per tick << 32; 0: no line
    uint64_t max_ticks = 0; // ticks after base_tsc for which the line holds
};

inline bool holds_at(const Line &l, uint64_t tsc) { return l.mult != 0 && tsc - l.base_tsc <= l.max_ticks; }

inline uint64_t ns_at(const Line &l, uint64_t tsc) {
    return l.base_ns + static_cast<uint64_t>((static_cast<unsigned __int128>(tsc - l.base_tsc) * l.mult) >> 32);
}

// A rate that moves by more than this between two calibrations (1/kRateTolerance of itself) means
// the counter's frequency changed (or a sample was bad): the line is dropped and built afresh.
constexpr uint64_t kRateTolerance = 100;
// How much a line's slope may differ from the measured rate (1/kMaxSlowdown of it), to catch up
// with CLOCK_MONOTONIC or to let it catch up, without stepping back.
constexpr uint64_t kMaxSlowdown = 1000;

// The line to publish at counter value at_tsc (read just before publishing, at or after the sample
// `now`), given the previous calibration's sample, the line in use (mult 0: none) and floor_ns, a
// time that readings have already reached (a dropped line's last value; 0: none). The new line
// starts at the highest of: CLOCK_MONOTONIC at at_tsc by the rate just measured, the line in use at
// at_tsc, and floor_ns, so times never step back; its slope is chosen to meet CLOCK_MONOTONIC one
// period after the sample (a period: now - previous), within 1/kMaxSlowdown of the rate either way.
// It holds for hold_ns. Returns a line with mult 0 when the samples give no usable rate (out of
// order, or more than 1/kRateTolerance away from the line in use).
inline Line next_line(const Line &current, Sample previous, Sample now, uint64_t at_tsc, uint64_t floor_ns,
                      uint64_t hold_ns) {
    if (now.tsc <= previous.tsc || now.ns <= previous.ns || at_tsc < now.tsc) return {};
    using u128 = unsigned __int128;
    const uint64_t period_ticks = now.tsc - previous.tsc;
    const uint64_t period_ns = now.ns - previous.ns;
    const u128 rate128 = (u128(period_ns) << 32) / period_ticks;
    if (rate128 == 0 || rate128 >> 64) return {};
    const uint64_t rate = static_cast<uint64_t>(rate128);
    if (current.mult != 0) {
        const uint64_t diff = rate > current.mult ? rate - current.mult : current.mult - rate;
        if (diff > current.mult / kRateTolerance) return {};
    }
    uint64_t start = now.ns + static_cast<uint64_t>((u128(at_tsc - now.tsc) * rate) >> 32);
    if (holds_at(current, at_tsc)) {
        const uint64_t standing = ns_at(current, at_tsc);
        if (standing > start) start = standing;
    }
    if (floor_ns > start) start = floor_ns;
    // Where CLOCK_MONOTONIC will be one period after the sample, at the rate just measured.
    const uint64_t target_tsc = now.tsc + period_ticks, target = now.ns + period_ns;
    const uint64_t slowest = rate - rate / kMaxSlowdown, fastest = rate + rate / kMaxSlowdown;
    uint64_t mult = slowest;
    if (target_tsc > at_tsc && target > start) {
        const u128 m = (u128(target - start) << 32) / (target_tsc - at_tsc);
        mult = m > fastest ? fastest : static_cast<uint64_t>(m);
    }
    if (mult < slowest) mult = slowest;
    Line l;
    l.base_tsc = at_tsc;
    l.base_ns = start;
    l.mult = mult;
    l.max_ticks = static_cast<uint64_t>((u128(hold_ns) << 32) / rate);
    return l;
}

} // namespace vramtrace::tsc
