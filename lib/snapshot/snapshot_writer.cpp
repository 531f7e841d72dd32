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

#include "snapshot/snapshot_fields.h"
#include "snapshot/snapshot_layout.h"

namespace vramtrace::snapshot {

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

// `[A, B, ...]` on one line; write_value(JsonEmitter &, const T &) writes one value.
template <class T, class WriteValue>
void write_inline_values(JsonEmitter &out, const std::vector<T> &items, WriteValue &&write_value) {
    out.ch('[');
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out.raw(", ");
        write_value(out, items[i]);
    }
    out.ch(']');
}

// `[{...}, {...}]` on one line; write_record(JsonMembers &, const T &) writes one record's members.
template <class T, class WriteRecord>
void write_inline_records(JsonEmitter &out, const std::vector<T> &items, WriteRecord &&write_record) {
    write_inline_values(out, items, [&](JsonEmitter &o, const T &item) {
        o.ch('{');
        JsonMembers m(o, ", ");
        write_record(m, item);
        o.ch('}');
    });
}

void write_process(JsonEmitter &out, const ProcessInfo &p) {
    out.raw("  "), out.key(member::top::process), out.raw("{\n    ");
    JsonMembers m(out, ",\n    ");
    m.i64(member::process::pid, p.pid);
    m.i64(member::process::ppid, p.ppid);
    write_inline_values(m.key(member::process::command_line), p.command_line,
                        [](JsonEmitter &o, const std::string &arg) { o.str(arg); });
    m.str(member::process::executable, p.executable);
    m.str(member::process::host, p.host);
    m.u64(member::process::start_time_ns, p.start_time_ns);
    m.u64(member::process::dump_time_ns, p.dump_time_ns);
    m.i64(member::process::driver_version, p.driver_version);
    m.str(member::process::reason, p.reason);
    m.str(member::process::vramtrace_version, p.vramtrace_version);
    m.u64(member::process::stack_depth, p.stack_depth);
    m.u64(member::process::dump_monotonic_ns, p.dump_monotonic_ns);
    m.str(member::process::rank, p.rank);
    m.boolean(member::process::symbolized, p.symbolized);
    if (!p.signal.empty()) m.str(member::process::signal, p.signal);
    if (!p.signal.empty() && p.signal_sender_pid != 0) {
        m.i64(member::process::signal_sender_pid, p.signal_sender_pid);
        m.i64(member::process::signal_sender_uid, p.signal_sender_uid);
    }
    if (!p.python.empty()) m.str(member::process::python, p.python);
    out.raw("\n  },\n");
}

void write_event(JsonMembers &m, const Event &e) {
    m.str(member::events::type, e.type);
    m.u64(member::events::time_ns, e.time_ns);
    m.u64(member::events::thread_id, e.thread_id);
    if (e.type == "mark") {
        m.str(member::events::label, e.label);
        return;
    }
    m.i64(member::events::device, e.device);
    if (e.type != "oom") {
        m.hex(member::events::address, e.address);
        m.str(member::events::kind, e.kind);
    }
    m.u64(member::events::size, e.size);
    m.str(member::events::api, e.api);
    m.u64(member::events::stack, e.stack);
    if (!e.freed_by.empty()) m.str(member::events::freed_by, e.freed_by);
    if (e.range != 0) m.u64(member::events::range, e.range);
}

// `[{"stack": S, "bytes": B, "count": N}, ...]` (peaks[].sites and teardowns[].sites).
void write_sites(JsonEmitter &out, const std::vector<PeakSite> &sites) {
    write_inline_records(out, sites, [](JsonMembers &m, const PeakSite &site) {
        m.u64(member::sites::stack, site.stack);
        m.u64(member::sites::bytes, site.bytes);
        m.u64(member::sites::count, site.count);
    });
}

// A top-level array of one record per item; write_record(JsonMembers &, const T &) writes one.
template <class T, class WriteRecord>
void write_array(JsonEmitter &out, std::string_view name, const std::vector<T> &items, WriteRecord &&write_record,
                 bool last = false) {
    JsonRecordList list(out, name);
    for (size_t i = 0; i < items.size() && !out.failed(); ++i)
        list.add([&](JsonMembers &m) { write_record(m, items[i]); });
    list.close(last);
}

void write_frame(JsonMembers &m, const Frame &f) {
    m.hex(member::frames::address, f.address);
    m.i64(member::frames::module, f.module);
    m.hex(member::frames::module_offset, f.module_offset);
    m.str(member::frames::function, f.function);
    m.str(member::frames::file, f.file);
    m.u64(member::frames::line, f.line);
    if (f.python) m.boolean(member::frames::python, true);
    if (f.inlined.empty()) return;
    write_inline_records(m.key(member::frames::inlined), f.inlined, [](JsonMembers &in, const auto &call) {
        in.str(member::inlined::function, call.function);
        in.str(member::inlined::file, call.file);
        in.u64(member::inlined::line, call.line);
    });
}

