// The data of the interactive HTML report (tools/export/html/viewer_*.js draws it): one JSON object
// per snapshot, embedded in the page. Layout of the object: docs/exports.md, "html".
//
// Every string of the snapshot goes through report::escape_control_characters and JSON escaping
// with '<' as \u003c, so the object is valid JSON and valid UTF-8 and never ends its <script>
// element; the page inserts the strings as text only.
#pragma once

#include <string>
#include <vector>

#include "export/export.h"
#include "snapshot/snapshot_model.h"

namespace vramtrace::exporter::html {

// The JSON object for one snapshot: allocations as bands (from the event history when there is
// one, else from the live allocations), stacks with their frames, marks, OOMs, peaks, pools and
// VMM totals, NVTX range stacks and `intervals` (the snapshot's NVTX start/end intervals, drawn on
// the time axis). Notes for the user (history missing or wrapped) go to `notes` and into the object.
std::string page_data_json(const snapshot::Snapshot &snapshot, const Options &options, std::vector<std::string> *notes);

// The most frames of one stack that the data holds, from the leaf; a deeper stack ends in a marker
// frame (its outermost) that says how many were left out, so the flame graph and the hover text
// stay bounded.
inline constexpr size_t kMaxStackFrames = 512;

} // namespace vramtrace::exporter::html
