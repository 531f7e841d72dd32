// Adding a merge input that was read and checked (merge_read.cpp, merge_checks.cpp): its process
// rows, the peak composition of each new device row, totals per ordinal, peaks, OOM records and
// pools re-numbered, the NVTX range stacks per device role, the call sites and the process record.
#include "analysis/merge_core.h"
#include "analysis/merge_file_state.h"
#include "report/text_format.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace vramtrace::cli {

namespace {

namespace top = snapshot::member::top;
using merge_detail::idx;

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

} // namespace

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
            snapshot::MergedProcess p = state.merged_processes[i];
            uint32_t row = uint32_t(processes_.size());
            if (!renumber.emplace(p.input, row).second)
                return fail(idx(top::merged_processes, i) + ".input: " + std::to_string(p.input) + " appears more than once");
            p.input = row;
            process_hosts_.push_back(p.host);
            processes_.push_back(std::move(p));
        }
        for (size_t i = 0; i < state.merged_devices.size(); ++i) {
            snapshot::MergedDevice d = state.merged_devices[i];
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
        snapshot::MergedProcess p;
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
        for (const snapshot::DeviceTotals &t : state.devices) {
            snapshot::MergedDevice d;
            d.input = p.input;
            snapshot::copy_device_counters(t, d);
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
        for (size_t row = first_device_row; row < process_devices_.size(); ++row) {
            const snapshot::DevicePeak *peak = nullptr;
            for (const snapshot::DevicePeak &p : state.peaks)
                if (p.device == process_devices_[row].device) peak = &p;
            if (!peak) {
                row_sites_known_[row] = process_devices_[row].peak_bytes == 0;
                continue;
            }
            std::map<uint32_t, RowSite> by_site;
            for (const snapshot::PeakSite &site : peak->sites) {
                uint32_t index = no_stack_site();
                if (site.stack != 0) index = stacks_[merged_stack_of(state, *state.local_stack(site.stack)) - 1].site;
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
    for (const snapshot::DeviceTotals &t : state.devices) {
        snapshot::DeviceTotals &row = snapshot::device_row(devices_, t.device);
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
    auto merged_stack = [&](uint32_t id) -> uint32_t { return id == 0 ? 0 : merged_stack_of(state, *state.local_stack(id)); };
    auto merged_range = [&](uint32_t id) -> uint32_t { return id == 0 ? 0 : merged_range_of(state, state.range_at.at(id)); };
    bool complete = true;
    for (const snapshot::DeviceTotals &t : state.devices) {
        bool recorded = t.peak_bytes == 0;
        for (const snapshot::DevicePeak &p : state.peaks) recorded = recorded || p.device == t.device;
        complete = complete && recorded;
    }
    peaks_complete_ = peaks_complete_ && complete;
    if (peaks_complete_) {
        for (const snapshot::DevicePeak &p : state.peaks) {
            Peak &merged = peaks_[p.device];
            merged.peak_bytes += p.peak_bytes;
            uint64_t count = 0;
            for (const snapshot::PeakSite &site : p.sites) {
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
            for (const snapshot::RangePeak &rp : p.ranges) {
                auto &entry = merged.ranges[merged_range(rp.range)];
                entry.first += rp.bytes;
                entry.second += rp.count;
            }
        }
    } else {
        peaks_.clear();
    }
    for (snapshot::OomEvent &o : state.ooms) {
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
    for (snapshot::Pool &pool : state.pools) {
        if (!pool.is_graph_memory) {
            pools_.push_back(std::move(pool));
            continue;
        }
        // An older file's graph memory (a pool entry then): into its device's row.
        snapshot::DeviceTotals &row = snapshot::device_row(devices_, pool.device);
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
        for (const snapshot::DevicePeak &p : state.peaks) {
            if (p.ranges.empty() && p.peak_bytes == 0) continue;
            auto &by_range = role_ranges_[role(p.device)];
            if (p.ranges.empty()) by_range[0].peak_bytes += p.peak_bytes;
            for (const snapshot::RangePeak &rp : p.ranges) by_range[merged_range(rp.range)].peak_bytes += rp.bytes;
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
    for (snapshot::NvtxRegion &r : state.regions) {
        r.range = merged_range(r.range);
        r.input = process_row(r.input);
        nvtx_regions_.push_back(std::move(r));
    }
    for (snapshot::NvtxInterval &v : state.intervals) {
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
    const snapshot::ProcessInfo &p = state.process;
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
