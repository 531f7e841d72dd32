#include "report/summary_nvtx.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/text_safety.h"
#include "snapshot/snapshot_fields.h"
#include "report/text_format.h"

namespace vramtrace::report::summary {

using snapshot::DevicePeak;
using snapshot::NvtxRegion;
using snapshot::RangePeak;
using snapshot::Snapshot;

void nvtx_ranges(Lines &lines, const Snapshot &s, const SummaryBody::State &body) {
    bool any = !s.range_stacks.empty();
    for (const DevicePeak &p : s.peaks) any |= !p.ranges.empty();
    if (!any) return;
    struct Row {
        uint64_t live = 0, live_count = 0, peak = 0;
    };
    std::map<int, std::map<uint32_t, Row>> by_device;
    for (const auto &[key, value] : body.range_live) {
        Row &r = by_device[key.first][key.second];
        r.live += value.first, r.live_count += value.second;
    }
    // A peak without ranges had no allocation with a range open: all of it is "(no range)".
    for (const DevicePeak &p : s.peaks) {
        if (p.ranges.empty() && p.peak_bytes != 0) by_device[p.device][0].peak += p.peak_bytes;
        for (const RangePeak &rp : p.ranges) by_device[p.device][rp.range].peak += rp.bytes;
    }
    lines.add("memory by NVTX range (the push/pop ranges open on the allocating thread, outermost first):");
    std::vector<int> order;
    for (const auto &entry : by_device) order.push_back(entry.first);
    std::stable_sort(order.begin(), order.end(), [](int a, int b) { return device_order_rank(a) < device_order_rank(b); });
    for (int device : order) {
        std::vector<std::pair<uint32_t, Row>> rows(by_device[device].begin(), by_device[device].end());
        std::stable_sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
            return a.second.peak != b.second.peak ? a.second.peak > b.second.peak : a.second.live > b.second.live;
        });
        std::vector<std::vector<std::string>> table{{device_label(device), "live", "allocations", "at peak"}};
        for (const auto &[id, row] : rows)
            table.push_back({"  " + one_line(range_stack_label(s, id)), format_bytes(row.live), to_dec(row.live_count),
                             format_bytes(row.peak)});
        lines.table("  ", table, {false, true, true, true});
    }
    if (s.dropped_range_stacks != 0 || s.dropped_range_names != 0)
        lines.add("  warning: the range table was full: " + plural(s.dropped_range_stacks, "range stack") + " and " +
                  plural(s.dropped_range_names, "range name") + " not kept (counted under the (more ...) rows)");
}

// The pools that describe their sub-allocations with the NVTX memory API: per segment (the tracked
// allocation a pool's regions lie in), the bytes its live regions use and the rest, free inside the
// pool; then the regions' bytes by the range stack open when each was registered. In a merged
// snapshot a segment is one process's (NvtxRegion::input): ranks of one program have the same
// segment addresses, so the segments are told apart, and listed, by process row, then address.
void nvtx_pools(Lines &lines, const Snapshot &s) {
    bool bad = s.dropped_nvtx_regions != 0 || s.nvtx_regions_outside != 0 || s.nvtx_unregisters_unknown != 0;
    if (s.nvtx_regions.empty() && !bad) return;
    lines.add("memory inside pools (NVTX memory API: regions inside the allocations that back them):");
    struct Segment {
        int device = -2;
        uint64_t size = 0, used = 0, regions = 0;
    };
    std::map<std::pair<std::optional<uint64_t>, uint64_t>, Segment> segments; // (process row, address)
    std::map<std::pair<int, uint32_t>, std::pair<uint64_t, uint64_t>> by_range;
    bool tagged = false;
    for (const NvtxRegion &r : s.nvtx_regions) {
        Segment &g = segments[{r.input, r.segment}];
        g.device = r.device, g.size = r.segment_size, g.used += r.size, ++g.regions;
        auto &row = by_range[{r.device, r.range}];
        row.first += r.size, ++row.second;
        tagged = tagged || r.input.has_value();
    }
    // The input column (merged_processes[].input) only for a merged snapshot's regions; "?" for a
    // region whose process is not known.
    std::vector<std::string> header{"device", "segment", "size", "used by regions", "regions", "free inside the pool"};
    std::vector<bool> right{false, false, true, true, true, true};
    if (tagged) {
        header.insert(header.begin() + 1, std::string(snapshot::member::nvtx_regions::input));
        right.insert(right.begin() + 1, true);
    }
    std::vector<std::vector<std::string>> table{header};
    for (const auto &[key, g] : segments) {
        std::vector<std::string> row{device_label(g.device), hex_u64(key.second), format_bytes(g.size), format_bytes(g.used),
                                     to_dec(g.regions), format_bytes(g.size >= g.used ? g.size - g.used : 0)};
        if (tagged) row.insert(row.begin() + 1, key.first ? to_dec(*key.first) : std::string("?"));
        table.push_back(std::move(row));
    }
    if (!segments.empty()) lines.table("  ", table, right);
    if (!by_range.empty()) {
        std::vector<std::pair<std::pair<int, uint32_t>, std::pair<uint64_t, uint64_t>>> rows(by_range.begin(), by_range.end());
        std::stable_sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
            if (a.first.first != b.first.first) return device_order_rank(a.first.first) < device_order_rank(b.first.first);
            return a.second.first > b.second.first;
        });
        std::vector<std::vector<std::string>> ranges{{"device", "regions by NVTX range", "bytes", "regions"}};
        for (const auto &[key, row] : rows)
            ranges.push_back({device_label(key.first), one_line(range_stack_label(s, key.second)), format_bytes(row.first),
                              to_dec(row.second)});
        lines.table("  ", ranges, {false, false, true, true});
    }
    if (bad)
        lines.add("  warning: not trusted: " + plural(s.nvtx_regions_outside, "region") + " outside every tracked allocation, " +
                  plural(s.nvtx_unregisters_unknown, "unregister") + " of no live region or heap, " +
                  plural(s.dropped_nvtx_regions, "registration") + " beyond vramtrace's tables");
}

} // namespace vramtrace::report::summary
