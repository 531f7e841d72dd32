#include "triggers/prometheus_text.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>

#include "report/text_safety.h"

namespace vramtrace::triggers {
namespace {

constexpr const char kHeaderMagic[] = "# vramtrace textfile v1 ";
constexpr const char kUpHelp[] = "1 while the process runs; 0 once it has exited, died or was found gone.";
constexpr const char kEndHelp[] = "When the process exited or died (Unix time); its last update when it was found gone.";

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

// One header token (as %h makes the host one file-name component).
std::string header_token(const std::string &raw) {
    std::string out;
    for (char c : raw) {
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                     c == '_' || c == '-';
        out += plain ? c : '_';
    }
    return out.empty() ? "_" : out;
}

std::string process_labels(const PrometheusSample &s) {
    std::string out;
    append_label(out, "pid", std::to_string(s.pid), true);
    append_label(out, "host", s.host);
    append_label(out, "rank", s.rank);
    append_label(out, "command", s.command);
    return out;
}

std::string device_labels(const PrometheusSample &s, int device, const std::string &uuid) {
    std::string out;
    append_label(out, "device", device_value(device), true);
    append_label(out, "uuid", uuid);
    return out + ',' + process_labels(s);
}

void append_family(std::string &out, const char *name, const char *type, const char *help) {
    out += "# HELP ";
    out += name;
    out += ' ';
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += ' ';
    out += type;
    out += '\n';
}

void append_sample(std::string &out, const char *name, const std::string &labels, const std::string &value) {
    out += name;
    out += '{';
    out += labels;
    out += "} ";
    out += value;
    out += '\n';
}

std::string seconds(uint64_t ms) {
    char buf[32];
    size_t n = format_ms_as_seconds(ms, buf);
    return std::string(buf, n);
}

// One gauge or counter per device, for the devices `value` gives a figure for.
template <class Value>
void append_device_family(std::string &out, const PrometheusSample &s, const char *name, const char *type,
                          const char *help, Value value) {
    bool any = false;
    for (const PrometheusDevice &d : s.devices) any |= value(d).has_value();
    if (!any) return;
    append_family(out, name, type, help);
    for (const PrometheusDevice &d : s.devices)
        if (auto v = value(d)) append_sample(out, name, device_labels(s, d.device, d.uuid), std::to_string(*v));
}

std::optional<uint64_t> untracked_bytes(const PrometheusDevice &d) {
    if (!d.nvml_used_bytes) return std::nullopt;
    uint64_t seen = d.current_bytes + (d.has_graph_memory ? d.graph_reserved_bytes : 0);
    return *d.nvml_used_bytes > seen ? *d.nvml_used_bytes - seen : 0;
}

std::string site_labels(const PrometheusSample &s, const PrometheusSite &site) {
    std::string uuid;
    for (const PrometheusDevice &d : s.devices)
        if (d.device == site.device) uuid = d.uuid;
    std::string out;
    append_label(out, "device", device_value(site.device), true);
    append_label(out, "uuid", uuid);
    append_label(out, "function", site.other ? std::string("(other)") : site.function);
    append_label(out, "file_line", site.other ? std::string() : site.file_line);
    append_label(out, "category", site.other ? std::string() : site.category);
    return out + ',' + process_labels(s);
}

} // namespace

std::string prometheus_header_host(const std::string &host) { return header_token(host); }

namespace {

bool parse_u64(const std::string &text, uint64_t *out) {
    if (text.empty() || text.size() > 20) return false;
    uint64_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return false;
        uint64_t next = v * 10 + uint64_t(c - '0');
        if (next / 10 != v) return false;
        v = next;
    }
    *out = v;
    return true;
}

} // namespace

size_t format_ms_as_seconds(uint64_t ms, char *out) {
    char digits[24];
    size_t n = 0;
    uint64_t whole = ms / 1000;
    do {
        digits[n++] = char('0' + whole % 10);
        whole /= 10;
    } while (whole != 0);
    size_t len = 0;
    while (n > 0) out[len++] = digits[--n];
    unsigned frac = unsigned(ms % 1000);
    out[len++] = '.';
    out[len++] = char('0' + frac / 100);
    out[len++] = char('0' + frac / 10 % 10);
    out[len++] = char('0' + frac % 10);
    out[len] = 0;
    return len;
}

std::string bound_label_value(const std::string &raw, size_t max_bytes, bool keep_end) {
    std::string value = report::replace_invalid_utf8(raw);
    if (value.size() <= max_bytes) return value;
    const size_t room = max_bytes > 3 ? max_bytes - 3 : 0;
    if (!keep_end) return value.substr(0, report::utf8_cut_length(value, room)) + "...";
    size_t from = value.size() - room;
    // Forward to a character's first byte (never a continuation byte 10xxxxxx).
    while (from < value.size() && (static_cast<unsigned char>(value[from]) & 0xc0) == 0x80) ++from;
    return "..." + value.substr(from);
}

