// lib/tracking's stack capture, built as libvramtrace.so builds it (libunwind linked in, everything
// hidden) into a shared library of its own, libvt_capture_probe.so: the frames it leaves out as its
// own are that library's, so the frames captured are the caller's. Used by bench/capture_bench.cpp
// and tests/unit/tracking/test_recent_walks.cpp.
#pragma once

#include <cstdint>

extern "C" {
// capture_stack (the cached walk, recent walks first) and capture_stack_unwinder (libunwind's own).
uint32_t vtp_capture(uintptr_t *out, uint32_t max_depth);
uint32_t vtp_capture_unwinder(uintptr_t *out, uint32_t max_depth);
// stack_capture_stats() and walks::replay_stats() since the library was loaded.
void vtp_capture_stats(uint64_t *rules_derived, uint64_t *fallbacks);
void vtp_replay_stats(uint64_t *stored, uint64_t *replayed);
}
