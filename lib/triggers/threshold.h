// VRAMTRACE_WARN_BYTES: one warning on stderr, with the top call sites, each time a device's live
// tracked bytes cross the threshold upward. The hook does the crossing test (an atomic add on the
// threshold's own per-device sums, which follow exactly the records that count toward a device, and
// a compare of the sums before and after: an upward crossing is before < threshold <= after, so the
// warning re-arms by itself when the bytes fall below again). At a crossing the hook captures the
// live set (raw addresses) and the reporter thread symbolizes it and prints the warning, so the
// text describes the moment of the crossing. At most one warning per device per
// VRAMTRACE_WARN_INTERVAL seconds (default 10; 0: every crossing), so a program that hovers around
// the threshold does not pay for a capture at every step.
#pragma once

#include <cstdint>

#include "core/tracker.h"

namespace vramtrace::triggers {

struct PendingWork;

// From the hooks, after a successful allocation / free of a record that counts toward `device`.
void threshold_on_alloc(Tracker &t, int device, uint64_t bytes);
void threshold_on_free(int device, uint64_t bytes);

// Reporter thread: symbolizes the captured snapshot and prints the warning.
void print_threshold_warning(PendingWork &work);

// In a fork child (the child's sums start at zero, as its tracker does).
void reset_threshold();

} // namespace vramtrace::triggers
