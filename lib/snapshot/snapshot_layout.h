// The layout of a snapshot document (docs/snapshot-format.md) as both snapshot writers put it out
// through a JsonEmitter: the members of an object with their separators, the top-level arrays of
// one record a line, and the members every devices[] record starts with. Nothing here allocates
// (the crash writer uses it inside a signal handler).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "snapshot/json_emitter.h"
#include "snapshot/snapshot_fields.h"

namespace vramtrace::snapshot {

// Writes the members of one object, `separator` before each but the first; the braces are the
// caller's.
class JsonMembers {
public:
    JsonMembers(JsonEmitter &out, std::string_view separator) : out_(out), separator_(separator) {}

    // `"name": ` after the separator, for a value the caller writes.
    JsonEmitter &key(std::string_view name) {
        if (any_) out_.raw(separator_);
        any_ = true;
        out_.key(name);
        return out_;
    }
    void u64(std::string_view name, uint64_t v) { key(name).u64(v); }
    void i64(std::string_view name, int64_t v) { key(name).i64(v); }
    void hex(std::string_view name, uint64_t v) { key(name).hex(v); }
    void str(std::string_view name, std::string_view v) { key(name).str(v); }
    void boolean(std::string_view name, bool v) { key(name).boolean(v); }
    // An optional number: nothing when absent.
    void u64_if(std::string_view name, const std::optional<uint64_t> &v) {
        if (v) u64(name, *v);
    }

private:
    JsonEmitter &out_;
    std::string_view separator_;
    bool any_ = false;
};

// A top-level array of records, one a line:
//   "name": [
//     {"a": 1, "b": 2},
//     {"a": 3, "b": 4}
//   ],
// or `"name": []` when it has none.
class JsonRecordList {
public:
    JsonRecordList(JsonEmitter &out, std::string_view name) : out_(out) {
        out_.raw("  ");
        out_.key(name);
        out_.ch('[');
    }

    // One record: write_members(JsonMembers &) writes what goes between its braces.
    template <class WriteMembers> void add(WriteMembers &&write_members) {
        out_.raw(count_++ == 0 ? "\n    {" : ",\n    {");
        JsonMembers members(out_, ", ");
        write_members(members);
        out_.ch('}');
    }

    // `last`: the document's last member, which no comma follows.
    void close(bool last) {
        out_.raw(count_ == 0 ? "]" : "\n  ]");
        out_.raw(last ? "\n" : ",\n");
    }

private:
    JsonEmitter &out_;
    size_t count_ = 0;
};

// The members every devices[] record starts with, from any record that has them by these names
// (DeviceTotals; the tracker's DeviceTotalsView in the crash writer).
template <class Device> void write_device_counters(JsonMembers &m, const Device &d) {
    m.i64(member::devices::device, d.device);
    m.u64(member::devices::current_bytes, d.current_bytes);
    m.u64(member::devices::peak_bytes, d.peak_bytes);
    m.u64(member::devices::allocation_count, d.allocation_count);
    m.u64(member::devices::free_count, d.free_count);
    m.u64(member::devices::total_allocated_bytes, d.total_allocated_bytes);
    m.u64(member::devices::total_freed_bytes, d.total_freed_bytes);
}

// The members of one ooms[] record (snapshot::OomEvent): the snapshot writer's and the live
// reading's.
template <class Oom> void write_oom_members(JsonMembers &m, const Oom &o) {
    m.u64(member::ooms::time_ns, o.time_ns);
    m.i64(member::ooms::device, o.device);
    m.u64(member::ooms::requested_bytes, o.requested_bytes);
    m.str(member::ooms::api, o.api);
    m.hex(member::ooms::stream, o.stream);
    m.u64(member::ooms::stack, o.stack);
    m.u64(member::ooms::thread_id, o.thread_id);
    m.i64(member::ooms::result, o.result);
    m.u64(member::ooms::tracked_bytes, o.tracked_bytes);
    m.u64_if(member::ooms::device_free_bytes, o.device_free_bytes);
    m.u64_if(member::ooms::device_total_bytes, o.device_total_bytes);
}

// The members of one pools[] record (snapshot::Pool): the snapshot writer's and the live reading's.
template <class Pool> void write_pool_members(JsonMembers &m, const Pool &p) {
    m.hex(member::pools::handle, p.handle);
    m.i64(member::pools::device, p.device);
    m.boolean(member::pools::is_default, p.is_default);
    m.u64(member::pools::reserved_bytes, p.reserved_bytes);
    m.u64(member::pools::used_bytes, p.used_bytes);
    m.u64(member::pools::reserved_high_bytes, p.reserved_high_bytes);
    m.u64(member::pools::used_high_bytes, p.used_high_bytes);
}

} // namespace vramtrace::snapshot
