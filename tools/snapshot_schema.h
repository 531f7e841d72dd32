// The snapshot schema as the streaming reader (snapshot_reader.cpp) applies it: the fields of each
// record type (name, member, hex, optional), the top-level members, and the conversions of a JSON
// scalar into a field with their one-line messages. Internal to the reader.
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "snapshot/device_range.h"
#include "snapshot_reader.h"

namespace vramtrace::cli::schema {

using report::Allocation;
using report::DevicePeak;
using report::DeviceTotals;
using report::Event;
using report::EventHistory;
using report::OomEvent;
using report::PeakSite;
using report::Pool;
using report::Teardown;
using report::Frame;
using report::Module;
using report::ProcessInfo;
using report::Stack;

// Text from the input, made printable on one line and bounded in length.
inline std::string printable(std::string_view text, size_t limit = 60) {
    std::string out;
    for (char c : text.substr(0, limit)) {
        auto u = static_cast<unsigned char>(c);
        out += (u >= 0x20 && u < 0x7f) ? c : '?';
    }
    if (text.size() > limit) out += "...";
    return out;
}

// One JSON scalar as delivered by the SAX parser.
struct Scalar {
    enum Kind { Null, Bool, Int, Uint, Float, String } kind = Null;
    int64_t i = 0;
    uint64_t u = 0;
    bool b = false;
    std::string *s = nullptr; // String: the parser's buffer, which we may move from
};

inline const char *kind_name(Scalar::Kind kind) {
    switch (kind) {
    case Scalar::Null: return "null";
    case Scalar::Bool: return "a boolean";
    case Scalar::Int: return "a negative integer";
    case Scalar::Uint: return "an integer";
    case Scalar::Float: return "a fractional number";
    case Scalar::String: return "a string";
    }
    return "a value";
}

// Conversions of a scalar into a field; false with *why on a type or range error.
inline bool convert(const Scalar &v, int64_t &out, std::string *why) {
    if (v.kind == Scalar::Int) return out = v.i, true;
    if (v.kind == Scalar::Uint && v.u <= uint64_t(std::numeric_limits<int64_t>::max()))
        return out = int64_t(v.u), true;
    *why = v.kind == Scalar::Uint ? "integer " + std::to_string(v.u) + " is out of range"
                                  : std::string("expected an integer, got ") + kind_name(v.kind);
    return false;
}
inline bool convert(const Scalar &v, uint64_t &out, std::string *why) {
    if (v.kind == Scalar::Uint) return out = v.u, true;
    *why = v.kind == Scalar::Int ? "expected an unsigned integer, got " + std::to_string(v.i)
                                 : std::string("expected an unsigned integer, got ") + kind_name(v.kind);
    return false;
}
inline bool convert(const Scalar &v, int &out, std::string *why) {
    int64_t wide = 0;
    if (!convert(v, wide, why)) return false;
    if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max()) {
        *why = "integer " + std::to_string(wide) + " is out of range";
        return false;
    }
    return out = int(wide), true;
}
inline bool convert(const Scalar &v, uint32_t &out, std::string *why) {
    uint64_t wide = 0;
    if (!convert(v, wide, why)) return false;
    if (wide > std::numeric_limits<uint32_t>::max()) {
        *why = "integer " + std::to_string(wide) + " is out of range";
        return false;
    }
    return out = uint32_t(wide), true;
}
inline bool convert(const Scalar &v, bool &out, std::string *why) {
    if (v.kind == Scalar::Bool) return out = v.b, true;
    *why = std::string("expected true or false, got ") + kind_name(v.kind);
    return false;
}
inline bool convert(const Scalar &v, std::optional<uint64_t> &out, std::string *why) {
    uint64_t value = 0;
    if (!convert(v, value, why)) return false;
    out = value;
    return true;
}
inline bool convert(const Scalar &v, std::string &out, std::string *why) {
    if (v.kind != Scalar::String) {
        *why = std::string("expected a string, got ") + kind_name(v.kind);
        return false;
    }
    out = std::move(*v.s);
    return true;
}
// Addresses: "0x" followed by 1 to 16 hex digits.
inline bool convert_hex(const Scalar &v, uint64_t &out, std::string *why) {
    if (v.kind != Scalar::String) {
        *why = std::string("expected a hex string such as \"0x1f\", got ") + kind_name(v.kind);
        return false;
    }
    const std::string &s = *v.s;
    bool ok = s.size() > 2 && s.size() <= 18 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    if (ok) {
        auto res = std::from_chars(s.data() + 2, s.data() + s.size(), out, 16);
        ok = res.ec == std::errc() && res.ptr == s.data() + s.size();
    }
    if (!ok) *why = "expected a hex string such as \"0x1f\", got \"" + printable(s) + "\"";
    return ok;
}

