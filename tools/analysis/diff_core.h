// `vramtrace diff`: the comparison of two snapshots reduced by call_sites.h, its text and JSON
// forms, and the growth gate. No I/O here (commands/cmd_diff.cpp reads the files and prints).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/call_sites.h"

namespace vramtrace::cli {

// A pair of values, base and new.
struct Compared {
    uint64_t base = 0;
    uint64_t now = 0;
    bool grew() const { return now > base; }
    bool changed() const { return now != base; }
};

struct SiteDiff {
    enum class Status { Grew, Shrank, New, Gone, Same };
    Status status = Status::Same;
    std::string key;
    Compared live_bytes;
    Compared live_count;
    // Bytes at each device's peak, (device, base, new), ascending device; nullopt when either
    // snapshot lacks the composition of its peaks (files of before peaks were recorded): printed
    // "n/a", null in JSON.
    std::optional<std::vector<std::pair<int, Compared>>> at_peak;
    Compared at_peak_sum() const; // over the devices; 0/0 without at_peak
    std::vector<int> devices;      // union of both runs, ascending
    std::vector<std::string> apis; // union of both runs, ascending
};
const char *status_name(SiteDiff::Status status);

struct DeviceDiff {
    int device = 0;
    bool in_base = false, in_new = false;
    Compared current_bytes;
    Compared peak_bytes;
    Compared allocation_count;
    Compared free_count;
};

// Live bytes and allocations of one memory category on one device, in both runs.
struct CategoryDiff {
    int device = 0;
    std::string category;
    Compared live_bytes;
    Compared live_count;
};

// Live bytes and bytes at the peak of one NVTX range stack (by name) on one device, in both runs.
struct RangeDiff {
    int device = 0;
    std::string range;
    Compared live_bytes;
    Compared live_count;
    Compared at_peak;
};

struct DiffResult {
    SiteKeyOptions options;
    std::vector<SiteDiff> sites;  // every key of either run: the largest growth first, then the
                                  // largest count growth, then the largest growth at the peaks,
                                  // then key; unchanged sites last
    size_t changed = 0;           // sites[0, changed) are those whose live bytes or count, or
                                  // bytes at the peaks, changed
    Compared live_bytes;          // over all sites
    Compared live_count;
    Compared peak_bytes;          // sum of devices[].peak_bytes
    std::vector<DeviceDiff> devices; // union of both runs' ordinals: CUDA devices ascending, then -1, -2
    std::vector<CategoryDiff> categories; // every (device, category) live in either run, devices as
                                          // above, categories in kCategoryOrder (diff_categories.cpp)
    std::vector<RangeDiff> ranges; // every (device, range stack name) of either run (docs/nvtx.md)
    bool has_peak_composition = false;
    std::optional<Compared> oom_count; // out-of-memory failures since start, when both snapshots say
};

DiffResult compute_diff(const SnapshotSites &base, const SnapshotSites &now, const SiteKeyOptions &options);
// The categories part of compute_diff.
std::vector<CategoryDiff> compare_categories(const SnapshotSites &base, const SnapshotSites &now);
// The NVTX ranges part (diff_ranges.cpp): rows by device, then range name.
std::vector<RangeDiff> compare_ranges(const SnapshotSites &base, const SnapshotSites &now);

// ---- the gate: --fail-if-growth LIMIT [--metric live|peak] [--site KEY] ----

// LIMIT: bytes ("1048576", "10MiB", "1.5GiB", "500kB"; binary units B KiB MiB GiB TiB PiB,
// decimal kB MB GB TB PB; a fraction is allowed before a unit) or a percentage of the base ("5%",
// "0.5%"). Parsed exactly (no floating point).
struct GrowthLimit {
    bool percent = false;
    uint64_t bytes = 0;           // when !percent
    uint64_t micro_percent = 0;   // when percent: millionths of a percent (5% = 5000000)
    std::string text;             // as given
};
// False with *why (e.g. "expected a byte count such as 10MiB or a percentage such as 5%") on error.
bool parse_growth_limit(std::string_view text, GrowthLimit *out, std::string *why);

enum class GateMetric { Live, Peak };

struct GateResult {
    std::string subject;         // what was measured: "live bytes at exit", "sum of device peaks",
                                 // "live bytes at N call sites matching ..."
    Compared measured;
    bool exceeded = false;
    std::string verdict;         // one line: "... grew by X, more than the limit Y" / "within ..."
};
// Applies `limit` to the run totals (metric) or, when `site` is not empty, to the sites whose key
// equals `site` or, when none does, contains it. Growth above the limit fails (equal passes); a
// percentage of a base of 0 fails on any growth. Returns nullopt with *why when `site` matches no
// site of either run, or when the metric is peak with a site (no peak composition in schema 1).
std::optional<GateResult> apply_gate(const DiffResult &diff, const GrowthLimit &limit, GateMetric metric,
                                     std::string_view site, std::string *why);

// ---- output ----
struct DiffTextOptions {
    bool all = false; // list unchanged sites too
    size_t top = 0;   // at most this many sites (0 = all)
};
std::string format_diff_text(const SnapshotSites &base, const SnapshotSites &now, const DiffResult &diff,
                             const DiffTextOptions &options, const GateResult *gate);
nlohmann::ordered_json diff_json(const SnapshotSites &base, const SnapshotSites &now, const DiffResult &diff,
                         const DiffTextOptions &options, const GateResult *gate, const GrowthLimit *limit);

// The "live bytes by category" table of the text report, "" when neither run has bytes in a category
// other than "other" (a program no frame rule knows has nothing to say there).
std::string format_categories_text(const DiffResult &diff);
// The "bytes by NVTX range" table of the text report, "" when neither run names a range stack.
std::string format_ranges_text(const DiffResult &diff);

// "+1.00 MiB (+1048576 B)", "-512 B", "0 B": a signed byte change, exact.
std::string format_change_bytes(const Compared &c);
// "+3", "-1", "0".
std::string format_change_count(const Compared &c);

} // namespace vramtrace::cli
