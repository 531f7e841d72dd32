// The snapshot schema as the streaming reader (snapshot_sax_handler.h) applies it: the fields of each
// record type (a member of snapshot/snapshot_fields.h and the model's member it is read into), the
// top-level members, and the conversions of a JSON scalar into a field with their one-line
// messages. Internal to the reader.
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "snapshot/device_range.h"
#include "snapshot/snapshot_fields.h"
#include "snapshot/reader/snapshot_reader.h"

namespace vramtrace::snapshot::schema {


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

// A scalar into a record's field: a uint64_t field that the format writes as a hex string (hex)
// takes one, every other field its own conversion.
template <class T> bool convert_field(const Scalar &v, bool hex, T &out, std::string *why) {
    if constexpr (std::is_same_v<T, uint64_t>) return hex ? convert_hex(v, out, why) : convert(v, out, why);
    else return convert(v, out, why);
}

// The fields of one record type: the member of the format (snapshot/snapshot_fields.h: its name,
// whether a uint64_t is written as a hex string, whether it may be absent) and the model's member it
// is read into. A std::vector<Sub> member whose Sub has a Schema is a list of nested records
// (frames[].inlined, peaks[].sites); other vectors are lists of scalars.
template <class R> struct Field {
    using Member = std::variant<int64_t R::*, uint64_t R::*, int R::*, uint32_t R::*, std::string R::*,
                                std::vector<std::string> R::*, std::vector<uint32_t> R::*, bool R::*,
                                std::optional<uint64_t> R::*, std::vector<Frame::Inlined> R::*,
                                std::vector<PeakSite> R::*, std::vector<RangePeak> R::*>;
    Field(const member::Field &field, Member m)
        : name(field.name), member(m), hex(field.type == member::Json::hex), optional(field.optional) {}
    std::string_view name;
    Member member;
    bool hex = false;
    bool optional = false;
};

struct Dropped {
    uint64_t allocations = 0;
    uint64_t stacks = 0;
    uint64_t peak_sites = 0;
    uint64_t nvtx_range_stacks = 0;
    uint64_t nvtx_range_names = 0;
    uint64_t nvtx_regions = 0;
    uint64_t nvtx_regions_outside = 0;
    uint64_t nvtx_unregisters_unknown = 0;
    uint64_t nvtx_intervals = 0;
};

template <class R> struct Schema;
template <> struct Schema<ProcessInfo> {
    static constexpr std::string_view where = member::top::process.name;
    static inline const std::array<Field<ProcessInfo>, 18> fields{{
        {member::process::pid, &ProcessInfo::pid},
        {member::process::ppid, &ProcessInfo::ppid},
        {member::process::command_line, &ProcessInfo::command_line},
        {member::process::executable, &ProcessInfo::executable},
        {member::process::host, &ProcessInfo::host},
        {member::process::start_time_ns, &ProcessInfo::start_time_ns},
        {member::process::dump_time_ns, &ProcessInfo::dump_time_ns},
        {member::process::driver_version, &ProcessInfo::driver_version},
        {member::process::reason, &ProcessInfo::reason},
        {member::process::vramtrace_version, &ProcessInfo::vramtrace_version},
        {member::process::stack_depth, &ProcessInfo::stack_depth},
        {member::process::dump_monotonic_ns, &ProcessInfo::dump_monotonic_ns},
        {member::process::rank, &ProcessInfo::rank},
        {member::process::symbolized, &ProcessInfo::symbolized},
        {member::process::signal, &ProcessInfo::signal},
        {member::process::signal_sender_pid, &ProcessInfo::signal_sender_pid},
        {member::process::signal_sender_uid, &ProcessInfo::signal_sender_uid},
        {member::process::python, &ProcessInfo::python},
    }};
};
template <> struct Schema<Dropped> {
    static constexpr std::string_view where = member::top::dropped.name;
    static inline const std::array<Field<Dropped>, 9> fields{{
        {member::dropped::allocations, &Dropped::allocations},
        {member::dropped::stacks, &Dropped::stacks},
        {member::dropped::peak_sites, &Dropped::peak_sites},
        {member::dropped::nvtx_range_stacks, &Dropped::nvtx_range_stacks},
        {member::dropped::nvtx_range_names, &Dropped::nvtx_range_names},
        {member::dropped::nvtx_regions, &Dropped::nvtx_regions},
        {member::dropped::nvtx_regions_outside, &Dropped::nvtx_regions_outside},
        {member::dropped::nvtx_unregisters_unknown, &Dropped::nvtx_unregisters_unknown},
        {member::dropped::nvtx_intervals, &Dropped::nvtx_intervals},
    }};
};
template <> struct Schema<DeviceTotals> {
    static constexpr std::string_view where = member::top::devices.name;
    static inline const std::array<Field<DeviceTotals>, 15> fields{{
        {member::devices::device, &DeviceTotals::device},
        {member::devices::current_bytes, &DeviceTotals::current_bytes},
        {member::devices::peak_bytes, &DeviceTotals::peak_bytes},
        {member::devices::allocation_count, &DeviceTotals::allocation_count},
        {member::devices::free_count, &DeviceTotals::free_count},
        {member::devices::total_allocated_bytes, &DeviceTotals::total_allocated_bytes},
        {member::devices::total_freed_bytes, &DeviceTotals::total_freed_bytes},
        {member::devices::uuid, &DeviceTotals::uuid},
        {member::devices::pci_bus_id, &DeviceTotals::pci_bus_id},
        {member::devices::total_memory_bytes, &DeviceTotals::total_memory_bytes},
        {member::devices::process_used_bytes, &DeviceTotals::process_used_bytes},
        {member::devices::graph_reserved_bytes, &DeviceTotals::graph_reserved_bytes},
        {member::devices::graph_used_bytes, &DeviceTotals::graph_used_bytes},
        {member::devices::graph_reserved_high_bytes, &DeviceTotals::graph_reserved_high_bytes},
        {member::devices::graph_used_high_bytes, &DeviceTotals::graph_used_high_bytes},
    }};
};
template <> struct Schema<Module> {
    static constexpr std::string_view where = member::top::modules.name;
    static inline const std::array<Field<Module>, 3> fields{{
        {member::modules::path, &Module::path},
        {member::modules::base, &Module::base},
        {member::modules::build_id, &Module::build_id},
    }};
};
template <> struct Schema<Frame> {
    static constexpr std::string_view where = member::top::frames.name;
    static inline const std::array<Field<Frame>, 8> fields{{
        {member::frames::address, &Frame::address},
        {member::frames::module, &Frame::module},
        {member::frames::module_offset, &Frame::module_offset},
        {member::frames::function, &Frame::function},
        {member::frames::file, &Frame::file},
        {member::frames::line, &Frame::line},
        {member::frames::inlined, &Frame::inlined},
        {member::frames::python, &Frame::python},
    }};
};
template <> struct Schema<Frame::Inlined> {
    static constexpr std::string_view where = member::frames::inlined.name;
    static inline const std::array<Field<Frame::Inlined>, 3> fields{{
        {member::inlined::function, &Frame::Inlined::function},
        {member::inlined::file, &Frame::Inlined::file},
        {member::inlined::line, &Frame::Inlined::line},
    }};
};
template <> struct Schema<Stack> {
    static constexpr std::string_view where = member::top::stacks.name;
    static inline const std::array<Field<Stack>, 5> fields{{
        {member::stacks::id, &Stack::id},
        {member::stacks::frames, &Stack::frames},
        {member::stacks::call_site, &Stack::call_site},
        {member::stacks::via, &Stack::via},
        {member::stacks::category, &Stack::category},
    }};
};
template <> struct Schema<Allocation> {
    static constexpr std::string_view where = member::top::allocations.name;
    static inline const std::array<Field<Allocation>, 12> fields{{
        {member::allocations::address, &Allocation::address},
        {member::allocations::size, &Allocation::size},
        {member::allocations::kind, &Allocation::kind},
        {member::allocations::device, &Allocation::device},
        {member::allocations::api, &Allocation::api},
        {member::allocations::stream, &Allocation::stream},
        {member::allocations::thread_id, &Allocation::thread_id},
        {member::allocations::time_ns, &Allocation::time_ns},
        {member::allocations::stack, &Allocation::stack},
        {member::allocations::size_is_estimate, &Allocation::size_is_estimate},
        {member::allocations::context, &Allocation::context},
        {member::allocations::range, &Allocation::range},
    }};
};
template <> struct Schema<PeakSite> {
    static constexpr std::string_view where = member::peaks::sites.name;
    static inline const std::array<Field<PeakSite>, 3> fields{{
        {member::sites::stack, &PeakSite::stack},
        {member::sites::bytes, &PeakSite::bytes},
        {member::sites::count, &PeakSite::count},
    }};
};
template <> struct Schema<RangePeak> {
    static constexpr std::string_view where = member::peaks::ranges.name;
    static inline const std::array<Field<RangePeak>, 3> fields{{
        {member::ranges::range, &RangePeak::range},
        {member::ranges::bytes, &RangePeak::bytes},
        {member::ranges::count, &RangePeak::count},
    }};
};
template <> struct Schema<DevicePeak> {
    static constexpr std::string_view where = member::top::peaks.name;
    static inline const std::array<Field<DevicePeak>, 5> fields{{
        {member::peaks::device, &DevicePeak::device},
        {member::peaks::peak_bytes, &DevicePeak::peak_bytes},
        {member::peaks::time_ns, &DevicePeak::time_ns},
        {member::peaks::sites, &DevicePeak::sites},
        {member::peaks::ranges, &DevicePeak::ranges},
    }};
};
template <> struct Schema<NvtxRegion> {
    static constexpr std::string_view where = member::top::nvtx_regions.name;
    static inline const std::array<Field<NvtxRegion>, 9> fields{{
        {member::nvtx_regions::address, &NvtxRegion::address},
        {member::nvtx_regions::size, &NvtxRegion::size},
        {member::nvtx_regions::segment, &NvtxRegion::segment},
        {member::nvtx_regions::segment_size, &NvtxRegion::segment_size},
        {member::nvtx_regions::heap, &NvtxRegion::heap},
        {member::nvtx_regions::device, &NvtxRegion::device},
        {member::nvtx_regions::range, &NvtxRegion::range},
        {member::nvtx_regions::thread_id, &NvtxRegion::thread_id},
        {member::nvtx_regions::input, &NvtxRegion::input},
    }};
};
template <> struct Schema<NvtxInterval> {
    static constexpr std::string_view where = member::top::nvtx_intervals.name;
    static inline const std::array<Field<NvtxInterval>, 8> fields{{
        {member::nvtx_intervals::domain, &NvtxInterval::domain},
        {member::nvtx_intervals::name, &NvtxInterval::name},
        {member::nvtx_intervals::category, &NvtxInterval::category},
        {member::nvtx_intervals::start_ns, &NvtxInterval::start_ns},
        {member::nvtx_intervals::end_ns, &NvtxInterval::end_ns},
        {member::nvtx_intervals::start_thread, &NvtxInterval::start_thread},
        {member::nvtx_intervals::end_thread, &NvtxInterval::end_thread},
        {member::nvtx_intervals::input, &NvtxInterval::input},
    }};
};
template <> struct Schema<RangeStack> {
    static constexpr std::string_view where = member::top::nvtx_ranges.name;
    static inline const std::array<Field<RangeStack>, 4> fields{{
        {member::nvtx_ranges::id, &RangeStack::id},
        {member::nvtx_ranges::domains, &RangeStack::domains},
        {member::nvtx_ranges::names, &RangeStack::names},
        {member::nvtx_ranges::categories, &RangeStack::categories},
    }};
};
template <> struct Schema<OomEvent> {
    static constexpr std::string_view where = member::top::ooms.name;
    static inline const std::array<Field<OomEvent>, 11> fields{{
        {member::ooms::time_ns, &OomEvent::time_ns},
        {member::ooms::device, &OomEvent::device},
        {member::ooms::requested_bytes, &OomEvent::requested_bytes},
        {member::ooms::api, &OomEvent::api},
        {member::ooms::stream, &OomEvent::stream},
        {member::ooms::stack, &OomEvent::stack},
        {member::ooms::thread_id, &OomEvent::thread_id},
        {member::ooms::result, &OomEvent::result},
        {member::ooms::tracked_bytes, &OomEvent::tracked_bytes},
        {member::ooms::device_free_bytes, &OomEvent::device_free_bytes},
        {member::ooms::device_total_bytes, &OomEvent::device_total_bytes},
    }};
};
template <> struct Schema<Pool> {
    static constexpr std::string_view where = member::top::pools.name;
    static inline const std::array<Field<Pool>, 8> fields{{
        {member::pools::handle, &Pool::handle},
        {member::pools::device, &Pool::device},
        {member::pools::is_default, &Pool::is_default},
        {member::pools::reserved_bytes, &Pool::reserved_bytes},
        {member::pools::used_bytes, &Pool::used_bytes},
        {member::pools::reserved_high_bytes, &Pool::reserved_high_bytes},
        {member::pools::used_high_bytes, &Pool::used_high_bytes},
        {member::pools::is_graph_memory, &Pool::is_graph_memory},
    }};
};
template <> struct Schema<EventHistory> {
    static constexpr std::string_view where = member::top::event_history.name;
    static inline const std::array<Field<EventHistory>, 4> fields{{
        {member::event_history::capacity, &EventHistory::capacity},
        {member::event_history::recorded, &EventHistory::recorded},
        {member::event_history::wrapped, &EventHistory::wrapped},
        {member::event_history::complete_from_ns, &EventHistory::complete_from_ns},
    }};
};
// Marks carry no device/address/kind/size/api/stack, oom events no address/kind, marks alone a label.
template <> struct Schema<Event> {
    static constexpr std::string_view where = member::top::events.name;
    static inline const std::array<Field<Event>, 12> fields{{
        {member::events::type, &Event::type},
        {member::events::time_ns, &Event::time_ns},
        {member::events::thread_id, &Event::thread_id},
        {member::events::device, &Event::device},
        {member::events::address, &Event::address},
        {member::events::kind, &Event::kind},
        {member::events::size, &Event::size},
        {member::events::api, &Event::api},
        {member::events::stack, &Event::stack},
        {member::events::label, &Event::label},
        {member::events::freed_by, &Event::freed_by},
        {member::events::range, &Event::range},
    }};
};
template <> struct Schema<Teardown> {
    static constexpr std::string_view where = member::top::teardowns.name;
    static inline const std::array<Field<Teardown>, 11> fields{{
        {member::teardowns::time_ns, &Teardown::time_ns},
        {member::teardowns::api, &Teardown::api},
        {member::teardowns::cause, &Teardown::cause},
        {member::teardowns::device, &Teardown::device},
        {member::teardowns::context, &Teardown::context},
        {member::teardowns::ended_count, &Teardown::ended_count},
        {member::teardowns::ended_bytes, &Teardown::ended_bytes},
        {member::teardowns::ended_host_bytes, &Teardown::ended_host_bytes},
        {member::teardowns::sites, &Teardown::sites},
        {member::teardowns::other_bytes, &Teardown::other_bytes},
        {member::teardowns::other_count, &Teardown::other_count},
    }};
};

template <> struct Schema<MergedProcess> {
    static constexpr std::string_view where = member::top::merged_processes.name;
    static inline const std::array<Field<MergedProcess>, 12> fields{{
        {member::merged_processes::input, &MergedProcess::input},
        {member::merged_processes::file, &MergedProcess::file},
        {member::merged_processes::pid, &MergedProcess::pid},
        {member::merged_processes::host, &MergedProcess::host},
        {member::merged_processes::command_line, &MergedProcess::command_line},
        {member::merged_processes::reason, &MergedProcess::reason},
        {member::merged_processes::rank, &MergedProcess::rank},
        {member::merged_processes::live_bytes, &MergedProcess::live_bytes},
        {member::merged_processes::live_allocations, &MergedProcess::live_allocations},
        {member::merged_processes::dropped_allocations, &MergedProcess::dropped_allocations},
        {member::merged_processes::dropped_stacks, &MergedProcess::dropped_stacks},
        {member::merged_processes::oom_count, &MergedProcess::oom_count},
    }};
};
template <> struct Schema<MergedDevice> {
    static constexpr std::string_view where = member::top::merged_devices.name;
    static inline const std::array<Field<MergedDevice>, 9> fields{{
        {member::merged_devices::input, &MergedDevice::input},
        {member::merged_devices::device, &MergedDevice::device},
        {member::merged_devices::uuid, &MergedDevice::uuid},
        {member::merged_devices::current_bytes, &MergedDevice::current_bytes},
        {member::merged_devices::peak_bytes, &MergedDevice::peak_bytes},
        {member::merged_devices::allocation_count, &MergedDevice::allocation_count},
        {member::merged_devices::free_count, &MergedDevice::free_count},
        {member::merged_devices::total_allocated_bytes, &MergedDevice::total_allocated_bytes},
        {member::merged_devices::total_freed_bytes, &MergedDevice::total_freed_bytes},
    }};
};

template <> struct Schema<ImbalanceRole> {
    using R = ImbalanceRole;
    static constexpr std::string_view where = member::top::imbalance.name;
    static inline const std::array<Field<R>, 20> fields{{
        {member::imbalance::role, &R::role},
        {member::imbalance::role_index, &R::role_index},
        {member::imbalance::ranks, &R::ranks},
        {member::imbalance::current_min_bytes, &R::current_min_bytes},
        {member::imbalance::current_min_input, &R::current_min_input},
        {member::imbalance::current_min_rank, &R::current_min_rank},
        {member::imbalance::current_median_bytes, &R::current_median_bytes},
        {member::imbalance::current_max_bytes, &R::current_max_bytes},
        {member::imbalance::current_max_input, &R::current_max_input},
        {member::imbalance::current_max_rank, &R::current_max_rank},
        {member::imbalance::peak_min_bytes, &R::peak_min_bytes},
        {member::imbalance::peak_min_input, &R::peak_min_input},
        {member::imbalance::peak_min_rank, &R::peak_min_rank},
        {member::imbalance::peak_median_bytes, &R::peak_median_bytes},
        {member::imbalance::peak_max_bytes, &R::peak_max_bytes},
        {member::imbalance::peak_max_input, &R::peak_max_input},
        {member::imbalance::peak_max_rank, &R::peak_max_rank},
        {member::imbalance::peak_mad_bytes, &R::peak_mad_bytes},
        {member::imbalance::scale_bytes, &R::scale_bytes},
        {member::imbalance::outliers, &R::outliers},
    }};
};
template <> struct Schema<ImbalanceOutlier> {
    using R = ImbalanceOutlier;
    static constexpr std::string_view where = member::top::imbalance_outliers.name;
    static inline const std::array<Field<R>, 8> fields{{
        {member::imbalance_outliers::imbalance, &R::imbalance},
        {member::imbalance_outliers::input, &R::input},
        {member::imbalance_outliers::rank, &R::rank},
        {member::imbalance_outliers::host, &R::host},
        {member::imbalance_outliers::device, &R::device},
        {member::imbalance_outliers::peak_bytes, &R::peak_bytes},
        {member::imbalance_outliers::sites_known, &R::sites_known},
        {member::imbalance_outliers::sites, &R::sites},
    }};
};
template <class M> constexpr bool is_vector_member = false;
template <class R, class T> constexpr bool is_vector_member<std::vector<T> R::*> = true;
// A list of nested records (its element type has a Schema).
template <class M> constexpr bool is_sub_list = false;
template <class R> constexpr bool is_sub_list<std::vector<Frame::Inlined> R::*> = true;
template <class R> constexpr bool is_sub_list<std::vector<PeakSite> R::*> = true;
template <class R> constexpr bool is_sub_list<std::vector<RangePeak> R::*> = true;

// Top-level members: the kRequiredTop required ones in the order the library's writer emits them,
// then the optional ones that `vramtrace merge` adds (snapshot_model.h: MergedProcess), then the
// ones added within schema 1 (optional: older files lack them).
enum class Top { Format, SchemaVersion, Process, Devices, Dropped, Modules, Frames, Stacks, Allocations,
                 MergedProcesses, MergedDevices, OomCount, Peaks, Ooms, Pools, EventHistory, Events, TeardownCount,
                 Teardowns, Imbalance, ImbalanceOutliers, NvtxRanges, NvtxRegions, NvtxIntervals, Unknown };
constexpr std::array<std::string_view, 24> kTopNames = {
    member::top::format, member::top::schema_version, member::top::process, member::top::devices,
    member::top::dropped, member::top::modules, member::top::frames, member::top::stacks, member::top::allocations,
    member::top::merged_processes, member::top::merged_devices, member::top::oom_count, member::top::peaks,
    member::top::ooms, member::top::pools, member::top::event_history, member::top::events,
    member::top::teardown_count, member::top::teardowns, member::top::imbalance, member::top::imbalance_outliers,
    member::top::nvtx_ranges, member::top::nvtx_regions, member::top::nvtx_intervals};
constexpr size_t kRequiredTop = 9;


} // namespace vramtrace::snapshot::schema
