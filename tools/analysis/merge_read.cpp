// Reading the inputs of a merge: one pass (two for a file whose allocations come before its
// stacks) over each file with the reader's sink below, which checks what it reads and has the
// stacks its allocations name interned (merge_intern.cpp), then adding the file to the merge
// (commit). merge_core.h says what is kept in memory.
#include "analysis/merge_core.h"
#include "analysis/merge_file_state.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <istream>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <sys/stat.h>

#include "input/simd_snapshot_source.h"
#include "input/offline_symbolize.h"
#include "snapshot/report_model.h"
#include "snapshot/snapshot_fields.h"

namespace vramtrace::cli {

namespace {

namespace top = report::member::top;
using merge_detail::idx;
using merge_detail::missing_range;

// process.rank as a number (-1: none, or not a number).
int64_t rank_number(const std::string &rank) {
    if (rank.empty() || rank.size() > 18) return -1;
    int64_t value = 0;
    for (char c : rank) {
        if (c < '0' || c > '9') return -1;
        value = value * 10 + (c - '0');
    }
    return value;
}

// "NAME: cannot use the temporary file: WHY" (from errno), and false.
bool temporary_file_error(const std::string &name, std::string *error) {
    int err = errno;
    if (error) *error = name + ": cannot use the temporary file: " + std::strerror(err);
    return false;
}

} // namespace

// The sink of one pass over one input. The first pass takes everything; a second pass (only for a
// file whose allocations came before its stacks) takes only the allocations.
class MergeFileReader final : public SnapshotSink {
public:
    MergeFileReader(Merger &m, Merger::FileState &s, bool second) : m_(m), s_(s), second_(second) {}

