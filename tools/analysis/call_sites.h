// Call-site keys that match across runs, and a streaming reader that reduces one snapshot to live
// bytes and allocation counts per call-site key and per memory category (used by `vramtrace diff`
// and `vramtrace merge`).
//
// A key names the call site (Stack::call_site: the frame that asked for the memory, past
// vramtrace, the CUDA layers and the frameworks' allocators, docs/attribution.md) and, with SiteKeyOptions::frames > 1, the frames that called it, outermost
// last, joined by " <- ". Each frame is written without anything that ASLR or a rebuild of other
// code changes (absolute addresses, load bases, directories):
//   "make_buffer(unsigned long) at train.cpp:42 (train)"   function, source file name and line, module
//   "worker() (libfoo.so+0x3000)"                          no file:line: module + module-relative offset
//   "?? (0x7fffe0001000)"                                  no module: the address (matches nothing
//                                                          across runs unless it is fixed)
// With SiteKeyOptions::lines = false, frames with a source file drop the line ("make_buffer(unsigned
// long) at train.cpp (train)") and frames without one but with a function name drop the offset
// ("worker() (libfoo.so)"), so that a key survives edits that move code within a file.
// A stack with a via (the framework entry its call site went through, docs/attribution.md) has it
// after the call site's part, as the summary shows it: "main at train.py:49 (python) via
// torch.optim.adam.Adam.step", then any callers. Allocations without a stack and those whose stack
// has no call site get the keys kNoStackKey and kNoCallSiteKey.
//
// Snapshots are read through the frame rules (SymbolizingSink), so that a file written before them
// gets the call site, via and category a new one has.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "input/snapshot_input.h"
#include "snapshot/snapshot_model.h"

namespace vramtrace::cli {

struct SiteKeyOptions {
    unsigned frames = 1; // frames in a key, from the call site outwards (1 = the call site alone)
    bool lines = true;   // source lines (and offsets of named functions) are part of the key
};

inline constexpr std::string_view kNoStackKey = "(no stack captured)";
inline constexpr std::string_view kNoCallSiteKey = "(no call site: every frame is in vramtrace, the CUDA runtime or the driver)";
inline constexpr std::string_view kKeySeparator = " <- ";
inline constexpr std::string_view kViaSeparator = " via ";

// One frame's part of a key; `module_path` is the path of its module, "" when unknown.
std::string frame_key(std::string_view module_path, const snapshot::Frame &frame, bool lines);

// The key of one stack of `snapshot` (kNoCallSiteKey when it has no call site); its via is
// stack.via_label (set with the frame rules, lib/symbolize/call_site.h).
std::string stack_key(const snapshot::Snapshot &snapshot, const snapshot::Stack &stack, const SiteKeyOptions &options);

// The via part of a key: " via LABEL", "" without a label.
std::string via_key(std::string_view via_label);

// The category a report counts a stack under: its Stack::category, "other" when it has none (a
// stack the rules were not applied to) and for allocations without a stack.
std::string_view category_of(const snapshot::Stack *stack);

// The memory categories of the frame rules, in the order reports list them (the summary's).
inline constexpr std::string_view kCategoryOrder[] = {"parameter",         "optimizer_state", "activation", "backward",
                                                      "library_workspace", "communication",   "other"};
// Where `category` stands in kCategoryOrder; names outside it after them.
size_t category_rank(std::string_view category);


// Live bytes and allocations of one category on one device.
struct CategoryTotals {
    int device = 0;
    std::string category;
    uint64_t live_bytes = 0;
    uint64_t live_count = 0;
};

// Live bytes and allocations of one NVTX range stack on one device (docs/nvtx.md), named as the
// summary names it (report::range_stack_label), and its bytes at the device's peak.
struct RangeTotals {
    int device = 0;
    std::string range;
    uint64_t live_bytes = 0;
    uint64_t live_count = 0;
    uint64_t at_peak = 0;
};

// Live allocations of one snapshot at one call-site key.
struct SiteTotals {
    std::string key;
    uint64_t live_bytes = 0;
    uint64_t live_count = 0;
    std::vector<int> devices;      // ascending, unique
    std::vector<std::string> apis; // ascending, unique
    // The bytes this site held when each device reached its peak, as (device, bytes), ascending
    // device, from the snapshot's peaks[].sites; empty when the snapshot does not record what made
    // up its peaks (SnapshotSites::has_peak_composition false) or the site held nothing then. A
    // site can be listed for its bytes at a peak alone (no live allocation at the dump).
    std::vector<std::pair<int, uint64_t>> at_peak;
};

// One snapshot reduced to what diff needs.
struct SnapshotSites {
    std::string name;                        // the file
    int schema_version = 0;
    snapshot::ProcessInfo process;
    std::vector<snapshot::DeviceTotals> devices;
    uint64_t dropped_allocations = 0;
    uint64_t dropped_stacks = 0;
    size_t merged_processes = 0;             // processes listed by a merged snapshot, else 0
    bool has_peak_composition = false;       // every device with a peak has its peaks[] entry (files
                                             // of before peaks were recorded have none)
    std::optional<uint64_t> oom_count;       // oom_count; nullopt in files of before OOM recording
    std::vector<SiteTotals> sites;           // ascending key
    std::vector<CategoryTotals> categories;  // per device (report::device_order_rank) and category
                                             // (kCategoryOrder), only those with live allocations
    uint64_t live_bytes = 0;                 // over every site
    uint64_t live_count = 0;
    std::vector<RangeTotals> ranges;         // per device and range name; empty when the snapshot
                                             // names no NVTX range stack
};

// Streams one snapshot through the frame rules and reduces it to SnapshotSites. Memory: the
// snapshot's modules (path), frames (about 100 bytes plus function and file names each, twice: once
// more for the rules), per stack the frames of its key, its via label, its category and one running
// total (per device it has allocations on), the totals per key and per device and category, its
// peaks (one entry per stack live at a device's peak),
// the stack ids of its OOM records, and one id per distinct stack named by its events; the
// allocations and events themselves are never kept, so the bound does not depend on their number.
// Checks the cross references read_snapshot_file checks; errors are one line, "NAME: what is wrong".
bool collect_sites(std::istream &in, const std::string &name, const SiteKeyOptions &options, SnapshotSites *out,
                   std::string *error);
bool collect_sites_from_file(const std::string &path, const SiteKeyOptions &options, Progress *progress,
                             SnapshotSites *out, std::string *error);

} // namespace vramtrace::cli
