// Reading snapshot files (docs/snapshot-format.md) into the report model.
//
// The reader is a streaming (SAX) parser over nlohmann::json: it never builds a DOM. Each record of
// the long arrays (frames, stacks, allocations, ...) is decoded on its own and handed to a
// SnapshotSink, so memory is bounded by what the sink keeps plus one record and the longest JSON
// token. read_snapshot_file() keeps everything (a report::Snapshot, roughly 100 bytes per
// allocation plus its strings); commands that can work record by record (diff, export, ...) can
// pass their own sink to read_snapshot_stream() and stay within a constant bound.
//
// Nothing here throws: every failure (unreadable, empty, binary or truncated file, malformed JSON, a
// foreign JSON document, a schema_version newer than kSchemaVersion, a missing or mistyped field,
// a dangling index) becomes one line of text naming the input and what is wrong, e.g.
//   "run.json: allocations[3]: missing field \"size\"".
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "reporting/report_model.h"

namespace vramtrace::cli {

// Optional top-level members written by `vramtrace merge` (docs/cli.md): one record per process
// that went into a merged snapshot, and one per device of such a process, so that merging merged
// snapshots still lists every process. Plain snapshots have neither; within schema 1 both are
// optional (a reader that does not know them skips them).
struct MergedProcess {
    uint32_t input = 0;                    // row number in the merged snapshot, from 0
    std::string file;                      // the snapshot file the process wrote
    int64_t pid = 0;
    std::string host;
    std::vector<std::string> command_line;
    std::string reason;                    // process.reason of that snapshot
    int64_t rank = -1;                     // -1: not known (schema 1 snapshots carry no rank)
    uint64_t live_bytes = 0;               // bytes and number of its live allocations at the dump
    uint64_t live_allocations = 0;
    uint64_t dropped_allocations = 0;
    uint64_t dropped_stacks = 0;

    bool operator==(const MergedProcess &) const = default;
};
struct MergedDevice {
    uint32_t input = 0;                    // MergedProcess::input of the process
    int device = 0;                        // ordinal as that process saw it (-1 host-pinned)
    std::string uuid;                      // "" when not known (schema 1 snapshots carry none)
    uint64_t current_bytes = 0;
    uint64_t peak_bytes = 0;
    uint64_t allocation_count = 0;
    uint64_t free_count = 0;
    uint64_t total_allocated_bytes = 0;
    uint64_t total_freed_bytes = 0;

    bool operator==(const MergedDevice &) const = default;
};

// Receives a snapshot's parts in document order. Members a reader does not know are skipped; every
// field of schema v1 is required (the merged_* members as a whole are optional). Records may reach the sink before a later error is found (the
// file could be truncated): a sink must drop what it got when the read returns false.
class SnapshotSink {
public:
    virtual ~SnapshotSink() = default;
    virtual void on_schema_version(int /*version*/) {}
    virtual void on_process(report::ProcessInfo && /*process*/) {}
    virtual void on_device(report::DeviceTotals && /*device*/) {}
    virtual void on_dropped(uint64_t /*allocations*/, uint64_t /*stacks*/) {}
    virtual void on_module(report::Module && /*module*/) {}
    virtual void on_frame(report::Frame && /*frame*/) {}
    virtual void on_stack(report::Stack && /*stack*/) {}
    virtual void on_allocation(report::Allocation && /*allocation*/) {}
    // Added within schema 1 (optional members: not called for older files).
    virtual void on_dropped_peak_sites(uint64_t /*count*/) {}
    virtual void on_oom_count(uint64_t /*count*/) {}
    virtual void on_peak(report::DevicePeak && /*peak*/) {}
    virtual void on_oom(report::OomEvent && /*oom*/) {}
    virtual void on_pool(report::Pool && /*pool*/) {}
    virtual void on_event_history(report::EventHistory && /*header: events is empty*/) {}
    virtual void on_event(report::Event && /*event*/) {}
    virtual void on_merged_process(MergedProcess && /*process*/) {}
    virtual void on_merged_device(MergedDevice && /*device*/) {}
};

// Parses one snapshot from `in`, handing each part to `sink`. `name` (usually the path) starts
// every error message. Returns false with *error set (one line, no trailing newline) on failure.
// Cross references (frame -> module, stack -> frame, allocation -> stack) are not checked here: a
// streaming sink cannot see both ends.
bool read_snapshot_stream(std::istream &in, const std::string &name, SnapshotSink &sink,
                          std::string *error);

// Reads the whole file at `path` into *out (replacing its contents), then checks every cross
// reference: frames[].module, stacks[].frames[], stacks[].call_site, the stack of allocations[],
// peaks[].sites[], ooms[] and events[] (0 or the id of a stack), and that stack ids are unique and
// non-zero. `stacks` is left in ascending id order
// (sorted if the file had another order) so that Snapshot::find_stack is a binary search.
// On failure *out is left empty (a default Snapshot) and *error reads "PATH: what is wrong".
bool read_snapshot_file(const std::string &path, report::Snapshot *out, std::string *error);

} // namespace vramtrace::cli
