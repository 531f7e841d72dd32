// The cross references of a snapshot, checked once for every reader of whole files and every sink
// that collects what it needs (snapshot_reader.h).
#include <algorithm>

#include "snapshot/snapshot_fields.h"
#include "snapshot/reader/snapshot_reader.h"

namespace vramtrace::snapshot {

namespace top = member::top;

namespace references {

std::string record(std::string_view array, size_t i) { return std::string(array) + "[" + std::to_string(i) + "]"; }

std::string frame_module(size_t frame, int module, size_t modules) {
    if (module >= -1 && (module < 0 || size_t(module) < modules)) return {};
    return record(top::frames, frame) + ".module: " + std::to_string(module) + " is not an index into modules (" +
           std::to_string(modules) + " entries)";
}

std::string stack_id(size_t stack, uint32_t id) {
    return id != 0 ? std::string() : record(top::stacks, stack) + ".id: 0 is reserved for \"no stack\"";
}

std::string stack_frame(size_t stack, size_t k, uint32_t frame, size_t frames) {
    if (frame < frames) return {};
    return record(top::stacks, stack) + ".frames[" + std::to_string(k) + "]: " + std::to_string(frame) +
           " is not an index into frames (" + std::to_string(frames) + " entries)";
}

std::string stack_indices(size_t stack, const Stack &s) {
    for (auto [name, value] : {std::pair<std::string_view, int>{member::stacks::call_site, s.call_site},
                               std::pair<std::string_view, int>{member::stacks::via, s.via}})
        if (value < -1 || (value >= 0 && size_t(value) >= s.frames.size()))
            return record(top::stacks, stack) + "." + std::string(name) + ": " + std::to_string(value) +
                   " is not an index into this stack's frames (" + std::to_string(s.frames.size()) + " entries)";
    return {};
}

std::string duplicate_stack(uint32_t id) { return "stacks: id " + std::to_string(id) + " appears more than once"; }

std::string missing_stack(std::string_view where, uint32_t id) {
    return std::string(where) + ".stack: " + std::to_string(id) + " is not the id of an entry in stacks";
}

} // namespace references

using namespace references;

// Cross references of a complete snapshot; "" when all hold. Sorts stacks by id.
std::string check_snapshot_references(Snapshot &s, const StackReferences *allocation_stacks,
                                      const StackReferences *event_stacks) {
    for (size_t i = 0; i < s.frames.size(); ++i)
        if (std::string p = frame_module(i, s.frames[i].module, s.modules.size()); !p.empty()) return p;
    for (size_t i = 0; i < s.stacks.size(); ++i) {
        const Stack &st = s.stacks[i];
        if (std::string p = stack_id(i, st.id); !p.empty()) return p;
        for (size_t k = 0; k < st.frames.size(); ++k)
            if (std::string p = stack_frame(i, k, st.frames[k], s.frames.size()); !p.empty()) return p;
        if (std::string p = stack_indices(i, st); !p.empty()) return p;
    }
    if (!std::is_sorted(s.stacks.begin(), s.stacks.end(), [](const Stack &a, const Stack &b) { return a.id < b.id; }))
        std::stable_sort(s.stacks.begin(), s.stacks.end(), [](const Stack &a, const Stack &b) { return a.id < b.id; });
    for (size_t i = 1; i < s.stacks.size(); ++i)
        if (s.stacks[i].id == s.stacks[i - 1].id)
            return duplicate_stack(s.stacks[i].id);
    auto dangling = [&](uint32_t id) { return id != 0 && !s.find_stack(id); };
    // The first record (lowest index) that names a missing stack, of those a sink did not keep.
    auto first_dangling = [&](const StackReferences *refs, std::string_view array) -> std::string {
        if (!refs) return {};
        const std::pair<const uint32_t, size_t> *first = nullptr;
        for (const auto &ref : *refs)
            if (dangling(ref.first) && (!first || ref.second < first->second)) first = &ref;
        return first ? missing_stack(record(array, first->second), first->first) : std::string();
    };
    for (size_t i = 0; i < s.allocations.size(); ++i)
        if (dangling(s.allocations[i].stack)) return missing_stack(record(top::allocations, i), s.allocations[i].stack);
    if (std::string problem = first_dangling(allocation_stacks, top::allocations); !problem.empty()) return problem;
    for (size_t i = 0; i < s.peaks.size(); ++i)
        for (size_t k = 0; k < s.peaks[i].sites.size(); ++k)
            if (dangling(s.peaks[i].sites[k].stack))
                return missing_stack(record(top::peaks, i) + record(".sites", k), s.peaks[i].sites[k].stack);
    for (size_t i = 0; i < s.ooms.size(); ++i)
        if (dangling(s.ooms[i].stack)) return missing_stack(record(top::ooms, i), s.ooms[i].stack);
    for (size_t i = 0; i < s.events.events.size(); ++i)
        if (dangling(s.events.events[i].stack)) return missing_stack(record(top::events, i), s.events.events[i].stack);
    for (size_t i = 0; i < s.teardowns.size(); ++i)
        for (size_t k = 0; k < s.teardowns[i].sites.size(); ++k)
            if (dangling(s.teardowns[i].sites[k].stack))
                return missing_stack(record(top::teardowns, i) + record(".sites", k), s.teardowns[i].sites[k].stack);
    return first_dangling(event_stacks, top::events);
}

} // namespace vramtrace::snapshot
