// What the allocation hooks (lib/interception/hook_scope.h) tell the triggers. Each is one
// predictable branch on the hot path; the work is out of line.
#pragma once

#include <cstdint>

#include "triggers/oom_trigger.h"
#include "triggers/reporter.h"
#include "triggers/threshold.h"
#include "triggers/trigger_config.h"

namespace vramtrace::triggers {

// After a successful allocation that was recorded (counts: it counts toward `device`).
inline void after_recorded_alloc(Tracker &t, bool counts, int device, uint64_t bytes) {
    start_triggers();
    if (counts && trigger_config().threshold_on()) threshold_on_alloc(t, device, bytes);
}

// After a successful free of a tracked record.
inline void after_tracked_free(bool counts, int device, uint64_t bytes) {
    if (counts && trigger_config().threshold_on()) threshold_on_free(device, bytes);
}

} // namespace vramtrace::triggers
