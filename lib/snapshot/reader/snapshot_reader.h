// Reading snapshot files (docs/snapshot-format.md) into the snapshot model.
//
// The reader is a streaming (SAX) parser over nlohmann::json: it never builds a DOM. Each record of
// the long arrays (frames, stacks, allocations, ...) is decoded on its own and handed to a
// SnapshotSink, so memory is bounded by what the sink keeps plus one record and the longest JSON
// token. read_snapshot_file() keeps everything (a snapshot::Snapshot, roughly 100 bytes per
// allocation plus its strings); commands that can work record by record (summary, diff, merge) can
// pass their own sink to read_snapshot_stream() and stay within a constant bound.
//
// Nothing here throws: every failure (unreadable, empty, binary or truncated file, malformed JSON, a
// foreign JSON document, a schema_version newer than kSchemaVersion, a missing or mistyped field,
// a dangling index) becomes one line of text naming the input and what is wrong, e.g.
//   "run.json: allocations[3]: missing field \"size\"".
#pragma once

#include <cstdint>
#include <iosfwd>
#include <streambuf>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "snapshot/snapshot_model.h"

namespace vramtrace::snapshot {

// Every callback of SnapshotSink, as X(name, (parameters), (arguments)). SnapshotSink and
// ForwardingSink are both generated from this one list, so a callback added here reaches every sink
// that wraps another (offline symbolization, ...) without anyone having to remember it.
#define VRAMTRACE_SNAPSHOT_SINK_CALLBACKS(X)                                                             \
    X(on_schema_version, (int version), (version))                                                       \
    X(on_process, (ProcessInfo && process), (std::move(process)))                                        \
    X(on_device, (DeviceTotals && device), (std::move(device)))                                          \
    X(on_dropped, (uint64_t allocations, uint64_t stacks), (allocations, stacks))                        \
    X(on_module, (Module && module), (std::move(module)))                                                \
    X(on_frame, (Frame && frame), (std::move(frame)))                                                    \
    X(on_stack, (Stack && stack), (std::move(stack)))                                                    \
    X(on_allocation, (Allocation && allocation), (std::move(allocation)))                                \
    /* Optional within schema 1 (not called for older files). */                                         \
    X(on_dropped_peak_sites, (uint64_t count), (count))                                                  \
    X(on_oom_count, (uint64_t count), (count))                                                           \
    X(on_peak, (DevicePeak && peak), (std::move(peak)))                                                  \
    X(on_oom, (OomEvent && oom), (std::move(oom)))                                                       \
    X(on_pool, (Pool && pool), (std::move(pool)))                                                        \
    /* the header of the event history: its `events` is empty (they come one by one to on_event) */      \
    X(on_event_history, (EventHistory && history), (std::move(history)))                                 \
    X(on_event, (Event && event), (std::move(event)))                                                    \
    X(on_teardown_count, (uint64_t count), (count))                                                      \
    X(on_teardown, (Teardown && teardown), (std::move(teardown)))                                        \
    X(on_range_stack, (RangeStack && range), (std::move(range)))                                         \
    X(on_dropped_nvtx, (uint64_t range_stacks, uint64_t range_names), (range_stacks, range_names))       \
    X(on_nvtx_region, (NvtxRegion && region), (std::move(region)))                                       \
    X(on_dropped_nvtx_regions, (uint64_t dropped, uint64_t outside, uint64_t unknown),                   \
      (dropped, outside, unknown))                                                                       \
    X(on_nvtx_interval, (NvtxInterval && interval), (std::move(interval)))                               \
    X(on_dropped_nvtx_intervals, (uint64_t count), (count))                                              \
    /* written by `vramtrace merge` */                                                                   \
    X(on_merged_process, (MergedProcess && process), (std::move(process)))                               \
    X(on_merged_device, (MergedDevice && device), (std::move(device)))                                   \
    X(on_imbalance, (ImbalanceRole && role), (std::move(role)))                                          \
    X(on_imbalance_outlier, (ImbalanceOutlier && outlier), (std::move(outlier)))

// Receives a snapshot's parts in document order; every callback does nothing unless overridden.
// Members a reader does not know are skipped; every field of schema v1 is required (the merged_*
// members as a whole are optional). Records may reach the sink before a later error is found (the
// file could be truncated): a sink must drop what it got when the read returns false.
class SnapshotSink {
public:
    virtual ~SnapshotSink() = default;
#define VRAMTRACE_SINK_IGNORE(name, params, args) virtual void name params {}
    VRAMTRACE_SNAPSHOT_SINK_CALLBACKS(VRAMTRACE_SINK_IGNORE)
#undef VRAMTRACE_SINK_IGNORE
};

// A sink that stores every part into a snapshot::Snapshot as the reader hands it over (a whole-file
// read); a sink that folds some parts instead (the summary's) derives and overrides those.
class SnapshotFiller : public SnapshotSink {
public:
    explicit SnapshotFiller(Snapshot &s) : s_(s) {}
    void on_schema_version(int v) override { s_.schema_version = v; }
    void on_process(ProcessInfo &&p) override { s_.process = std::move(p); }
    void on_device(DeviceTotals &&d) override { s_.devices.push_back(std::move(d)); }
    void on_dropped(uint64_t a, uint64_t st) override { s_.dropped_allocations = a, s_.dropped_stacks = st; }
    void on_module(Module &&m) override { s_.modules.push_back(std::move(m)); }
    void on_frame(Frame &&f) override { s_.frames.push_back(std::move(f)); }
    void on_stack(Stack &&st) override { s_.stacks.push_back(std::move(st)); }
    void on_allocation(Allocation &&a) override { s_.allocations.push_back(std::move(a)); }
    void on_dropped_peak_sites(uint64_t n) override { s_.dropped_peak_sites = n; }
    void on_oom_count(uint64_t n) override { s_.oom_count = n; }
    void on_peak(DevicePeak &&p) override { s_.peaks.push_back(std::move(p)); }
    void on_oom(OomEvent &&o) override { s_.ooms.push_back(std::move(o)); }
    void on_pool(Pool &&p) override { s_.pools.push_back(std::move(p)); }
    void on_event_history(EventHistory &&h) override {
        auto events = std::move(s_.events.events); // `events` may come before `event_history`
        s_.events = std::move(h);
        s_.events.events = std::move(events);
    }
    void on_event(Event &&e) override { s_.events.events.push_back(std::move(e)); }
    void on_teardown_count(uint64_t n) override { s_.teardown_count = n; }
    void on_teardown(Teardown &&td) override { s_.teardowns.push_back(std::move(td)); }
    void on_imbalance(ImbalanceRole &&r) override { s_.imbalance.push_back(std::move(r)); }
    void on_imbalance_outlier(ImbalanceOutlier &&o) override { s_.imbalance_outliers.push_back(std::move(o)); }
    void on_range_stack(RangeStack &&r) override { s_.range_stacks.push_back(std::move(r)); }
    void on_dropped_nvtx(uint64_t stacks, uint64_t names) override {
        s_.dropped_range_stacks = stacks, s_.dropped_range_names = names;
    }
    void on_nvtx_region(NvtxRegion &&r) override { s_.nvtx_regions.push_back(std::move(r)); }
    void on_dropped_nvtx_regions(uint64_t dropped, uint64_t outside, uint64_t unknown) override {
        s_.dropped_nvtx_regions = dropped, s_.nvtx_regions_outside = outside, s_.nvtx_unregisters_unknown = unknown;
    }
    void on_nvtx_interval(NvtxInterval &&v) override { s_.nvtx_intervals.push_back(std::move(v)); }
    void on_dropped_nvtx_intervals(uint64_t count) override { s_.dropped_nvtx_intervals = count; }


protected:
    Snapshot &s_;
};

// A sink that hands everything to another sink; derive from it and override only the callbacks
// whose records you change or watch (calling ForwardingSink::on_... to pass them on).
class ForwardingSink : public SnapshotSink {
public:
    explicit ForwardingSink(SnapshotSink &inner) : inner_(inner) {}
#define VRAMTRACE_SINK_FORWARD(name, params, args) \
    void name params override { inner_.name args; }
    VRAMTRACE_SNAPSHOT_SINK_CALLBACKS(VRAMTRACE_SINK_FORWARD)
#undef VRAMTRACE_SINK_FORWARD

protected:
    SnapshotSink &inner() { return inner_; }

private:
    SnapshotSink &inner_;
};

// Parses one snapshot from `in`, handing each part to `sink`. `name` (usually the path) starts
// every error message. Returns false with *error set (one line, no trailing newline) on failure.
// Cross references (frame -> module, stack -> frame, allocation -> stack) are not checked here: a
// streaming sink cannot see both ends.
bool read_snapshot_stream(std::istream &in, const std::string &name, SnapshotSink &sink,
                          std::string *error);

// The reader's SAX events (what its JSON parser would call for the same text), for a byte source
// that parses some records itself and hands them on: a value is a scalar call, or start_... then
// its elements (an object's as key then value) then end_.... Each call returns false when the
// reader refused what it got (it then holds its message); nothing more should be handed on.
class SaxEvents {
public:
    virtual ~SaxEvents() = default;
    virtual bool null() = 0;
    virtual bool boolean(bool value) = 0;
    virtual bool number_integer(int64_t value) = 0;   // a negative integer (or -0)
    virtual bool number_unsigned(uint64_t value) = 0; // a non-negative integer
    virtual bool number_float() = 0;                  // a number with a fraction or exponent
    virtual bool string(std::string &value) = 0;      // may be moved from
    virtual bool key(std::string &name) = 0;
    virtual bool start_object() = 0;
    virtual bool end_object() = 0;
    virtual bool start_array() = 0;
    virtual bool end_array() = 0;
};

// A byte source for read_snapshot_source: the bytes of the document, except records it chose to
// parse itself and hand to the reader through the SaxEvents it is attached to, at the point of
// the document where they stand (the reader's parser never reads ahead of the byte it needs).
class RecordSource : public std::streambuf {
public:
    // Called once, before the first byte is read; `reader` lives until the read returns.
    virtual void attach(SaxEvents *reader) = 0;
    // Whether a NUL byte was among the bytes handed on (JSON text never holds one).
    virtual bool saw_nul() const = 0;
};

// read_snapshot_stream over such a source: the same results and messages for what it hands on.
bool read_snapshot_source(RecordSource &source, const std::string &name, SnapshotSink &sink, std::string *error);

// Reads the whole file at `path` into *out (replacing its contents), then checks every cross
// reference: frames[].module, stacks[].frames[], stacks[].call_site, the stack of allocations[],
// peaks[].sites[], ooms[] and events[] (0 or the id of a stack), and that stack ids are unique and
// non-zero. `stacks` is left in ascending id order
// (sorted if the file had another order) so that Snapshot::find_stack is a binary search.
// On failure *out is left empty (a default Snapshot) and *error reads "PATH: what is wrong".
bool read_snapshot_file(const std::string &path, Snapshot *out, std::string *error);

// Opens a snapshot file for reading: *fd on success. A regular file, or a FIFO (read once, as it
// comes: when nothing can be read yet, a note on stderr says that it waits for a writer); a
// directory, a device or a socket is refused with one line naming it, without blocking, as is
// anything that cannot be opened. "-" is standard input (a terminal there is refused).
bool open_snapshot_input(const std::string &path, int *fd, std::string *error);

// Stack ids named by records that a sink did not keep, each with the index of the first record
// that named it (for the message).
using StackReferences = std::unordered_map<uint32_t, size_t>;

// The cross references that read_snapshot_file checks, for a sink of one's own that collected the
// rest of a snapshot into `snapshot`: "" when they all hold, else what is wrong, without the file
// name ("allocations[3].stack: 33 is not the id of an entry in stacks"). Sorts `stacks` by id. The
// stacks named by allocations and events that were not kept in `snapshot` are checked through
// `allocation_stacks` / `event_stacks` (either may be null), with the same messages.
std::string check_snapshot_references(Snapshot &snapshot, const StackReferences *allocation_stacks = nullptr,
                                      const StackReferences *event_stacks = nullptr);

// Each cross reference as one rule with one message, for check_snapshot_references and for the
// readers that keep only part of a snapshot (diff's site collector, merge): "" when it holds.
namespace references {
std::string record(std::string_view array, size_t i); // "allocations[3]"
std::string frame_module(size_t frame, int module, size_t modules);
std::string stack_id(size_t stack, uint32_t id); // 0 is reserved for "no stack"
std::string stack_frame(size_t stack, size_t k, uint32_t frame, size_t frames);
std::string stack_indices(size_t stack, const Stack &s); // call_site and via within its frames
std::string duplicate_stack(uint32_t id);
// A record (`where`: "peaks[0].sites[1]") names stack `id`, which is not in stacks.
std::string missing_stack(std::string_view where, uint32_t id);
} // namespace references

} // namespace vramtrace::snapshot
