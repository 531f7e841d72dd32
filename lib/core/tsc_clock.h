// Fitting monotonic_ns()'s counter line (clock.h) to CLOCK_MONOTONIC.
#pragma once

#include <cstdint>

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
// invariant TSC (CPUID), the kernel's clocksource "tsc" (so the kernel found the counters in step
// across cores), VRAMTRACE_TSC not 0, and a counter read cheaper than clock_gettime here. From the
// second call on it publishes a line.
void calibrate();

// For the debug line at exit: "tsc line, 0.357 ns per tick" or why not ("vDSO: clocksource kvm-clock").
const char *describe();

// Forgets the line (the fork child's tracker starts over; tests).
void reset();

} // namespace vramtrace::tsc
