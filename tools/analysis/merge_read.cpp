// Reading the inputs of a merge: one pass (two for a file whose allocations come before its
// stacks) over each file with the reader's sink below, which checks what it reads and has the
// stacks its allocations name interned (merge_intern.cpp); then the file is checked
// (merge_checks.cpp) and added to the merge (merge_commit.cpp). merge_core.h says what is kept in
// memory.
#include "analysis/merge_core.h"
#include "analysis/merge_file_state.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <istream>
#include <map>
#include <optional>
#include <unordered_map>

#include <sys/stat.h>

#include "input/simd_snapshot_source.h"
#include "input/offline_symbolize.h"
#include "snapshot/snapshot_model.h"
#include "snapshot/snapshot_fields.h"

namespace vramtrace::cli {

namespace {

namespace top = snapshot::member::top;
using merge_detail::idx;

// "NAME: cannot use the temporary file: WHY" (from errno), and false.
bool temporary_file_error(const std::string &name, std::string *error) {
    int err = errno;
    if (error) *error = name + ": cannot use the temporary file: " + std::strerror(err);
    return false;
}

} // namespace

// The sink of one pass over one input. The first pass takes everything; a second pass (only for a
// file whose allocations came before its stacks) takes only the allocations.
class MergeFileReader final : public snapshot::SnapshotSink {
public:
    MergeFileReader(Merger &m, Merger::FileState &s, bool second) : m_(m), s_(s), second_(second) {}

    void on_process(snapshot::ProcessInfo &&p) override {
        if (second_) return;
        s_.process = std::move(p);
        s_.have_process = true;
    }
    void on_device(snapshot::DeviceTotals &&d) override {
        if (!second_) s_.devices.push_back(d);
    }
    void on_dropped(uint64_t allocations, uint64_t stacks) override {
        if (second_) return;
        s_.dropped_allocations = allocations;
        s_.dropped_stacks = stacks;
    }
    void on_module(snapshot::Module &&mod) override {
        if (second_) return;
        metadata();
        s_.modules.push_back(std::move(mod));
    }
    void on_frame(snapshot::Frame &&f) override {
        if (second_) return;
        metadata();
        s_.frames.push_back(std::move(f));
    }
    void on_stack(snapshot::Stack &&st) override {
        if (second_) return;
        metadata();
        size_t at = s_.stacks.size();
        if (!s_.stack_at.emplace(st.id, at).second && s_.duplicate_stack.empty())
            s_.duplicate_stack = snapshot::references::duplicate_stack(st.id);
        s_.stacks.push_back(std::move(st));
    }
    void on_merged_process(snapshot::MergedProcess &&p) override {
        if (!second_) s_.merged_processes.push_back(std::move(p));
    }
    void on_merged_device(snapshot::MergedDevice &&d) override {
        if (!second_) s_.merged_devices.push_back(std::move(d));
    }
    void on_oom_count(uint64_t count) override {
        if (!second_) s_.oom_count = count;
    }
    void on_dropped_peak_sites(uint64_t count) override {
        if (!second_) s_.dropped_peak_sites = count;
    }
    void on_peak(snapshot::DevicePeak &&p) override {
        if (!second_) s_.peaks.push_back(std::move(p));
    }
    void on_oom(snapshot::OomEvent &&o) override {
        if (!second_) s_.ooms.push_back(std::move(o));
    }
    void on_pool(snapshot::Pool &&p) override {
        if (!second_) s_.pools.push_back(std::move(p));
    }
    // Range stacks are metadata that allocations name, like stacks.
    void on_range_stack(snapshot::RangeStack &&r) override {
        if (second_) return;
        metadata();
        size_t at = s_.ranges.size();
        if (s_.bad_range.empty()) {
            std::string where = idx(top::nvtx_ranges, at);
            if (r.id == 0)
                s_.bad_range = where + ".id: 0 is reserved for \"no range\"";
            else if (r.domains.size() != r.names.size())
                s_.bad_range = where + ": domains has " + std::to_string(r.domains.size()) + " entries and names " +
                               std::to_string(r.names.size()) + " (one of each per open range)";
            else if (!r.categories.empty() && r.categories.size() != r.domains.size())
                s_.bad_range = where + ": categories has " + std::to_string(r.categories.size()) + " entries and domains " +
                               std::to_string(r.domains.size()) + " (one per open range, or none)";
        }
        if (!s_.range_at.emplace(r.id, at).second && s_.bad_range.empty())
            s_.bad_range = std::string(top::nvtx_ranges) + ": id " + std::to_string(r.id) + " appears more than once";
        s_.ranges.push_back(std::move(r));
    }
    void on_dropped_nvtx(uint64_t range_stacks, uint64_t range_names) override {
        if (second_) return;
        s_.dropped_range_stacks = range_stacks;
        s_.dropped_range_names = range_names;
    }
    void on_nvtx_region(snapshot::NvtxRegion &&r) override {
        if (!second_) s_.regions.push_back(std::move(r));
    }
    void on_dropped_nvtx_regions(uint64_t dropped, uint64_t outside, uint64_t unknown) override {
        if (second_) return;
        s_.dropped_nvtx_regions = dropped;
        s_.nvtx_regions_outside = outside;
        s_.nvtx_unregisters_unknown = unknown;
    }
    void on_nvtx_interval(snapshot::NvtxInterval &&v) override {
        if (!second_) s_.intervals.push_back(std::move(v));
    }
    void on_dropped_nvtx_intervals(uint64_t count) override {
        if (!second_) s_.dropped_nvtx_intervals = count;
    }
    // Events come from one process's clock and ring: a merged snapshot has no history. They are
    // checked like every other record that names a stack.
    void on_event(snapshot::Event &&e) override {
        if (second_) return;
        if (e.stack != 0) s_.event_stacks.try_emplace(e.stack, s_.event_index);
        ++s_.event_index;
    }