// The fields of one record type: name, member, whether a uint64_t is written as a hex string, and
// whether the field may be absent (fields added within schema 1 are: older files lack them).
// A std::vector<Sub> member whose Sub has a Schema is a list of nested records (frames[].inlined,
// peaks[].sites); other vectors are lists of scalars.
template <class R> struct Field {
    using Member = std::variant<int64_t R::*, uint64_t R::*, int R::*, uint32_t R::*, std::string R::*,
                                std::vector<std::string> R::*, std::vector<uint32_t> R::*, bool R::*,
                                std::optional<uint64_t> R::*, std::vector<Frame::Inlined> R::*,
                                std::vector<PeakSite> R::*>;
    std::string_view name;
    Member member;
    bool hex = false;
    bool optional = false;
};
constexpr bool kHex = true, kOptional = true;

struct Dropped {
    uint64_t allocations = 0;
    uint64_t stacks = 0;
    uint64_t peak_sites = 0;
};

template <class R> struct Schema;
template <> struct Schema<ProcessInfo> {
    static constexpr std::string_view where = "process";
    static inline const std::array<Field<ProcessInfo>, 16> fields{{
        {"pid", &ProcessInfo::pid},
        {"ppid", &ProcessInfo::ppid},
        {"command_line", &ProcessInfo::command_line},
        {"executable", &ProcessInfo::executable},
        {"host", &ProcessInfo::host},
        {"start_time_ns", &ProcessInfo::start_time_ns},
        {"dump_time_ns", &ProcessInfo::dump_time_ns},
        {"driver_version", &ProcessInfo::driver_version},
        {"reason", &ProcessInfo::reason},
        {"vramtrace_version", &ProcessInfo::vramtrace_version},
        {"stack_depth", &ProcessInfo::stack_depth},
        {"dump_monotonic_ns", &ProcessInfo::dump_monotonic_ns, false, kOptional},
        {"rank", &ProcessInfo::rank, false, kOptional},
        {"symbolized", &ProcessInfo::symbolized, false, kOptional},
        {"signal", &ProcessInfo::signal, false, kOptional},
        {"python", &ProcessInfo::python, false, kOptional},
    }};
};
template <> struct Schema<Dropped> {
    static constexpr std::string_view where = "dropped";
    static inline const std::array<Field<Dropped>, 3> fields{{
        {"allocations", &Dropped::allocations},
        {"stacks", &Dropped::stacks},
        {"peak_sites", &Dropped::peak_sites, false, kOptional},
    }};
};
template <> struct Schema<DeviceTotals> {
    static constexpr std::string_view where = "devices";
    static inline const std::array<Field<DeviceTotals>, 15> fields{{
        {"device", &DeviceTotals::device},
        {"current_bytes", &DeviceTotals::current_bytes},
        {"peak_bytes", &DeviceTotals::peak_bytes},
        {"allocation_count", &DeviceTotals::allocation_count},
        {"free_count", &DeviceTotals::free_count},
        {"total_allocated_bytes", &DeviceTotals::total_allocated_bytes},
        {"total_freed_bytes", &DeviceTotals::total_freed_bytes},
        {"uuid", &DeviceTotals::uuid, false, kOptional},
        {"pci_bus_id", &DeviceTotals::pci_bus_id, false, kOptional},
        {"total_memory_bytes", &DeviceTotals::total_memory_bytes, false, kOptional},
        {"process_used_bytes", &DeviceTotals::process_used_bytes, false, kOptional},
        {"graph_reserved_bytes", &DeviceTotals::graph_reserved_bytes, false, kOptional},
        {"graph_used_bytes", &DeviceTotals::graph_used_bytes, false, kOptional},
        {"graph_reserved_high_bytes", &DeviceTotals::graph_reserved_high_bytes, false, kOptional},
        {"graph_used_high_bytes", &DeviceTotals::graph_used_high_bytes, false, kOptional},
    }};
};
template <> struct Schema<Module> {
    static constexpr std::string_view where = "modules";
    static inline const std::array<Field<Module>, 3> fields{{
        {"path", &Module::path},
        {"base", &Module::base, true},
        {"build_id", &Module::build_id},
    }};
};
template <> struct Schema<Frame> {
    static constexpr std::string_view where = "frames";
    static inline const std::array<Field<Frame>, 8> fields{{
        {"address", &Frame::address, true},
        {"module", &Frame::module},
        {"module_offset", &Frame::module_offset, true},
        {"function", &Frame::function},
        {"file", &Frame::file},
        {"line", &Frame::line},
        {"inlined", &Frame::inlined, false, kOptional},
        {"python", &Frame::python, false, kOptional},
    }};
};
template <> struct Schema<Frame::Inlined> {
    static constexpr std::string_view where = "inlined";
    static inline const std::array<Field<Frame::Inlined>, 3> fields{{
        {"function", &Frame::Inlined::function},
        {"file", &Frame::Inlined::file},
        {"line", &Frame::Inlined::line},
    }};
};
template <> struct Schema<Stack> {
    static constexpr std::string_view where = "stacks";
    static inline const std::array<Field<Stack>, 3> fields{{
        {"id", &Stack::id},
        {"frames", &Stack::frames},
        {"call_site", &Stack::call_site},
    }};
};
template <> struct Schema<Allocation> {
    static constexpr std::string_view where = "allocations";
    static inline const std::array<Field<Allocation>, 11> fields{{
        {"address", &Allocation::address, true},
        {"size", &Allocation::size},
        {"kind", &Allocation::kind},
        {"device", &Allocation::device},
        {"api", &Allocation::api},
        {"stream", &Allocation::stream, true},
        {"thread_id", &Allocation::thread_id},
        {"time_ns", &Allocation::time_ns},
        {"stack", &Allocation::stack},
        {"size_is_estimate", &Allocation::size_is_estimate, false, kOptional},
        {"context", &Allocation::context, false, kOptional},
    }};
};
template <> struct Schema<PeakSite> {
    static constexpr std::string_view where = "sites";
    static inline const std::array<Field<PeakSite>, 3> fields{{
        {"stack", &PeakSite::stack},
        {"bytes", &PeakSite::bytes},
        {"count", &PeakSite::count},
    }};
};
template <> struct Schema<DevicePeak> {
    static constexpr std::string_view where = "peaks";
    static inline const std::array<Field<DevicePeak>, 4> fields{{
        {"device", &DevicePeak::device},
        {"peak_bytes", &DevicePeak::peak_bytes},
        {"time_ns", &DevicePeak::time_ns},
        {"sites", &DevicePeak::sites},
    }};
};
template <> struct Schema<OomEvent> {
    static constexpr std::string_view where = "ooms";
    static inline const std::array<Field<OomEvent>, 11> fields{{
        {"time_ns", &OomEvent::time_ns},
        {"device", &OomEvent::device},
        {"requested_bytes", &OomEvent::requested_bytes},
        {"api", &OomEvent::api},
        {"stream", &OomEvent::stream, kHex},
        {"stack", &OomEvent::stack},
        {"thread_id", &OomEvent::thread_id},
        {"result", &OomEvent::result},
        {"tracked_bytes", &OomEvent::tracked_bytes},
        {"device_free_bytes", &OomEvent::device_free_bytes, false, kOptional},
        {"device_total_bytes", &OomEvent::device_total_bytes, false, kOptional},
    }};
};
template <> struct Schema<Pool> {
    static constexpr std::string_view where = "pools";
    static inline const std::array<Field<Pool>, 8> fields{{
        {"handle", &Pool::handle, kHex},
        {"device", &Pool::device},
        {"is_default", &Pool::is_default},
        {"reserved_bytes", &Pool::reserved_bytes},
        {"used_bytes", &Pool::used_bytes},
        {"reserved_high_bytes", &Pool::reserved_high_bytes},
        {"used_high_bytes", &Pool::used_high_bytes},
        {"is_graph_memory", &Pool::is_graph_memory, false, kOptional},
    }};
};
template <> struct Schema<EventHistory> {
    static constexpr std::string_view where = "event_history";
    static inline const std::array<Field<EventHistory>, 4> fields{{
        {"capacity", &EventHistory::capacity},
        {"recorded", &EventHistory::recorded},
        {"wrapped", &EventHistory::wrapped},
        {"complete_from_ns", &EventHistory::complete_from_ns},
    }};
};
// Marks carry no device/address/kind/size/api/stack, oom events no address/kind, marks alone a label.
template <> struct Schema<Event> {
    static constexpr std::string_view where = "events";
    static inline const std::array<Field<Event>, 11> fields{{
        {"type", &Event::type},
        {"time_ns", &Event::time_ns},
        {"thread_id", &Event::thread_id},
        {"device", &Event::device, false, kOptional},
        {"address", &Event::address, kHex, kOptional},
        {"kind", &Event::kind, false, kOptional},
        {"size", &Event::size, false, kOptional},
        {"api", &Event::api, false, kOptional},
        {"stack", &Event::stack, false, kOptional},
        {"label", &Event::label, false, kOptional},
        {"freed_by", &Event::freed_by, false, kOptional},
    }};
};
template <> struct Schema<Teardown> {
    static constexpr std::string_view where = "teardowns";
    static inline const std::array<Field<Teardown>, 11> fields{{
        {"time_ns", &Teardown::time_ns},
        {"api", &Teardown::api},
        {"cause", &Teardown::cause},
        {"device", &Teardown::device},
        {"context", &Teardown::context},
        {"ended_count", &Teardown::ended_count},
        {"ended_bytes", &Teardown::ended_bytes},
        {"ended_host_bytes", &Teardown::ended_host_bytes},
        {"sites", &Teardown::sites},
        {"other_bytes", &Teardown::other_bytes},
        {"other_count", &Teardown::other_count},
    }};
};

