// The snapshot model's lookups, and the steps that bring older files' records into today's model.
// No third-party dependencies: this file is linked into the preload library.
#include "snapshot/snapshot_model.h"

#include <algorithm>

namespace vramtrace::snapshot {

const RangeStack *Snapshot::find_range(uint32_t id) const {
    if (id == 0) return nullptr;
    auto it = std::lower_bound(range_stacks.begin(), range_stacks.end(), id,
                               [](const RangeStack &r, uint32_t v) { return r.id < v; });
    if (it != range_stacks.end() && it->id == id) return &*it;
    for (const RangeStack &r : range_stacks)
        if (r.id == id) return &r;
    return nullptr;
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

bool counts_as_held(const Allocation &a) {
    // IPC imports belong to another process; a VMM mapping shows memory already counted as the
    // physical allocation (vmm_physical) it maps; a graph memory node (graph_pool) is an address
    // the graph's pool backs only while the graph runs (the device's graph memory says how much);
    // an imported VMM handle is the exporter's memory; a reservation is address space, no memory.
    return a.kind != "ipc_imported" && a.kind != "vmm_mapping" && a.kind != "graph_pool" &&
           a.kind != "vmm_imported" && a.kind != "va_reservation";
}

std::string_view path_basename(std::string_view path) {
    size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
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

} // namespace vramtrace::snapshot
