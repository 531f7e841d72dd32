// The crash snapshot writer (see crash_writer.h): walks the tracker's lock-free structures and
// streams the schema-1 JSON through a fixed buffer, all inside one mmap'd working area. The member
// names are the constants of snapshot/snapshot_fields.h (string literals: nothing runs to make them).
#include "triggers/crash_writer.h"

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/clock.h"
#include "device/driver_api.h"
#include "device/real_functions.h"
#include "python/python_frame_table.h"
#include "python/python_runtime.h"
#include "snapshot/snapshot_model.h"
#include "snapshot/snapshot_fields.h"
#include "snapshot/snapshot_layout.h"
#include "triggers/crash_modules.h"

namespace vramtrace::crash {
namespace {

namespace member = snapshot::member;
using snapshot::JsonEmitter;
using snapshot::JsonMembers;
using snapshot::JsonRecordList;

constexpr size_t kOutBuffer = 16 * 1024;
constexpr size_t kMapsScratch = 64 * 1024;
constexpr size_t kCommandLineBytes = 64 * 1024;
constexpr size_t kExePathBytes = 4096;
constexpr size_t kPathsBytes = 1u << 20;
constexpr uint32_t kFrameHashSize = 2 * kMaxFrames; // a power of two, load <= 1/2
constexpr uint32_t kDroppedStack = ~uint32_t{0};

struct CrashFrame {
    uint64_t address;
    int32_t module; // into the module table, -1 unknown
};

// Carves the working area out of one mapping.
struct Area {
    unsigned char *base = nullptr;
    size_t size = 0, used = 0;
    template <class T> T *take(size_t count) {
        used = (used + 63) & ~size_t{63};
        T *p = reinterpret_cast<T *>(base + used);
        used += count * sizeof(T);
        return p;
    }
};

bool starts_with(const char *s, size_t n, const char *prefix) {
    size_t i = 0;
    for (; prefix[i]; ++i)
        if (i >= n || s[i] != prefix[i]) return false;
    return true;
}

// The module-name half of the call-site rule of lib/symbolize/call_site.h (the function-name half
// needs symbols; the CLI applies the whole rule again once it has named the frames).
bool is_cuda_or_vramtrace(const ModuleTable &t, int module) {
    if (module < 0) return false;
    const CrashModule &m = t.modules[module];
    const char *path = t.paths + m.path_offset;
    size_t n = m.path_length, slash = 0;
    for (size_t i = 0; i < n; ++i)
        if (path[i] == '/') slash = i + 1;
    return starts_with(path + slash, n - slash, "libvramtrace") || starts_with(path + slash, n - slash, "libcudart") ||
           starts_with(path + slash, n - slash, "libcuda.");
}

uint32_t frame_hash(uint64_t a) {
    a ^= a >> 29;
    a *= 0xbf58476d1ce4e5b9ull;
    a ^= a >> 32;
    return static_cast<uint32_t>(a) & (kFrameHashSize - 1);
}

// Reads a whole small file (a /proc entry) into buf; returns the bytes read (at most cap).
size_t read_small_file(const char *path, char *buf, size_t cap) {
    int fd;
    do {
        fd = ::open(path, O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return 0;
    size_t have = 0;
    while (have < cap) {
        ssize_t n = ::read(fd, buf + have, cap - have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        have += size_t(n);
    }
    ::close(fd);
    return have;
}

struct Work {
    AllocationRecord *records;
    uint32_t record_count = 0;
    uint64_t records_over_cap = 0;
    uint32_t *stack_slot;        // stack id -> 1 + index into stack_ids, kDroppedStack, or 0 (unseen)
    uint32_t max_stack_id = 0;
    uint32_t *stack_ids;
    uint32_t stack_count = 0;
    uint64_t stacks_over_cap = 0;
    CrashFrame *frames;
    uint32_t frame_count = 0;
    uint32_t *frame_index;       // hash slot -> 1 + index into frames, 0 empty
    ModuleTable modules;
    char *maps_scratch;
    char *command_line;
    char *exe_path;
    char *out_buffer;
};

uint32_t find_frame(const Work &w, uint64_t address) {
    for (uint32_t h = frame_hash(address);; h = (h + 1) & (kFrameHashSize - 1)) {
        uint32_t v = w.frame_index[h];
        if (v == 0 || w.frames[v - 1].address == address) return v; // 0: absent
    }
}

void add_frame(Work &w, uint64_t address) {
    uint32_t h = frame_hash(address);
    for (;; h = (h + 1) & (kFrameHashSize - 1)) {
        uint32_t v = w.frame_index[h];
        if (v == 0) break;
        if (w.frames[v - 1].address == address) return;
    }
    CrashFrame &f = w.frames[w.frame_count];
    f.address = address;
    f.module = find_crash_module(w.modules, address);
    w.frame_index[h] = ++w.frame_count;
}

// Gives each referenced stack a slot and its frames an index, within the bounds.
void select_stacks(Work &w, const StackDepot &depot) {
    for (uint32_t i = 0; i < w.record_count; ++i) {
        uint32_t id = w.records[i].stack_id;
        if (id == 0 || id > w.max_stack_id || w.stack_slot[id] != 0) continue;
        StackView view = depot.get(id);
        if (view.depth == 0 || w.stack_count >= kMaxStacks || view.depth > kMaxFrames - w.frame_count) {
            w.stack_slot[id] = kDroppedStack;
            ++w.stacks_over_cap;
            continue;
        }
        w.stack_ids[w.stack_count++] = id;
        w.stack_slot[id] = w.stack_count;
        for (uint32_t d = 0; d < view.depth; ++d) add_frame(w, view.frames[d]);
    }
}

void write_process(JsonEmitter &out, Work &w, const Tracker &t, const CrashProcess &p, const char *signal_name) {
    out.raw("  "), out.key(member::top::process), out.raw("{\n    ");
    JsonMembers m(out, ",\n    ");
    m.i64(member::process::pid, ::getpid());
    m.i64(member::process::ppid, ::getppid());
    m.key(member::process::command_line).ch('[');
    size_t n = read_small_file("/proc/self/cmdline", w.command_line, kCommandLineBytes);
    if (n == kCommandLineBytes) // cut: drop the argument that did not fit whole
        while (n > 0 && w.command_line[n - 1] != 0) --n;
    for (size_t start = 0, i = 0; i < n; ++i) {
        if (w.command_line[i] != 0) continue;
        if (start) out.raw(", ");
        out.str({w.command_line + start, i - start});
        start = i + 1;
    }
    out.ch(']');
    ssize_t exe = ::readlink("/proc/self/exe", w.exe_path, kExePathBytes);
    m.str(member::process::executable, {w.exe_path, exe > 0 ? size_t(exe) : 0});
    m.str(member::process::host, p.host);
    m.u64(member::process::start_time_ns, t.start_wall_ns);
    m.u64(member::process::dump_time_ns, wall_ns());
    m.i64(member::process::driver_version, cached_driver_version());
    m.str(member::process::reason, "crash");
    m.str(member::process::vramtrace_version, VRAMTRACE_VERSION);
    m.u64(member::process::stack_depth, p.stack_depth);
    m.u64(member::process::dump_monotonic_ns, monotonic_ns());
    m.str(member::process::rank, p.rank);
    m.boolean(member::process::symbolized, false);
    m.str(member::process::signal, signal_name);
    const char *python = python::interpreter_version(); // static storage, no lock
    if (*python) m.str(member::process::python, python);
    out.raw("\n  },\n");
}

void write_modules(JsonEmitter &out, Work &w) {
    // Only the modules that frames point into, in address order.
    for (uint32_t i = 0; i < w.frame_count; ++i)
        if (w.frames[i].module >= 0) w.modules.modules[w.frames[i].module].output_index = 0;
    int32_t referenced = 0;
    JsonRecordList list(out, member::top::modules);
    for (uint32_t i = 0; i < w.modules.count; ++i) {
        CrashModule &m = w.modules.modules[i];
        if (m.output_index < 0) continue;
        m.output_index = referenced++;
        list.add([&](JsonMembers &r) {
            r.str(member::modules::path, {w.modules.paths + m.path_offset, m.path_length});
            r.hex(member::modules::base, m.base);
            r.key(member::modules::build_id).ch('"');
            static const char kDigits[] = "0123456789abcdef";
            for (uint8_t b = 0; b < m.build_id_length; ++b) {
                out.ch(kDigits[m.build_id[b] >> 4]);
                out.ch(kDigits[m.build_id[b] & 15]);
            }
            out.ch('"');
        });
    }
    list.close(false);
}

void write_frames(JsonEmitter &out, const Work &w, const Tracker &t) {
    JsonRecordList list(out, member::top::frames);
    for (uint32_t i = 0; i < w.frame_count; ++i) {
        const CrashFrame &f = w.frames[i];
        const CrashModule *m = f.module >= 0 ? &w.modules.modules[f.module] : nullptr;
        list.add([&](JsonMembers &r) {
            r.hex(member::frames::address, f.address);
            r.i64(member::frames::module, m ? m->output_index : -1);
            r.hex(member::frames::module_offset, m ? f.address - m->base : 0);
            python::FrameEntryView py{};
            if (python::is_python_frame(f.address))
                py = python::entry_view(t.python_frames, python::python_frame_id(f.address));
            if (py.valid) { // Python frames are named already: the table is read without a lock
                r.str(member::frames::function, {py.function, py.function_len});
                r.str(member::frames::file, {py.file, py.file_len});
                r.u64(member::frames::line, py.line);
                r.boolean(member::frames::python, true);
            } else {
                r.str(member::frames::function, "");
                r.str(member::frames::file, "");
                r.u64(member::frames::line, 0);
            }
        });
    }
    list.close(false);
}

void write_stacks(JsonEmitter &out, const Work &w, const Tracker &t) {
    JsonRecordList list(out, member::top::stacks);
    for (uint32_t s = 0; s < w.stack_count; ++s) {
        StackView view = t.depot.get(w.stack_ids[s]);
        list.add([&](JsonMembers &r) {
            r.u64(member::stacks::id, w.stack_ids[s]);
            r.key(member::stacks::frames).ch('[');
            int call_site = -1;
            for (uint32_t d = 0; d < view.depth; ++d) {
                uint32_t index = find_frame(w, view.frames[d]) - 1; // every frame was added
                if (d) out.raw(", ");
                out.u64(index);
                if (call_site < 0 && !is_cuda_or_vramtrace(w.modules, w.frames[index].module)) call_site = int(d);
            }
            out.ch(']');
            r.i64(member::stacks::call_site, call_site);
        });
    }
    list.close(false);
}

void write_allocations(JsonEmitter &out, const Work &w) {
    JsonRecordList list(out, member::top::allocations);
    for (uint32_t i = 0; i < w.record_count; ++i) {
        const AllocationRecord &a = w.records[i];
        uint32_t slot = a.stack_id <= w.max_stack_id ? w.stack_slot[a.stack_id] : kDroppedStack;
        list.add([&](JsonMembers &r) {
            // As the snapshot writer: a reservation's key is its address with the tag bit set.
            r.hex(member::allocations::address,
                  a.kind == MemoryKind::VaReservation ? reservation_address(a.address) : a.address);
            r.u64(member::allocations::size, a.size);
            // As the snapshot writer: an array's size is computed from its descriptor.
            if (a.kind == MemoryKind::Array) r.boolean(member::allocations::size_is_estimate, true);
            r.str(member::allocations::kind, memory_kind_name(a.kind));
            r.i64(member::allocations::device, a.device);
            r.str(member::allocations::api, api_name(a.api));
            r.hex(member::allocations::stream, a.stream);
            r.u64(member::allocations::thread_id, a.thread_id);
            r.u64(member::allocations::time_ns, a.time_ns);
            r.u64(member::allocations::stack, slot != 0 && slot != kDroppedStack ? a.stack_id : 0);
        });
    }
    list.close(true);
}

void write_document(JsonEmitter &out, Work &w, const Tracker &t, const CrashProcess &p, const char *signal_name) {
    out.raw("{\n  ");
    out.key(member::top::format), out.str(snapshot::kFormatName), out.raw(",\n  ");
    out.key(member::top::schema_version), out.i64(snapshot::kSchemaVersion), out.raw(",\n");
    write_process(out, w, t, p, signal_name);

    JsonRecordList devices(out, member::top::devices);
    t.counters.for_each_seen([&](const DeviceTotalsView &d) {
        devices.add([&](JsonMembers &r) { snapshot::write_device_counters(r, d); });
    });
    devices.close(false);

    out.raw("  ");
    out.key(member::top::dropped), out.ch('{');
    JsonMembers dropped(out, ", ");
    dropped.u64(member::dropped::allocations, t.table.dropped() + w.records_over_cap);
    dropped.u64(member::dropped::stacks, t.depot.dropped() + w.stacks_over_cap);
    out.raw("},\n");

    write_modules(out, w);
    write_frames(out, w, t);
    write_stacks(out, w, t);
    write_allocations(out, w);
    out.raw("}\n");
    out.flush();
}

} // namespace

CrashWriteResult write_crash_snapshot(const Tracker &t, const CrashProcess &p, const char *signal_name, int fd) {
    CrashWriteResult result;
    // Sizes from what is there now (other threads keep running; the bounds hold whatever they do).
    uint64_t live = t.table.live_count() + 1024;
    const uint32_t record_cap = live < kMaxAllocations ? uint32_t(live) : kMaxAllocations;

    Area area;
    auto layout = [&](Area &a, Work *w, uint32_t max_stack_id) {
        AllocationRecord *records = a.take<AllocationRecord>(record_cap);
        uint32_t *stack_slot = a.take<uint32_t>(size_t{max_stack_id} + 1);
        uint32_t *stack_ids = a.take<uint32_t>(kMaxStacks);
        CrashFrame *frames = a.take<CrashFrame>(kMaxFrames);
        uint32_t *frame_index = a.take<uint32_t>(kFrameHashSize);
        CrashModule *modules = a.take<CrashModule>(kMaxModules);
        char *paths = a.take<char>(kPathsBytes);
        char *scratch = a.take<char>(kMapsScratch);
        char *cmdline = a.take<char>(kCommandLineBytes);
        char *exe = a.take<char>(kExePathBytes);
        char *out = a.take<char>(kOutBuffer);
        if (w) {
            w->records = records, w->stack_slot = stack_slot, w->stack_ids = stack_ids, w->frames = frames;
            w->frame_index = frame_index, w->maps_scratch = scratch, w->command_line = cmdline;
            w->exe_path = exe, w->out_buffer = out;
            w->modules.modules = modules, w->modules.capacity = kMaxModules;
            w->modules.paths = paths, w->modules.paths_capacity = kPathsBytes;
        }
    };
    // Stack ids grow while other threads run: leave room for the ones interned during the walk.
    const uint32_t max_stack_id = t.depot.size() + 4096;
    Area sizing;
    layout(sizing, nullptr, max_stack_id);
    area.size = (sizing.used + 4095) & ~size_t{4095};
    void *m = ::mmap(nullptr, area.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        result.error_number = ENOMEM;
        return result;
    }
    area.base = static_cast<unsigned char *>(m);
    Work w;
    layout(area, &w, max_stack_id);
    w.max_stack_id = max_stack_id;

    t.table.for_each([&](const AllocationRecord &r) {
        if (w.record_count < record_cap) w.records[w.record_count++] = r;
        else ++w.records_over_cap;
    });
    // Oldest first, as the exit snapshot. std::sort works in place (no allocation).
    std::sort(w.records, w.records + w.record_count, [](const AllocationRecord &a, const AllocationRecord &b) {
        return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : a.address < b.address;
    });
    read_crash_modules(w.modules, w.maps_scratch, kMapsScratch, p.page_size);
    add_unloaded_modules(w.modules, t.modules.newest()); // dlclose'd since their stacks were captured
    select_stacks(w, t.depot);

    JsonEmitter out(fd, w.out_buffer, kOutBuffer, JsonEmitter::WhenFull::fail);
    write_document(out, w, t, p, signal_name);
    result.written = !out.failed();
    result.error_number = out.error_number();
    result.allocations = w.record_count;
    ::munmap(m, area.size);
    return result;
}

} // namespace vramtrace::crash
