// Format names and the option checks shared by every format. See export.h.
#include "export/export.h"
#include "report/text_format.h"

#include <algorithm>

namespace vramtrace::exporter {

bool parse_format(std::string_view name, Format *out) {
    static constexpr std::pair<std::string_view, Format> kNames[] = {
        {"chrome", Format::Chrome}, {"folded", Format::Folded}, {"pprof", Format::Pprof},
        {"pickle", Format::Pickle}, {"html", Format::Html}};
    for (const auto &[n, f] : kNames) {
        if (n == name) {
            *out = f;
            return true;
        }
    }
    return false;
}

const char *format_names() { return "chrome, folded, pprof, pickle, html"; }

bool is_binary(Format format) { return format == Format::Pprof || format == Format::Pickle; }

bool export_snapshot(const snapshot::Snapshot &snapshot, Format format, const Options &options, std::string *out,
                     std::vector<std::string> *notes, std::string *error) {
    if (options.device) {
        int d = *options.device;
        bool known = std::any_of(snapshot.devices.begin(), snapshot.devices.end(),
                                 [d](const snapshot::DeviceTotals &t) { return t.device == d; }) ||
                     std::any_of(snapshot.allocations.begin(), snapshot.allocations.end(),
                                 [d](const snapshot::Allocation &a) { return a.device == d; });
        if (!known) {
            *error = "the snapshot has no device " + report::device_label(d);
            return false;
        }
    }
    if (options.at == At::Peak && snapshot.peaks.empty() && format != Format::Html) {
        *error = "the snapshot records no peak composition (written by an older vramtrace); use --at exit";
        return false;
    }
    switch (format) {
    case Format::Chrome: *out = export_chrome(snapshot, options, notes); break;
    case Format::Folded: *out = export_folded(snapshot, options, notes); break;
    case Format::Pprof: *out = export_pprof(snapshot, options, notes); break;
    case Format::Pickle: *out = export_pickle(snapshot, options, notes); break;
    case Format::Html: *out = export_html(snapshot, options, notes); break;
    }
    return true;
}

} // namespace vramtrace::exporter