template <> struct Schema<MergedProcess> {
    static constexpr std::string_view where = "merged_processes";
    static inline const std::array<Field<MergedProcess>, 12> fields{{
        {"input", &MergedProcess::input},
        {"file", &MergedProcess::file},
        {"pid", &MergedProcess::pid},
        {"host", &MergedProcess::host},
        {"command_line", &MergedProcess::command_line},
        {"reason", &MergedProcess::reason},
        {"rank", &MergedProcess::rank},
        {"live_bytes", &MergedProcess::live_bytes},
        {"live_allocations", &MergedProcess::live_allocations},
        {"dropped_allocations", &MergedProcess::dropped_allocations},
        {"dropped_stacks", &MergedProcess::dropped_stacks},
        {"oom_count", &MergedProcess::oom_count, false, kOptional},
    }};
};
template <> struct Schema<MergedDevice> {
    static constexpr std::string_view where = "merged_devices";
    static inline const std::array<Field<MergedDevice>, 9> fields{{
        {"input", &MergedDevice::input},
        {"device", &MergedDevice::device},
        {"uuid", &MergedDevice::uuid},
        {"current_bytes", &MergedDevice::current_bytes},
        {"peak_bytes", &MergedDevice::peak_bytes},
        {"allocation_count", &MergedDevice::allocation_count},
        {"free_count", &MergedDevice::free_count},
        {"total_allocated_bytes", &MergedDevice::total_allocated_bytes},
        {"total_freed_bytes", &MergedDevice::total_freed_bytes},
    }};
};