void write_document(JsonEmitter &out, const Snapshot &s) {
    out.raw("{\n  ");
    out.key(member::top::format), out.str(kFormatName), out.raw(",\n  ");
    out.key(member::top::schema_version), out.i64(s.schema_version), out.raw(",\n");
    write_process(out, s.process);
    write_array(out, member::top::devices, s.devices, [&](JsonMembers &m, const DeviceTotals &d) {
        write_device_counters(m, d);
        if (!d.uuid.empty()) m.str(member::devices::uuid, d.uuid);
        if (!d.pci_bus_id.empty()) m.str(member::devices::pci_bus_id, d.pci_bus_id);
        m.u64_if(member::devices::total_memory_bytes, d.total_memory_bytes);
        m.u64_if(member::devices::process_used_bytes, d.process_used_bytes);
        m.u64_if(member::devices::graph_reserved_bytes, d.graph_reserved_bytes);
        m.u64_if(member::devices::graph_used_bytes, d.graph_used_bytes);
        m.u64_if(member::devices::graph_reserved_high_bytes, d.graph_reserved_high_bytes);
        m.u64_if(member::devices::graph_used_high_bytes, d.graph_used_high_bytes);
    });
    out.raw("  ");
    out.key(member::top::dropped), out.ch('{');
    JsonMembers dropped(out, ", ");
    dropped.u64(member::dropped::allocations, s.dropped_allocations);
    dropped.u64(member::dropped::stacks, s.dropped_stacks);
    dropped.u64(member::dropped::peak_sites, s.dropped_peak_sites);
    if (s.dropped_range_stacks != 0) dropped.u64(member::dropped::nvtx_range_stacks, s.dropped_range_stacks);
    if (s.dropped_range_names != 0) dropped.u64(member::dropped::nvtx_range_names, s.dropped_range_names);
    if (s.dropped_nvtx_regions != 0) dropped.u64(member::dropped::nvtx_regions, s.dropped_nvtx_regions);
    if (s.nvtx_regions_outside != 0) dropped.u64(member::dropped::nvtx_regions_outside, s.nvtx_regions_outside);
    if (s.nvtx_unregisters_unknown != 0)
        dropped.u64(member::dropped::nvtx_unregisters_unknown, s.nvtx_unregisters_unknown);
    if (s.dropped_nvtx_intervals != 0) dropped.u64(member::dropped::nvtx_intervals, s.dropped_nvtx_intervals);
    out.raw("},\n  ");
    out.key(member::top::oom_count), out.u64(s.oom_count), out.raw(",\n");
    write_array(out, member::top::peaks, s.peaks, [&](JsonMembers &m, const DevicePeak &p) {
        m.i64(member::peaks::device, p.device);
        m.u64(member::peaks::peak_bytes, p.peak_bytes);
        m.u64(member::peaks::time_ns, p.time_ns);
        write_sites(m.key(member::peaks::sites), p.sites);
        if (p.ranges.empty()) return;
        write_inline_records(m.key(member::peaks::ranges), p.ranges, [](JsonMembers &r, const RangePeak &rp) {
            r.u64(member::ranges::range, rp.range);
            r.u64(member::ranges::bytes, rp.bytes);
            r.u64(member::ranges::count, rp.count);
        });
    });
    write_array(out, member::top::ooms, s.ooms, [&](JsonMembers &m, const OomEvent &o) { write_oom_members(m, o); });
    write_array(out, member::top::pools, s.pools, [&](JsonMembers &m, const Pool &p) { write_pool_members(m, p); });
    if (!s.teardowns.empty() || s.teardown_count != 0) {
        out.raw("  ");
        out.key(member::top::teardown_count), out.u64(s.teardown_count), out.raw(",\n");
        write_array(out, member::top::teardowns, s.teardowns, [&](JsonMembers &m, const Teardown &td) {
            m.u64(member::teardowns::time_ns, td.time_ns);
            m.str(member::teardowns::api, td.api);
            m.str(member::teardowns::cause, td.cause);
            m.i64(member::teardowns::device, td.device);
            m.u64(member::teardowns::context, td.context);
            m.u64(member::teardowns::ended_count, td.ended_count);
            m.u64(member::teardowns::ended_bytes, td.ended_bytes);
            m.u64(member::teardowns::ended_host_bytes, td.ended_host_bytes);
            write_sites(m.key(member::teardowns::sites), td.sites);
            m.u64(member::teardowns::other_bytes, td.other_bytes);
            m.u64(member::teardowns::other_count, td.other_count);
        });
    }
    out.raw("  ");
    out.key(member::top::event_history), out.ch('{');
    JsonMembers history(out, ", ");
    history.u64(member::event_history::capacity, s.events.capacity);
    history.u64(member::event_history::recorded, s.events.recorded);
    history.boolean(member::event_history::wrapped, s.events.wrapped);
    history.u64(member::event_history::complete_from_ns, s.events.complete_from_ns);
    out.raw("},\n");
    if (!s.range_stacks.empty())
        write_array(out, member::top::nvtx_ranges, s.range_stacks, [&](JsonMembers &m, const RangeStack &r) {
            m.u64(member::nvtx_ranges::id, r.id);
            for (auto [field, list] : {std::pair{member::nvtx_ranges::domains, &r.domains},
                                       std::pair{member::nvtx_ranges::names, &r.names},
                                       std::pair{member::nvtx_ranges::categories, &r.categories}}) {
                if (list->empty() && field.optional) continue;
                write_inline_values(m.key(field), *list, [](JsonEmitter &o, const std::string &v) { o.str(v); });
            }
        });
    if (!s.nvtx_regions.empty())
        write_array(out, member::top::nvtx_regions, s.nvtx_regions, [&](JsonMembers &m, const NvtxRegion &r) {
            m.hex(member::nvtx_regions::address, r.address);
            m.u64(member::nvtx_regions::size, r.size);
            m.hex(member::nvtx_regions::segment, r.segment);
            m.u64(member::nvtx_regions::segment_size, r.segment_size);
            m.hex(member::nvtx_regions::heap, r.heap);
            m.i64(member::nvtx_regions::device, r.device);
            m.u64(member::nvtx_regions::range, r.range);
            m.u64(member::nvtx_regions::thread_id, r.thread_id);
            if (r.input) m.u64(member::nvtx_regions::input, *r.input);
        });
    if (!s.nvtx_intervals.empty())
        write_array(out, member::top::nvtx_intervals, s.nvtx_intervals, [&](JsonMembers &m, const NvtxInterval &v) {
            m.str(member::nvtx_intervals::domain, v.domain);
            m.str(member::nvtx_intervals::name, v.name);
            if (!v.category.empty()) m.str(member::nvtx_intervals::category, v.category);
            m.u64(member::nvtx_intervals::start_ns, v.start_ns);
            if (v.end_ns != 0) m.u64(member::nvtx_intervals::end_ns, v.end_ns);
            m.u64(member::nvtx_intervals::start_thread, v.start_thread);
            if (v.end_ns != 0) m.u64(member::nvtx_intervals::end_thread, v.end_thread);
            if (v.input) m.u64(member::nvtx_intervals::input, *v.input);
        });
    write_array(out, member::top::modules, s.modules, [&](JsonMembers &m, const Module &mod) {
        m.str(member::modules::path, mod.path);
        m.hex(member::modules::base, mod.base);
        m.str(member::modules::build_id, mod.build_id);
    });
    write_array(out, member::top::frames, s.frames, [&](JsonMembers &m, const Frame &f) { write_frame(m, f); });
    write_array(out, member::top::stacks, s.stacks, [&](JsonMembers &m, const Stack &st) {
        m.u64(member::stacks::id, st.id);
        write_inline_values(m.key(member::stacks::frames), st.frames, [](JsonEmitter &o, auto frame) { o.u64(frame); });
        m.i64(member::stacks::call_site, st.call_site);
        if (st.via >= 0) m.i64(member::stacks::via, st.via);
        if (!st.category.empty()) m.str(member::stacks::category, st.category);
    });
    write_array(out, member::top::allocations, s.allocations, [&](JsonMembers &m, const Allocation &a) {
        m.hex(member::allocations::address, a.address);
        m.u64(member::allocations::size, a.size);
        m.str(member::allocations::kind, a.kind);
        m.i64(member::allocations::device, a.device);
        m.str(member::allocations::api, a.api);
        m.hex(member::allocations::stream, a.stream);
        m.u64(member::allocations::thread_id, a.thread_id);
        m.u64(member::allocations::time_ns, a.time_ns);
        m.u64(member::allocations::stack, a.stack);
        if (a.size_is_estimate) m.boolean(member::allocations::size_is_estimate, true);
        if (a.context != 0) m.u64(member::allocations::context, a.context);
        if (a.range != 0) m.u64(member::allocations::range, a.range);
    });
    write_array(out, member::top::events, s.events.events, write_event, true);
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

} // namespace vramtrace::snapshot
