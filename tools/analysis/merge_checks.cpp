// The checks a merge input must pass before it is added, and the repeated processes merge warns
// about (merge_core.h, Merger::warnings).
#include "analysis/merge_file_state.h"

#include <unordered_set>

namespace vramtrace::cli {

using merge_detail::idx;
using merge_detail::missing_range;
namespace top = snapshot::member::top;

std::string Merger::FileState::reference_problem() const {
    if (dangling)
        return snapshot::references::missing_stack(idx(top::allocations, dangling_index), dangling_id);
    if (dangling_range)
        return missing_range(idx(top::allocations, dangling_range_index), dangling_range_id);
    // Peaks, OOM records and events name stacks too (0: none), as read_snapshot_file checks.
    auto missing = [](std::string where, uint32_t id) { return snapshot::references::missing_stack(where, id); };
    for (size_t i = 0; i < peaks.size(); ++i)
        for (size_t k = 0; k < peaks[i].sites.size(); ++k)
            if (uint32_t id = peaks[i].sites[k].stack; id != 0 && !local_stack(id))
                return missing(idx(top::peaks, i) + idx(".sites", k), id);
    for (size_t i = 0; i < ooms.size(); ++i)
        if (uint32_t id = ooms[i].stack; id != 0 && !local_stack(id)) return missing(idx(top::ooms, i), id);
    // Peaks and regions name range stacks (0: none).
    auto known_range = [&](uint32_t id) { return id == 0 || range_at.count(id) != 0; };
    for (size_t i = 0; i < peaks.size(); ++i)
        for (size_t k = 0; k < peaks[i].ranges.size(); ++k)
            if (uint32_t id = peaks[i].ranges[k].range; !known_range(id))
                return missing_range(idx(top::peaks, i) + idx(".ranges", k), id);
    for (size_t i = 0; i < regions.size(); ++i)
        if (!known_range(regions[i].range)) return missing_range(idx(top::nvtx_regions, i), regions[i].range);
    // A merged input's regions and intervals name its processes (merged_processes[].input); a plain
    // input is one process, whatever its records say.
    if (!merged_processes.empty()) {
        std::unordered_set<uint64_t> inputs;
        for (const snapshot::MergedProcess &p : merged_processes) inputs.insert(p.input);
        auto listed = [&](const std::optional<uint64_t> &input) { return !input || inputs.count(*input) != 0; };
        auto unlisted = [](std::string where, uint64_t input) {
            return where + ".input: " + std::to_string(input) + " is not the input of an entry in " +
                   std::string(top::merged_processes);
        };
        for (size_t i = 0; i < regions.size(); ++i)
            if (!listed(regions[i].input)) return unlisted(idx(top::nvtx_regions, i), *regions[i].input);
        for (size_t i = 0; i < intervals.size(); ++i)
            if (!listed(intervals[i].input))
                return unlisted(idx(top::nvtx_intervals, i), *intervals[i].input);
    }
    {
        const std::pair<const uint32_t, size_t> *first = nullptr;
        for (const auto &ref : event_stacks)
            if (!local_stack(ref.first) && (!first || ref.second < first->second)) first = &ref;
        if (first) return missing(idx(top::events, first->second), first->first);
    }
    return "";
}

void Merger::note_repeated_processes(const FileState &state, const std::string &name) {
    auto identity = [](const std::string &host, int64_t pid, const std::vector<std::string> &command_line,
                       const std::string &reason, uint64_t bytes, uint64_t count) {
        std::string key = host + '\0' + std::to_string(pid) + '\0' + reason + '\0' + std::to_string(bytes) +
                          '\0' + std::to_string(count);
        for (const std::string &arg : command_line) key += '\0' + arg;
        return key;
    };
    std::vector<std::pair<std::string, const snapshot::MergedProcess *>> keys;
    snapshot::MergedProcess self;
    if (state.merged_processes.empty()) {
        self.pid = state.process.pid;
        self.host = state.process.host;
        keys.emplace_back(identity(state.process.host, state.process.pid, state.process.command_line,
                                   state.process.reason, state.live_bytes, state.live_count),
                          &self);
    } else {
        for (const snapshot::MergedProcess &p : state.merged_processes)
            keys.emplace_back(identity(p.host, p.pid, p.command_line, p.reason, p.live_bytes, p.live_allocations), &p);
    }
    for (const auto &[key, p] : keys) {
        auto [seen, fresh] = process_origin_.emplace(key, name);
        if (!fresh)
            warnings_.push_back(name + ": process " + std::to_string(p->pid) + " on host '" + p->host +
                                "' is counted twice: " + seen->second +
                                " has the same snapshot of it (an input given twice, or a merged snapshot "
                                "with its own inputs?)");
    }
}

} // namespace vramtrace::cli
