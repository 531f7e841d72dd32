// `vramtrace merge`: many snapshots (one per rank, process or host; merged snapshots too) folded
// into per-process rows, per-device rows, a merged call-site view, and optionally one merged
// snapshot file. Built for thousands of inputs: each file is streamed through the SAX reader and
// only aggregates stay in memory:
//   - the distinct modules, frames and stacks of all inputs (frames are matched by module +
//     offset, so N ranks of one program cost about what one rank costs);
//   - one input's own modules, frames, stacks, peaks, OOM records and pools while it is read, and
//     one id per distinct stack its events name (events are checked, not kept);
//   - one row per process (about 200 bytes plus its command line) and one per device of it;
//   - one running total per call-site key; per ordinal, one peak entry per merged stack;
//   - every input's OOM records (at most 16 per process, as the library keeps them) and pools;
//   - the distinct NVTX range stacks of all inputs (matched by their lists of domains, names and
//     categories), one total per device role and range stack, and every input's NVTX regions and
//     start/end intervals (at most 65,536 and 4,096 per process, as the library keeps them).
// The allocations themselves are never held: with an output file they are written, re-numbered,
// to a spool file beside it (about 200 bytes each, as in the inputs) and copied into the merged
// snapshot at the end. A file whose allocations come before its stacks (legal JSON, never what
// the library writes) is read twice.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/call_sites.h"
#include "input/snapshot_input.h"
#include "snapshot/reader/snapshot_reader.h"

namespace vramtrace::cli {

struct EventCheck;

// A device as matched across inputs: by UUID where the snapshots carry one (devices[].uuid), else
// by host + ordinal.
struct MergedDeviceRow {
    std::string identity;        // "UUID (HOST cuda:N, HOST2 cuda:M, ...)" or "HOST cuda:N"
    std::string host;            // "" for a row matched by UUID
    int device = 0;              // the ordinal of the first process that listed it
    std::string uuid;
    size_t processes = 0;
    uint64_t current_bytes = 0;  // sum over its processes
    uint64_t peak_sum = 0;       // sum of the processes' peaks (an upper bound of the device's peak)
    uint64_t peak_max = 0;       // the highest peak of one process
};

struct MergedSiteRow {
    std::string key;
    uint64_t live_bytes = 0;
    uint64_t live_count = 0;
    size_t files = 0;            // input files with live allocations at this site
};

// How the ranks compare (merge_imbalance.cpp; docs/cli.md, "Imbalance"): one role per device
// role, with its outliers, as the merged snapshot stores them.
struct Imbalance {
    std::vector<snapshot::ImbalanceRole> roles;
    std::vector<snapshot::ImbalanceOutlier> outliers; // by role, then input
};
inline constexpr size_t kImbalanceSitesKept = 32; // call sites per outlier in the merged snapshot

// A device role, as the imbalance compares ranks by (merge_imbalance.cpp): {0, k} the k-th GPU of a
// process in ordinal order, {1, 0} its host-pinned memory, {2, 0} memory on an unknown device;
// reports list them in this order.
using DeviceRole = std::pair<int, uint32_t>;
// How reports name a role: "each rank's GPU" (or "GPU 2 of each rank (in ordinal order)" when
// `several_gpus`), "host-pinned memory of each rank", "memory on an unknown device of each rank".
std::string device_role_title(DeviceRole role, bool several_gpus);

// What one NVTX range stack held in one device role, summed over the inputs (merge's "by NVTX
// range" table; docs/nvtx.md).
struct MergedRangeRow {
    uint32_t range = 0;          // merged range stack id (Merger::range_stacks); 0: no range open
    uint64_t live_bytes = 0;     // live at the dumps
    uint64_t live_count = 0;
    uint64_t peak_bytes = 0;     // what it held at each input's peak of the device, summed
};
struct MergedRoleRanges {
    DeviceRole role;
    std::vector<MergedRangeRow> rows; // at peak descending, then live descending, then label
};

// The imbalance section of a report (merge and summary): `name_site` names a call site by one of
// its stacks (0: no stack); `top` caps the call sites listed per outlier (0 = all kept).
std::string format_imbalance_text(const Imbalance &imbalance, size_t top,
                                  const std::function<std::string(uint32_t stack)> &name_site);

class Merger {
public:
    // `spool`: where the allocations of the merged snapshot are written as they are read (an
    // unlinked temporary file), or null when no snapshot is written.
    Merger(const SiteKeyOptions &keys, std::FILE *spool);

    // Reads one input. On failure returns false with *error = "PATH: what is wrong" (one line); the
    // merge must then be abandoned, unless *not_snapshot (when given) is set: the file is no
    // vramtrace snapshot at all (not JSON, not an object, no or another "format"), nothing of it
    // is kept, and the merge may go on without it.
    bool add_file(const std::string &path, Progress *progress, std::string *error, bool *not_snapshot = nullptr);
    // The same from a stream (unit tests); a stream cannot be read twice, so a file whose
    // allocations come before its stacks is refused.
    bool add_stream(std::istream &in, const std::string &name, std::string *error);

