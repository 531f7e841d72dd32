// VRAMTRACE_WARN_BYTES: one warning on stderr, with the top call sites, each time a device's live
// tracked bytes cross the threshold upward. The hook does the crossing test on the device
// counters' current bytes before and after the allocation (the value their compare-and-swap
// ordered, so the test sees each device's bytes in one order): an upward crossing is
// before < threshold <= after, so the warning re-arms by itself when the bytes fall below again.
// At a crossing the hook only writes the crossing's figures (device, live bytes, threshold, time,
// the event ring's lost count) into a fixed slot and wakes the reporter thread; the reporter takes
// a snapshot, rebuilds the crossing's live set from it (triggers/crossing_live_set.h) and prints
// the warning. When the rebuild cannot be shown exact, the warning says that the sites it lists
// are those of the later snapshot, and how much later. At most one warning per device per
// VRAMTRACE_WARN_INTERVAL seconds (default 10; 0: every crossing), so a program that hovers around
// the threshold does not wake the reporter at every step.
#pragma once

#include <cstdint>

#include "core/tracker.h"

namespace vramtrace::triggers {

// From the hooks, after a successful allocation of a record that counts toward `device`: the
// device's tracked bytes just before and just after it, as the device counters ordered it.
void threshold_on_alloc(Tracker &t, int device, uint64_t before, uint64_t after);

// Reporter thread (or the exiting thread), under the triggers' work mutex: one warning per
// crossing recorded since the last call.
void print_threshold_warnings();

// In a fork child (no warning given yet, as the child's tracker starts empty).
void reset_threshold();

} // namespace vramtrace::triggers
