// What `vramtrace diff` says of the memory categories (docs/attribution.md): live bytes per device
// and category in both runs. See diff_core.h.
#include <map>
#include <tuple>

#include "analysis/diff_core.h"
#include "common/text_table.h"
#include "report/text_format.h"

namespace vramtrace::cli {

std::vector<CategoryDiff> compare_categories(const SnapshotSites &base, const SnapshotSites &now) {
    std::map<std::tuple<int64_t, size_t, std::string>, CategoryDiff> rows;
    auto row = [&](const CategoryTotals &c) -> CategoryDiff & {
        CategoryDiff &d = rows[{report::device_order_rank(c.device), category_rank(c.category), c.category}];
        d.device = c.device;
        d.category = c.category;
        return d;
    };
    for (const CategoryTotals &c : base.categories) {
        CategoryDiff &d = row(c);
        d.live_bytes.base += c.live_bytes;
        d.live_count.base += c.live_count;
    }
    for (const CategoryTotals &c : now.categories) {
        CategoryDiff &d = row(c);
        d.live_bytes.now += c.live_bytes;
        d.live_count.now += c.live_count;
    }
    std::vector<CategoryDiff> out;
    out.reserve(rows.size());
    for (auto &[order, d] : rows) out.push_back(std::move(d));
    return out;
}

std::string format_categories_text(const DiffResult &diff) {
    bool informative = false;
    for (const CategoryDiff &c : diff.categories) informative |= c.category != "other";
    if (!informative) return {};
    TextTable table({"", "base", "new", "change", "allocations"});
    for (const CategoryDiff &c : diff.categories) {
        std::string counts = std::to_string(c.live_count.base) + " -> " + std::to_string(c.live_count.now);
        if (c.live_count.changed()) counts += " (" + format_change_count(c.live_count) + ")";
        table.add({report::device_label(c.device) + " " + one_line(c.category), report::format_bytes_exact(c.live_bytes.base),
                   report::format_bytes_exact(c.live_bytes.now), format_change_bytes(c.live_bytes), counts});
    }
    return "live bytes by category (stacks read by the frame rules, docs/attribution.md)\n" + table.render("  ");
}

} // namespace vramtrace::cli
