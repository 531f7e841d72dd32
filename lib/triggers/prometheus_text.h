// The Prometheus text exposition (format 0.0.4) of one process's memory, for node_exporter's
// textfile collector. Pure formatting and parsing: lib/triggers/prometheus.cpp gathers the values,
// lib/triggers/prometheus_sweep.cpp finds the files of processes that are gone. Every metric,
// label and the lifecycle are documented in docs/monitoring.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vramtrace::triggers {

struct PrometheusDevice {
    int device = 0;          // ordinal; -1 host-pinned memory, -2 unknown
    std::string uuid;        // "" when unknown
    uint64_t current_bytes = 0;
    uint64_t peak_bytes = 0;
    bool has_graph_memory = false;  // graph memory nodes were seen on the device
    uint64_t graph_reserved_bytes = 0;
    std::optional<uint64_t> capacity_bytes;      // cuMemGetInfo total
    std::optional<uint64_t> nvml_used_bytes;     // NVML usedGpuMemory of this process
    std::optional<uint64_t> pool_reserved_bytes; // stream-ordered pools' RESERVED_MEM_CURRENT, summed
    uint64_t oom_count = 0;                      // OOM failures on this device
};

// Live bytes of one call site on one device. `other` marks the one series per device that sums
// every site beyond the top N (its function/file_line/category are ignored).
struct PrometheusSite {
    int device = 0;
    std::string function;   // "" when unknown
    std::string file_line;  // "train.py:42", "libfoo.so+0x1a2b"; "" when unknown
    std::string category;   // the frame rules' memory category; "" when none
    uint64_t live_bytes = 0;
    uint64_t live_count = 0;
    bool other = false;
};

struct PrometheusSample {
    long pid = 0;
    std::string host;
    std::string rank;        // "" when none
    std::string command;     // the process's command name (/proc/self/comm)
    uint64_t start_ticks = 0; // /proc/PID/stat field 22: with boot_id, tells a pid's reuse apart
    std::string boot_id;     // /proc/sys/kernel/random/boot_id
    uint64_t start_time_ms = 0;  // wall clock, Unix epoch
    uint64_t update_time_ms = 0; // wall clock of this reading
    std::vector<PrometheusDevice> devices; // ascending ordinal
    bool sites_on = false;   // VRAMTRACE_PROMETHEUS_SITES > 0: write the call-site series
    std::vector<PrometheusSite> sites; // per device: top sites by live bytes, then one `other`
    uint64_t oom_count = 0;
};

// A reading, in the pieces that the fatal-signal path puts together without formatting anything:
//   header_prefix + ENDED_MS + "\n" + body + up_head + ("1"|"0") + "\n"
//   [+ end_head + SECONDS + "\n"   when the process has ended]
struct PrometheusText {
    std::string header_prefix; // "# vramtrace textfile v1 host=H pid=P start_ticks=S boot_id=B updated_ms=U ended_ms="
    std::string body;          // every metric but the two below
    std::string up_head;       // HELP, TYPE and "vramtrace_process_up{LABELS} "
    std::string end_head;      // HELP, TYPE and "vramtrace_process_end_time_seconds{LABELS} "
};

PrometheusText format_prometheus_parts(const PrometheusSample &sample);
// The whole file; ended_ms 0: the process is up.
std::string assemble_prometheus(const PrometheusText &text, uint64_t ended_ms);
// The file of a process that is up (assemble_prometheus(format_prometheus_parts(s), 0)).
std::string format_prometheus(const PrometheusSample &sample);

// Milliseconds as Prometheus seconds: "1700000000.125". Writes at most 24 bytes plus a NUL into
// out; async-signal-safe. Returns the length.
size_t format_ms_as_seconds(uint64_t ms, char *out);

// A label value cut to at most `max_bytes` bytes on a UTF-8 character boundary, keeping the end
// (of a path, the end is what tells two apart) and marking the cut with a leading "...".
std::string bound_label_value(const std::string &value, size_t max_bytes, bool keep_end);

// Label value bounds (bytes): a function name keeps its start, a file:line its end.
inline constexpr size_t kFunctionLabelBytes = 256;
inline constexpr size_t kFileLineLabelBytes = 200;
inline constexpr size_t kCategoryLabelBytes = 64;

// The call-site series of a reading from every site's live bytes: per device, label values bounded
// (bound_label_value) and sites whose bounded labels are equal merged into one series (two series
// with one label set would make the collector drop the file), the top `top_n` by live bytes (then
// allocations, then labels), and one `other` series per device with the rest (0 when none), so the
// series of a device sum to its bytes exactly. Devices ascending. Sites with no live bytes are
// dropped.
std::vector<PrometheusSite> select_top_sites(std::vector<PrometheusSite> sites, size_t top_n);

// The first line of a vramtrace textfile, parsed.
struct PrometheusFileHeader {
    std::string host;
    long pid = 0;
    uint64_t start_ticks = 0;
    std::string boot_id;
    uint64_t updated_ms = 0;
    uint64_t ended_ms = 0;   // 0: the process was up at its last update
};
// The host as the header names it: bytes outside [A-Za-z0-9._-] become '_'.
std::string prometheus_header_host(const std::string &host);
// False when `text` does not start with a vramtrace header line (not our file).
bool parse_prometheus_header(const std::string &text, PrometheusFileHeader *out);
// The file of a process found gone: the header's ended_ms, vramtrace_process_up 0 and
// vramtrace_process_end_time_seconds set to `ended_ms`. False when the text is not a vramtrace
// file whose process was up.
bool mark_prometheus_ended(const std::string &text, uint64_t ended_ms, std::string *out);

} // namespace vramtrace::triggers