    size_t files() const { return files_; }
    const std::vector<snapshot::MergedProcess> &processes() const { return processes_; }
    // What the inputs read so far gave cause to warn about (one line each): a process met in two
    // inputs (same host, pid, command line, dump reason, live bytes and count) is counted twice.
    const std::vector<std::string> &warnings() const { return warnings_; }
    const std::vector<snapshot::MergedDevice> &process_devices() const { return process_devices_; }
    // Devices matched across inputs, in order of host, then ordinal (then UUID).
    std::vector<MergedDeviceRow> devices() const;
    // Call sites by live bytes (then count, then key), every one.
    std::vector<MergedSiteRow> sites() const;
    uint64_t live_bytes() const { return live_bytes_; }
    uint64_t live_count() const { return live_count_; }
    uint64_t dropped_allocations() const { return dropped_allocations_; }
    uint64_t dropped_stacks() const { return dropped_stacks_; }
    // Out-of-memory failures of all inputs; nullopt when an input predates OOM recording.
    std::optional<uint64_t> oom_count() const { return oom_count_known_ ? std::optional<uint64_t>(oom_count_) : std::nullopt; }
    // Whether every input recorded what made up its peaks (peaks[]), so the merged snapshot has them.
    bool has_peak_composition() const { return peaks_complete_; }
    // The ranks compared per device role (merge_imbalance.cpp).
    Imbalance imbalance() const;
    // The call-site key of a merged stack (0: no stack).
    std::string site_key_of_stack(uint32_t stack) const;
    // The NVTX range stacks of all inputs, one per distinct list of domains, names and categories
    // (merged id = index + 1); empty when no input names one.
    const std::vector<snapshot::RangeStack> &range_stacks() const { return ranges_; }
    // How reports name a merged range stack (report::range_stack_label; 0: "(no range)").
    std::string range_label(uint32_t range) const;
    // Per device role, the live bytes and the bytes at the peaks of each range stack; empty when no
    // input names a range stack.
    std::vector<MergedRoleRanges> ranges_by_role() const;

    // Writes the merged snapshot to fd (the spool holds its allocations). `command_line` becomes
    // process.command_line. False with *error on a write error.
    bool write_snapshot(int fd, const std::vector<std::string> &command_line, const std::string &version,
                        std::string *error);

private:
    friend class MergeFileReader;
    // What the merged snapshot says of one ordinal's peak: the sum of the inputs' peaks there, and
    // the bytes and allocations each merged stack held at them.
    struct Peak {
        uint64_t peak_bytes = 0;
        std::map<uint32_t, std::pair<uint64_t, uint64_t>> sites;  // merged stack id -> bytes, count
        std::map<uint32_t, std::pair<uint64_t, uint64_t>> ranges; // merged range id -> bytes, count
    };
    struct Stack {
        std::vector<uint32_t> frames; // merged frame indices
        int call_site = -1;
        int via = -1;                 // Stack::via, -1: none
        std::string category;         // Stack::category, "": none
        uint32_t site = 0;            // index into sites_
    };
    struct Site {
        std::string key;
        uint32_t stack = 0;           // the first merged stack of this site (0: none)
        uint64_t live_bytes = 0, live_count = 0;
        size_t files = 0;
        size_t last_file = SIZE_MAX;
    };

    // The tables and the spool (merge_intern.cpp), used by the per-file reader (MergeFileReader,
    // merge_read.cpp).
    uint32_t intern_module(const snapshot::Module &m);
    uint32_t intern_frame(const snapshot::Frame &f, int merged_module);
    // `stack` gives the call site, via and category (as the frame rules set them) and the via label
    // of the call-site key; `frames` its frames, merged.
    uint32_t intern_stack(std::vector<uint32_t> frames, const snapshot::Stack &stack);
    uint32_t no_stack_site();
    // A range stack, interned by its lists (domains, names, categories; a list of categories that
    // are all "" counts as none); its merged id (never 0).
    uint32_t intern_range(const snapshot::RangeStack &range);
    void spool_allocation(const snapshot::Allocation &a, uint32_t merged_stack, uint32_t merged_range);
    bool spool_mark(long long *offset);
    bool spool_rewind(long long offset, uint64_t count);
    // Reading one input and adding it to the merge (merge_read.cpp).
    struct FileState;
    // The merged id of an input's range stack / stack, the merged index of its frame, each at
    // `local` in that input's own table, interned on first use and remembered in `state`.
    uint32_t merged_range_of(FileState &state, size_t local);
    uint32_t merged_stack_of(FileState &state, size_t local);
    uint32_t merged_frame_of(FileState &state, uint32_t local);
    // A new input's number and where its allocations begin in the spool; false with *error when
    // the spool cannot be used.
    bool start_file(FileState &state, const std::string &name, std::string *error);
    bool read_pass(std::istream &in, const std::string &name, FileState &state, bool second, std::string *error);
    // One file read (twice when its allocations come before its stacks) and committed; `events`
    // (may be null) checks its event history at parse speed (input/simd_snapshot_source.h).
    bool read_file(FileState &state, const std::string &path, Progress *progress, EventCheck *events,
                   std::string *error);
    bool commit(FileState &state, const std::string &name, std::string *error);
    // Sets *not_snapshot when `error` says the file is no snapshot and its spooled part is undone.
    void note_not_snapshot(const FileState &state, const std::string &error, bool *not_snapshot);
    // Remembers the input's processes; one seen before (same identity) gets a warning.
    void note_repeated_processes(const FileState &state, const std::string &name);

