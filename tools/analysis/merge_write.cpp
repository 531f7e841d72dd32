// The merged snapshot, written as a snapshot of schema 1 (reason "merge") with the merge's own
// members (merged_processes, merged_devices, imbalance, imbalance_outliers), the allocations
// streamed back from the spool file.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>

#include <unistd.h>

#include "analysis/merge_core.h"
#include "common/json_text.h"
#include "snapshot/snapshot_model.h"
#include "report/text_format.h"
#include "snapshot/snapshot_fields.h"

namespace vramtrace::cli {

namespace {

namespace member = snapshot::member;
namespace top = snapshot::member::top;

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

template <class T, class Fn>
void write_array(FdWriter &out, std::string_view name, const std::vector<T> &items, Fn &&line) {
    out.put("  " + json_key(name));
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
std::string graph_fields(const snapshot::DeviceTotals &d) {
    std::string out;
    auto field = [&](std::string_view name, const std::optional<uint64_t> &v) {
        if (v) out += ", " + json_key(name) + std::to_string(*v);
    };
    field(member::devices::graph_reserved_bytes, d.graph_reserved_bytes);
    field(member::devices::graph_used_bytes, d.graph_used_bytes);
    field(member::devices::graph_reserved_high_bytes, d.graph_reserved_high_bytes);
    field(member::devices::graph_used_high_bytes, d.graph_used_high_bytes);
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
    namespace pr = member::process;
    const std::string next = ",\n    ";
    out.put("{\n  " + json_key(top::format) + json_string(snapshot::kFormatName) + ",\n  ");
    out.put(json_key(top::schema_version) + std::to_string(snapshot::kSchemaVersion) + ",\n");
    out.put("  " + json_key(top::process) + "{\n    ");
    out.put(json_key(pr::pid) + "0" + next);
    out.put(json_key(pr::ppid) + "0" + next);
    out.put(json_key(pr::command_line) + string_list(command_line) + next);
    out.put(json_key(pr::executable) + json_string(executable_) + next);
    out.put(json_key(pr::host) + json_string(host_) + next);
    out.put(json_key(pr::start_time_ns) + u64(start_time_ns_) + next);
    out.put(json_key(pr::dump_time_ns) + u64(dump_time_ns_) + next);
    out.put(json_key(pr::driver_version) + std::to_string(driver_version_) + next);
    out.put(json_key(pr::reason) + "\"merge\"" + next);
    out.put(json_key(pr::vramtrace_version) + json_string(version) + next);
    out.put(json_key(pr::stack_depth) + std::to_string(stack_depth_));
    if (!python_.empty()) out.put(next + json_key(pr::python) + json_string(python_));
    out.put("\n  },\n");
    write_array(out, top::devices, devices_, [this](const snapshot::DeviceTotals &d) {
        namespace f = member::devices;
        std::string identity;
        if (auto found = device_identity_.find(d.device); found != device_identity_.end()) {
            if (!found->second.first.empty()) identity += ", " + json_key(f::uuid) + json_string(found->second.first);
            if (!found->second.second.empty())
                identity += ", " + json_key(f::pci_bus_id) + json_string(found->second.second);
        }
        return "{" + json_key(f::device) + std::to_string(d.device) + ", " + json_key(f::current_bytes) +
               u64(d.current_bytes) + ", " + json_key(f::peak_bytes) + u64(d.peak_bytes) + ", " +
               json_key(f::allocation_count) + u64(d.allocation_count) + ", " + json_key(f::free_count) +
               u64(d.free_count) + ", " + json_key(f::total_allocated_bytes) + u64(d.total_allocated_bytes) + ", " +
               json_key(f::total_freed_bytes) + u64(d.total_freed_bytes) + identity + graph_fields(d) + "}";
    });
    {
        namespace f = member::dropped;
        std::string nvtx;
        for (auto [name, value] : {std::pair{f::nvtx_range_stacks, dropped_range_stacks_},
                                   std::pair{f::nvtx_range_names, dropped_range_names_},
                                   std::pair{f::nvtx_regions, dropped_nvtx_regions_},
                                   std::pair{f::nvtx_regions_outside, nvtx_regions_outside_},
                                   std::pair{f::nvtx_unregisters_unknown, nvtx_unregisters_unknown_},
                                   std::pair{f::nvtx_intervals, dropped_nvtx_intervals_}})
            if (value != 0) nvtx += ", " + json_key(name) + u64(value);
        out.put("  " + json_key(top::dropped) + "{" + json_key(f::allocations) + u64(dropped_allocations_) + ", " +
                json_key(f::stacks) + u64(dropped_stacks_) + ", " + json_key(f::peak_sites) + u64(dropped_peak_sites_) +
                nvtx + "},\n");
    }
    if (oom_count_known_) out.put("  " + json_key(top::oom_count) + u64(oom_count_) + ",\n");
    // Per ordinal, the sum of the inputs' peaks (as devices[].peak_bytes) and what made them up.
    if (peaks_complete_) {
        std::vector<std::pair<int, const Peak *>> peaks;
        for (const auto &[device, p] : peaks_) peaks.emplace_back(device, &p);
        write_array(out, top::peaks, peaks, [](const std::pair<int, const Peak *> &entry) {
            // Bytes descending, then id ascending (the maps' order).
            auto listed = [](const std::map<uint32_t, std::pair<uint64_t, uint64_t>> &by_id, std::string_view id_key) {
                std::vector<std::pair<uint32_t, std::pair<uint64_t, uint64_t>>> items(by_id.begin(), by_id.end());
                std::stable_sort(items.begin(), items.end(),
                                 [](const auto &a, const auto &b) { return a.second.first > b.second.first; });
                std::string list;
                for (const auto &[id, bc] : items)
                    list += std::string(list.empty() ? "" : ", ") + "{" + json_key(id_key) + std::to_string(id) + ", " +
                            json_key(member::sites::bytes) + u64(bc.first) + ", " + json_key(member::sites::count) +
                            u64(bc.second) + "}";
                return list;
            };
            namespace f = member::peaks;
            std::string line = "{" + json_key(f::device) + std::to_string(entry.first) + ", " + json_key(f::peak_bytes) +
                               u64(entry.second->peak_bytes) + ", " + json_key(f::time_ns) + "0, " + json_key(f::sites) +
                               "[" + listed(entry.second->sites, member::sites::stack) + "]";
            // By range stack only when some allocation of the ordinal had a range open.
            const auto &ranges = entry.second->ranges;
            if (!ranges.empty() && (ranges.size() > 1 || ranges.begin()->first != 0))
                line += ", " + json_key(f::ranges) + "[" + listed(ranges, member::ranges::range) + "]";
            return line + "}";
        });
    }
    write_array(out, top::ooms, ooms_, [](const snapshot::OomEvent &o) {
        namespace f = member::ooms;
        std::string line = "{" + json_key(f::time_ns) + u64(o.time_ns) + ", " + json_key(f::device) +
                           std::to_string(o.device) + ", " + json_key(f::requested_bytes) + u64(o.requested_bytes) +
                           ", " + json_key(f::api) + json_string(o.api) + ", " + json_key(f::stream) + "\"" +
                           report::hex_u64(o.stream) + "\", " + json_key(f::stack) + std::to_string(o.stack) + ", " +
                           json_key(f::thread_id) + std::to_string(o.thread_id) + ", " + json_key(f::result) +
                           std::to_string(o.result) + ", " + json_key(f::tracked_bytes) + u64(o.tracked_bytes);
        if (o.device_free_bytes) line += ", " + json_key(f::device_free_bytes) + u64(*o.device_free_bytes);
        if (o.device_total_bytes) line += ", " + json_key(f::device_total_bytes) + u64(*o.device_total_bytes);
        return line + "}";
    });
    write_array(out, top::pools, pools_, [](const snapshot::Pool &p) {
        namespace f = member::pools;
        return "{" + json_key(f::handle) + "\"" + report::hex_u64(p.handle) + "\", " + json_key(f::device) +
               std::to_string(p.device) + ", " + json_key(f::is_default) + (p.is_default ? "true" : "false") + ", " +
               json_key(f::reserved_bytes) + u64(p.reserved_bytes) + ", " + json_key(f::used_bytes) +
               u64(p.used_bytes) + ", " + json_key(f::reserved_high_bytes) + u64(p.reserved_high_bytes) + ", " +
               json_key(f::used_high_bytes) + u64(p.used_high_bytes) +
               (p.is_graph_memory ? ", " + json_key(f::is_graph_memory) + "true}" : "}");
    });
    write_array(out, top::merged_processes, processes_, [](const snapshot::MergedProcess &p) {
        namespace f = member::merged_processes;
        return "{" + json_key(f::input) + std::to_string(p.input) + ", " + json_key(f::file) + json_string(p.file) +
               ", " + json_key(f::pid) + std::to_string(p.pid) + ", " + json_key(f::host) + json_string(p.host) +
               ", " + json_key(f::command_line) + string_list(p.command_line) + ", " + json_key(f::reason) +
               json_string(p.reason) + ", " + json_key(f::rank) + std::to_string(p.rank) + ", " +
               json_key(f::live_bytes) + u64(p.live_bytes) + ", " + json_key(f::live_allocations) +
               u64(p.live_allocations) + ", " + json_key(f::dropped_allocations) + u64(p.dropped_allocations) + ", " +
               json_key(f::dropped_stacks) + u64(p.dropped_stacks) +
               (p.oom_count ? ", " + json_key(f::oom_count) + u64(*p.oom_count) : std::string()) + "}";
    });
    write_array(out, top::merged_devices, process_devices_, [](const snapshot::MergedDevice &d) {
        namespace f = member::merged_devices;
        return "{" + json_key(f::input) + std::to_string(d.input) + ", " + json_key(f::device) +
               std::to_string(d.device) + ", " + json_key(f::uuid) + json_string(d.uuid) + ", " +
               json_key(f::current_bytes) + u64(d.current_bytes) + ", " + json_key(f::peak_bytes) +
               u64(d.peak_bytes) + ", " + json_key(f::allocation_count) + u64(d.allocation_count) + ", " +
               json_key(f::free_count) + u64(d.free_count) + ", " + json_key(f::total_allocated_bytes) +
               u64(d.total_allocated_bytes) + ", " + json_key(f::total_freed_bytes) + u64(d.total_freed_bytes) + "}";
    });
    Imbalance im = imbalance();
    write_array(out, top::imbalance, im.roles, [](const snapshot::ImbalanceRole &r) {
        namespace f = member::imbalance;
        auto u = [](std::string_view name, uint64_t v) { return ", " + json_key(name) + u64(v); };
        auto i = [](std::string_view name, int64_t v) { return ", " + json_key(name) + std::to_string(v); };
        return "{" + json_key(f::role) + json_string(r.role) + u(f::role_index, r.role_index) + u(f::ranks, r.ranks) +
               u(f::current_min_bytes, r.current_min_bytes) + u(f::current_min_input, r.current_min_input) +
               i(f::current_min_rank, r.current_min_rank) + u(f::current_median_bytes, r.current_median_bytes) +
               u(f::current_max_bytes, r.current_max_bytes) + u(f::current_max_input, r.current_max_input) +
               i(f::current_max_rank, r.current_max_rank) + u(f::peak_min_bytes, r.peak_min_bytes) +
               u(f::peak_min_input, r.peak_min_input) + i(f::peak_min_rank, r.peak_min_rank) +
               u(f::peak_median_bytes, r.peak_median_bytes) + u(f::peak_max_bytes, r.peak_max_bytes) +
               u(f::peak_max_input, r.peak_max_input) + i(f::peak_max_rank, r.peak_max_rank) +
               u(f::peak_mad_bytes, r.peak_mad_bytes) + u(f::scale_bytes, r.scale_bytes) + u(f::outliers, r.outliers) +
               "}";
    });
    write_array(out, top::imbalance_outliers, im.outliers, [](const snapshot::ImbalanceOutlier &o) {
        namespace f = member::imbalance_outliers;
        std::string list;
        for (const snapshot::PeakSite &site : o.sites)
            list += std::string(list.empty() ? "" : ", ") + "{" + json_key(member::sites::stack) +
                    std::to_string(site.stack) + ", " + json_key(member::sites::bytes) + u64(site.bytes) + ", " +
                    json_key(member::sites::count) + u64(site.count) + "}";
        return "{" + json_key(f::imbalance) + std::to_string(o.imbalance) + ", " + json_key(f::input) +
               std::to_string(o.input) + ", " + json_key(f::rank) + std::to_string(o.rank) + ", " + json_key(f::host) +
               json_string(o.host) + ", " + json_key(f::device) + std::to_string(o.device) + ", " +
               json_key(f::peak_bytes) + u64(o.peak_bytes) + ", " + json_key(f::sites_known) +
               (o.sites_known ? "true" : "false") + ", " + json_key(f::sites) + "[" + list + "]}";
    });
    // NVTX: the merged range stacks, the regions with merged range ids, the intervals in input order;
    // regions and intervals with the process row they are of (input).
    if (!ranges_.empty())
        write_array(out, top::nvtx_ranges, ranges_, [](const snapshot::RangeStack &r) {
            namespace f = member::nvtx_ranges;
            std::string line = "{" + json_key(f::id) + std::to_string(r.id);
            // categories only for a stack with one (intern_range leaves the list empty otherwise),
            // as the library writes it.
            for (auto [name, list] : {std::pair{f::domains, &r.domains}, std::pair{f::names, &r.names},
                                      std::pair{f::categories, &r.categories}})
                if (!list->empty() || !name.optional) line += ", " + json_key(name) + string_list(*list);
            return line + "}";
        });
    if (!nvtx_regions_.empty())
        write_array(out, top::nvtx_regions, nvtx_regions_, [](const snapshot::NvtxRegion &r) {
            namespace f = member::nvtx_regions;
            auto hex = [](uint64_t v) { return "\"" + report::hex_u64(v) + "\""; };
            return "{" + json_key(f::address) + hex(r.address) + ", " + json_key(f::size) + u64(r.size) + ", " +
                   json_key(f::segment) + hex(r.segment) + ", " + json_key(f::segment_size) + u64(r.segment_size) + ", " +
                   json_key(f::heap) + hex(r.heap) + ", " + json_key(f::device) + std::to_string(r.device) + ", " +
                   json_key(f::range) + std::to_string(r.range) + ", " + json_key(f::thread_id) +
                   std::to_string(r.thread_id) + (r.input ? ", " + json_key(f::input) + u64(*r.input) : std::string()) +
                   "}";
        });
    if (!nvtx_intervals_.empty())
        write_array(out, top::nvtx_intervals, nvtx_intervals_, [](const snapshot::NvtxInterval &v) {
            namespace f = member::nvtx_intervals;
            std::string line = "{" + json_key(f::domain) + json_string(v.domain) + ", " + json_key(f::name) +
                               json_string(v.name);
            if (!v.category.empty()) line += ", " + json_key(f::category) + json_string(v.category);
            line += ", " + json_key(f::start_ns) + u64(v.start_ns);
            if (v.end_ns != 0) line += ", " + json_key(f::end_ns) + u64(v.end_ns);
            line += ", " + json_key(f::start_thread) + std::to_string(v.start_thread);
            if (v.end_ns != 0) line += ", " + json_key(f::end_thread) + std::to_string(v.end_thread);
            if (v.input) line += ", " + json_key(f::input) + u64(*v.input);
            return line + "}";
        });
    write_array(out, top::modules, modules_, [](const snapshot::Module &m) {
        namespace f = member::modules;
        return "{" + json_key(f::path) + json_string(m.path) + ", " + json_key(f::base) + "\"" +
               report::hex_u64(m.base) + "\", " + json_key(f::build_id) + json_string(m.build_id) + "}";
    });
    write_array(out, top::frames, frames_, [](const snapshot::Frame &f) {
        namespace in = member::inlined;
        namespace fr = member::frames;
        std::string inlined;
        for (const snapshot::Frame::Inlined &i : f.inlined)
            inlined += std::string(inlined.empty() ? "" : ", ") + "{" + json_key(in::function) +
                       json_string(i.function) + ", " + json_key(in::file) + json_string(i.file) + ", " +
                       json_key(in::line) + std::to_string(i.line) + "}";
        return "{" + json_key(fr::address) + "\"" + report::hex_u64(f.address) + "\", " + json_key(fr::module) +
               std::to_string(f.module) + ", " + json_key(fr::module_offset) + "\"" + report::hex_u64(f.module_offset) +
               "\", " + json_key(fr::function) + json_string(f.function) + ", " + json_key(fr::file) +
               json_string(f.file) + ", " + json_key(fr::line) + std::to_string(f.line) +
               (inlined.empty() ? "" : ", " + json_key(fr::inlined) + "[" + inlined + "]") +
               (f.python ? ", " + json_key(fr::python) + "true}" : "}");
    });
    uint32_t id = 0;
    write_array(out, top::stacks, stacks_, [&id](const Stack &s) {
        namespace f = member::stacks;
        std::string frames = "[";
        for (size_t i = 0; i < s.frames.size(); ++i) {
            if (i) frames += ", ";
            frames += std::to_string(s.frames[i]);
        }
        frames += "]";
        return "{" + json_key(f::id) + std::to_string(++id) + ", " + json_key(f::frames) + frames + ", " +
               json_key(f::call_site) + std::to_string(s.call_site) +
               (s.via >= 0 ? ", " + json_key(f::via) + std::to_string(s.via) : std::string()) +
               (s.category.empty() ? std::string() : ", " + json_key(f::category) + json_string(s.category)) + "}";
    });
    if (spooled_ == 0 || !spool_) {
        out.put("  " + json_key(top::allocations) + "[]\n}\n");
    } else {
        out.put("  " + json_key(top::allocations) + "[\n");
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