std::vector<PrometheusSite> select_top_sites(std::vector<PrometheusSite> sites, size_t top_n) {
    using Key = std::tuple<int, std::string, std::string, std::string>;
    std::map<Key, PrometheusSite> merged;
    std::map<int, bool> devices;
    for (PrometheusSite &s : sites) {
        devices[s.device] = true;
        if (s.live_bytes == 0 || s.other) continue;
        s.function = bound_label_value(s.function, kFunctionLabelBytes, false);
        s.file_line = bound_label_value(s.file_line, kFileLineLabelBytes, true);
        s.category = bound_label_value(s.category, kCategoryLabelBytes, false);
        Key key{s.device, s.function, s.file_line, s.category};
        auto [it, inserted] = merged.try_emplace(key, s);
        if (!inserted) it->second.live_bytes += s.live_bytes, it->second.live_count += s.live_count;
    }
    std::vector<PrometheusSite> out;
    for (const auto &[device, unused] : devices) {
        (void)unused;
        std::vector<PrometheusSite> on_device;
        for (auto it = merged.lower_bound(Key{device, "", "", ""}); it != merged.end() && std::get<0>(it->first) == device; ++it)
            on_device.push_back(it->second);
        // Stable on the map's label order: equal bytes and counts keep ascending labels.
        std::stable_sort(on_device.begin(), on_device.end(), [](const PrometheusSite &a, const PrometheusSite &b) {
            if (a.live_bytes != b.live_bytes) return a.live_bytes > b.live_bytes;
            return a.live_count > b.live_count;
        });
        PrometheusSite other;
        other.device = device;
        other.other = true;
        for (size_t i = 0; i < on_device.size(); ++i) {
            if (i < top_n) {
                out.push_back(on_device[i]);
            } else {
                other.live_bytes += on_device[i].live_bytes;
                other.live_count += on_device[i].live_count;
            }
        }
        out.push_back(other);
    }
    return out;
}

PrometheusText format_prometheus_parts(const PrometheusSample &s) {
    PrometheusText t;
    t.header_prefix = std::string(kHeaderMagic) + "host=" + header_token(s.host) + " pid=" + std::to_string(s.pid) +
                      " start_ticks=" + std::to_string(s.start_ticks) + " boot_id=" + header_token(s.boot_id) +
                      " updated_ms=" + std::to_string(s.update_time_ms) + " ended_ms=";
    std::string &out = t.body;
    auto field = [](uint64_t PrometheusDevice::*f) {
        return [f](const PrometheusDevice &d) { return std::optional<uint64_t>(d.*f); };
    };
    append_device_family(out, s, "vramtrace_device_current_bytes", "gauge",
                         "Bytes this process holds on the device through intercepted CUDA allocations.",
                         field(&PrometheusDevice::current_bytes));
    append_device_family(out, s, "vramtrace_device_peak_bytes", "gauge",
                         "Highest vramtrace_device_current_bytes since the process started.",
                         field(&PrometheusDevice::peak_bytes));
    append_device_family(out, s, "vramtrace_device_capacity_bytes", "gauge",
                         "The device's memory capacity (cuMemGetInfo total).",
                         [](const PrometheusDevice &d) { return d.capacity_bytes; });
    append_device_family(out, s, "vramtrace_device_nvml_used_bytes", "gauge",
                         "Bytes NVML charges this process on the device (context, modules and all memory).",
                         [](const PrometheusDevice &d) { return d.nvml_used_bytes; });
    append_device_family(out, s, "vramtrace_device_untracked_bytes", "gauge",
                         "vramtrace_device_nvml_used_bytes minus tracked and graph memory (0 when below).",
                         &untracked_bytes);
    append_device_family(out, s, "vramtrace_device_pool_reserved_bytes", "gauge",
                         "Bytes the device's stream-ordered memory pools reserve (RESERVED_MEM_CURRENT).",
                         [](const PrometheusDevice &d) { return d.pool_reserved_bytes; });
    append_device_family(out, s, "vramtrace_device_graph_reserved_bytes", "gauge",
                         "Bytes the device's graph memory pool holds for this process's graphs (not in "
                         "vramtrace_device_current_bytes).",
                         [](const PrometheusDevice &d) {
                             return d.has_graph_memory ? std::optional<uint64_t>(d.graph_reserved_bytes) : std::nullopt;
                         });
    append_device_family(out, s, "vramtrace_device_oom_events_total", "counter",
                         "Intercepted allocations on the device that failed with out-of-memory.",
                         field(&PrometheusDevice::oom_count));
    const std::string process = process_labels(s);
    append_family(out, "vramtrace_oom_events_total", "counter", "Intercepted allocations that failed with out-of-memory.");
    append_sample(out, "vramtrace_oom_events_total", process, std::to_string(s.oom_count));
    if (s.sites_on && !s.sites.empty()) {
        append_family(out, "vramtrace_call_site_live_bytes", "gauge",
                      "Live bytes by call site: the top sites of each device and one (other) series with the rest.");
        for (const PrometheusSite &site : s.sites)
            append_sample(out, "vramtrace_call_site_live_bytes", site_labels(s, site), std::to_string(site.live_bytes));
        append_family(out, "vramtrace_call_site_live_allocations", "gauge",
                      "Live allocations by call site, the same series as vramtrace_call_site_live_bytes.");
        for (const PrometheusSite &site : s.sites)
            append_sample(out, "vramtrace_call_site_live_allocations", site_labels(s, site), std::to_string(site.live_count));
    }
    append_family(out, "vramtrace_process_start_time_seconds", "gauge", "When vramtrace started in the process (Unix time).");
    append_sample(out, "vramtrace_process_start_time_seconds", process, seconds(s.start_time_ms));
    append_family(out, "vramtrace_process_last_update_time_seconds", "gauge", "When this reading was taken (Unix time).");
    append_sample(out, "vramtrace_process_last_update_time_seconds", process, seconds(s.update_time_ms));

    append_family(t.up_head, "vramtrace_process_up", "gauge", kUpHelp);
    t.up_head += "vramtrace_process_up{" + process + "} ";
    append_family(t.end_head, "vramtrace_process_end_time_seconds", "gauge", kEndHelp);
    t.end_head += "vramtrace_process_end_time_seconds{" + process + "} ";
    return t;
}