template <class M> constexpr bool is_vector_member = false;
template <class R, class T> constexpr bool is_vector_member<std::vector<T> R::*> = true;
// A list of nested records (its element type has a Schema).
template <class M> constexpr bool is_sub_list = false;
template <class R> constexpr bool is_sub_list<std::vector<Frame::Inlined> R::*> = true;
template <class R> constexpr bool is_sub_list<std::vector<PeakSite> R::*> = true;

// Top-level members: the kRequiredTop required ones in the order the library's writer emits them,
// then the optional ones that `vramtrace merge` adds (snapshot_reader.h: MergedProcess), then the
// ones added within schema 1 (optional: older files lack them).
enum class Top { Format, SchemaVersion, Process, Devices, Dropped, Modules, Frames, Stacks, Allocations,
                 MergedProcesses, MergedDevices, OomCount, Peaks, Ooms, Pools, EventHistory, Events, TeardownCount,
                 Teardowns, Unknown };
constexpr std::array<std::string_view, 19> kTopNames = {"format", "schema_version", "process", "devices", "dropped",
                                                        "modules", "frames", "stacks", "allocations",
                                                        "merged_processes", "merged_devices", "oom_count", "peaks",
                                                        "ooms", "pools", "event_history", "events", "teardown_count",
                                                        "teardowns"};
constexpr size_t kRequiredTop = 9;


} // namespace vramtrace::cli::schema
