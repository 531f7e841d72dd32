#include "dump/snapshot_builder.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <map>
#include <unordered_map>

#include "core/clock.h"
#include "core/config.h"
#include "core/log.h"
#include "core/process_identity.h"
#include "device/driver_api.h"
#include "device/real_functions.h"
#include "python/python_frame_table.h"
#include "python/python_runtime.h"
#include "symbolize/call_site.h"
#include "device/device_info.h"
#include "symbolize/symbolizer.h"
#include "dump/oom_log.h"
#include "nvtx/categories.h"
#include "nvtx/intervals.h"
#include "nvtx/mem_regions.h"
#include "nvtx/range_table.h"
#include "nvtx/thread_ranges.h"

namespace vramtrace {
namespace {

std::string read_file(const char *path) {
    std::string out;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return out;
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    close(fd);
    return out;
}

const char *event_type_name(EventType type) {
    switch (type) {
    case EventType::Alloc: return "alloc";
    case EventType::Free: return "free";
    case EventType::Mark: return "mark";
    case EventType::Oom: return "oom";
    }
    return "unknown";
}

snapshot::Event to_report_event(const EventRecord &r) {
    snapshot::Event e;
    e.type = event_type_name(r.type);
    e.time_ns = r.time_ns;
    e.thread_id = r.thread_id;
    if (r.type == EventType::Mark) {
        e.label = r.label;
        return e;
    }
    e.device = r.device;
    e.size = r.size;
    e.api = api_name(r.api);
    e.stack = r.stack;
    if (r.type != EventType::Oom) {
        e.address = r.address;
        e.kind = memory_kind_name(static_cast<MemoryKind>(r.kind));
        if (static_cast<MemoryKind>(r.kind) == MemoryKind::VaReservation) e.address = reservation_address(r.address);
    }
    e.range = r.range;
    if (r.type == EventType::Free) e.freed_by = teardown_cause_name(static_cast<TeardownCause>(r.cause));
    return e;
}

// Each device's peak composition, read as a consistent cut (device_counters.h). A key that holds
// a (stack, NVTX range stack) pair (core/tracker.h, peak_key) counts toward both its stack's site
// and its range's row.
void capture_peaks(const Tracker &t, snapshot::Snapshot &s) {
    for (const snapshot::DeviceTotals &d : s.devices) {
        snapshot::DevicePeak peak;
        peak.device = d.device;
        std::map<uint32_t, snapshot::PeakSite> sites;
        std::map<uint32_t, snapshot::RangePeak> ranges;
        bool any_range = false;
        DevicePeakView view = t.counters.for_each_peak_site(d.device, [&](uint32_t key, uint64_t bytes, uint64_t count) {
            uint32_t stack = key;
            uint16_t range = 0;
            if (split_peak_key(t, key, &stack, &range)) any_range = true;
            snapshot::PeakSite &site = sites[stack];
            site.stack = stack, site.bytes += bytes, site.count += count;
            snapshot::RangePeak &row = ranges[range];
            row.range = range, row.bytes += bytes, row.count += count;
        });
        for (auto &[stack, site] : sites) peak.sites.push_back(site);
        if (any_range)
            for (auto &[range, row] : ranges) peak.ranges.push_back(row);
        peak.peak_bytes = view.peak_bytes;
        peak.time_ns = view.time_ns;
        std::sort(peak.sites.begin(), peak.sites.end(), [](const snapshot::PeakSite &a, const snapshot::PeakSite &b) {
            return a.bytes != b.bytes ? a.bytes > b.bytes : a.stack < b.stack;
        });
        std::sort(peak.ranges.begin(), peak.ranges.end(), [](const snapshot::RangePeak &a, const snapshot::RangePeak &b) {
            return a.bytes != b.bytes ? a.bytes > b.bytes : a.range < b.range;
        });
        s.peaks.push_back(std::move(peak));
    }
}

// The live regions of the NVTX memory API, each inside the tracked allocation that backs it; a region
// that lies in none (or crosses a segment's end) is counted, not listed.
void capture_regions(snapshot::Snapshot &s) {
    std::vector<const snapshot::Allocation *> segments;
    for (const snapshot::Allocation &a : s.allocations)
        if (a.kind == "device" || a.kind == "managed" || a.kind == "vmm_mapping" || a.kind == "host_pinned")
            segments.push_back(&a);
    std::sort(segments.begin(), segments.end(),
              [](const snapshot::Allocation *a, const snapshot::Allocation *b) { return a->address < b->address; });
    nvtx::for_each_region([&](const nvtx::Region &r) {
        auto it = std::upper_bound(segments.begin(), segments.end(), r.address,
                                   [](uint64_t v, const snapshot::Allocation *a) { return v < a->address; });
        const snapshot::Allocation *seg = it == segments.begin() ? nullptr : *(it - 1);
        if (seg == nullptr || r.address + r.size > seg->address + seg->size || r.address + r.size < r.address) {
            ++s.nvtx_regions_outside;
            return;
        }
        snapshot::NvtxRegion out;
        out.address = r.address;
        out.size = r.size;
        out.segment = seg->address;
        out.segment_size = seg->size;
        out.heap = r.heap;
        out.device = seg->device;
        out.range = r.range;
        out.thread_id = r.thread_id;
        s.nvtx_regions.push_back(out);
    });
    std::sort(s.nvtx_regions.begin(), s.nvtx_regions.end(), [](const snapshot::NvtxRegion &a, const snapshot::NvtxRegion &b) {
        return a.segment != b.segment ? a.segment < b.segment : a.address < b.address;
    });
    s.dropped_nvtx_regions = nvtx::regions_dropped();
    s.nvtx_unregisters_unknown = nvtx::unknown_unregisters();
}

// A category as the snapshot names it (nvtx/categories.h): its name, else its number; "" for none.
std::string category_text(uint16_t domain, uint32_t category) {
    char text[nvtx::kMaxNameBytes];
    size_t n = nvtx::category_text(domain, category, text);
    return std::string(text, n);
}

// The NVTX range stacks that allocations and peaks name, each spelled out from its chain of nodes
// (nvtx/range_table.h), outermost range first; the categories only when a range has one.
void capture_ranges(snapshot::Snapshot &s) {
    std::vector<uint32_t> ids;
    for (const snapshot::Allocation &a : s.allocations)
        if (a.range != 0) ids.push_back(a.range);
    for (const snapshot::DevicePeak &p : s.peaks)
        for (const snapshot::RangePeak &r : p.ranges)
            if (r.range != 0) ids.push_back(r.range);
    for (const snapshot::NvtxRegion &r : s.nvtx_regions)
        if (r.range != 0) ids.push_back(r.range);
    for (const snapshot::Event &e : s.events.events)
        if (e.range != 0) ids.push_back(e.range);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (uint32_t id : ids) {
        snapshot::RangeStack r;
        r.id = id;
        bool any_category = false;
        if (id == nvtx::kOverflowStack) {
            r.domains.push_back("");
            r.names.push_back("(more range stacks than vramtrace keeps)");
            r.categories.push_back("");
        }
        nvtx::StackNode node;
        for (uint16_t at = static_cast<uint16_t>(id); nvtx::stack_node(at, &node); at = node.parent) {
            r.domains.push_back(nvtx::domain_name(node.domain));
            r.names.push_back(nvtx::name_text(node.name));
            r.categories.push_back(category_text(node.domain, node.category));
            any_category = any_category || node.category != 0;
        }
        std::reverse(r.domains.begin(), r.domains.end());
        std::reverse(r.names.begin(), r.names.end());
        std::reverse(r.categories.begin(), r.categories.end());
        if (!any_category) r.categories.clear();
        s.range_stacks.push_back(std::move(r));
    }
    s.dropped_range_stacks = nvtx::stacks_overflowed();
    s.dropped_range_names = nvtx::names_overflowed();
}

// The NVTX start/end ranges started so far, by start time. An end is read through its end_ns, which
// end_interval stores last with release order, so that a closed interval's end_thread is complete.
void capture_intervals(snapshot::Snapshot &s) {
    nvtx::for_each_interval([&](const nvtx::Interval &v) {
        snapshot::NvtxInterval out;
        out.domain = nvtx::domain_name(v.domain);
        out.name = nvtx::name_text(v.name);
        out.category = category_text(v.domain, v.category);
        out.start_ns = v.start_ns;
        out.start_thread = v.start_thread;
        out.end_ns = __atomic_load_n(&v.end_ns, __ATOMIC_ACQUIRE);
        if (out.end_ns != 0) out.end_thread = v.end_thread;
        s.nvtx_intervals.push_back(std::move(out));
    });
    // Slots are handed out in start order, but two threads can read the clock in either order.
    std::stable_sort(s.nvtx_intervals.begin(), s.nvtx_intervals.end(),
                     [](const snapshot::NvtxInterval &a, const snapshot::NvtxInterval &b) { return a.start_ns < b.start_ns; });
    s.dropped_nvtx_intervals = nvtx::intervals_dropped();
}

void capture_events(const Tracker &t, snapshot::Snapshot &s) {
    snapshot::EventHistory &h = s.events;
    h.capacity = t.events.capacity();
    h.recorded = t.events.for_each([&](const EventRecord &r) { h.events.push_back(to_report_event(r)); });
    // The ring is in ticket order, and threads take tickets in blocks (event_ring.h): time order.
    std::stable_sort(h.events.begin(), h.events.end(),
                     [](const snapshot::Event &a, const snapshot::Event &b) { return a.time_ns < b.time_ns; });
    h.wrapped = h.recorded > h.events.size();
    // Complete from the start while every event pushed is kept; then from the oldest event kept.
    h.complete_from_ns = t.events.start_ns();
    if (h.wrapped) h.complete_from_ns = h.events.empty() ? s.process.dump_monotonic_ns : h.events.front().time_ns;
}

void capture_teardowns(const Tracker &t, snapshot::Snapshot &s) {
    s.teardown_count = t.teardowns.for_each([&](const TeardownRecord &r) {
        snapshot::Teardown td;
        td.time_ns = r.time_ns;
        td.api = api_name(r.api);
        td.cause = teardown_cause_name(r.cause);
        td.device = r.device;
        td.context = r.context;
        td.ended_count = r.ended_count;
        td.ended_bytes = r.ended_bytes;
        td.ended_host_bytes = r.ended_host_bytes;
        for (uint32_t i = 0; i < r.site_count; ++i) td.sites.push_back({r.sites[i].stack, r.sites[i].bytes, r.sites[i].count});
        td.other_bytes = r.other_bytes;
        td.other_count = r.other_count;
        s.teardowns.push_back(std::move(td));
    });
}

// Adds every stack referenced by allocations, peaks, ooms and events (raw frames, in ascending id
// order). The depot never frees a stack, so every id recorded anywhere still resolves.
void capture_stacks(const Tracker &t, snapshot::Snapshot &s) {
    std::vector<uint32_t> ids;
    for (const snapshot::Allocation &a : s.allocations) ids.push_back(a.stack);
    for (const snapshot::DevicePeak &p : s.peaks)
        for (const snapshot::PeakSite &site : p.sites) ids.push_back(site.stack);
    for (const snapshot::OomEvent &o : s.ooms) ids.push_back(o.stack);
    for (const snapshot::Event &e : s.events.events) ids.push_back(e.stack);
    for (const snapshot::Teardown &td : s.teardowns)
        for (const snapshot::PeakSite &site : td.sites) ids.push_back(site.stack);
    for (const snapshot::Stack &st : s.stacks) ids.push_back(st.id); // a producer may have added some
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::unordered_map<uint64_t, uint32_t> frame_index;
    for (size_t i = 0; i < s.frames.size(); ++i) frame_index.emplace(s.frames[i].address, uint32_t(i));
    std::vector<snapshot::Stack> stacks;
    size_t existing = 0;
    std::sort(s.stacks.begin(), s.stacks.end(), [](const snapshot::Stack &a, const snapshot::Stack &b) { return a.id < b.id; });
    for (uint32_t id : ids) {
        if (id == 0) continue;
        if (existing < s.stacks.size() && s.stacks[existing].id == id) {
            stacks.push_back(std::move(s.stacks[existing++]));
            continue;
        }
        StackView view = t.depot.get(id);
        if (view.depth == 0) continue; // unknown id: the reader would refuse the reference
        snapshot::Stack stack;
        stack.id = id;
        for (uint32_t i = 0; i < view.depth; ++i) {
            uint64_t address = view.frames[i];
            auto [it, inserted] = frame_index.try_emplace(address, static_cast<uint32_t>(s.frames.size()));
            if (inserted) {
                snapshot::Frame f;
                f.address = address;
                // A Python frame is named from the frame table now; the symbolizer skips it.
                if (python::is_python_frame(address)) {
                    f.python = true;
                    if (!python::decode_frame(t.python_frames, address, &f.file, &f.function, &f.line))
                        f.function = "??";
                }
                s.frames.push_back(std::move(f));
            }
            stack.frames.push_back(it->second);
        }
        stacks.push_back(std::move(stack));
    }
    s.stacks = std::move(stacks);
}

snapshot::ProcessInfo process_info(const Tracker &t, const char *reason) {
    snapshot::ProcessInfo p;
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
    p.host = host_name();
    p.start_time_ns = t.start_wall_ns;
    p.dump_time_ns = wall_ns();
    p.driver_version = cached_driver_version(); // no CUDA call while dumping
    p.reason = reason;
    p.vramtrace_version = VRAMTRACE_VERSION;
    p.stack_depth = config().stack_depth;
    p.dump_monotonic_ns = monotonic_ns();
    p.rank = launcher_rank();
    p.symbolized = false; // until symbolize_snapshot
    return p;
}

} // namespace

// A device that holds live memory counted toward no device of this process (another process's
// allocation opened over IPC) has no counters here, yet the report must say which device that is:
// it gets a row with zero totals, whose identity (UUID) fill_device_info fills in. Rows stay in
// ordinal order.
static void add_rows_for_held_devices(snapshot::Snapshot &s) {
    bool added = false;
    for (const snapshot::Allocation &a : s.allocations) {
        if (a.device < 0) continue;
        bool present = std::any_of(s.devices.begin(), s.devices.end(),
                                   [&](const snapshot::DeviceTotals &d) { return d.device == a.device; });
        if (present) continue;
        snapshot::DeviceTotals row;
        row.device = a.device;
        s.devices.push_back(std::move(row));
        added = true;
    }
    if (added)
        std::stable_sort(s.devices.begin(), s.devices.end(),
                         [](const snapshot::DeviceTotals &x, const snapshot::DeviceTotals &y) { return x.device < y.device; });
}

snapshot::Snapshot capture_snapshot(Tracker &t, const char *reason) {
    snapshot::Snapshot s;
    s.process = process_info(t, reason);
    t.counters.for_each_seen([&](const DeviceTotalsView &d) {
        snapshot::DeviceTotals totals;
        snapshot::copy_device_counters(d, totals);
        s.devices.push_back(std::move(totals));
    });
    s.dropped_allocations = t.table.dropped();
    s.dropped_stacks = t.depot.dropped();
    s.dropped_peak_sites = t.counters.dropped_sites();

    std::vector<AllocationRecord> live;
    live.reserve(t.table.live_count() + 16);
    t.table.for_each([&](const AllocationRecord &r) { live.push_back(r); });
    std::sort(live.begin(), live.end(), [](const AllocationRecord &a, const AllocationRecord &b) {
        return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : a.address < b.address;
    });
    s.allocations.reserve(live.size());
    for (const AllocationRecord &r : live) {
        snapshot::Allocation a;
        a.address = r.address;
        a.size = r.size;
        a.kind = memory_kind_name(r.kind);
        a.device = r.device;
        a.api = api_name(r.api);
        a.stream = r.stream;
        a.thread_id = r.thread_id;
        a.time_ns = r.time_ns;
        a.stack = r.stack_id;
        a.size_is_estimate = r.kind == MemoryKind::Array; // computed from the array's descriptor
        a.context = r.context;
        a.range = r.range;
        if (r.kind == MemoryKind::VaReservation) a.address = reservation_address(r.address);
        s.allocations.push_back(std::move(a));
    }
    add_rows_for_held_devices(s);
    capture_peaks(t, s);
    capture_regions(s);
    capture_events(t, s);
    capture_ranges(s);
    capture_intervals(s);
    capture_teardowns(t, s);

    // ---- Other producers: one call line each (fill_oom_events, fill_pools, fill_device_info). ----
    // They run here, before capture_stacks, so that the stacks they reference are added. fill_pools
    // goes first: it may add a device's row (graph memory only), whose identity is then filled in.
    fill_pools(s);
    fill_device_info(s);
    fill_oom_events(s);
    // ---- end of other producers ----

    capture_stacks(t, s);
    s.process.python = python::interpreter_version();
    return s;
}

void recapture_events(const Tracker &t, snapshot::Snapshot &s) {
    s.events = {};
    capture_events(t, s);
    capture_stacks(t, s); // keeps the stacks already there, adds those of the new events
}

// The module registry's objects, newest first, for the symbolizer: those dlclose'd since their
// stacks were captured are named from their files (lib/tracking/module_registry.h).
static std::vector<symbolize::LoadedModule> registered_modules() {
    std::vector<symbolize::LoadedModule> out;
    Tracker *t = tracker();
    if (t == nullptr) return out;
    static const char kHex[] = "0123456789abcdef";
    for (const RegisteredModule *r = t->modules.newest(); r != nullptr; r = r->older) {
        symbolize::LoadedModule m;
        m.path = r->path;
        m.base = r->base;
        for (uint32_t i = 0; i < r->segment_count; ++i)
            m.segments.push_back({r->segments[i].begin, r->segments[i].end, r->segments[i].executable});
        for (uint8_t i = 0; i < r->build_id_length; ++i) {
            m.build_id.push_back(kHex[r->build_id[i] >> 4]);
            m.build_id.push_back(kHex[r->build_id[i] & 15]);
        }
        out.push_back(std::move(m));
    }
    return out;
}

void symbolize_snapshot(snapshot::Snapshot &s) {
    symbolize::SymbolizerOptions options;
    options.notice = [](void *, const char *message) { log_warning("%s", message); };
    symbolize_snapshot_frames(s, options, registered_modules());
    // The frame rules are read at the first dump; a user's file that cannot be used is said once.
    FrameRules::from_environment([](const char *message) { log_warning("%s", message); });
    assign_call_sites(s);
    s.process.symbolized = true;
}

snapshot::Snapshot build_snapshot(Tracker &t, const char *reason) {
    snapshot::Snapshot s = capture_snapshot(t, reason);
    symbolize_snapshot(s);
    return s;
}

} // namespace vramtrace
