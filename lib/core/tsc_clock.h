// Fitting monotonic_ns()'s counter line (clock.h) to CLOCK_MONOTONIC.
#pragma once

#include <cstdint>

#include "core/tsc_line.h"

namespace vramtrace::tsc {

// How often the reporter calls calibrate(), and how long a line holds without a new calibration
// (a reporter busy with a long dump lets readers fall back to the vDSO rather than drift).
constexpr uint64_t kCalibrationPeriodNs = 500'000'000ull;
constexpr uint64_t kLineHoldNs = 4 * kCalibrationPeriodNs;
// The second calibration comes this soon after the first, so that a line is in use 10 ms after the
// first allocation (its rate then good to a few ppm; the next calibrations refine it).
constexpr uint64_t kFirstPeriodNs = 10'000'000ull;

// Called by one thread only (the reporter): at its start, kFirstPeriodNs later, then about every
// kCalibrationPeriodNs. The first call decides whether the counter may be used: x86-64 with an
// invariant TSC (CPUID) and VRAMTRACE_TSC not 0; every call checks that the kernel's clocksource is
// "tsc" (so the kernel found the counters in step across cores, and has not given up on them since).
// From the second call on it publishes a line. A calibration whose sample is disturbed is skipped.
void calibrate();

// Makes `l` the line in use (mult 0: none). Calibrating thread only (and tests).
void publish(const Line &l);

// For the debug line at exit: "tsc line, 0.357143 ns per tick", or why not ("vDSO: clocksource
// kvm-clock"). Any thread.
const char *describe();

// Forgets the line, keeping the floor at what it had reached (the fork child's tracker starts over;
// tests). Only while no thread calibrates.
void reset();

} // namespace vramtrace::tsc
