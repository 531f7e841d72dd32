#include "reporting/snapshot_builder.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <unordered_map>

#include "core/clock.h"
#include "core/config.h"
#include "core/log.h"
#include "interception/hook_table.h"
#include "interception/real_functions.h"
#include "reporting/call_site.h"
#include "reporting/symbolizer.h"

namespace vramtrace {
namespace {

const char *kind_name(MemoryKind k) {
    switch (k) {
    case MemoryKind::Device: return "device";
    case MemoryKind::Managed: return "managed";
    case MemoryKind::HostPinned: return "host_pinned";
    case MemoryKind::HostRegistered: return "host_registered";
    case MemoryKind::IpcImported: return "ipc_imported";
    case MemoryKind::VmmPhysical: return "vmm_physical";
    case MemoryKind::VmmMapping: return "vmm_mapping";
    }
    return "unknown";
}

std::string read_file(const char *path) {
    std::string out;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return out;
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    close(fd);
    return out;
}

report::ProcessInfo process_info(const Tracker &t, const char *reason) {
    report::ProcessInfo p;
    p.pid = getpid();
    p.ppid = getppid();
    std::string cmdline = read_file("/proc/self/cmdline");
    for (size_t start = 0; start < cmdline.size();) {
        size_t end = cmdline.find('\0', start);
        if (end == std::string::npos) end = cmdline.size();
        p.command_line.emplace_back(cmdline, start, end - start);
        start = end + 1;
    }
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) p.executable.assign(buf, static_cast<size_t>(n));
    if (gethostname(buf, sizeof buf) == 0) {
        buf[sizeof buf - 1] = 0;
        p.host = buf;
    }
    p.start_time_ns = t.start_wall_ns;
    p.dump_time_ns = wall_ns();
    p.driver_version = cached_driver_version(); // no CUDA call while dumping
    p.reason = reason;
    p.vramtrace_version = VRAMTRACE_VERSION;
    p.stack_depth = config().stack_depth;
    return p;
}

} // namespace

report::Snapshot build_snapshot(const Tracker &t, const char *reason) {
    report::Snapshot s;
    s.process = process_info(t, reason);
    t.counters.for_each_seen([&](const DeviceTotalsView &d) {
        s.devices.push_back({d.device, d.current_bytes, d.peak_bytes, d.allocation_count,
                             d.free_count, d.total_allocated_bytes, d.total_freed_bytes});
    });
    s.dropped_allocations = t.table.dropped();
    s.dropped_stacks = t.depot.dropped();

    std::vector<AllocationRecord> live;
    live.reserve(t.table.live_count() + 16);
    t.table.for_each([&](const AllocationRecord &r) { live.push_back(r); });
    std::sort(live.begin(), live.end(), [](const AllocationRecord &a, const AllocationRecord &b) {
        return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : a.address < b.address;
    });

    // Stacks referenced by the live set, and their unique frames.
    std::unordered_map<uint32_t, size_t> stack_index;
    std::unordered_map<uint64_t, uint32_t> frame_index;
    for (const AllocationRecord &r : live) {
        if (r.stack_id == 0 || stack_index.count(r.stack_id)) continue;
        StackView view = t.depot.get(r.stack_id);
        report::Stack stack;
        stack.id = r.stack_id;
        for (uint32_t i = 0; i < view.depth; ++i) {
            uint64_t address = view.frames[i];
            auto [it, inserted] = frame_index.try_emplace(address, static_cast<uint32_t>(s.frames.size()));
            if (inserted) {
                report::Frame f;
                f.address = address;
                s.frames.push_back(std::move(f));
            }
            stack.frames.push_back(it->second);
        }
        stack_index.emplace(r.stack_id, s.stacks.size());
        s.stacks.push_back(std::move(stack));
    }
    std::sort(s.stacks.begin(), s.stacks.end(),
              [](const report::Stack &a, const report::Stack &b) { return a.id < b.id; });
    symbolize::SymbolizerOptions options;
    options.notice = [](void *, const char *message) { log_warning("%s", message); };
    symbolize_snapshot_frames(s, options);
    assign_call_sites(s);

    s.allocations.reserve(live.size());
    for (const AllocationRecord &r : live) {
        report::Allocation a;
        a.address = r.address;
        a.size = r.size;
        a.kind = kind_name(r.kind);
        a.device = r.device;
        a.api = api_name(r.api);
        a.stream = r.stream;
        a.thread_id = r.thread_id;
        a.time_ns = r.time_ns;
        a.stack = r.stack_id;
        s.allocations.push_back(std::move(a));
    }
    return s;
}

} // namespace vramtrace
