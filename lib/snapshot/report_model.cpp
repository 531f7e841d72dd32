// Report model helpers: lookups on a Snapshot, and the formatting and grouping shared by the summary
// (in the library and the CLI) and the CLI's commands. No third-party dependencies: this file is
// linked into the preload library.
#include "snapshot/report_model.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <unordered_map>

namespace vramtrace::report {

std::string to_dec(uint64_t value) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, value);
    return std::string(buf, res.ptr);
}

namespace {

__extension__ typedef unsigned __int128 u128; // exact products of two 64-bit values

// value / 100 as "I.FF" (value in hundredths).
std::string hundredths(uint64_t value) {
    std::string out = to_dec(value / 100);
    out += '.';
    out += char('0' + (value % 100) / 10);
    out += char('0' + value % 10);
    return out;
}

std::string zero_padded(uint64_t value, int width, int base) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, value, base);
    std::string digits(buf, res.ptr);
    if (int(digits.size()) < width) digits.insert(0, size_t(width) - digits.size(), '0');
    return digits;
}

} // namespace

const RangeStack *Snapshot::find_range(uint32_t id) const {
    if (id == 0) return nullptr;
    auto it = std::lower_bound(range_stacks.begin(), range_stacks.end(), id,
                               [](const RangeStack &r, uint32_t v) { return r.id < v; });
    if (it != range_stacks.end() && it->id == id) return &*it;
    for (const RangeStack &r : range_stacks)
        if (r.id == id) return &r;
    return nullptr;
}

std::string range_stack_label(const Snapshot &s, uint32_t id) {
    if (id == 0) return "(no range)";
    const RangeStack *r = s.find_range(id);
    if (r == nullptr) return "(range " + std::to_string(id) + ", not in the snapshot)";
    return range_stack_label(*r);
}

std::string range_stack_label(const RangeStack &r) {
    std::string out;
    for (size_t i = 0; i < r.names.size(); ++i) {
        if (i) out += " > ";
        if (i < r.domains.size() && !r.domains[i].empty()) out += r.domains[i] + ":";
        out += r.names[i].empty() ? "(unnamed)" : r.names[i];
        out += range_category_suffix(r, i);
    }
    return out;
}

std::string range_category_suffix(const RangeStack &r, size_t i) {
    if (i >= r.categories.size() || r.categories[i].empty()) return {};
    return " [" + r.categories[i] + "]";
}

