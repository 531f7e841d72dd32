// The summary's NVTX sections (docs/nvtx.md): memory by range stack, live and at each device's
// peak, and what lives inside the pools that describe their sub-allocations with the NVTX memory
// API. Each adds nothing when the snapshot has no NVTX data.
#pragma once

#include "report/summary_body.h"
#include "report/summary_lines.h"
#include "snapshot/snapshot_model.h"

namespace vramtrace::report::summary {

// "memory by NVTX range": per device, each range stack's live bytes and allocations (from the
// body's fold) and its bytes at the device's peak (peaks[].ranges; a peak without ranges counts
// wholly under "(no range)").
void nvtx_ranges(Lines &lines, const snapshot::Snapshot &s, const SummaryBody::State &body);

// "memory inside pools": per segment, the bytes its live regions use and the rest, free inside the
// pool; then the regions' bytes by range stack; and the descriptors not trusted.
void nvtx_pools(Lines &lines, const snapshot::Snapshot &s);

} // namespace vramtrace::report::summary