    SiteKeyOptions keys_;
    std::FILE *spool_;
    bool spool_failed_ = false;
    int spool_errno_ = 0;
    uint64_t spooled_ = 0;
    std::unordered_map<std::string, std::string> escaped_; // JSON text of kind/api strings

    std::vector<snapshot::Module> modules_;
    std::unordered_map<std::string, uint32_t> module_index_;
    std::vector<snapshot::Frame> frames_; // module: an index into modules_
    std::unordered_map<std::string, uint32_t> frame_index_;
    std::vector<Stack> stacks_;   // merged stack id = index + 1
    std::unordered_map<std::string, uint32_t> stack_index_;
    std::vector<Site> sites_;
    std::unordered_map<std::string, uint32_t> site_index_;

    size_t files_ = 0;
    std::vector<snapshot::MergedProcess> processes_;
    std::vector<snapshot::MergedDevice> process_devices_;
    std::vector<std::string> process_hosts_; // host of each process row (for device matching)
    // Each process row's identity (host, pid, command line, dump reason, live bytes and count) ->
    // the file it came from: a process met again means an input was given twice, or a merged
    // snapshot together with its own inputs, which would count it twice.
    std::unordered_map<std::string, std::string> process_origin_;
    std::vector<std::string> warnings_;
    // What made up the peak of each row of process_devices_ (same index): bytes and allocations per
    // call site (index into sites_), ascending site; not known for the rows of a merged input.
    struct RowSite {
        uint32_t site = 0;
        uint64_t bytes = 0, count = 0;
    };
    std::vector<std::vector<RowSite>> row_sites_;
    std::vector<bool> row_sites_known_;
    std::vector<snapshot::DeviceTotals> devices_; // per ordinal, summed, ascending
    uint64_t live_bytes_ = 0, live_count_ = 0;
    uint64_t dropped_allocations_ = 0, dropped_stacks_ = 0, dropped_peak_sites_ = 0;
    // Identity of each ordinal of devices_: the inputs' uuid / PCI bus id when they all agree.
    std::map<int, std::pair<std::string, std::string>> device_identity_;
    std::map<int, Peak> peaks_;          // by ordinal
    bool peaks_complete_ = true;
    std::vector<snapshot::OomEvent> ooms_; // every input's, re-numbered stacks, in input order
    uint64_t oom_count_ = 0;
    bool oom_count_known_ = true;
    std::vector<snapshot::Pool> pools_;    // every input's
    // NVTX: the merged range stacks (id = index + 1); per device role and merged range stack, the
    // live bytes and allocations and the bytes at the peaks; every input's regions (merged range
    // ids) and intervals, in input order, each with its process row (input); the dropped counters,
    // summed.
    std::vector<snapshot::RangeStack> ranges_;
    std::unordered_map<std::string, uint32_t> range_index_;
    struct RangeTotals {
        uint64_t live_bytes = 0, live_count = 0, peak_bytes = 0;
    };
    std::map<DeviceRole, std::map<uint32_t, RangeTotals>> role_ranges_;
    std::vector<snapshot::NvtxRegion> nvtx_regions_;
    std::vector<snapshot::NvtxInterval> nvtx_intervals_;
    uint64_t dropped_range_stacks_ = 0, dropped_range_names_ = 0;
    uint64_t dropped_nvtx_regions_ = 0, nvtx_regions_outside_ = 0, nvtx_unregisters_unknown_ = 0;
    uint64_t dropped_nvtx_intervals_ = 0;
    // What the merged process record says.
    bool first_ = true;
    std::string host_, executable_;
    std::string python_; // process.python when every input has the same, else ""
    int driver_version_ = 0;
    uint64_t start_time_ns_ = 0, dump_time_ns_ = 0;
    uint32_t stack_depth_ = 0;
};

// The text report of a merge: per-process table, devices, and the `top` call sites (0 = all).
std::string format_merge_text(const Merger &merger, size_t top, const SiteKeyOptions &keys);

} // namespace vramtrace::cli
