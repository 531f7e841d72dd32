// The state of one merge input while it is read and added (merge_read.cpp, merge_checks.cpp), and
// the wording of the references an input can get wrong. Internal to tools/analysis/merge_*.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/merge_core.h"
#include "snapshot/snapshot_model.h"
#include "snapshot/snapshot_fields.h"

namespace vramtrace::cli {

namespace merge_detail {

// "ARRAY[I]".
inline std::string idx(std::string_view array, size_t i) { return std::string(array) + "[" + std::to_string(i) + "]"; }

// "WHERE.range: ID is not the id of an entry in nvtx_ranges".
inline std::string missing_range(const std::string &where, uint32_t id) {
    return where + ".range: " + std::to_string(id) + " is not the id of an entry in " +
           std::string(snapshot::member::top::nvtx_ranges);
}

} // namespace merge_detail

// What is known of the input being read.
struct Merger::FileState {
    size_t file_number = 0;
    snapshot::ProcessInfo process;
    bool have_process = false;
    std::vector<snapshot::DeviceTotals> devices;
    uint64_t dropped_allocations = 0, dropped_stacks = 0;
    std::vector<snapshot::Module> modules;
    std::vector<snapshot::Frame> frames;
    std::vector<snapshot::Stack> stacks;
    std::unordered_map<uint32_t, size_t> stack_at; // id -> index into stacks
    std::string duplicate_stack;                   // the first "stacks: id N appears more than once"
    std::vector<snapshot::MergedProcess> merged_processes;
    std::vector<snapshot::MergedDevice> merged_devices;
    std::optional<uint64_t> oom_count;
    uint64_t dropped_peak_sites = 0;
    std::vector<snapshot::DevicePeak> peaks;
    std::vector<snapshot::OomEvent> ooms;
    std::vector<snapshot::Pool> pools;
    snapshot::StackReferences event_stacks; // stacks named by events (checked, the events are not kept)
    size_t event_index = 0;
    // NVTX: the range stacks, the first problem of nvtx_ranges (an id 0 or repeated, lists of
    // different lengths), the regions and intervals, and the dropped counters.
    std::vector<snapshot::RangeStack> ranges;
    std::unordered_map<uint32_t, size_t> range_at; // id -> index into ranges
    std::string bad_range;
    std::vector<snapshot::NvtxRegion> regions;
    std::vector<snapshot::NvtxInterval> intervals;
    uint64_t dropped_range_stacks = 0, dropped_range_names = 0;
    uint64_t dropped_nvtx_regions = 0, nvtx_regions_outside = 0, nvtx_unregisters_unknown = 0;
    uint64_t dropped_nvtx_intervals = 0;

    // Merged indices, filled as allocations need them (0 = not yet; else index + 1).
    std::vector<uint32_t> module_merged, frame_merged, stack_merged;
    std::vector<uint32_t> range_merged; // 0 = not yet (a merged range id is never 0)

    bool frozen = false;        // the first allocation came: metadata is taken as complete
    bool frozen_invalid = false; // ... and did not check out
    bool late_metadata = false; // modules, frames or stacks came after an allocation
    size_t allocation_index = 0;
    bool dangling = false;      // an allocation named a stack id not (yet) seen
    size_t dangling_index = 0;
    uint32_t dangling_id = 0;
    bool dangling_range = false; // an allocation named a range id not (yet) seen
    size_t dangling_range_index = 0;
    uint32_t dangling_range_id = 0;
    long long spool_start = 0;
    uint64_t spool_count_start = 0;
    std::unordered_map<uint32_t, std::pair<uint64_t, uint64_t>> per_stack; // merged stack id -> bytes, count
    uint64_t live_bytes = 0, live_count = 0;
    // Live bytes and allocations per (device, merged range id), and the entry the last allocation
    // went to (one input's allocations mostly share device and range stack: no lookup for them).
    std::map<std::pair<int, uint32_t>, std::pair<uint64_t, uint64_t>> per_range;
    std::pair<uint64_t, uint64_t> *last_range = nullptr;
    std::pair<int, uint32_t> last_range_key{0, 0};

    void reset_allocations() {
        allocation_index = 0;
        dangling = false;
        dangling_range = false;
        per_stack.clear();
        per_range.clear();
        last_range = nullptr;
        live_bytes = live_count = 0;
    }

    // The index into stacks of a stack id of this input, if it has one.
    std::optional<size_t> local_stack(uint32_t id) const {
        auto found = stack_at.find(id);
        return found == stack_at.end() ? std::nullopt : std::optional<size_t>(found->second);
    }

    // What the whole file names that it lacks, once it is read (merge_checks.cpp): an allocation's,
    // peak's, OOM record's or event's stack, a peak's or region's range stack, a merged input's
    // process row; "" when everything is there. The first problem found, as read_snapshot_file
    // words it.
    std::string reference_problem() const;

    // The cross references read_snapshot_file checks, on what was read so far; "" when they hold.
    std::string check() const {
        for (size_t i = 0; i < frames.size(); ++i)
            if (std::string p = snapshot::references::frame_module(i, frames[i].module, modules.size()); !p.empty()) return p;
        for (size_t i = 0; i < stacks.size(); ++i) {
            const snapshot::Stack &st = stacks[i];
            if (std::string p = snapshot::references::stack_id(i, st.id); !p.empty()) return p;
            for (size_t k = 0; k < st.frames.size(); ++k)
                if (std::string p = snapshot::references::stack_frame(i, k, st.frames[k], frames.size()); !p.empty()) return p;
            if (std::string p = snapshot::references::stack_indices(i, st); !p.empty()) return p;
        }
        if (!duplicate_stack.empty()) return duplicate_stack;
        return bad_range;
    }
};

} // namespace vramtrace::cli
