// The imbalance section of a merged snapshot's HTML report. See imbalance.h.
#include "export/html/imbalance.h"

#include <cstdio>

#include "export/export_common.h"
#include "export/html/page.h"
#include "report/text_format.h"

namespace vramtrace::exporter::html {

// A merged snapshot's ranks compared (docs/cli.md, "Imbalance"): per device role the minimum,
// median and maximum of the current and peak bytes, then each outlier with the call sites that
// make it heavier than the median rank.
void append_imbalance(std::string &out, const snapshot::Snapshot &snapshot) {
    if (snapshot.imbalance.empty()) return;
    auto who = [](int64_t rank, uint64_t input) {
        return rank >= 0 ? "rank " + to_dec(uint64_t(rank)) : "process #" + to_dec(input);
    };
    auto bytes = [](uint64_t b) { return escape(report::format_bytes_exact(b)); };
    out += "<h2>Imbalance across ranks</h2>\n";
    for (size_t i = 0; i < snapshot.imbalance.size(); ++i) {
        const snapshot::ImbalanceRole &r = snapshot.imbalance[i];
        std::string role = r.role == "gpu" ? "GPU " + to_dec(r.role_index + 1) + " of each rank"
                           : r.role == "host" ? std::string("host-pinned memory") : std::string("unknown device");
        out += "<h3>" + escape(role) + ", " + to_dec(r.ranks) + " ranks</h3>\n<table><tr><th></th><th>min</th><th>median</th>"
               "<th>max</th></tr>\n";
        out += "<tr><td>current</td><td class=\"n\">" + bytes(r.current_min_bytes) + ", " +
               escape(who(r.current_min_rank, r.current_min_input)) + "</td><td class=\"n\">" + bytes(r.current_median_bytes) +
               "</td><td class=\"n\">" + bytes(r.current_max_bytes) + ", " + escape(who(r.current_max_rank, r.current_max_input)) +
               "</td></tr>\n";
        out += "<tr><td>peak</td><td class=\"n\">" + bytes(r.peak_min_bytes) + ", " +
               escape(who(r.peak_min_rank, r.peak_min_input)) + "</td><td class=\"n\">" + bytes(r.peak_median_bytes) +
               "</td><td class=\"n\">" + bytes(r.peak_max_bytes) + ", " + escape(who(r.peak_max_rank, r.peak_max_input)) +
               "</td></tr>\n</table>\n";
        out += "<p>Outliers: " + to_dec(r.outliers) + " (peak with |0.6745 (peak - median) / scale| &gt; 3.5, scale " +
               bytes(r.scale_bytes) + " = max(median absolute deviation " + bytes(r.peak_mad_bytes) +
               ", 1% of the median, 1 MiB)).</p>\n";
        for (const snapshot::ImbalanceOutlier &o : snapshot.imbalance_outliers) {
            if (o.imbalance != i) continue;
            char z[32];
            std::snprintf(z, sizeof z, "%+.1f", snapshot::imbalance_z(r, o.peak_bytes));
            out += "<h4>" + escape(who(o.rank, o.input)) + " (" + escape(o.host) + " " + escape(report::device_label(o.device)) +
                   "): peak " + bytes(o.peak_bytes) + ", z " + z + "</h4>\n";
            if (!o.sites_known) {
                out += "<p class=\"note\">Its call sites at the peak are not known: it came from a merged snapshot.</p>\n";
                continue;
            }
            out += "<table><tr><th>above the median</th><th>allocations at peak</th><th>call site</th></tr>\n";
            for (const snapshot::PeakSite &site : o.sites)
                out += "<tr><td class=\"n\">+" + bytes(site.bytes) + "</td><td class=\"n\">" + to_dec(site.count) +
                       "</td><td>" + escape(call_site_text(snapshot, site.stack)) + "</td></tr>\n";
            out += "</table>\n";
        }
    }
}

} // namespace vramtrace::exporter::html