    void on_process(report::ProcessInfo &&p) override {
        if (second_) return;
        s_.process = std::move(p);
        s_.have_process = true;
    }
    void on_device(report::DeviceTotals &&d) override {
        if (!second_) s_.devices.push_back(d);
    }
    void on_dropped(uint64_t allocations, uint64_t stacks) override {
        if (second_) return;
        s_.dropped_allocations = allocations;
        s_.dropped_stacks = stacks;
    }
    void on_module(report::Module &&mod) override {
        if (second_) return;
        metadata();
        s_.modules.push_back(std::move(mod));
    }
    void on_frame(report::Frame &&f) override {
        if (second_) return;
        metadata();
        s_.frames.push_back(std::move(f));
    }
    void on_stack(report::Stack &&st) override {
        if (second_) return;
        metadata();
        size_t at = s_.stacks.size();
        if (!s_.stack_at.emplace(st.id, at).second && s_.duplicate_stack.empty())
            s_.duplicate_stack = references::duplicate_stack(st.id);
        s_.stacks.push_back(std::move(st));
    }
    void on_merged_process(MergedProcess &&p) override {
        if (!second_) s_.merged_processes.push_back(std::move(p));
    }
    void on_merged_device(MergedDevice &&d) override {
        if (!second_) s_.merged_devices.push_back(std::move(d));
    }
    void on_oom_count(uint64_t count) override {
        if (!second_) s_.oom_count = count;
    }
    void on_dropped_peak_sites(uint64_t count) override {
        if (!second_) s_.dropped_peak_sites = count;
    }
    void on_peak(report::DevicePeak &&p) override {
        if (!second_) s_.peaks.push_back(std::move(p));
    }
    void on_oom(report::OomEvent &&o) override {
        if (!second_) s_.ooms.push_back(std::move(o));
    }
    void on_pool(report::Pool &&p) override {
        if (!second_) s_.pools.push_back(std::move(p));
    }
    // Range stacks are metadata that allocations name, like stacks.
    void on_range_stack(report::RangeStack &&r) override {
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
    void on_nvtx_region(report::NvtxRegion &&r) override {
        if (!second_) s_.regions.push_back(std::move(r));
    }
    void on_dropped_nvtx_regions(uint64_t dropped, uint64_t outside, uint64_t unknown) override {
        if (second_) return;
        s_.dropped_nvtx_regions = dropped;
        s_.nvtx_regions_outside = outside;
        s_.nvtx_unregisters_unknown = unknown;
    }
    void on_nvtx_interval(report::NvtxInterval &&v) override {
        if (!second_) s_.intervals.push_back(std::move(v));
    }
    void on_dropped_nvtx_intervals(uint64_t count) override {
        if (!second_) s_.dropped_nvtx_intervals = count;
    }
    // Events come from one process's clock and ring: a merged snapshot has no history. They are
    // checked like every other record that names a stack.
    void on_event(report::Event &&e) override {
        if (second_) return;
        if (e.stack != 0) s_.event_stacks.try_emplace(e.stack, s_.event_index);
        ++s_.event_index;
    }

    void on_allocation(report::Allocation &&a) override {
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
            merged_stack = stack_of(found->second);
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
            merged_range = range_of(found->second);
        }
        m_.spool_allocation(a, merged_stack, merged_range);
        if (!report::counts_as_held(a)) return;
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

    // The merged id of the input's range stack at `local` in its nvtx_ranges (interned on first use).
    uint32_t range_of(size_t local) {
        if (s_.range_merged.size() < s_.ranges.size()) s_.range_merged.resize(s_.ranges.size(), 0);
        uint32_t &merged = s_.range_merged[local];
        if (merged == 0) merged = m_.intern_range(s_.ranges[local]);
        return merged;
    }

    // The merged id of the input's stack at `local` in its stacks (interned on first use).
    uint32_t stack_of(size_t local) {
        if (s_.stack_merged.size() < s_.stacks.size()) s_.stack_merged.resize(s_.stacks.size(), 0);
        if (s_.stack_merged[local] != 0) return s_.stack_merged[local];
        const report::Stack &st = s_.stacks[local];
        std::vector<uint32_t> frames;
        frames.reserve(st.frames.size());
        for (uint32_t f : st.frames) frames.push_back(frame_of(f));
        uint32_t id = m_.intern_stack(std::move(frames), st);
        s_.stack_merged[local] = id;
        return id;
    }
    uint32_t frame_of(uint32_t local) {
        if (s_.frame_merged.size() < s_.frames.size()) s_.frame_merged.resize(s_.frames.size(), 0);
        if (s_.frame_merged[local] != 0) return s_.frame_merged[local] - 1;
        const report::Frame &f = s_.frames[local];
        int module = -1;
        if (f.module >= 0) {
            if (s_.module_merged.size() < s_.modules.size()) s_.module_merged.resize(s_.modules.size(), 0);
            uint32_t &mm = s_.module_merged[size_t(f.module)];
            if (mm == 0) mm = m_.intern_module(s_.modules[size_t(f.module)]) + 1;
            module = int(mm - 1);
        }
        uint32_t merged = m_.intern_frame(f, module);
        s_.frame_merged[local] = merged + 1;
        return merged;
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
    return read_snapshot_stream(in, name, rules, error);
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

bool Merger::add_file(const std::string &path, Progress *progress, std::string *error) {
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
                return false;
            }
            if (!spool_rewind(state.spool_start, state.spool_count_start)) return temporary_file_error(path, error);
        }
        FileState state;
        return read_file(state, path, progress, nullptr, error);
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

bool Merger::commit(FileState &state, const std::string &name, std::string *error) {
    auto fail = [&](const std::string &what) {
        if (error) *error = name + ": " + what;
        return false;
    };
    if (std::string problem = state.check(); !problem.empty()) return fail(problem);
    if (std::string problem = state.reference_problem(); !problem.empty()) return fail(problem);
    if (spool_failed_) return fail(std::string("cannot write the temporary file: ") + std::strerror(spool_errno_));

    // Rows: the processes a merged input lists, or this process.
    note_repeated_processes(state, name);
    size_t first_row = processes_.size();
    size_t first_device_row = process_devices_.size();
    std::unordered_map<uint32_t, uint32_t> renumber; // a merged input's process rows -> merged rows
    if (!state.merged_processes.empty()) {
        for (size_t i = 0; i < state.merged_processes.size(); ++i) {
            MergedProcess p = state.merged_processes[i];
            uint32_t row = uint32_t(processes_.size());
            if (!renumber.emplace(p.input, row).second)
                return fail(idx(top::merged_processes, i) + ".input: " + std::to_string(p.input) + " appears more than once");
            p.input = row;
            process_hosts_.push_back(p.host);
            processes_.push_back(std::move(p));
        }
        for (size_t i = 0; i < state.merged_devices.size(); ++i) {
            MergedDevice d = state.merged_devices[i];
            auto found = renumber.find(d.input);
            if (found == renumber.end()) {
                processes_.resize(first_row);
                process_hosts_.resize(first_row);
                return fail(idx(top::merged_devices, i) + ".input: " + std::to_string(d.input) +
                            " is not the input of an entry in merged_processes");
            }
            d.input = found->second;
            process_devices_.push_back(std::move(d));
        }
    } else {
        MergedProcess p;
        p.input = uint32_t(processes_.size());
        p.file = name;
        p.pid = state.process.pid;
        p.host = state.process.host;
        p.command_line = state.process.command_line;
        p.reason = state.process.reason;
        p.live_bytes = state.live_bytes;
        p.live_allocations = state.live_count;
        p.dropped_allocations = state.dropped_allocations;
        p.dropped_stacks = state.dropped_stacks;
        p.oom_count = state.oom_count;
        p.rank = rank_number(state.process.rank);
        for (const report::DeviceTotals &t : state.devices) {
            MergedDevice d;
            d.input = p.input;
            report::copy_device_counters(t, d);
            d.uuid = t.uuid;
            process_devices_.push_back(std::move(d));
        }
        process_hosts_.push_back(p.host);
        processes_.push_back(std::move(p));
    }

    // What made up each new device row's peak, by call site: a plain input's peaks[] say it; a
    // merged input's are sums over its processes.
    row_sites_.resize(process_devices_.size());
    row_sites_known_.resize(process_devices_.size(), false);
    if (state.merged_processes.empty()) {
        MergeFileReader sites_of(*this, state, false);
        for (size_t row = first_device_row; row < process_devices_.size(); ++row) {
            const report::DevicePeak *peak = nullptr;
            for (const report::DevicePeak &p : state.peaks)
                if (p.device == process_devices_[row].device) peak = &p;
            if (!peak) {
                row_sites_known_[row] = process_devices_[row].peak_bytes == 0;
                continue;
            }
            std::map<uint32_t, RowSite> by_site;
            for (const report::PeakSite &site : peak->sites) {
                uint32_t index = no_stack_site();
                if (site.stack != 0) index = stacks_[sites_of.stack_of(*state.local_stack(site.stack)) - 1].site;
                RowSite &r = by_site[index];
                r.site = index;
                r.bytes += site.bytes;
                r.count += site.count;
            }
            std::vector<RowSite> &out = row_sites_[row];
            for (const auto &[index, r] : by_site) out.push_back(r);
            row_sites_known_[row] = true;
        }
    }

    // Totals per ordinal.
    for (const report::DeviceTotals &t : state.devices) {
        report::DeviceTotals &row = report::device_row(devices_, t.device);
        row.current_bytes += t.current_bytes;
        row.peak_bytes += t.peak_bytes;
        row.allocation_count += t.allocation_count;
        row.free_count += t.free_count;
        row.total_allocated_bytes += t.total_allocated_bytes;
        row.total_freed_bytes += t.total_freed_bytes;
        // Graph memory: each process's graph pool is its own, so they add up like the counters.
        auto add = [](std::optional<uint64_t> &sum, const std::optional<uint64_t> &v) {
            if (v) sum = sum.value_or(0) + *v;
        };
        add(row.graph_reserved_bytes, t.graph_reserved_bytes);
        add(row.graph_used_bytes, t.graph_used_bytes);
        add(row.graph_reserved_high_bytes, t.graph_reserved_high_bytes);
        add(row.graph_used_high_bytes, t.graph_used_high_bytes);
        // The ordinal's identity, kept while every input that has it agrees.
        auto [identity, first_time] = device_identity_.try_emplace(t.device, t.uuid, t.pci_bus_id);
        if (!first_time) {
            if (identity->second.first != t.uuid) identity->second.first.clear();
            if (identity->second.second != t.pci_bus_id) identity->second.second.clear();
        }
    }
    dropped_allocations_ += state.dropped_allocations;
    dropped_stacks_ += state.dropped_stacks;
    dropped_peak_sites_ += state.dropped_peak_sites;

    // Peaks, OOM records and pools, with the stacks re-numbered.
    MergeFileReader restack(*this, state, false);
    auto merged_stack = [&](uint32_t id) -> uint32_t { return id == 0 ? 0 : restack.stack_of(*state.local_stack(id)); };
    auto merged_range = [&](uint32_t id) -> uint32_t { return id == 0 ? 0 : restack.range_of(state.range_at.at(id)); };
    bool complete = true;
    for (const report::DeviceTotals &t : state.devices) {
        bool recorded = t.peak_bytes == 0;
        for (const report::DevicePeak &p : state.peaks) recorded = recorded || p.device == t.device;
        complete = complete && recorded;
    }
    peaks_complete_ = peaks_complete_ && complete;
    if (peaks_complete_) {
        for (const report::DevicePeak &p : state.peaks) {
            Peak &merged = peaks_[p.device];
            merged.peak_bytes += p.peak_bytes;
            uint64_t count = 0;
            for (const report::PeakSite &site : p.sites) {
                auto &entry = merged.sites[merged_stack(site.stack)];
                entry.first += site.bytes;
                entry.second += site.count;
                count += site.count;
            }
            // By range stack: a peak without ranges (no range was open) is all under range 0, so
            // the merged ranges sum to the merged peak_bytes as each input's do to its own.
            if (p.ranges.empty()) {
                if (p.peak_bytes != 0) {
                    auto &entry = merged.ranges[0];
                    entry.first += p.peak_bytes;
                    entry.second += count;
                }
            }
            for (const report::RangePeak &rp : p.ranges) {
                auto &entry = merged.ranges[merged_range(rp.range)];
                entry.first += rp.bytes;
                entry.second += rp.count;
            }
        }
    } else {
        peaks_.clear();
    }
    for (report::OomEvent &o : state.ooms) {
        o.stack = merged_stack(o.stack);
        ooms_.push_back(std::move(o));
    }
    // A merged input's rows say what its processes counted; a plain input's process says it.
    if (!state.merged_processes.empty()) {
        for (size_t row = first_row; row < processes_.size(); ++row)
            if (processes_[row].oom_count) oom_count_ += *processes_[row].oom_count;
            else oom_count_known_ = false;
    } else if (state.oom_count) {
        oom_count_ += *state.oom_count;
    } else {
        oom_count_known_ = false;
    }
    for (report::Pool &pool : state.pools) {
        if (!pool.is_graph_memory) {
            pools_.push_back(std::move(pool));
            continue;
        }
        // An older file's graph memory (a pool entry then): into its device's row.
        report::DeviceTotals &row = report::device_row(devices_, pool.device);
        row.graph_reserved_bytes = row.graph_reserved_bytes.value_or(0) + pool.reserved_bytes;
        row.graph_used_bytes = row.graph_used_bytes.value_or(0) + pool.used_bytes;
        row.graph_reserved_high_bytes = row.graph_reserved_high_bytes.value_or(0) + pool.reserved_high_bytes;
        row.graph_used_high_bytes = row.graph_used_high_bytes.value_or(0) + pool.used_high_bytes;
    }

    // NVTX. Each device of this input has its device role as the imbalance compares ranks (a
    // merged input's ordinal takes the role it has in the first of its processes that lists it);
    // the live bytes and the bytes at the peaks add up per role and merged range stack.
    {
        std::map<int, DeviceRole> role_of;
        std::map<uint32_t, std::vector<int>> ordinals; // process row -> its device ordinals
        for (size_t row = first_device_row; row < process_devices_.size(); ++row)
            ordinals[process_devices_[row].input].push_back(process_devices_[row].device);
        for (auto &[input, list] : ordinals) {
            std::stable_sort(list.begin(), list.end(),
                             [](int a, int b) { return report::device_order_rank(a) < report::device_order_rank(b); });
            uint32_t gpu = 0;
            for (int d : list) role_of.try_emplace(d, d >= 0 ? DeviceRole{0, gpu++} : DeviceRole{d == -1 ? 1 : 2, 0});
        }
        // A device no row lists (not written so by the library): after the listed GPUs below it.
        auto role = [&](int device) -> DeviceRole {
            if (auto found = role_of.find(device); found != role_of.end()) return found->second;
            if (device < 0) return {device == -1 ? 1 : 2, 0};
            uint32_t below = 0;
            for (const auto &[d, r] : role_of) below += d >= 0 && d < device;
            return {0, below};
        };
        for (const auto &[key, t] : state.per_range) {
            RangeTotals &r = role_ranges_[role(key.first)][key.second];
            r.live_bytes += t.first;
            r.live_count += t.second;
        }
        for (const report::DevicePeak &p : state.peaks) {
            if (p.ranges.empty() && p.peak_bytes == 0) continue;
            auto &by_range = role_ranges_[role(p.device)];
            if (p.ranges.empty()) by_range[0].peak_bytes += p.peak_bytes;
            for (const report::RangePeak &rp : p.ranges) by_range[merged_range(rp.range)].peak_bytes += rp.bytes;
        }
    }
    // Each region and interval names its process row: segments of two ranks of one program have
    // the same addresses, and their threads the same ids. A merged input that does not say (written
    // before the tag) leaves it unknown.
    auto process_row = [&](const std::optional<uint64_t> &local) -> std::optional<uint64_t> {
        if (state.merged_processes.empty()) return first_row;
        if (!local) return std::nullopt;
        return renumber.at(uint32_t(*local));
    };
    for (report::NvtxRegion &r : state.regions) {
        r.range = merged_range(r.range);
        r.input = process_row(r.input);
        nvtx_regions_.push_back(std::move(r));
    }
    for (report::NvtxInterval &v : state.intervals) {
        v.input = process_row(v.input);
        nvtx_intervals_.push_back(std::move(v));
    }
    dropped_range_stacks_ += state.dropped_range_stacks;
    dropped_range_names_ += state.dropped_range_names;
    dropped_nvtx_regions_ += state.dropped_nvtx_regions;
    nvtx_regions_outside_ += state.nvtx_regions_outside;
    nvtx_unregisters_unknown_ += state.nvtx_unregisters_unknown;
    dropped_nvtx_intervals_ += state.dropped_nvtx_intervals;

    // Call sites.
    for (const auto &[stack, t] : state.per_stack) {
        Site &site = sites_[stack == 0 ? no_stack_site() : stacks_[stack - 1].site];
        site.live_bytes += t.first;
        site.live_count += t.second;
        if (site.last_file != state.file_number) {
            site.last_file = state.file_number;
            ++site.files;
        }
    }
    live_bytes_ += state.live_bytes;
    live_count_ += state.live_count;

    // The merged process record.
    const report::ProcessInfo &p = state.process;
    if (first_) {
        host_ = p.host;
        executable_ = p.executable;
        python_ = p.python;
        driver_version_ = p.driver_version;
        start_time_ns_ = p.start_time_ns;
        dump_time_ns_ = p.dump_time_ns;
        first_ = false;
    } else {
        if (host_ != p.host) host_.clear();
        if (executable_ != p.executable) executable_.clear();
        if (python_ != p.python) python_.clear();
        if (driver_version_ != p.driver_version) driver_version_ = 0;
        start_time_ns_ = std::min(start_time_ns_, p.start_time_ns);
        dump_time_ns_ = std::max(dump_time_ns_, p.dump_time_ns);
    }
    stack_depth_ = std::max(stack_depth_, p.stack_depth);
    ++files_;
    return true;
}

} // namespace vramtrace::cli
