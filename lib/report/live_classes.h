// What was still live when a snapshot was taken, split into three classes, so that a report can
// tell a buffer held for the whole run (a model's parameters) from one that piles up step after
// step (a cache that leaks). Shared by the summary (library and `vramtrace summary`) and the HTML
// export. Linked into the preload library: no third-party dependencies.
//
// The rule (docs/cli.md, "Live at exit: held since start, grew, the rest"):
//   - The run is cut into intervals. With vramtrace_mark calls in the event history (marks whose
//     time lies in the run), the boundaries are the marks' times: interval 0 is before the first
//     mark, interval k runs from mark k to mark k+1, the last from the last mark to the snapshot.
//     Without marks, the run from the library's start to the snapshot is cut into 10 equal
//     intervals (interval 0: the first 10%). With neither marks nor a known running time
//     (Snapshot::process without dump_monotonic_ns), and in a merged snapshot (process.reason
//     "merge": several processes' runs), there are no intervals: every live allocation is in
//     "the rest" and LiveIntervals::basis is Basis::none.
//   - An allocation time t lies in interval k when boundary k <= t < boundary k+1 (boundary 0 is
//     -infinity, the last one +infinity): a mark at exactly t starts the interval t is in.
//   - held since start: a live allocation made in interval 0.
//   - grew: a call site whose live allocations made after interval 0 fall into at least
//     max(2, ceil(n / 2)) distinct intervals, n being the number of intervals after interval 0;
//     its live allocations after interval 0 are in this class.
//   - the rest: every other live allocation.
// Each live allocation is in exactly one class, so a report that lists the three never lists an
// allocation twice.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "snapshot/snapshot_model.h"
#include "report/call_site_groups.h"

namespace vramtrace::report {

// One or more live allocations of one stack, device and size, made at one time (CLOCK_MONOTONIC
// ns, Allocation::time_ns), whose memory counts as held (counts_as_held).
struct LiveRecord {
    uint32_t stack = 0;
    int device = 0;
    uint64_t size = 0;  // bytes of each
    uint64_t time_ns = 0;
    uint64_t count = 1;
};

// The intervals a snapshot's run is cut into (the rule above).
struct LiveIntervals {
    enum class Basis { none, marks, run_tenths };
    Basis basis = Basis::none;
    // Start times of intervals 1..n (CLOCK_MONOTONIC ns), ascending; interval 0 is everything
    // before the first. Empty for Basis::none.
    std::vector<uint64_t> starts;
    // Basis::marks: the label of the mark that starts each interval of `starts` (same index).
    std::vector<std::string> labels;

    // The interval of a time (0 .. starts.size()).
    size_t interval_of(uint64_t time_ns) const;
    // Intervals after interval 0 (n in the rule).
    size_t after_first() const { return starts.size(); }
    // How many of them a call site's allocations after interval 0 must fall into to have grown:
    // max(2, ceil(n / 2)).
    size_t grew_threshold() const { return std::max<size_t>(2, (starts.size() + 1) / 2); }
};

// The intervals of a run: the marks among `events` (type "mark", within the run when its span is
// known), else tenths of the run, else none. `events` is Snapshot::events.events, or the marks a
// streaming reader kept of it.
LiveIntervals live_intervals(const snapshot::ProcessInfo &process, const std::vector<snapshot::Event> &events);

enum class LiveClass { held_since_start, grew, rest };

// A call site's live allocations in one class: bytes, allocations and sizes as in
// group_live_by_call_site (CallSiteGroup::apis and devices: those of the class's allocations;
// apis empty when the records carry none). `intervals`: for a grew site, the distinct intervals
// after interval 0 its allocations fell into; 0 otherwise.
struct ClassSite {
    CallSiteGroup site;
    size_t intervals = 0;
};

struct LiveClasses {
    LiveIntervals intervals;
    // Per class, call sites by bytes descending, then allocations descending, then key.
    std::vector<ClassSite> held_since_start, grew, rest;
    uint64_t bytes[3] = {0, 0, 0};  // per LiveClass, summed over the class's sites
    uint64_t count[3] = {0, 0, 0};

    const std::vector<ClassSite> &sites(LiveClass c) const {
        return c == LiveClass::held_since_start ? held_since_start : c == LiveClass::grew ? grew : rest;
    }
};

// The classes of `live` (any order) under the intervals of the snapshot's process and `events`;
// call sites as group_by_call_site names and keys them.
LiveClasses classify_live(const snapshot::Snapshot &snapshot, const std::vector<LiveRecord> &live,
                          const std::vector<snapshot::Event> &events);

// Live allocations of one stack, device and size: the time each was made (CLOCK_MONOTONIC ns).
// The streaming summary keeps them so, 8 bytes per allocation.
struct LiveSeries {
    uint32_t stack = 0;
    int device = 0;
    uint64_t size = 0;
    const std::vector<uint64_t> *times = nullptr; // not null
};
// The same for series (any order; the times of one in any order).
LiveClasses classify_live(const snapshot::Snapshot &snapshot, const std::vector<LiveSeries> &live,
                          const std::vector<snapshot::Event> &events);
// The same for the snapshot's own allocations (those that count as held) and events.
LiveClasses classify_live(const snapshot::Snapshot &snapshot);

// "held since start", "grew", "the rest".
const char *live_class_name(LiveClass c);

} // namespace vramtrace::report