    void on_allocation(snapshot::Allocation &&a) override {
        size_t index = s_.allocation_index++;
        if (!s_.frozen) {
            s_.frozen = true;
            s_.frozen_invalid = !s_.check().empty();
        }
        if (s_.late_metadata || s_.frozen_invalid || s_.dangling || s_.dangling_range) return;
        uint32_t merged_stack = 0;
        if (a.stack != 0) {
            auto found = s_.stack_at.find(a.stack);
            if (found == s_.stack_at.end()) {
                s_.dangling = true;
                s_.dangling_index = index;
                s_.dangling_id = a.stack;
                return;
            }
            merged_stack = m_.merged_stack_of(s_, found->second);
        }
        uint32_t merged_range = 0;
        if (a.range != 0) {
            auto found = s_.range_at.find(a.range);
            if (found == s_.range_at.end()) {
                s_.dangling_range = true;
                s_.dangling_range_index = index;
                s_.dangling_range_id = a.range;
                return;
            }
            merged_range = m_.merged_range_of(s_, found->second);
        }
        m_.spool_allocation(a, merged_stack, merged_range);
        if (!snapshot::counts_as_held(a)) return;
        auto &t = s_.per_stack[merged_stack];
        t.first += a.size;
        t.second += 1;
        s_.live_bytes += a.size;
        s_.live_count += 1;
        std::pair<int, uint32_t> key{a.device, merged_range};
        if (!s_.last_range || s_.last_range_key != key) {
            s_.last_range = &s_.per_range[key];
            s_.last_range_key = key;
        }
        s_.last_range->first += a.size;
        s_.last_range->second += 1;
    }

private:
    void metadata() {
        if (s_.frozen) s_.late_metadata = true;
    }

