// The probe library's entry points (capture_probe.h).
#include "capture_probe.h"

#include "tracking/recent_walks.h"
#include "tracking/stack_capture.h"

#define VT_PROBE_API extern "C" __attribute__((visibility("default")))

VT_PROBE_API uint32_t vtp_capture(uintptr_t *out, uint32_t max_depth) {
    return vramtrace::capture_stack(out, max_depth);
}

VT_PROBE_API uint32_t vtp_capture_unwinder(uintptr_t *out, uint32_t max_depth) {
    return vramtrace::capture_stack_unwinder(out, max_depth);
}

VT_PROBE_API void vtp_capture_stats(uint64_t *rules_derived, uint64_t *fallbacks) {
    vramtrace::StackCaptureStats s = vramtrace::stack_capture_stats();
    *rules_derived = s.rules_derived;
    *fallbacks = s.fallbacks;
}

VT_PROBE_API void vtp_replay_stats(uint64_t *stored, uint64_t *replayed) {
    vramtrace::walks::ReplayStats s = vramtrace::walks::replay_stats();
    *stored = s.stored;
    *replayed = s.replayed;
}
