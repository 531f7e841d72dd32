// Streams a Snapshot as JSON to a file descriptor through one fixed buffer. Layout, field order and
// units: docs/snapshot-format.md (a unit test compares this output with the example there); the
// member names: snapshot_fields.h.
#include "snapshot/snapshot_writer.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <memory>
#include <new>
#include <optional>
#include <string_view>

#include <pthread.h>

#include "snapshot/json_emitter.h"
#include "snapshot/snapshot_fields.h"

namespace vramtrace::report {

namespace {

// strerror_r comes in a GNU (char *) and a POSIX (int) flavour; take whichever this libc has.
[[maybe_unused]] const char *pick_strerror(int rc, const char *buf) { return rc == 0 ? buf : "unknown error"; }
[[maybe_unused]] const char *pick_strerror(const char *text, const char *) { return text; }

void set_error(std::string *error, const char *what, int err) {
    if (!error) return;
    char buf[128] = {};
    const char *text = err != 0 ? pick_strerror(strerror_r(err, buf, sizeof buf), buf) : "";
#if defined(__cpp_exceptions)
    try {
#endif
        error->assign(what);
        if (err != 0) {
            error->append(": ");
            error->append(text);
        }
#if defined(__cpp_exceptions)
    } catch (...) {
        // Out of memory while reporting an error: leave *error as it is; the caller still gets false.
    }
#endif
}

// Blocks SIGPIPE in the calling thread for the duration of the write, so that writing to a pipe
// whose reader went away fails with EPIPE instead of killing the traced program; a SIGPIPE raised by
// our own write is consumed before the mask is restored.
class SigpipeGuard {
public:
    SigpipeGuard() {
        sigemptyset(&pipe_set_);
        sigaddset(&pipe_set_, SIGPIPE);
        sigset_t pending;
        sigemptyset(&pending);
        was_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
        active_ = pthread_sigmask(SIG_BLOCK, &pipe_set_, &old_) == 0;
    }
    ~SigpipeGuard() {
        if (!active_) return;
        if (got_epipe_ && !was_pending_) {
            timespec zero{0, 0};
            int saved = errno;
            while (sigtimedwait(&pipe_set_, nullptr, &zero) < 0 && errno == EINTR) {
            }
            errno = saved;
        }
        pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    void saw_epipe() { got_epipe_ = true; }

private:
    sigset_t pipe_set_, old_;
    bool active_ = false, was_pending_ = false, got_epipe_ = false;
};

void write_process(JsonEmitter &out, const ProcessInfo &p) {
    out.raw("  "), out.key(member::top::process), out.raw("{\n    ");
    out.key(member::process::pid), out.i64(p.pid), out.raw(",\n    ");
    out.key(member::process::ppid), out.i64(p.ppid), out.raw(",\n    ");
    out.key(member::process::command_line), out.ch('[');
    for (size_t i = 0; i < p.command_line.size(); ++i) {
        if (i) out.raw(", ");
        out.str(p.command_line[i]);
    }
    out.raw("],\n    ");
    out.key(member::process::executable), out.str(p.executable), out.raw(",\n    ");
    out.key(member::process::host), out.str(p.host), out.raw(",\n    ");
    out.key(member::process::start_time_ns), out.u64(p.start_time_ns), out.raw(",\n    ");
    out.key(member::process::dump_time_ns), out.u64(p.dump_time_ns), out.raw(",\n    ");
    out.key(member::process::driver_version), out.i64(p.driver_version), out.raw(",\n    ");
    out.key(member::process::reason), out.str(p.reason), out.raw(",\n    ");
    out.key(member::process::vramtrace_version), out.str(p.vramtrace_version), out.raw(",\n    ");
    out.key(member::process::stack_depth), out.u64(p.stack_depth), out.raw(",\n    ");
    out.key(member::process::dump_monotonic_ns), out.u64(p.dump_monotonic_ns), out.raw(",\n    ");
    out.key(member::process::rank), out.str(p.rank), out.raw(",\n    ");
    out.key(member::process::symbolized), out.boolean(p.symbolized);
    if (!p.signal.empty()) out.raw(",\n    "), out.key(member::process::signal), out.str(p.signal);
    if (!p.python.empty()) out.raw(",\n    "), out.key(member::process::python), out.str(p.python);
    out.raw("\n  },\n");
}

// `, "name": value` for an optional number, nothing when absent.
void optional_u64(JsonEmitter &out, std::string_view name, const std::optional<uint64_t> &v) {
    if (!v) return;
    out.raw(", ");
    out.key(name), out.u64(*v);
}

void write_event(JsonEmitter &out, const Event &e) {
    out.key(member::events::type), out.str(e.type), out.raw(", ");
    out.key(member::events::time_ns), out.u64(e.time_ns), out.raw(", ");
    out.key(member::events::thread_id), out.u64(e.thread_id);
    if (e.type == "mark") {
        out.raw(", ");
        out.key(member::events::label), out.str(e.label);
        return;
    }
    out.raw(", ");
    out.key(member::events::device), out.i64(e.device), out.raw(", ");
    if (e.type != "oom") {
        out.key(member::events::address), out.hex(e.address), out.raw(", ");
        out.key(member::events::kind), out.str(e.kind), out.raw(", ");
    }
    out.key(member::events::size), out.u64(e.size), out.raw(", ");
    out.key(member::events::api), out.str(e.api), out.raw(", ");
    out.key(member::events::stack), out.u64(e.stack);
    if (!e.freed_by.empty()) out.raw(", "), out.key(member::events::freed_by), out.str(e.freed_by);
}

// `"sites": [{"stack": S, "bytes": B, "count": N}, ...]` (peaks and teardowns).
void write_sites(JsonEmitter &out, const member::Field &name, const std::vector<PeakSite> &sites) {
    out.key(name), out.ch('[');
    for (size_t i = 0; i < sites.size(); ++i) {
        if (i) out.raw(", ");
        out.ch('{');
        out.key(member::sites::stack), out.u64(sites[i].stack), out.raw(", ");
        out.key(member::sites::bytes), out.u64(sites[i].bytes), out.raw(", ");
        out.key(member::sites::count), out.u64(sites[i].count), out.ch('}');
    }
    out.ch(']');
}

// `  "name": [` + one record per line + `  ]`, or `  "name": []` when empty.
template <class T, class Fn>
void write_array(JsonEmitter &out, std::string_view name, const std::vector<T> &items, Fn &&record,
                 bool last) {
    out.raw("  ");
    out.key(name);
    if (items.empty()) {
        out.raw("[]");
    } else {
        out.raw("[\n");
        for (size_t i = 0; i < items.size() && !out.failed(); ++i) {
            out.raw("    {");
            record(items[i]);
            out.raw(i + 1 < items.size() ? "},\n" : "}\n");
        }
        out.raw("  ]");
    }
    out.raw(last ? "\n" : ",\n");
}

void write_document(JsonEmitter &out, const Snapshot &s) {
    out.raw("{\n  ");
    out.key(member::top::format), out.str(kFormatName), out.raw(",\n  ");
    out.key(member::top::schema_version), out.i64(s.schema_version), out.raw(",\n");
    write_process(out, s.process);
    write_array(out, member::top::devices, s.devices, [&](const DeviceTotals &d) {
        out.key(member::devices::device), out.i64(d.device), out.raw(", ");
        out.key(member::devices::current_bytes), out.u64(d.current_bytes), out.raw(", ");
        out.key(member::devices::peak_bytes), out.u64(d.peak_bytes), out.raw(", ");
        out.key(member::devices::allocation_count), out.u64(d.allocation_count), out.raw(", ");
        out.key(member::devices::free_count), out.u64(d.free_count), out.raw(", ");
        out.key(member::devices::total_allocated_bytes), out.u64(d.total_allocated_bytes), out.raw(", ");
        out.key(member::devices::total_freed_bytes), out.u64(d.total_freed_bytes);
        if (!d.uuid.empty()) out.raw(", "), out.key(member::devices::uuid), out.str(d.uuid);
        if (!d.pci_bus_id.empty()) out.raw(", "), out.key(member::devices::pci_bus_id), out.str(d.pci_bus_id);
        optional_u64(out, member::devices::total_memory_bytes, d.total_memory_bytes);
        optional_u64(out, member::devices::process_used_bytes, d.process_used_bytes);
        optional_u64(out, member::devices::graph_reserved_bytes, d.graph_reserved_bytes);
        optional_u64(out, member::devices::graph_used_bytes, d.graph_used_bytes);
        optional_u64(out, member::devices::graph_reserved_high_bytes, d.graph_reserved_high_bytes);
        optional_u64(out, member::devices::graph_used_high_bytes, d.graph_used_high_bytes);
    }, false);
    out.raw("  ");
    out.key(member::top::dropped), out.ch('{');
    out.key(member::dropped::allocations), out.u64(s.dropped_allocations), out.raw(", ");
    out.key(member::dropped::stacks), out.u64(s.dropped_stacks), out.raw(", ");
    out.key(member::dropped::peak_sites), out.u64(s.dropped_peak_sites), out.raw("},\n  ");
    out.key(member::top::oom_count), out.u64(s.oom_count), out.raw(",\n");
    write_array(out, member::top::peaks, s.peaks, [&](const DevicePeak &p) {
        out.key(member::peaks::device), out.i64(p.device), out.raw(", ");
        out.key(member::peaks::peak_bytes), out.u64(p.peak_bytes), out.raw(", ");
        out.key(member::peaks::time_ns), out.u64(p.time_ns), out.raw(", ");
        write_sites(out, member::peaks::sites, p.sites);
    }, false);
    write_array(out, member::top::ooms, s.ooms, [&](const OomEvent &o) {
        out.key(member::ooms::time_ns), out.u64(o.time_ns), out.raw(", ");
        out.key(member::ooms::device), out.i64(o.device), out.raw(", ");
        out.key(member::ooms::requested_bytes), out.u64(o.requested_bytes), out.raw(", ");
        out.key(member::ooms::api), out.str(o.api), out.raw(", ");
        out.key(member::ooms::stream), out.hex(o.stream), out.raw(", ");
        out.key(member::ooms::stack), out.u64(o.stack), out.raw(", ");
        out.key(member::ooms::thread_id), out.u64(o.thread_id), out.raw(", ");
        out.key(member::ooms::result), out.i64(o.result), out.raw(", ");
        out.key(member::ooms::tracked_bytes), out.u64(o.tracked_bytes);
        optional_u64(out, member::ooms::device_free_bytes, o.device_free_bytes);
        optional_u64(out, member::ooms::device_total_bytes, o.device_total_bytes);
    }, false);
    write_array(out, member::top::pools, s.pools, [&](const Pool &p) {
        out.key(member::pools::handle), out.hex(p.handle), out.raw(", ");
        out.key(member::pools::device), out.i64(p.device), out.raw(", ");
        out.key(member::pools::is_default), out.boolean(p.is_default), out.raw(", ");
        out.key(member::pools::reserved_bytes), out.u64(p.reserved_bytes), out.raw(", ");
        out.key(member::pools::used_bytes), out.u64(p.used_bytes), out.raw(", ");
        out.key(member::pools::reserved_high_bytes), out.u64(p.reserved_high_bytes), out.raw(", ");
        out.key(member::pools::used_high_bytes), out.u64(p.used_high_bytes);
    }, false);
    if (!s.teardowns.empty() || s.teardown_count != 0) {
        out.raw("  ");
        out.key(member::top::teardown_count), out.u64(s.teardown_count), out.raw(",\n");
        write_array(out, member::top::teardowns, s.teardowns, [&](const Teardown &td) {
            out.key(member::teardowns::time_ns), out.u64(td.time_ns), out.raw(", ");
            out.key(member::teardowns::api), out.str(td.api), out.raw(", ");
            out.key(member::teardowns::cause), out.str(td.cause), out.raw(", ");
            out.key(member::teardowns::device), out.i64(td.device), out.raw(", ");
            out.key(member::teardowns::context), out.u64(td.context), out.raw(", ");
            out.key(member::teardowns::ended_count), out.u64(td.ended_count), out.raw(", ");
            out.key(member::teardowns::ended_bytes), out.u64(td.ended_bytes), out.raw(", ");
            out.key(member::teardowns::ended_host_bytes), out.u64(td.ended_host_bytes), out.raw(", ");
            write_sites(out, member::teardowns::sites, td.sites);
            out.raw(", ");
            out.key(member::teardowns::other_bytes), out.u64(td.other_bytes), out.raw(", ");
            out.key(member::teardowns::other_count), out.u64(td.other_count);
        }, false);
    }
    out.raw("  ");
    out.key(member::top::event_history), out.ch('{');
    out.key(member::event_history::capacity), out.u64(s.events.capacity), out.raw(", ");
    out.key(member::event_history::recorded), out.u64(s.events.recorded), out.raw(", ");
    out.key(member::event_history::wrapped), out.boolean(s.events.wrapped), out.raw(", ");
    out.key(member::event_history::complete_from_ns), out.u64(s.events.complete_from_ns), out.raw("},\n");
    write_array(out, member::top::modules, s.modules, [&](const Module &m) {
        out.key(member::modules::path), out.str(m.path), out.raw(", ");
        out.key(member::modules::base), out.hex(m.base), out.raw(", ");
        out.key(member::modules::build_id), out.str(m.build_id);
    }, false);
    write_array(out, member::top::frames, s.frames, [&](const Frame &f) {
        out.key(member::frames::address), out.hex(f.address), out.raw(", ");
        out.key(member::frames::module), out.i64(f.module), out.raw(", ");
        out.key(member::frames::module_offset), out.hex(f.module_offset), out.raw(", ");
        out.key(member::frames::function), out.str(f.function), out.raw(", ");
        out.key(member::frames::file), out.str(f.file), out.raw(", ");
        out.key(member::frames::line), out.u64(f.line);
        if (f.python) out.raw(", "), out.key(member::frames::python), out.boolean(true);
        if (f.inlined.empty()) return;
        out.raw(", ");
        out.key(member::frames::inlined), out.ch('[');
        for (size_t i = 0; i < f.inlined.size(); ++i) {
            if (i) out.raw(", ");
            out.ch('{');
            out.key(member::inlined::function), out.str(f.inlined[i].function), out.raw(", ");
            out.key(member::inlined::file), out.str(f.inlined[i].file), out.raw(", ");
            out.key(member::inlined::line), out.u64(f.inlined[i].line), out.ch('}');
        }
        out.ch(']');
    }, false);
    write_array(out, member::top::stacks, s.stacks, [&](const Stack &st) {
        out.key(member::stacks::id), out.u64(st.id), out.raw(", ");
        out.key(member::stacks::frames), out.ch('[');
        for (size_t i = 0; i < st.frames.size(); ++i) {
            if (i) out.raw(", ");
            out.u64(st.frames[i]);
        }
        out.raw("], ");
        out.key(member::stacks::call_site), out.i64(st.call_site);
        if (st.via >= 0) out.raw(", "), out.key(member::stacks::via), out.i64(st.via);
        if (!st.category.empty()) out.raw(", "), out.key(member::stacks::category), out.str(st.category);
    }, false);
    write_array(out, member::top::allocations, s.allocations, [&](const Allocation &a) {
        out.key(member::allocations::address), out.hex(a.address), out.raw(", ");
        out.key(member::allocations::size), out.u64(a.size), out.raw(", ");
        out.key(member::allocations::kind), out.str(a.kind), out.raw(", ");
        out.key(member::allocations::device), out.i64(a.device), out.raw(", ");
        out.key(member::allocations::api), out.str(a.api), out.raw(", ");
        out.key(member::allocations::stream), out.hex(a.stream), out.raw(", ");
        out.key(member::allocations::thread_id), out.u64(a.thread_id), out.raw(", ");
        out.key(member::allocations::time_ns), out.u64(a.time_ns), out.raw(", ");
        out.key(member::allocations::stack), out.u64(a.stack);
        if (a.size_is_estimate) out.raw(", "), out.key(member::allocations::size_is_estimate), out.boolean(true);
        if (a.context != 0) out.raw(", "), out.key(member::allocations::context), out.u64(a.context);
    }, false);
    write_array(out, member::top::events, s.events.events, [&](const Event &e) { write_event(out, e); }, true);
    out.raw("}\n");
    out.flush();
}

} // namespace

bool write_snapshot_json(const Snapshot &snapshot, int fd, std::string *error) {
    if (fd < 0) {
        set_error(error, "write failed: invalid file descriptor", 0);
        return false;
    }
    SigpipeGuard sigpipe;
    std::unique_ptr<char[]> buffer(new (std::nothrow) char[kSnapshotWriteBuffer]);
    if (!buffer) {
        set_error(error, "cannot allocate the write buffer", ENOMEM);
        return false;
    }
    JsonEmitter out(fd, buffer.get(), kSnapshotWriteBuffer, JsonEmitter::WhenFull::wait);
    write_document(out, snapshot);
    if (out.failed()) {
        if (out.error_number() == EPIPE) sigpipe.saw_epipe();
        set_error(error, "write failed", out.error_number());
        return false;
    }
    return true;
}

} // namespace vramtrace::report
