// Grouping by call site (report/call_site_groups.h): one pass over the items, groups keyed by
// what the call-site frame is, then sorted. No third-party dependencies: this file is linked into
// the preload library.
#include "report/call_site_groups.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>

#include "report/text_format.h"

namespace vramtrace::report {

using snapshot::Allocation;
using snapshot::Frame;
using snapshot::Module;
using snapshot::Snapshot;
using snapshot::Stack;
using snapshot::counts_as_held;

namespace {

__extension__ typedef unsigned __int128 u128; // exact products of two 64-bit values

// One thing to group: `bytes` in `count` allocations made through `stack`; with `detail`, they
// were made by `api` on `device`, each of `size` bytes, which the group lists.
struct GroupItem {
    uint32_t stack;
    uint64_t bytes;
    uint64_t count;
    bool detail = false;
    std::string_view api;
    int device = 0;
    uint64_t size = 0;
};

// With item_groups: for each item, the index of its group in the returned order.
std::vector<CallSiteGroup> group_items(const Snapshot &snapshot, const std::vector<GroupItem> &items,
                                       std::vector<size_t> *item_groups = nullptr) {
    std::vector<CallSiteGroup> groups;
    std::vector<std::map<uint64_t, uint64_t, std::greater<>>> sizes;
    std::unordered_map<std::string, size_t> by_key;
    std::unordered_map<uint32_t, size_t> by_stack; // stack id -> group
    // Stack lookup that stays O(1) whatever the order of `stacks` (the library lists them in order
    // of first use, not of id). The first entry of a repeated id wins.
    std::unordered_map<uint32_t, const Stack *> stack_by_id;
    stack_by_id.reserve(snapshot.stacks.size());
    for (const Stack &st : snapshot.stacks) stack_by_id.try_emplace(st.id, &st);

    auto group_for_key = [&](std::string key, CallSiteGroup::Kind kind, int frame,
                             std::string location) -> size_t {
        auto [it, inserted] = by_key.try_emplace(std::move(key), groups.size());
        if (inserted) {
            CallSiteGroup g;
            g.kind = kind;
            g.frame = frame;
            g.key = it->first;
            g.location = std::move(location);
            groups.push_back(std::move(g));
            sizes.emplace_back();
        }
        return it->second;
    };
    auto no_stack = [&] {
        return group_for_key("9|no stack", CallSiteGroup::Kind::NoStack, -1, "(no stack captured)");
    };
    auto group_for_stack = [&](uint32_t id) -> size_t {
        auto cached = by_stack.find(id);
        if (cached != by_stack.end()) return cached->second;
        size_t index;
        auto found = stack_by_id.find(id);
        const Stack *stack = found == stack_by_id.end() ? nullptr : found->second;
        const Frame *frame = stack ? snapshot.call_site_frame(*stack) : nullptr;
        if (!stack) {
            index = no_stack();
        } else if (!frame) {
            index = group_for_key("8|no call site", CallSiteGroup::Kind::NoCallSite, -1,
                                  "(no call site: every frame is in vramtrace, the CUDA runtime or "
                                  "the driver)");
        } else {
            const Module *module = snapshot.find_module(*frame);
            std::string module_path = module ? module->path : std::string();
            std::string key;
            if (!stack->site_label.empty()) {
                // A name rule's call site (an autograd node, a library call) is one site whatever
                // the return address inside it.
                key = "4|" + module_path + '\x1f' + stack->site_label;
            } else if (!frame->file.empty()) {
                key = "1|" + module_path + '\x1f' + frame->file + '\x1f' +
                      zero_padded(frame->line, 10, 10) + '\x1f' + frame->function;
                // Inlined calls at the frame: two places in one inlined function are two call
                // sites even when the real function calls it from one line.
                for (const Frame::Inlined &in : frame->inlined)
                    key += '\x1e' + in.file + '\x1f' + zero_padded(in.line, 10, 10) + '\x1f' + in.function;
            } else if (module) {
                key = "2|" + module_path + '\x1f' + zero_padded(frame->module_offset, 16, 16);
            } else {
                key = "3|" + zero_padded(frame->address, 16, 16);
            }
            std::string location = stack->site_label.empty() ? describe_frame(snapshot, *frame) : stack->site_label;
            // The framework entry the call site went through is part of what the site is.
            if (!stack->via_label.empty()) {
                key += '\x1d' + stack->via_label;
                location += " via " + stack->via_label;
            }
            // In a Python process a native call site means a stack without Python frames (a
            // thread without the GIL: docs/python-frames.md); say so where it is shown.
            if (!snapshot.process.python.empty() && !frame->python) location += " [no Python frames]";
            index = group_for_key(std::move(key), CallSiteGroup::Kind::Frame,
                                  int(frame - snapshot.frames.data()), std::move(location));
        }
        by_stack.emplace(id, index);
        return index;
    };

    std::vector<size_t> unsorted_group; // per item, while groups are in order of first use
    if (item_groups) unsorted_group.reserve(items.size());
    for (const GroupItem &item : items) {
        size_t index = item.stack == 0 ? no_stack() : group_for_stack(item.stack);
        if (item_groups) unsorted_group.push_back(index);
        CallSiteGroup &g = groups[index];
        g.live_bytes += item.bytes;
        g.live_count += item.count;
        if (item.detail) {
            if (std::find(g.apis.begin(), g.apis.end(), item.api) == g.apis.end()) g.apis.emplace_back(item.api);
            if (std::find(g.devices.begin(), g.devices.end(), item.device) == g.devices.end())
                g.devices.push_back(item.device);
            sizes[index][item.size] += item.count;
        }
    }
    for (size_t i = 0; i < groups.size(); ++i) {
        std::sort(groups[i].apis.begin(), groups[i].apis.end());
        std::sort(groups[i].devices.begin(), groups[i].devices.end());
        auto &list = groups[i].sizes;
        list.assign(sizes[i].begin(), sizes[i].end());
        // Most bytes first (size x count), then the larger size; sizes are unique, so this is total.
        std::stable_sort(list.begin(), list.end(), [](const auto &a, const auto &b) {
            auto bytes_a = static_cast<u128>(a.first) * a.second;
            auto bytes_b = static_cast<u128>(b.first) * b.second;
            return bytes_a != bytes_b ? bytes_a > bytes_b : a.first > b.first;
        });
    }
    // Keys are unique, so the order is total and sorting positions gives the groups' order.
    std::vector<size_t> order(groups.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t i, size_t j) {
        const CallSiteGroup &a = groups[i], &b = groups[j];
        if (a.live_bytes != b.live_bytes) return a.live_bytes > b.live_bytes;
        if (a.live_count != b.live_count) return a.live_count > b.live_count;
        return a.key < b.key;
    });
    std::vector<CallSiteGroup> sorted;
    sorted.reserve(groups.size());
    std::vector<size_t> position(groups.size());
    for (size_t i = 0; i < order.size(); ++i) {
        position[order[i]] = i;
        sorted.push_back(std::move(groups[order[i]]));
    }
    if (item_groups) {
        item_groups->clear();
        for (size_t index : unsorted_group) item_groups->push_back(position[index]);
    }
    return sorted;
}
} // namespace

std::vector<CallSiteGroup> group_live_by_call_site(const Snapshot &snapshot) {
    std::vector<GroupItem> items;
    items.reserve(snapshot.allocations.size());
    for (const Allocation &a : snapshot.allocations)
        if (counts_as_held(a)) items.push_back({a.stack, a.size, 1, true, a.api, a.device, a.size});
    return group_items(snapshot, items);
}

std::vector<CallSiteGroup> group_folded_by_call_site(const Snapshot &snapshot, std::vector<FoldedLive> folded) {
    std::vector<GroupItem> items;
    items.reserve(folded.size());
    for (const FoldedLive &f : folded) items.push_back({f.stack, f.size * f.count, f.count, true, f.api, f.device, f.size});
    std::vector<FoldedLive>().swap(folded); // before the groups' size tables grow
    return group_items(snapshot, items);
}

std::vector<CallSiteGroup> group_by_call_site(const Snapshot &snapshot, const std::vector<StackWeight> &weights,
                                              std::vector<size_t> *weight_groups) {
    std::vector<GroupItem> items;
    items.reserve(weights.size());
    for (const StackWeight &w : weights) items.push_back({w.stack, w.bytes, w.count});
    return group_items(snapshot, items, weight_groups);
}

} // namespace vramtrace::report
