// Out-of-memory: called inside an intercepted allocation that failed with CUDA_ERROR_OUT_OF_MEMORY /
// cudaErrorMemoryAllocation, after the real call returned and before the hook returns its result
// (the hook restores errno; nothing here touches the program's out-parameters). It
//   - asks the driver for free/total memory (cuMemGetInfo_v2, when the failing device is the
//     calling thread's current one), counts the failure (oom_log.h) and records an "oom" event;
//   - unless rate-limited, captures the state (capture_snapshot: the live set with raw addresses)
//     and hands it to the reporter thread, which symbolizes it and writes
//     trigger_output_path("oom", N).
// Rate limit: at most VRAMTRACE_OOM_SNAPSHOTS (default 3) OOM snapshots per process, and none
// within VRAMTRACE_OOM_INTERVAL seconds (default 10) of the previous one. Every failure is still
// counted and kept in the log (the last 16) that every later snapshot lists.
#pragma once

#include <cstdint>

#include "core/tracker.h"

namespace vramtrace::triggers {

struct OomRequest {
    uint8_t api = 0;          // ApiId of the failing call
    uint64_t requested_bytes = 0;
    uint64_t stream = 0;
    int device = -2;          // the device it was for (the current context's for plain calls)
    uint32_t stack = 0;       // the failing call's stack (already interned by the hook)
    int result = 0;           // the code the real call returned
};

void on_allocation_oom(Tracker &t, const OomRequest &request);

// In a fork child: the child may write its own OOM snapshots.
void reset_oom_rate_limit();

} // namespace vramtrace::triggers