std::string assemble_prometheus(const PrometheusText &t, uint64_t ended_ms) {
    std::string out = t.header_prefix + std::to_string(ended_ms) + "\n" + t.body + t.up_head;
    out += ended_ms == 0 ? "1\n" : "0\n";
    if (ended_ms != 0) out += t.end_head + seconds(ended_ms) + "\n";
    return out;
}

std::string format_prometheus(const PrometheusSample &s) { return assemble_prometheus(format_prometheus_parts(s), 0); }

bool parse_prometheus_header(const std::string &text, PrometheusFileHeader *out) {
    const size_t magic = sizeof kHeaderMagic - 1;
    if (text.compare(0, magic, kHeaderMagic) != 0) return false;
    size_t end = text.find('\n');
    if (end == std::string::npos) return false;
    std::string line = text.substr(magic, end - magic);
    PrometheusFileHeader h;
    int seen = 0;
    for (size_t at = 0; at <= line.size();) {
        size_t space = line.find(' ', at);
        if (space == std::string::npos) space = line.size();
        std::string token = line.substr(at, space - at);
        size_t eq = token.find('=');
        if (eq == std::string::npos) return false;
        std::string name = token.substr(0, eq), value = token.substr(eq + 1);
        uint64_t n = 0;
        if (name == "host") h.host = value, seen |= 1;
        else if (name == "pid" && parse_u64(value, &n) && n > 0 && n < (1ull << 31)) h.pid = long(n), seen |= 2;
        else if (name == "start_ticks" && parse_u64(value, &h.start_ticks)) seen |= 4;
        else if (name == "boot_id") h.boot_id = value, seen |= 8;
        else if (name == "updated_ms" && parse_u64(value, &h.updated_ms)) seen |= 16;
        else if (name == "ended_ms" && parse_u64(value, &h.ended_ms)) seen |= 32;
        else return false;
        at = space + 1;
    }
    if (seen != 63) return false;
    *out = h;
    return true;
}

bool mark_prometheus_ended(const std::string &text, uint64_t ended_ms, std::string *out) {
    PrometheusFileHeader h;
    if (!parse_prometheus_header(text, &h) || h.ended_ms != 0 || ended_ms == 0) return false;
    size_t header_end = text.find('\n');
    std::string header = text.substr(0, header_end);
    const std::string up_mark = " ended_ms=0";
    if (header.size() < up_mark.size() || header.compare(header.size() - up_mark.size(), up_mark.size(), up_mark) != 0)
        return false; // not as format_prometheus_parts writes it
    header.replace(header.size() - 1, 1, std::to_string(ended_ms));
    const std::string up_line = "\nvramtrace_process_up{";
    size_t up = text.find(up_line);
    if (up == std::string::npos) return false;
    size_t line_end = text.find('\n', up + 1);
    if (line_end == std::string::npos) return false;
    std::string line = text.substr(up + 1, line_end - up - 1);
    size_t close = line.rfind("} ");
    if (close == std::string::npos || line.substr(close) != "} 1") return false;
    std::string labels = line.substr(sizeof "vramtrace_process_up{" - 1, close - (sizeof "vramtrace_process_up{" - 1));
    std::string result = header + text.substr(header_end, up + 1 - header_end) + line.substr(0, close) + "} 0\n";
    append_family(result, "vramtrace_process_end_time_seconds", "gauge", kEndHelp);
    append_sample(result, "vramtrace_process_end_time_seconds", labels, seconds(ended_ms));
    result += text.substr(line_end + 1);
    *out = std::move(result);
    return true;
}

} // namespace vramtrace::triggers
