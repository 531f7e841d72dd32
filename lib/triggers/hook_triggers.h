// What the allocation hooks (lib/interception/hook_scope.h) tell the triggers. Each is one
// predictable branch on the hot path; the work is out of line.
#pragma once

#include <cstdint>

#include "core/hot_flags.h"

#include "triggers/oom_trigger.h"
#include "triggers/reporter.h"
#include "triggers/threshold.h"
#include "triggers/trigger_config.h"

namespace vramtrace::triggers {

// After a successful allocation that was recorded: live_after is the device's tracked bytes just
// after it (record_allocation), 0 when it does not count toward a device. Frees tell the triggers
// nothing: the threshold reads the device counters' own live bytes.
inline void after_recorded_alloc(Tracker &t, int device, uint64_t bytes, uint64_t live_after) {
    const uint64_t w = hot::word();
    if ((w & hot::kTriggersStarted) == 0) start_triggers();
    if ((w & hot::kNoThreshold) == 0 && live_after != 0 && trigger_config().threshold_on())
        threshold_on_alloc(t, device, live_after - bytes, live_after);
}

} // namespace vramtrace::triggers