const Stack *Snapshot::find_stack(uint32_t id) const {
    if (id == 0 || stacks.empty()) return nullptr;
    // Binary search assuming ascending ids; well defined (if useless) on any order.
    size_t lo = 0, hi = stacks.size();
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (stacks[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    if (lo < stacks.size() && stacks[lo].id == id) return &stacks[lo];
    for (const Stack &s : stacks)
        if (s.id == id) return &s;
    return nullptr;
}

const Frame *Snapshot::call_site_frame(const Stack &stack) const {
    if (stack.call_site < 0 || size_t(stack.call_site) >= stack.frames.size()) return nullptr;
    uint32_t index = stack.frames[size_t(stack.call_site)];
    if (index >= frames.size()) return nullptr;
    return &frames[index];
}

const Module *Snapshot::find_module(const Frame &frame) const {
    if (frame.module < 0 || size_t(frame.module) >= modules.size()) return nullptr;
    return &modules[size_t(frame.module)];
}

std::string format_bytes(uint64_t bytes) {
    static constexpr const char *kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) return to_dec(bytes) + " B";
    int unit = 1;
    u128 divisor = 1024;
    for (;;) {
        // Hundredths of the unit, rounded half up.
        auto scaled = (static_cast<u128>(bytes) * 100 + divisor / 2) / divisor;
        if (scaled < 1024 * 100 || unit == 6) return hundredths(uint64_t(scaled)) + " " + kUnits[unit];
        ++unit;
        divisor *= 1024;
    }
}

std::string format_bytes_exact(uint64_t bytes) {
    if (bytes < 1024) return format_bytes(bytes);
    return format_bytes(bytes) + " (" + to_dec(bytes) + " B)";
}

std::string format_duration(uint64_t ns) {
    constexpr uint64_t kMs = 1000000, kS = 1000 * kMs;
    if (ns < kS) return to_dec((ns + kMs / 2) / kMs) + " ms";
    if (ns < 60 * kS) {
        uint64_t centi = (ns + kS / 200) / (kS / 100);
        if (centi < 6000) return hundredths(centi) + " s";
    }
    uint64_t seconds = (ns + kS / 2) / kS;
    if (seconds < 3600) return to_dec(seconds / 60) + " min " + zero_padded(seconds % 60, 2, 10) + " s";
    uint64_t minutes = (seconds + 30) / 60;
    return to_dec(minutes / 60) + " h " + zero_padded(minutes % 60, 2, 10) + " min";
}

std::string device_label(int device) {
    if (device >= 0) return "cuda:" + std::to_string(device);
    if (device == -1) return "host";
    if (device == -2) return "unknown";
    return "device " + std::to_string(device);
}

std::string hex_u64(uint64_t value) { return "0x" + zero_padded(value, 1, 16); }

std::string_view path_basename(std::string_view path) {
    size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

namespace {
// "function at file:line", "function at file", "function", "??".
void append_position(std::string &out, const std::string &function, const std::string &file,
                     uint32_t line) {
    out += function.empty() ? "??" : function;
    if (file.empty()) return;
    out += " at ";
    out += file;
    if (line != 0) out += ":" + std::to_string(line);
}
} // namespace

std::string describe_frame(const Snapshot &snapshot, const Frame &frame) {
    std::string out;
    if (frame.inlined.empty()) {
        append_position(out, frame.function, frame.file, frame.line);
    } else {
        // Innermost first, each caller it was inlined into in parentheses, the real function last.
        append_position(out, frame.inlined[0].function, frame.inlined[0].file, frame.inlined[0].line);
        for (size_t i = 1; i < frame.inlined.size(); ++i) {
            out += " (inlined into ";
            append_position(out, frame.inlined[i].function, frame.inlined[i].file, frame.inlined[i].line);
            out += ')';
        }
        out += " (inlined into ";
        append_position(out, frame.function, frame.file, frame.line);
        out += ')';
    }
    const Module *module = snapshot.find_module(frame);
    if (frame.python) {
        out += " (python)";
        return out;
    }
    if (!frame.file.empty()) {
        if (module) {
            out += " (";
            out += path_basename(module->path);
            out += ")";
        }
    } else if (module) {
        out += " (";
        out += path_basename(module->path);
        out += "+" + hex_u64(frame.module_offset) + ")";
    } else {
        out += " (" + hex_u64(frame.address) + ")";
    }
    return out;
}

bool counts_as_held(const Allocation &a) {
    // IPC imports belong to another process; a VMM mapping shows memory already counted as the
    // physical allocation (vmm_physical) it maps; a graph memory node (graph_pool) is an address
    // the graph's pool backs only while the graph runs (the device's graph memory says how much);
    // an imported VMM handle is the exporter's memory; a reservation is address space, no memory.
    return a.kind != "ipc_imported" && a.kind != "vmm_mapping" && a.kind != "graph_pool" &&
           a.kind != "vmm_imported" && a.kind != "va_reservation";
}

DeviceTotals &device_row(std::vector<DeviceTotals> &devices, int ordinal) {
    auto it = devices.begin();
    while (it != devices.end() && it->device < ordinal) ++it;
    if (it == devices.end() || it->device != ordinal) {
        DeviceTotals row;
        row.device = ordinal;
        it = devices.insert(it, row);
    }
    return *it;
}

void add_graph_memory_to_device(Snapshot &s, const Pool &graph_memory) {
    DeviceTotals &row = device_row(s.devices, graph_memory.device);
    row.graph_reserved_bytes = graph_memory.reserved_bytes;
    row.graph_used_bytes = graph_memory.used_bytes;
    row.graph_reserved_high_bytes = graph_memory.reserved_high_bytes;
    row.graph_used_high_bytes = graph_memory.used_high_bytes;
}

void adopt_graph_memory_pools(Snapshot &s) {
    std::vector<Pool> kept;
    for (Pool &p : s.pools) {
        if (p.is_graph_memory) add_graph_memory_to_device(s, p);
        else kept.push_back(std::move(p));
    }
    s.pools = std::move(kept);
}

namespace {
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