    Merger &m_;
    Merger::FileState &s_;
    bool second_;
};

bool Merger::read_pass(std::istream &in, const std::string &name, FileState &state, bool second, std::string *error) {
    MergeFileReader reader(*this, state, second);
    SymbolizingSink rules(reader, name); // as stream_snapshot_file reads a file
    return snapshot::read_snapshot_stream(in, name, rules, error);
}

bool Merger::start_file(FileState &state, const std::string &name, std::string *error) {
    state.file_number = files_;
    if (!spool_mark(&state.spool_start)) return temporary_file_error(name, error);
    state.spool_count_start = spooled_;
    return true;
}

bool Merger::add_stream(std::istream &in, const std::string &name, std::string *error) {
    FileState state;
    if (!start_file(state, name, error)) return false;
    if (!read_pass(in, name, state, false, error)) return false;
    if (state.late_metadata) {
        if (error) *error = name + ": its allocations come before its stacks; a stream is read only once";
        return false;
    }
    return commit(state, name, error);
}

void Merger::note_not_snapshot(const FileState &state, const std::string &error, bool *not_snapshot) {
    // The reader's words for a document that is no snapshot (lib/snapshot/reader/): such a file is
    // dropped whole, its spooled allocations (if any) with it; nothing else of it is committed.
    if (not_snapshot && error.find("not a vramtrace snapshot") != std::string::npos &&
        spool_rewind(state.spool_start, state.spool_count_start))
        *not_snapshot = true;
}

bool Merger::add_file(const std::string &path, Progress *progress, std::string *error, bool *not_snapshot) {
    try {
        {
            // First through simdjson (input/simd_snapshot_source.h). When that declines, or the
            // file turns out not to be valid, everything taken from it is forgotten and the reader
            // alone reads it again: its result and its message (which may name a line and column
            // of the file) are the ones given.
            FileState state;
            EventCheck events;
            std::string first_error;
            bool ok = read_file(state, path, progress, &events, &first_error);
            if (ok) return true;
            if (!events.used) {
                if (error) *error = first_error;
                note_not_snapshot(state, first_error, not_snapshot);
                return false;
            }
            if (!spool_rewind(state.spool_start, state.spool_count_start)) return temporary_file_error(path, error);
        }
        FileState state;
        std::string last_error;
        if (read_file(state, path, progress, nullptr, &last_error)) return true;
        if (error) *error = last_error;
        note_not_snapshot(state, last_error, not_snapshot);
        return false;
    } catch (const std::bad_alloc &) {
        if (error) *error = path + ": out of memory while merging";
    } catch (const std::exception &e) {
        if (error) *error = path + ": cannot merge: " + e.what();
    }
    return false;
}

bool Merger::read_file(FileState &state, const std::string &path, Progress *progress, EventCheck *events,
                       std::string *error) {
    if (!start_file(state, path, error)) return false;
    MergeFileReader first(*this, state, false);
    if (!stream_snapshot_file(path, first, progress, error, true, events) || (events && events->declined)) return false;
    if (events && events->used)
        for (const auto &[stack, index] : events->stacks) state.event_stacks.try_emplace(stack, index);
    if (state.late_metadata) {
        // Allocations came before the modules, frames or stacks they need: forget what was
        // taken from them and read the file again, now that everything else is known.
        if (!spool_rewind(state.spool_start, state.spool_count_start)) return temporary_file_error(path, error);
        struct stat st {};
        if (::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) {
            if (error)
                *error = path + ": its allocations come before its stacks, which takes a second reading, and a "
                                "FIFO is read once: give a regular file";
            return false;
        }
        state.reset_allocations();
        if (std::string problem = state.check(); !problem.empty()) {
            if (error) *error = path + ": " + problem;
            return false;
        }
        state.frozen = true;
        state.frozen_invalid = false;
        state.late_metadata = false;
        MergeFileReader second(*this, state, true);
        if (!stream_snapshot_file(path, second, progress, error)) return false;
    }
    return commit(state, path, error);
}

} // namespace vramtrace::cli
