// The cross references of a snapshot, checked once for every reader of whole files and every sink
// that collects what it needs (snapshot_reader.h).
#include <algorithm>

#include "snapshot/snapshot_fields.h"
#include "snapshot/reader/snapshot_reader.h"

namespace vramtrace::cli {

using report::Stack;
namespace top = report::member::top;

// Cross references of a complete snapshot; "" when all hold. Sorts stacks by id.
std::string check_snapshot_references(report::Snapshot &s, const StackReferences *allocation_stacks,
                                      const StackReferences *event_stacks) {
    auto idx = [](std::string_view array, size_t i) { return std::string(array) + "[" + std::to_string(i) + "]"; };
    for (size_t i = 0; i < s.frames.size(); ++i) {
        int m = s.frames[i].module;
        if (m < -1 || (m >= 0 && size_t(m) >= s.modules.size()))
            return idx(top::frames, i) + ".module: " + std::to_string(m) + " is not an index into modules (" +
                   std::to_string(s.modules.size()) + " entries)";
    }
    for (size_t i = 0; i < s.stacks.size(); ++i) {
        const Stack &st = s.stacks[i];
        if (st.id == 0) return idx(top::stacks, i) + ".id: 0 is reserved for \"no stack\"";
        for (size_t k = 0; k < st.frames.size(); ++k)
            if (st.frames[k] >= s.frames.size())
                return idx(top::stacks, i) + ".frames[" + std::to_string(k) + "]: " + std::to_string(st.frames[k]) +
                       " is not an index into frames (" + std::to_string(s.frames.size()) + " entries)";
        if (st.call_site < -1 || (st.call_site >= 0 && size_t(st.call_site) >= st.frames.size()))
            return idx(top::stacks, i) + ".call_site: " + std::to_string(st.call_site) +
                   " is not an index into this stack's frames (" + std::to_string(st.frames.size()) + " entries)";
    }
    if (!std::is_sorted(s.stacks.begin(), s.stacks.end(), [](const Stack &a, const Stack &b) { return a.id < b.id; }))
        std::stable_sort(s.stacks.begin(), s.stacks.end(), [](const Stack &a, const Stack &b) { return a.id < b.id; });
    for (size_t i = 1; i < s.stacks.size(); ++i)
        if (s.stacks[i].id == s.stacks[i - 1].id)
            return "stacks: id " + std::to_string(s.stacks[i].id) + " appears more than once";
    auto dangling = [&](uint32_t id) { return id != 0 && !s.find_stack(id); };
    auto not_a_stack = [](uint32_t id) { return ".stack: " + std::to_string(id) + " is not the id of an entry in stacks"; };
    // The first record (lowest index) that names a missing stack, of those a sink did not keep.
    auto first_dangling = [&](const StackReferences *refs, std::string_view array) -> std::string {
        if (!refs) return {};
        const std::pair<const uint32_t, size_t> *first = nullptr;
        for (const auto &ref : *refs)
            if (dangling(ref.first) && (!first || ref.second < first->second)) first = &ref;
        return first ? idx(array, first->second) + not_a_stack(first->first) : std::string();
    };
    for (size_t i = 0; i < s.allocations.size(); ++i)
        if (dangling(s.allocations[i].stack)) return idx(top::allocations, i) + not_a_stack(s.allocations[i].stack);
    if (std::string problem = first_dangling(allocation_stacks, top::allocations); !problem.empty()) return problem;
    for (size_t i = 0; i < s.peaks.size(); ++i)
        for (size_t k = 0; k < s.peaks[i].sites.size(); ++k)
            if (dangling(s.peaks[i].sites[k].stack))
                return idx(top::peaks, i) + idx(".sites", k) + not_a_stack(s.peaks[i].sites[k].stack);
    for (size_t i = 0; i < s.ooms.size(); ++i)
        if (dangling(s.ooms[i].stack)) return idx(top::ooms, i) + not_a_stack(s.ooms[i].stack);
    for (size_t i = 0; i < s.events.events.size(); ++i)
        if (dangling(s.events.events[i].stack)) return idx(top::events, i) + not_a_stack(s.events.events[i].stack);
    for (size_t i = 0; i < s.teardowns.size(); ++i)
        for (size_t k = 0; k < s.teardowns[i].sites.size(); ++k)
            if (dangling(s.teardowns[i].sites[k].stack))
                return idx(top::teardowns, i) + idx(".sites", k) + not_a_stack(s.teardowns[i].sites[k].stack);
    return first_dangling(event_stacks, top::events);
}

} // namespace vramtrace::cli
