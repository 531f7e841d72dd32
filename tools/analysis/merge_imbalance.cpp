// How the ranks of a merge compare (merge_core.h, Imbalance; docs/cli.md, "Imbalance"), and the
// report text of it that merge and summary print.
//
// Roles: a rank's GPUs in ordinal order are its roles "gpu" 0, 1, ... (a rank with one GPU has
// role gpu 0, whichever ordinal or UUID it has), its host-pinned memory the role "host", memory on
// an unknown device "unknown". Ranks are compared role by role.
// Figures: per role, the minimum, lower median and maximum of the ranks' current and peak bytes;
// the outliers are the ranks whose peak has a modified z-score 0.6745 (peak - median) / scale
// beyond 3.5 either way (Iglewicz and Hoaglin), where scale is the median absolute deviation of
// the peaks, but at least 1% of the median peak and 1 MiB: ranks that differ by less are never
// outliers, identical ranks (deviation 0) included. A role of fewer than 3 ranks has none.
// For each outlier, the call sites whose bytes at its peak exceed their median over the role's
// ranks whose peak composition is known (a site a rank lacks counts 0 there).
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analysis/merge_core.h"
#include "common/text_table.h"
#include "snapshot/snapshot_model.h"
#include "report/text_format.h"

namespace vramtrace::cli {

namespace {

constexpr uint64_t kScaleFloorBytes = 1ull << 20;

// The lower middle of `values` (reordered).
uint64_t lower_median(std::vector<uint64_t> &values) {
    if (values.empty()) return 0;
    auto mid = values.begin() + std::ptrdiff_t((values.size() - 1) / 2);
    std::nth_element(values.begin(), mid, values.end());
    return *mid;
}

// |0.6745 (peak - median) / scale| > 3.5, in integers: 6745 |peak - median| > 35000 scale.
bool is_outlier(uint64_t peak, uint64_t median, uint64_t scale) {
    unsigned __int128 deviation = peak > median ? peak - median : median - peak;
    return deviation * 6745 > static_cast<unsigned __int128>(scale) * 35000;
}

std::string who(int64_t rank, uint64_t input) {
    return rank >= 0 ? "rank " + std::to_string(rank) : "process #" + std::to_string(input);
}

std::string role_name(const snapshot::ImbalanceRole &r, bool several_gpus) {
    DeviceRole role{r.role == "gpu" ? 0 : r.role == "host" ? 1 : 2, r.role_index};
    return device_role_title(role, several_gpus);
}

} // namespace

std::string device_role_title(DeviceRole role, bool several_gpus) {
    if (role.first == 0)
        return several_gpus ? "GPU " + std::to_string(role.second + 1) + " of each rank (in ordinal order)"
                            : "each rank's GPU";
    if (role.first == 1) return "host-pinned memory of each rank";
    return "memory on an unknown device of each rank";
}

Imbalance Merger::imbalance() const {
    // Each device row's role.
    std::map<std::pair<std::string, uint32_t>, std::vector<size_t>> roles; // (role, index) -> rows
    {
        std::vector<std::vector<size_t>> by_process(processes_.size());
        for (size_t i = 0; i < process_devices_.size(); ++i)
            if (process_devices_[i].input < by_process.size()) by_process[process_devices_[i].input].push_back(i);
        for (std::vector<size_t> &rows : by_process) {
            std::stable_sort(rows.begin(), rows.end(), [&](size_t a, size_t b) {
                return report::device_order_rank(process_devices_[a].device) <
                       report::device_order_rank(process_devices_[b].device);
            });
            uint32_t gpu = 0;
            for (size_t row : rows) {
                int d = process_devices_[row].device;
                if (d >= 0) roles[{"gpu", gpu++}].push_back(row);
                else roles[{d == -1 ? "host" : "unknown", 0}].push_back(row);
            }
        }
    }
    Imbalance out;
    // GPU roles first, then host, then unknown.
    std::vector<std::pair<std::pair<std::string, uint32_t>, std::vector<size_t>>> ordered(roles.begin(), roles.end());
    auto order = [](const std::string &role) { return role == "gpu" ? 0 : role == "host" ? 1 : 2; };
    std::stable_sort(ordered.begin(), ordered.end(), [&](const auto &a, const auto &b) {
        return std::make_pair(order(a.first.first), a.first.second) < std::make_pair(order(b.first.first), b.first.second);
    });
    for (const auto &role_rows : ordered) {
        // Plain references, not a structured binding: the lambdas below capture them, which
        // clang 14 (the fuzz build's compiler) does not allow for bindings.
        const std::pair<std::string, uint32_t> &key = role_rows.first;
        const std::vector<size_t> &rows = role_rows.second;
        snapshot::ImbalanceRole r;
        r.role = key.first;
        r.role_index = key.second;
        r.ranks = rows.size();
        auto rank_of = [&](size_t row) { return processes_[process_devices_[row].input].rank; };
        auto input_of = [&](size_t row) { return uint64_t(process_devices_[row].input); };
        // Minimum and maximum: the first row in input order that holds it.
        auto extremes = [&](auto value, uint64_t *min, uint64_t *min_input, int64_t *min_rank, uint64_t *max,
                            uint64_t *max_input, int64_t *max_rank, uint64_t *median) {
            size_t lo = rows[0], hi = rows[0];
            std::vector<uint64_t> values;
            values.reserve(rows.size());
            for (size_t row : rows) {
                uint64_t v = value(row);
                values.push_back(v);
                if (v < value(lo) || (v == value(lo) && input_of(row) < input_of(lo))) lo = row;
                if (v > value(hi) || (v == value(hi) && input_of(row) < input_of(hi))) hi = row;
            }
            *min = value(lo), *min_input = input_of(lo), *min_rank = rank_of(lo);
            *max = value(hi), *max_input = input_of(hi), *max_rank = rank_of(hi);
            *median = lower_median(values);
        };
        auto current = [&](size_t row) { return process_devices_[row].current_bytes; };
        auto peak = [&](size_t row) { return process_devices_[row].peak_bytes; };
        extremes(current, &r.current_min_bytes, &r.current_min_input, &r.current_min_rank, &r.current_max_bytes,
                 &r.current_max_input, &r.current_max_rank, &r.current_median_bytes);
        extremes(peak, &r.peak_min_bytes, &r.peak_min_input, &r.peak_min_rank, &r.peak_max_bytes, &r.peak_max_input,
                 &r.peak_max_rank, &r.peak_median_bytes);
        std::vector<uint64_t> deviations;
        deviations.reserve(rows.size());
        for (size_t row : rows)
            deviations.push_back(peak(row) > r.peak_median_bytes ? peak(row) - r.peak_median_bytes
                                                                 : r.peak_median_bytes - peak(row));
        r.peak_mad_bytes = lower_median(deviations);
        r.scale_bytes = std::max({r.peak_mad_bytes, r.peak_median_bytes / 100, kScaleFloorBytes});

        std::vector<size_t> outliers;
        if (rows.size() >= 3)
            for (size_t row : rows)
                if (is_outlier(peak(row), r.peak_median_bytes, r.scale_bytes)) outliers.push_back(row);
        std::sort(outliers.begin(), outliers.end(), [&](size_t a, size_t b) { return input_of(a) < input_of(b); });
        r.outliers = outliers.size();
        uint32_t role_number = uint32_t(out.roles.size());
        out.roles.push_back(r);

        // The rows whose composition is known, for the per-site medians.
        std::vector<size_t> known;
        for (size_t row : rows)
            if (row < row_sites_known_.size() && row_sites_known_[row]) known.push_back(row);
        auto bytes_at = [&](size_t row, uint32_t site) -> std::pair<uint64_t, uint64_t> {
            const std::vector<RowSite> &list = row_sites_[row];
            auto it = std::lower_bound(list.begin(), list.end(), site,
                                       [](const RowSite &s, uint32_t v) { return s.site < v; });
            return it != list.end() && it->site == site ? std::make_pair(it->bytes, it->count)
                                                        : std::make_pair(uint64_t(0), uint64_t(0));
        };
        // Each call site's median over those rows, computed once per role, on first need.
        std::unordered_map<uint32_t, uint64_t> site_median;
        std::vector<uint64_t> values(known.size());
        for (size_t row : outliers) {
            snapshot::ImbalanceOutlier o;
            o.imbalance = role_number;
            o.input = process_devices_[row].input;
            o.rank = rank_of(row);
            o.host = processes_[o.input].host;
            o.device = process_devices_[row].device;
            o.peak_bytes = peak(row);
            bool composition = row < row_sites_known_.size() && row_sites_known_[row];
            if (composition) {
                struct Above {
                    uint32_t site;
                    uint64_t bytes, count;
                };
                std::vector<Above> above;
                for (const RowSite &site : row_sites_[row]) {
                    auto [cached, fresh] = site_median.try_emplace(site.site, 0);
                    if (fresh) {
                        for (size_t k = 0; k < known.size(); ++k) values[k] = bytes_at(known[k], site.site).first;
                        cached->second = lower_median(values);
                    }
                    uint64_t median = cached->second;
                    if (site.bytes > median) above.push_back({site.site, site.bytes - median, site.count});
                }
                std::sort(above.begin(), above.end(), [&](const Above &a, const Above &b) {
                    if (a.bytes != b.bytes) return a.bytes > b.bytes;
                    return sites_[a.site].key < sites_[b.site].key;
                });
                if (above.size() > kImbalanceSitesKept) above.resize(kImbalanceSitesKept);
                for (const Above &a : above) o.sites.push_back({sites_[a.site].stack, a.bytes, a.count});
            }
            o.sites_known = composition;
            out.outliers.push_back(std::move(o));
        }
    }
    return out;
}

std::string format_imbalance_text(const Imbalance &imbalance, size_t top,
                                  const std::function<std::string(uint32_t stack)> &name_site) {
    std::string out;
    bool several_gpus = false;
    for (const snapshot::ImbalanceRole &r : imbalance.roles) several_gpus = several_gpus || (r.role == "gpu" && r.role_index > 0);
    for (size_t i = 0; i < imbalance.roles.size(); ++i) {
        const snapshot::ImbalanceRole &r = imbalance.roles[i];
        out += "\nimbalance: " + role_name(r, several_gpus) + ", " + std::to_string(r.ranks) + " rank" +
               (r.ranks == 1 ? "" : "s") + "\n";
        TextTable t({"", "min", "median", "max"});
        t.add({"current", report::format_bytes_exact(r.current_min_bytes) + ", " + who(r.current_min_rank, r.current_min_input),
               report::format_bytes_exact(r.current_median_bytes),
               report::format_bytes_exact(r.current_max_bytes) + ", " + who(r.current_max_rank, r.current_max_input)});
        t.add({"peak", report::format_bytes_exact(r.peak_min_bytes) + ", " + who(r.peak_min_rank, r.peak_min_input),
               report::format_bytes_exact(r.peak_median_bytes),
               report::format_bytes_exact(r.peak_max_bytes) + ", " + who(r.peak_max_rank, r.peak_max_input)});
        out += t.render("  ");
        out += "  outliers: " + std::to_string(r.outliers) + " (peak with |0.6745 (peak - median) / scale| > 3.5; scale " +
               report::format_bytes_exact(r.scale_bytes) + " = max(median absolute deviation " +
               report::format_bytes_exact(r.peak_mad_bytes) + ", 1% of the median, 1 MiB)" +
               (r.ranks < 3 ? "; fewer than 3 ranks have none" : "") + ")\n";
        for (size_t k = 0; k < imbalance.outliers.size(); ++k) {
            const snapshot::ImbalanceOutlier &o = imbalance.outliers[k];
            if (o.imbalance != i) continue;
            uint64_t median = r.peak_median_bytes;
            char z[32];
            std::snprintf(z, sizeof z, "%+.1f", snapshot::imbalance_z(r, o.peak_bytes));
            out += "  " + who(o.rank, o.input) + " (" + one_line(o.host.empty() ? "?" : o.host) + " " +
                   report::device_label(o.device) + "): peak " + report::format_bytes_exact(o.peak_bytes) + ", " +
                   report::format_bytes_exact(o.peak_bytes > median ? o.peak_bytes - median : median - o.peak_bytes) +
                   (o.peak_bytes >= median ? " above" : " below") + " the median, z " + z + "\n";
            if (!o.sites_known) {
                out += "    (its call sites at the peak are not known: it came from a merged snapshot)\n";
                continue;
            }
            if (o.sites.empty()) {
                out += "    no call site holds more at its peak than at the median rank's\n";
                continue;
            }
            TextTable st({"above the median", "allocations at peak", "call site"});
            size_t shown = top == 0 ? o.sites.size() : std::min(top, o.sites.size());
            for (size_t s = 0; s < shown; ++s)
                st.add({"+" + report::format_bytes_exact(o.sites[s].bytes), std::to_string(o.sites[s].count),
                        one_line(name_site(o.sites[s].stack))});
            out += st.render("    ");
            if (shown < o.sites.size()) out += "    ... and " + std::to_string(o.sites.size() - shown) + " more\n";
        }
    }
    return out;
}

} // namespace vramtrace::cli
