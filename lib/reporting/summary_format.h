// The human-readable summary printed by the library on stderr (at exit or on request) and by
// `vramtrace summary`. Linked into the preload library: no third-party dependencies.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "report_model.h"

namespace vramtrace::report {

// Every line of the summary starts with this, so it never mixes with the program's own output.
inline constexpr std::string_view kSummaryLinePrefix = "vramtrace: ";

struct SummaryOptions {
    size_t top_n = 10;                   // call sites listed (top table and live/leak list); 0 = all
    size_t max_sizes_per_call_site = 5;  // distinct allocation sizes listed per call site; 0 = all
};

// The summary as lines ending in '\n', each starting with kSummaryLinePrefix:
//   - a header: pid, host, command line, why the snapshot was taken and how long the process ran;
//   - per device (cuda:N, then host for pinned memory): current, peak, total allocated and total
//     freed, in human-readable and exact bytes, and the allocation and free counts;
//   - the top call sites by live bytes (group_live_by_call_site): bytes, share, count, API, device;
//   - the allocations still live per call site with their sizes, called leaks when the snapshot
//     was taken at exit ("leaked at exit");
//   - a warning when records or stacks were dropped.
// The output depends on nothing but the snapshot and the options (ties break on a stable key), and
// control characters from the snapshot are escaped so that a line never breaks. It does not say
// where the snapshot was written: the caller adds that. Returns "" only if memory ran out; never
// throws.
std::string format_summary(const Snapshot &snapshot, const SummaryOptions &options = {});

} // namespace vramtrace::report
