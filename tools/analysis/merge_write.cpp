// The merged snapshot, written as a snapshot of schema 1 (reason "merge") with the merge's own
// members (merged_processes, merged_devices), the allocations streamed back from the spool file.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include <unistd.h>

#include "analysis/merge_core.h"
#include "common/json_text.h"
#include "reporting/report_model.h"

namespace vramtrace::cli {

namespace {

// Buffered writes to a file descriptor.
class FdWriter {
public:
    explicit FdWriter(int fd) : fd_(fd) { buf_.reserve(kLimit); }
    void put(std::string_view s) {
        buf_.append(s);
        if (buf_.size() >= kLimit) flush();
    }
    bool flush() {
        size_t done = 0;
        while (!failed_ && done < buf_.size()) {
            ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) failed_ = true, errno_ = errno;
            else done += size_t(n);
        }
        buf_.clear();
        return !failed_;
    }
    bool failed() const { return failed_; }
    int error_number() const { return errno_; }

private:
    static constexpr size_t kLimit = 256 * 1024;
    int fd_;
    std::string buf_;
    bool failed_ = false;
    int errno_ = 0;
};

std::string u64(uint64_t v) { return std::to_string(v); }

template <class T, class Fn> void write_array(FdWriter &out, const char *name, const std::vector<T> &items, Fn &&line) {
    out.put(std::string("  \"") + name + "\": ");
    if (items.empty()) {
        out.put("[],\n");
        return;
    }
    out.put("[\n");
    for (size_t i = 0; i < items.size(); ++i) {
        out.put("    ");
        out.put(line(items[i]));
        out.put(i + 1 < items.size() ? ",\n" : "\n");
    }
    out.put("  ],\n");
}

// A device's graph memory members, as the snapshot writer names them ("" when it has none).
std::string graph_fields(const report::DeviceTotals &d) {
    std::string out;
    auto field = [&](const char *name, const std::optional<uint64_t> &v) {
        if (v) out += std::string(", \"") + name + "\": " + std::to_string(*v);
    };
    field("graph_reserved_bytes", d.graph_reserved_bytes);
    field("graph_used_bytes", d.graph_used_bytes);
    field("graph_reserved_high_bytes", d.graph_reserved_high_bytes);
    field("graph_used_high_bytes", d.graph_used_high_bytes);
    return out;
}

std::string string_list(const std::vector<std::string> &items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        out += json_string(items[i]);
    }
    return out + "]";
}

} // namespace

