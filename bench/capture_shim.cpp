// Exposes lib/tracking/stack_capture.cpp, built into this small shared library as it is built into
// libvramtrace.so (libunwind linked statically, everything hidden), to bench/capture_bench.cpp.
// Frames inside this library are the "own" frames the capture skips.
#include <cstdint>

#include "tracking/recent_walks.h"
#include "tracking/stack_capture.h"

#define VT_BENCH_API extern "C" __attribute__((visibility("default")))

VT_BENCH_API uint32_t vtb_capture_cached(uintptr_t *out, uint32_t max_depth) {
    return vramtrace::capture_stack(out, max_depth);
}

VT_BENCH_API uint32_t vtb_capture_unwinder(uintptr_t *out, uint32_t max_depth) {
    return vramtrace::capture_stack_unwinder(out, max_depth);
}

VT_BENCH_API void vtb_capture_stats(uint64_t *rules_derived, uint64_t *fallbacks) {
    vramtrace::StackCaptureStats s = vramtrace::stack_capture_stats();
    *rules_derived = s.rules_derived;
    *fallbacks = s.fallbacks;
}

VT_BENCH_API void vtb_replay_stats(uint64_t *replayed, uint64_t *recorded) {
    vramtrace::walks::ReplayStats s = vramtrace::walks::replay_stats();
    *replayed = s.replayed;
    *recorded = s.recorded;
}
