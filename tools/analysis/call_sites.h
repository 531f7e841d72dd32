// Call-site keys that match across runs, and a streaming reader that reduces one snapshot to live
// bytes and allocation counts per call-site key (used by `vramtrace diff` and `vramtrace merge`).
//
// A key names the call site (the first frame outside vramtrace, the CUDA runtime and the driver:
// Stack::call_site) and, with SiteKeyOptions::frames > 1, the frames that called it, outermost
// last, joined by " <- ". Each frame is written without anything that ASLR or a rebuild of other
// code changes (absolute addresses, load bases, directories):
//   "make_buffer(unsigned long) at train.cpp:42 (train)"   function, source file name and line, module
//   "worker() (libfoo.so+0x3000)"                          no file:line: module + module-relative offset
//   "?? (0x7fffe0001000)"                                  no module: the address (matches nothing
//                                                          across runs unless it is fixed)
// With SiteKeyOptions::lines = false, frames with a source file drop the line ("make_buffer(unsigned
// long) at train.cpp (train)") and frames without one but with a function name drop the offset
// ("worker() (libfoo.so)"), so that a key survives edits that move code within a file.
// Allocations without a stack and those whose stack has no call site get the keys kNoStackKey and
// kNoCallSiteKey.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "input/snapshot_input.h"
#include "snapshot/report_model.h"

namespace vramtrace::cli {

struct SiteKeyOptions {
    unsigned frames = 1; // frames in a key, from the call site outwards (1 = the call site alone)
    bool lines = true;   // source lines (and offsets of named functions) are part of the key
};

inline constexpr std::string_view kNoStackKey = "(no stack captured)";
inline constexpr std::string_view kNoCallSiteKey = "(no call site: every frame is in vramtrace, the CUDA runtime or the driver)";
inline constexpr std::string_view kKeySeparator = " <- ";

// One frame's part of a key; `module_path` is the path of its module, "" when unknown.
std::string frame_key(std::string_view module_path, const report::Frame &frame, bool lines);

// The key of one stack of `snapshot` (kNoCallSiteKey when it has no call site).
std::string stack_key(const report::Snapshot &snapshot, const report::Stack &stack, const SiteKeyOptions &options);

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
    report::ProcessInfo process;
    std::vector<report::DeviceTotals> devices;
    uint64_t dropped_allocations = 0;
    uint64_t dropped_stacks = 0;
    size_t merged_processes = 0;             // processes listed by a merged snapshot, else 0
    bool has_peak_composition = false;       // every device with a peak has its peaks[] entry (files
                                             // of before peaks were recorded have none)
    std::optional<uint64_t> oom_count;       // oom_count; nullopt in files of before OOM recording
    std::vector<SiteTotals> sites;           // ascending key
    uint64_t live_bytes = 0;                 // over every site
    uint64_t live_count = 0;
};

// Streams one snapshot and reduces it to SnapshotSites. Memory: the snapshot's modules (path),
// frames (about 100 bytes plus function and file names each), per stack the frames of its key and
// one running total, the totals per key, its peaks (one entry per stack live at a device's peak),
// the stack ids of its OOM records, and one id per distinct stack named by its events; the
// allocations and events themselves are never kept, so the bound does not depend on their number.
// Checks the cross references read_snapshot_file checks; errors are one line, "NAME: what is wrong".
bool collect_sites(std::istream &in, const std::string &name, const SiteKeyOptions &options, SnapshotSites *out,
                   std::string *error);
bool collect_sites_from_file(const std::string &path, const SiteKeyOptions &options, Progress *progress,
                             SnapshotSites *out, std::string *error);

} // namespace vramtrace::cli
