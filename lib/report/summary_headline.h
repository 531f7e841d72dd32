// The summary's first lines, the answer before the detail (docs/cli.md, "The summary"), and the
// section of what was still live, by exit-time class (live_classes.h). Internal to lib/report.
#pragma once

#include <cstdint>
#include <string>

#include "report/live_classes.h"
#include "report/summary_body.h"
#include "report/summary_lines.h"
#include "snapshot/snapshot_model.h"

namespace vramtrace::report::summary {

// The headline, at most about 12 lines for a run on one device:
//   - per device with a peak: its bytes, when (time since start), the vramtrace_mark last made
//     at or before it, the NVTX range stack and the call site of the allocation that reached it
//     (the device's last alloc event at or before the peak's time, when the history has it);
//     then the three call sites that held the most at the peak;
//   - what was live at the snapshot, split into the classes (at exit) with the largest call site
//     of "grew" and of "held since start";
//   - the out-of-memory failures: how many, the last one's request and the error's name;
//   - for a PyTorch program on its caching allocator, that call sites are segments and how to get
//     one record per tensor.
void headline(Lines &lines, const snapshot::Snapshot &s, const SummaryBody::State &body, const LiveClasses &classes);

// "leaked at exit: ..." (or "still live at the snapshot: ..."), each class with its call sites and
// their sizes; `top_n` and `sizes_per_site` bound the lists (0: all).
void live_by_class(Lines &lines, const snapshot::Snapshot &s, const LiveClasses &classes, size_t top_n, size_t sizes_per_site);

// The name of a CUDA error code as the API that returned it spells it (a driver entry point
// "cu..." : CUDA_ERROR_OUT_OF_MEMORY; the runtime "cuda...": cudaErrorMemoryAllocation); "" for
// a code not known here.
std::string cuda_error_name(const std::string &api, int result);

// Whether the stacks show PyTorch's native caching allocator reserving segments.
bool torch_caching_segments(const snapshot::Snapshot &s);

} // namespace vramtrace::report::summary
