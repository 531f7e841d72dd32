// The static "Imbalance across ranks" section of the HTML report of a merged snapshot
// (docs/cli.md, "Imbalance"): per device role the minimum, median and maximum of the current and
// peak bytes, then each outlier with the call sites that make it heavier than the median rank.
// Names as text (escape, page.h).
#pragma once

#include <string>

#include "snapshot/snapshot_model.h"

namespace vramtrace::exporter::html {

// Appends the section to `out`; nothing when the snapshot has no imbalance records.
void append_imbalance(std::string &out, const snapshot::Snapshot &snapshot);

} // namespace vramtrace::exporter::html
