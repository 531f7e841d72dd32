// What `vramtrace diff` says of NVTX ranges (docs/nvtx.md): live bytes and bytes at the peak per
// device and range stack, matched by name (a range stack's id is its run's own). See diff_core.h.
#include <map>
#include <tuple>

#include "analysis/diff_core.h"
#include "common/text_table.h"
#include "report/text_format.h"

namespace vramtrace::cli {

std::vector<RangeDiff> compare_ranges(const SnapshotSites &base, const SnapshotSites &now) {
    std::map<std::pair<int64_t, std::string>, RangeDiff> rows;
    auto add = [&](const SnapshotSites &run, uint64_t Compared::*side) {
        for (const RangeTotals &t : run.ranges) {
            RangeDiff &d = rows[{report::device_order_rank(t.device), t.range}];
            d.device = t.device;
            d.range = t.range;
            d.live_bytes.*side += t.live_bytes;
            d.live_count.*side += t.live_count;
            d.at_peak.*side += t.at_peak;
        }
    };
    add(base, &Compared::base);
    add(now, &Compared::now);
    std::vector<RangeDiff> out;
    out.reserve(rows.size());
    for (auto &[order, d] : rows) out.push_back(std::move(d));
    return out;
}

std::string format_ranges_text(const DiffResult &diff) {
    if (diff.ranges.empty()) return {};
    TextTable table({"", "live base", "live new", "change", "at peak base", "at peak new", "change"});
    for (const RangeDiff &r : diff.ranges)
        table.add({report::device_label(r.device) + " " + one_line(r.range), report::format_bytes_exact(r.live_bytes.base),
                   report::format_bytes_exact(r.live_bytes.now), format_change_bytes(r.live_bytes),
                   report::format_bytes_exact(r.at_peak.base), report::format_bytes_exact(r.at_peak.now),
                   format_change_bytes(r.at_peak)});
    return "bytes by NVTX range (the push/pop ranges open on the allocating thread, docs/nvtx.md)\n" + table.render("  ");
}

} // namespace vramtrace::cli
