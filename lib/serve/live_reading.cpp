#include "serve/live_reading.h"

#include <algorithm>
#include <climits>
#include <link.h>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <time.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "core/process_identity.h"
#include "device/device_info.h"
#include "dump/oom_log.h"
#include "dump/output_path.h"
#include "dump/snapshot_builder.h"
#include "live/protocol.h"
#include "python/python_frame_table.h"
#include "python/python_runtime.h"
#include "snapshot/json_emitter.h"
#include "snapshot/snapshot_layout.h"
#include "symbolize/module_map.h"

namespace vramtrace::serve {
namespace {

uint64_t thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// The process's command line and executable, read once: neither changes while it runs (exec
// replaces the library with it). Never destroyed: a reading may be served while the process
// runs its static destructors.
struct ProcessText {
    std::vector<std::string> command_line;
    std::string executable;
    std::string host;
};
const ProcessText &process_text() {
    static const ProcessText &text = *[] {
        ProcessText *made = new ProcessText;
        ProcessText &p = *made;
        int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
        std::string all;
        if (fd >= 0) {
            char buf[4096];
            for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) all.append(buf, size_t(n));
            close(fd);
        }
        for (size_t start = 0; start < all.size();) {
            size_t end = all.find('\0', start);
            if (end == std::string::npos) end = all.size();
            p.command_line.emplace_back(all, start, end - start);
            start = end + 1;
        }
        char buf[4096];
        ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
        if (n > 0) p.executable.assign(buf, size_t(n));
        p.host = host_name();
        return made;
    }();
    return text;
}

// The bounds the viewer holds a reading to (live/protocol.h) are those of what is read here.
static_assert(kOomsKept <= live::kReadingOoms);
static_assert(StackDepot::kMaxDepth <= live::kReadingStackFrames);
static_assert(python::kMaxNameBytes <= live::kReadingNameBytes);

struct SiteSum {
    uint32_t stack = 0;
    int device = 0;
    uint64_t bytes = 0, count = 0;
};

// The modules frames fall in: every object loaded now, then those of the module registry that
// are not (dlclose'd since their stacks were captured). Read again only when the dynamic linker
// loaded or unloaded something, or the registry grew, since the last reading: a PyTorch process
// has a few hundred objects, and reading their program headers each second would be most of a
// reading's cost.
struct ModuleCache {
    uint64_t adds = ~0ull, subs = ~0ull;
    uint32_t registered = ~0u;
    std::vector<symbolize::LoadedModule> modules;
    symbolize::ModuleIndex index;
};

int linker_counters(dl_phdr_info *info, size_t, void *out) {
    auto *counters = static_cast<uint64_t *>(out);
    counters[0] = info->dlpi_adds;
    counters[1] = info->dlpi_subs;
    return 1; // the first object is enough: the counters are the linker's
}

const ModuleCache &current_modules(const Tracker &t) {
    static ModuleCache &cache = *new ModuleCache; // the reporter's only; never destroyed
    uint64_t counters[2] = {0, 0};
    dl_iterate_phdr(&linker_counters, counters);
    if (counters[0] == cache.adds && counters[1] == cache.subs && t.modules.size() == cache.registered) return cache;
    cache.adds = counters[0];
    cache.subs = counters[1];
    cache.registered = t.modules.size();
    std::vector<symbolize::LoadedModule> mods = symbolize::read_loaded_modules();
    static const char kHex[] = "0123456789abcdef";
    for (const RegisteredModule *r = t.modules.newest(); r != nullptr; r = r->older) {
        bool loaded = false;
        for (const symbolize::LoadedModule &m : mods)
            if (m.base == r->base && m.path == r->path) loaded = true;
        if (loaded) continue;
        symbolize::LoadedModule m;
        m.path = r->path;
        m.base = r->base;
        m.unloaded = true;
        for (uint32_t i = 0; i < r->segment_count; ++i)
            m.segments.push_back({r->segments[i].begin, r->segments[i].end, r->segments[i].executable});
        for (uint8_t i = 0; i < r->build_id_length; ++i) {
            m.build_id.push_back(kHex[r->build_id[i] >> 4]);
            m.build_id.push_back(kHex[r->build_id[i] & 15]);
        }
        mods.push_back(std::move(m));
    }
    cache.modules = std::move(mods);
    cache.index = symbolize::ModuleIndex(cache.modules);
    return cache;
}

void emit_opt(snapshot::JsonEmitter &j, const char *name, const std::optional<uint64_t> &v) {
    if (!v) return;
    j.ch(',');
    j.key(name);
    j.u64(*v);
}

void emit_devices(snapshot::JsonEmitter &j, const snapshot::Snapshot &s) {
    j.key("devices");
    j.ch('[');
    bool first = true;
    for (const snapshot::DeviceTotals &d : s.devices) {
        if (!first) j.ch(',');
        first = false;
        j.ch('{');
        j.key("device"); j.i64(d.device);
        j.ch(','); j.key("current_bytes"); j.u64(d.current_bytes);
        j.ch(','); j.key("peak_bytes"); j.u64(d.peak_bytes);
        j.ch(','); j.key("allocation_count"); j.u64(d.allocation_count);
        j.ch(','); j.key("free_count"); j.u64(d.free_count);
        j.ch(','); j.key("total_allocated_bytes"); j.u64(d.total_allocated_bytes);
        j.ch(','); j.key("total_freed_bytes"); j.u64(d.total_freed_bytes);
        if (!d.uuid.empty()) {
            j.ch(','); j.key("uuid"); j.str(d.uuid);
        }
        emit_opt(j, "total_memory_bytes", d.total_memory_bytes);
        emit_opt(j, "process_used_bytes", d.process_used_bytes);
        emit_opt(j, "graph_reserved_bytes", d.graph_reserved_bytes);
        j.ch('}');
    }
    j.ch(']');
}

// Per device, the tracked bytes at the end of each of the last kHistorySeconds seconds, worked
// backwards from the current figure through the ring's allocations and frees; and the newest
// marks. A second before the ring's complete history is written as -1 (not known).
void emit_history(snapshot::JsonEmitter &j, const Tracker &t, const snapshot::Snapshot &s, uint64_t now) {
    struct Step {
        uint64_t time_ns;
        int device;
        int64_t delta;
    };
    std::vector<Step> steps;
    std::vector<EventRecord> marks;
    uint64_t first_time = UINT64_MAX;
    uint64_t recorded = t.events.for_each([&](const EventRecord &e) {
        if (first_time == UINT64_MAX) first_time = e.time_ns;
        if (e.type == EventType::Mark) {
            if (marks.size() == live::kHistoryMarks) marks.erase(marks.begin());
            marks.push_back(e);
        } else if ((e.type == EventType::Alloc || e.type == EventType::Free) &&
                   counts_toward_device(static_cast<MemoryKind>(e.kind))) {
            steps.push_back({e.time_ns, e.device, e.type == EventType::Alloc ? int64_t(e.size) : -int64_t(e.size)});
        }
    });
    uint64_t complete_from = recorded > t.events.capacity() ? first_time : t.events.start_ns();
    j.key("history");
    j.raw("{");
    j.key("seconds"); j.u64(live::kHistorySeconds);
    j.ch(','); j.key("end_monotonic_ns"); j.u64(now);
    j.ch(','); j.key("complete_from_ns"); j.u64(complete_from);
    j.ch(','); j.key("devices");
    j.ch('[');
    bool first_device = true;
    for (const snapshot::DeviceTotals &d : s.devices) {
        if (!first_device) j.ch(',');
        first_device = false;
        int64_t bytes[live::kHistorySeconds];
        int64_t level = int64_t(d.current_bytes);
        size_t k = steps.size();
        for (unsigned sec = 0; sec < live::kHistorySeconds; ++sec) {
            // bytes[kHistorySeconds - 1 - sec]: the level at now - sec seconds.
            uint64_t at = now - uint64_t(sec) * 1000000000ull;
            while (k > 0 && steps[k - 1].time_ns > at) {
                if (steps[k - 1].device == d.device) level -= steps[k - 1].delta;
                --k;
            }
            bool known = at >= complete_from && now >= uint64_t(sec) * 1000000000ull;
            bytes[live::kHistorySeconds - 1 - sec] = known ? std::max<int64_t>(level, 0) : -1;
        }
        j.ch('{');
        j.key("device"); j.i64(d.device);
        j.ch(','); j.key("bytes"); j.ch('[');
        for (unsigned i = 0; i < live::kHistorySeconds; ++i) {
            if (i) j.ch(',');
            j.i64(bytes[i]);
        }
        j.raw("]}");
    }
    j.ch(']');
    j.ch(','); j.key("marks"); j.ch('[');
    for (size_t i = 0; i < marks.size(); ++i) {
        if (i) j.ch(',');
        j.ch('{');
        j.key("time_ns"); j.u64(marks[i].time_ns);
        j.ch(','); j.key("label"); j.str(marks[i].label);
        j.ch('}');
    }
    j.raw("]}");
}

} // namespace

