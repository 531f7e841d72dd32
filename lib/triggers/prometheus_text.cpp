#include "triggers/prometheus_text.h"

#include "report/text_safety.h"

namespace vramtrace::triggers {
namespace {

// A label value as the text exposition format reads it: UTF-8, with backslash, double quote and
// line feed escaped (the only escapes it has). Invalid UTF-8 and the other control characters
// (a CR would end the line for some parsers) become U+FFFD.
void append_escaped(std::string &out, const std::string &raw) {
    std::string value = report::replace_invalid_utf8(raw);
    for (size_t i = 0; i < value.size(); ++i) {
        char c = value[i];
        auto u = static_cast<unsigned char>(c);
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else if (u < 0x20 || u == 0x7f) out += "\xef\xbf\xbd";
        else if (u == 0xc2 && i + 1 < value.size() && static_cast<unsigned char>(value[i + 1]) < 0xa0)
            out += "\xef\xbf\xbd", ++i; // a C1 control character
        else out += c;
    }
}

void append_label(std::string &out, const char *name, const std::string &value, bool first = false) {
    if (!first) out += ',';
    out += name;
    out += "=\"";
    append_escaped(out, value);
    out += '"';
}

std::string device_value(int device) {
    if (device == -1) return "host";
    if (device < 0) return "unknown";
    return std::to_string(device);
}

void append_process_labels(std::string &out, const PrometheusSample &s, bool first) {
    append_label(out, "pid", std::to_string(s.pid), first);
    append_label(out, "host", s.host);
    append_label(out, "rank", s.rank);
}

void append_device_metric(std::string &out, const PrometheusSample &s, const char *name, const char *help,
                          uint64_t PrometheusDevice::*field) {
    out += "# HELP ";
    out += name;
    out += ' ';
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += " gauge\n";
    for (const PrometheusDevice &d : s.devices) {
        if (field == &PrometheusDevice::graph_reserved_bytes && !d.has_graph_memory) continue;
        out += name;
        out += '{';
        append_label(out, "device", device_value(d.device), true);
        append_label(out, "uuid", d.uuid);
        append_process_labels(out, s, false);
        out += "} ";
        out += std::to_string(d.*field);
        out += '\n';
    }
}

} // namespace

std::string format_prometheus(const PrometheusSample &s) {
    std::string out;
    append_device_metric(out, s, "vramtrace_device_current_bytes",
                         "Bytes this process holds on the device through intercepted CUDA allocations.",
                         &PrometheusDevice::current_bytes);
    append_device_metric(out, s, "vramtrace_device_peak_bytes",
                         "Highest vramtrace_device_current_bytes since the process started.",
                         &PrometheusDevice::peak_bytes);
    bool any_graph = false;
    for (const PrometheusDevice &d : s.devices) any_graph |= d.has_graph_memory;
    if (any_graph)
        append_device_metric(out, s, "vramtrace_device_graph_reserved_bytes",
                             "Bytes the device's graph memory pool holds for this process's graphs (not in "
                             "vramtrace_device_current_bytes).",
                             &PrometheusDevice::graph_reserved_bytes);
    out += "# HELP vramtrace_oom_events_total Intercepted allocations that failed with out-of-memory.\n"
           "# TYPE vramtrace_oom_events_total counter\n"
           "vramtrace_oom_events_total{";
    append_process_labels(out, s, true);
    out += "} " + std::to_string(s.oom_count) + "\n";
    return out;
}

} // namespace vramtrace::triggers