bool Merger::write_snapshot(int fd, const std::vector<std::string> &command_line, const std::string &version,
                            std::string *error) {
    if (spool_failed_) {
        if (error) *error = std::string("cannot write the temporary file: ") + std::strerror(spool_errno_);
        return false;
    }
    FdWriter out(fd);
    out.put("{\n  \"format\": \"vramtrace-snapshot\",\n  \"schema_version\": " + std::to_string(report::kSchemaVersion) +
            ",\n");
    out.put("  \"process\": {\n    \"pid\": 0,\n    \"ppid\": 0,\n    \"command_line\": " + string_list(command_line) +
            ",\n    \"executable\": " + json_string(executable_) + ",\n    \"host\": " + json_string(host_) +
            ",\n    \"start_time_ns\": " + u64(start_time_ns_) + ",\n    \"dump_time_ns\": " + u64(dump_time_ns_) +
            ",\n    \"driver_version\": " + std::to_string(driver_version_) +
            ",\n    \"reason\": \"merge\",\n    \"vramtrace_version\": " + json_string(version) +
            ",\n    \"stack_depth\": " + std::to_string(stack_depth_) + "\n  },\n");
    write_array(out, "devices", devices_, [this](const report::DeviceTotals &d) {
        std::string identity;
        if (auto found = device_identity_.find(d.device); found != device_identity_.end()) {
            if (!found->second.first.empty()) identity += ", \"uuid\": " + json_string(found->second.first);
            if (!found->second.second.empty()) identity += ", \"pci_bus_id\": " + json_string(found->second.second);
        }
        return "{\"device\": " + std::to_string(d.device) + ", \"current_bytes\": " + u64(d.current_bytes) +
               ", \"peak_bytes\": " + u64(d.peak_bytes) + ", \"allocation_count\": " + u64(d.allocation_count) +
               ", \"free_count\": " + u64(d.free_count) + ", \"total_allocated_bytes\": " +
               u64(d.total_allocated_bytes) + ", \"total_freed_bytes\": " + u64(d.total_freed_bytes) + identity +
               graph_fields(d) + "}";
    });
    out.put("  \"dropped\": {\"allocations\": " + u64(dropped_allocations_) + ", \"stacks\": " + u64(dropped_stacks_) +
            ", \"peak_sites\": " + u64(dropped_peak_sites_) + "},\n");
    if (oom_count_known_) out.put("  \"oom_count\": " + u64(oom_count_) + ",\n");
    // Per ordinal, the sum of the inputs' peaks (as devices[].peak_bytes) and what made them up.
    if (peaks_complete_) {
        std::vector<std::pair<int, const Peak *>> peaks;
        for (const auto &[device, p] : peaks_) peaks.emplace_back(device, &p);
        write_array(out, "peaks", peaks, [](const std::pair<int, const Peak *> &entry) {
            std::vector<std::pair<uint32_t, std::pair<uint64_t, uint64_t>>> sites(entry.second->sites.begin(),
                                                                                   entry.second->sites.end());
            std::stable_sort(sites.begin(), sites.end(),
                             [](const auto &a, const auto &b) { return a.second.first > b.second.first; });
            std::string list;
            for (const auto &[stack, bc] : sites)
                list += std::string(list.empty() ? "" : ", ") + "{\"stack\": " + std::to_string(stack) +
                        ", \"bytes\": " + u64(bc.first) + ", \"count\": " + u64(bc.second) + "}";
            return "{\"device\": " + std::to_string(entry.first) + ", \"peak_bytes\": " + u64(entry.second->peak_bytes) +
                   ", \"time_ns\": 0, \"sites\": [" + list + "]}";
        });
    }
    write_array(out, "ooms", ooms_, [](const report::OomEvent &o) {
        std::string line = "{\"time_ns\": " + u64(o.time_ns) + ", \"device\": " + std::to_string(o.device) +
                           ", \"requested_bytes\": " + u64(o.requested_bytes) + ", \"api\": " + json_string(o.api) +
                           ", \"stream\": \"" + report::hex_u64(o.stream) + "\", \"stack\": " + std::to_string(o.stack) +
                           ", \"thread_id\": " + std::to_string(o.thread_id) + ", \"result\": " + std::to_string(o.result) +
                           ", \"tracked_bytes\": " + u64(o.tracked_bytes);
        if (o.device_free_bytes) line += ", \"device_free_bytes\": " + u64(*o.device_free_bytes);
        if (o.device_total_bytes) line += ", \"device_total_bytes\": " + u64(*o.device_total_bytes);
        return line + "}";
    });
    write_array(out, "pools", pools_, [](const report::Pool &p) {
        return "{\"handle\": \"" + report::hex_u64(p.handle) + "\", \"device\": " + std::to_string(p.device) +
               ", \"is_default\": " + (p.is_default ? "true" : "false") + ", \"reserved_bytes\": " +
               u64(p.reserved_bytes) + ", \"used_bytes\": " + u64(p.used_bytes) + ", \"reserved_high_bytes\": " +
               u64(p.reserved_high_bytes) + ", \"used_high_bytes\": " + u64(p.used_high_bytes) +
               (p.is_graph_memory ? ", \"is_graph_memory\": true}" : "}");
    });
    write_array(out, "merged_processes", processes_, [](const MergedProcess &p) {
        return "{\"input\": " + std::to_string(p.input) + ", \"file\": " + json_string(p.file) +
               ", \"pid\": " + std::to_string(p.pid) + ", \"host\": " + json_string(p.host) +
               ", \"command_line\": " + string_list(p.command_line) + ", \"reason\": " + json_string(p.reason) +
               ", \"rank\": " + std::to_string(p.rank) + ", \"live_bytes\": " + u64(p.live_bytes) +
               ", \"live_allocations\": " + u64(p.live_allocations) + ", \"dropped_allocations\": " +
               u64(p.dropped_allocations) + ", \"dropped_stacks\": " + u64(p.dropped_stacks) +
               (p.oom_count ? ", \"oom_count\": " + u64(*p.oom_count) : std::string()) + "}";
    });
    write_array(out, "merged_devices", process_devices_, [](const MergedDevice &d) {
        return "{\"input\": " + std::to_string(d.input) + ", \"device\": " + std::to_string(d.device) +
               ", \"uuid\": " + json_string(d.uuid) + ", \"current_bytes\": " + u64(d.current_bytes) +
               ", \"peak_bytes\": " + u64(d.peak_bytes) + ", \"allocation_count\": " + u64(d.allocation_count) +
               ", \"free_count\": " + u64(d.free_count) + ", \"total_allocated_bytes\": " +
               u64(d.total_allocated_bytes) + ", \"total_freed_bytes\": " + u64(d.total_freed_bytes) + "}";
    });
    write_array(out, "modules", modules_, [](const report::Module &m) {
        return "{\"path\": " + json_string(m.path) + ", \"base\": \"" + report::hex_u64(m.base) +
               "\", \"build_id\": " + json_string(m.build_id) + "}";
    });
    write_array(out, "frames", frames_, [](const Frame &f) {
        std::string inlined;
        for (const report::Frame::Inlined &in : f.inlined)
            inlined += std::string(inlined.empty() ? "" : ", ") + "{\"function\": " + json_string(in.function) +
                       ", \"file\": " + json_string(in.file) + ", \"line\": " + std::to_string(in.line) + "}";
        return "{\"address\": \"" + report::hex_u64(f.address) + "\", \"module\": " + std::to_string(f.module) +
               ", \"module_offset\": \"" + report::hex_u64(f.module_offset) + "\", \"function\": " +
               json_string(f.function) + ", \"file\": " + json_string(f.file) + ", \"line\": " + std::to_string(f.line) +
               (inlined.empty() ? "}" : ", \"inlined\": [" + inlined + "]}");
    });
    uint32_t id = 0;
    write_array(out, "stacks", stacks_, [&id](const Stack &s) {
        std::string frames = "[";
        for (size_t i = 0; i < s.frames.size(); ++i) {
            if (i) frames += ", ";
            frames += std::to_string(s.frames[i]);
        }
        frames += "]";
        return "{\"id\": " + std::to_string(++id) + ", \"frames\": " + frames + ", \"call_site\": " +
               std::to_string(s.call_site) + "}";
    });
    if (spooled_ == 0 || !spool_) {
        out.put("  \"allocations\": []\n}\n");
    } else {
        out.put("  \"allocations\": [\n");
        if (!out.flush()) {
            if (error) *error = std::string("write failed: ") + std::strerror(out.error_number());
            return false;
        }
        if (std::fflush(spool_) != 0) {
            if (error) *error = std::string("cannot write the temporary file: ") + std::strerror(errno);
            return false;
        }
        int in = ::fileno(spool_);
        std::string chunk(256 * 1024, '\0');
        off_t at = 0;
        for (;;) {
            ssize_t n = ::pread(in, chunk.data(), chunk.size(), at);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                if (error) *error = std::string("cannot read the temporary file: ") + std::strerror(errno);
                return false;
            }
            if (n == 0) break;
            at += n;
            out.put(std::string_view(chunk.data(), size_t(n)));
            if (out.failed()) break;
        }
        out.put("\n  ]\n}\n");
    }
    if (!out.flush()) {
        if (error) *error = std::string("write failed: ") + std::strerror(out.error_number());
        return false;
    }
    return true;
}

} // namespace vramtrace::cli
