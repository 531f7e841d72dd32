// The live-at-exit classes of the page's data (exit_classes.h).
#include "export/html/exit_classes.h"

#include <map>

#include "export/export_common.h"
#include "report/live_classes.h"

namespace vramtrace::exporter::html {

std::string exit_classes_json(const snapshot::Snapshot &snapshot, const Options &options,
                              const std::function<int(std::string_view)> &string) {
    std::vector<report::LiveRecord> live;
    for (const snapshot::Allocation &a : snapshot.allocations)
        if (snapshot::counts_as_held(a) && device_wanted(options, a.device)) live.push_back({a.stack, a.device, a.size, a.time_ns, 1});
    const report::LiveClasses classes = report::classify_live(snapshot, live, snapshot.events.events);
    // A site's location adds its via and, in a Python process, "[no Python frames]" to the call
    // site's text; the page colours a site by that text alone (its bands' and flame graph's key),
    // so each location is mapped back to the call-site text of a stack that gives it.
    std::map<std::string, std::string> colour_key;
    for (const report::LiveRecord &r : live) {
        std::string site = call_site_text(snapshot, r.stack), location = site;
        if (std::string_view via = via_text(snapshot, r.stack); !via.empty()) location += " via " + std::string(via);
        colour_key.try_emplace(location, site);
        colour_key.try_emplace(location + " [no Python frames]", site);
    }
    using Basis = report::LiveIntervals::Basis;
    const Basis basis = classes.intervals.basis;
    std::string out = std::string("{\"basis\":\"") +
                      (basis == Basis::marks ? "marks" : basis == Basis::run_tenths ? "run_tenths" : "none") +
                      "\",\"classes\":[";
    for (int c = 0; c < 3; ++c)
        out += (c ? ",[" : "[") + std::to_string(classes.bytes[c]) + "," + std::to_string(classes.count[c]) + "]";
    out += "],\"sites\":[";
    bool first = true;
    for (int c = 0; c < 3; ++c) {
        for (const report::ClassSite &s : classes.sites(report::LiveClass(c))) {
            out += first ? "[" : ",[";
            first = false;
            out += std::to_string(c) + "," + std::to_string(string(s.site.location)) + ",[";
            for (size_t i = 0; i < s.site.devices.size(); ++i) out += (i ? "," : "") + std::to_string(s.site.devices[i]);
            auto key = colour_key.find(s.site.location);
            out += "]," + std::to_string(s.site.live_bytes) + "," + std::to_string(s.site.live_count) + "," +
                   std::to_string(s.intervals) + "," +
                   std::to_string(string(key == colour_key.end() ? s.site.location : key->second)) + "]";
        }
    }
    return out + "]}";
}

} // namespace vramtrace::exporter::html