bool write_reading(Tracker &t, int fd, const ReadingOptions &options) {
    const uint64_t cpu_start = thread_cpu_ns();
    const uint64_t now = monotonic_ns();
    snapshot::Snapshot s; // devices, pools and OOMs as the dump's producers fill them
    t.counters.for_each_seen([&](const DeviceTotalsView &d) {
        snapshot::DeviceTotals totals;
        snapshot::copy_device_counters(d, totals);
        s.devices.push_back(std::move(totals));
    });
    fill_pools(s);
    fill_device_info(s);
    fill_oom_events(s);

    // Live bytes by (stack, device), from one walk of the table.
    std::unordered_map<uint64_t, SiteSum> by_site;
    uint64_t live_count = 0, live_bytes = 0;
    t.table.for_each([&](const AllocationRecord &r) {
        if (!counts_toward_device(r.kind)) return;
        ++live_count;
        live_bytes += r.size;
        uint64_t key = uint64_t(r.stack_id) << 16 | uint16_t(r.device);
        SiteSum &site = by_site[key];
        site.stack = r.stack_id;
        site.device = r.device;
        site.bytes += r.size;
        ++site.count;
    });
    std::vector<SiteSum> sites;
    sites.reserve(by_site.size());
    for (auto &kv : by_site) sites.push_back(kv.second);
    auto heavier = [](const SiteSum &a, const SiteSum &b) {
        if (a.bytes != b.bytes) return a.bytes > b.bytes;
        if (a.stack != b.stack) return a.stack < b.stack;
        return a.device < b.device;
    };
    size_t kept = std::min(sites.size(), live::kReadingSites);
    std::partial_sort(sites.begin(), sites.begin() + kept, sites.end(), heavier);
    uint64_t left_bytes = 0, left_count = 0;
    for (size_t i = kept; i < sites.size(); ++i) left_bytes += sites[i].bytes, left_count += sites[i].count;
    const size_t left_sites = sites.size() - kept;
    sites.resize(kept);

    // The stacks they name, and the frames and modules of those stacks.
    std::vector<uint32_t> stack_ids;
    for (const SiteSum &site : sites)
        if (site.stack != 0) stack_ids.push_back(site.stack);
    for (const snapshot::OomEvent &o : s.ooms)
        if (o.stack != 0) stack_ids.push_back(o.stack);
    std::sort(stack_ids.begin(), stack_ids.end());
    stack_ids.erase(std::unique(stack_ids.begin(), stack_ids.end()), stack_ids.end());
    const ModuleCache &module_cache = current_modules(t);
    const std::vector<symbolize::LoadedModule> &mods = module_cache.modules;
    const symbolize::ModuleIndex &index = module_cache.index;
    std::vector<int> module_out(mods.size(), -1);
    std::vector<size_t> modules_used;
    std::unordered_map<uint64_t, uint32_t> frame_index;
    std::vector<uint64_t> frames;
    std::vector<std::vector<uint32_t>> stack_frames;
    for (uint32_t id : stack_ids) {
        StackView view = t.depot.get(id);
        std::vector<uint32_t> refs;
        for (uint32_t i = 0; i < view.depth; ++i) {
            auto [it, added] = frame_index.try_emplace(view.frames[i], uint32_t(frames.size()));
            if (added) frames.push_back(view.frames[i]);
            refs.push_back(it->second);
        }
        stack_frames.push_back(std::move(refs));
    }

    char buffer[16384];
    snapshot::JsonEmitter j(fd, buffer, sizeof buffer, snapshot::JsonEmitter::WhenFull::wait);
    const ProcessText &p = process_text();
    j.ch('{');
    j.key("format"); j.str(live::kFormatName);
    j.ch(','); j.key("version"); j.i64(live::kProtocolVersion);
    j.ch(','); j.key("process"); j.ch('{');
    j.key("pid"); j.i64(getpid());
    j.ch(','); j.key("command_line"); j.ch('[');
    for (size_t i = 0; i < p.command_line.size(); ++i) {
        if (i) j.ch(',');
        j.str(p.command_line[i]);
    }
    j.ch(']');
    j.ch(','); j.key("executable"); j.str(p.executable);
    j.ch(','); j.key("host"); j.str(p.host);
    j.ch(','); j.key("rank"); j.str(launcher_rank());
    j.ch(','); j.key("python"); j.str(python::interpreter_version());
    j.ch(','); j.key("start_time_ns"); j.u64(t.start_wall_ns);
    j.ch(','); j.key("monotonic_ns"); j.u64(now);
    j.ch(','); j.key("exit_snapshot"); j.str(exit_output_path());
    j.ch(','); j.key("live_snapshots"); j.u64(options.live_snapshots);
    j.ch('}');
    j.ch(','); emit_devices(j, s);
    j.ch(','); j.key("live_allocations"); j.u64(live_count);
    j.ch(','); j.key("live_bytes"); j.u64(live_bytes);
    j.ch(','); j.key("sites"); j.ch('[');
    for (size_t i = 0; i < sites.size(); ++i) {
        if (i) j.ch(',');
        j.ch('{');
        j.key("stack"); j.u64(sites[i].stack);
        j.ch(','); j.key("device"); j.i64(sites[i].device);
        j.ch(','); j.key("bytes"); j.u64(sites[i].bytes);
        j.ch(','); j.key("count"); j.u64(sites[i].count);
        j.ch('}');
    }
    j.ch(']');
    j.ch(','); j.key("sites_left_out"); j.ch('{');
    j.key("sites"); j.u64(left_sites);
    j.ch(','); j.key("bytes"); j.u64(left_bytes);
    j.ch(','); j.key("count"); j.u64(left_count);
    j.ch('}');
    // Frames: raw addresses with their module; Python frames named here (from the frame table).
    j.ch(','); j.key("frames"); j.ch('[');
    std::string file, function;
    for (size_t i = 0; i < frames.size(); ++i) {
        if (i) j.ch(',');
        j.ch('{');
        j.key("address"); j.hex(frames[i]);
        uint32_t line = 0;
        if (python::is_python_frame(frames[i])) {
            if (!python::decode_frame(t.python_frames, frames[i], &file, &function, &line)) function = "??", file.clear();
            j.ch(','); j.key("python"); j.boolean(true);
            j.ch(','); j.key("function"); j.str(function);
            j.ch(','); j.key("file"); j.str(file);
            j.ch(','); j.key("line"); j.u64(line);
        } else {
            int m = index.find(frames[i]);
            if (m >= 0) {
                if (module_out[size_t(m)] < 0) {
                    module_out[size_t(m)] = int(modules_used.size());
                    modules_used.push_back(size_t(m));
                }
                j.ch(','); j.key("module"); j.i64(module_out[size_t(m)]);
                j.ch(','); j.key("module_offset"); j.hex(frames[i] - mods[size_t(m)].base);
            }
        }
        j.ch('}');
    }
    j.ch(']');
    j.ch(','); j.key("modules"); j.ch('[');
    for (size_t i = 0; i < modules_used.size(); ++i) {
        const symbolize::LoadedModule &m = mods[modules_used[i]];
        if (i) j.ch(',');
        j.ch('{');
        j.key("path"); j.str(m.path);
        j.ch(','); j.key("base"); j.hex(m.base);
        j.ch(','); j.key("build_id"); j.str(m.build_id);
        j.ch('}');
    }
    j.ch(']');
    j.ch(','); j.key("stacks"); j.ch('[');
    for (size_t i = 0; i < stack_ids.size(); ++i) {
        if (i) j.ch(',');
        j.ch('{');
        j.key("id"); j.u64(stack_ids[i]);
        j.ch(','); j.key("frames"); j.ch('[');
        for (size_t k = 0; k < stack_frames[i].size(); ++k) {
            if (k) j.ch(',');
            j.u64(stack_frames[i][k]);
        }
        j.raw("]}");
    }
    j.ch(']');
    j.ch(','); j.key("pools"); j.ch('[');
    for (size_t i = 0; i < s.pools.size(); ++i) {
        if (i) j.ch(',');
        j.ch('{');
        snapshot::JsonMembers m(j, ",");
        snapshot::write_pool_members(m, s.pools[i]);
        j.ch('}');
    }
    j.ch(']');
    j.ch(','); j.key("oom_count"); j.u64(s.oom_count);
    j.ch(','); j.key("ooms"); j.ch('[');
    for (size_t i = 0; i < s.ooms.size(); ++i) {
        if (i) j.ch(',');
        j.ch('{');
        snapshot::JsonMembers m(j, ",");
        snapshot::write_oom_members(m, s.ooms[i]);
        j.ch('}');
    }
    j.ch(']');
    if (options.history) {
        j.ch(',');
        emit_history(j, t, s, now);
    }
    // What building this reading cost the process, up to here (the transfer is the kernel's).
    j.ch(','); j.key("serve_cpu_ns"); j.u64(thread_cpu_ns() - cpu_start);
    j.raw("}\n");
    j.flush();
    return !j.failed();
}

} // namespace vramtrace::serve
