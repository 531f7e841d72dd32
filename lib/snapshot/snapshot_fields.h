// Every member name of the snapshot format (docs/snapshot-format.md; the members that `vramtrace
// merge` adds: docs/cli.md, "The merged snapshot"), in one table. Every writer (the library's,
// lib/snapshot/snapshot_writer.cpp; the crash handler's, lib/triggers/crash_writer.cpp; the
// merge's, tools/analysis/merge_write.cpp) and the reader (lib/snapshot/reader/snapshot_schema.h)
// take their names from here, so they cannot spell a member differently.
// tests/abi/check_snapshot_names.py parses this file, fails when a member name is spelled as a
// literal anywhere else in lib/ or tools/, and compares the table with the field tables of the two
// documents.
//
// Shape: one namespace per kind of object, named after the member that holds it (`top` is the
// document itself; `sites` are the records of both peaks[].sites and teardowns[].sites, `inlined`
// those of frames[].inlined). In it, one constant per member, named as the member is, in the order
// the library's writer emits them:
//     member::<object>::<name>  =  Field{"<name>", <JSON type>, <optional>}
// A Field converts to std::string_view (its name).
//
// Type: the JSON value the member holds. Json::hex is a string "0x" + 1 to 16 hex digits (an
// address or handle); int64 and uint64 are JSON numbers of that range (docs/snapshot-format.md,
// "Encoding rules"); array and object say nothing about their elements.
//
// Optional: whether a reader accepts an object without the member, which is the case for a member
// added within schema 1 (older files of the same version lack it) and for one that writers leave out
// where it does not apply (process.signal outside crash and signal-ended exit snapshots, events[].label outside marks).
// Required members are those of schema 1 as first published: a file without one is refused. A member
// inside an optional object or array is required wherever that object appears (ooms[].time_ns).
// Readers of older files are unaffected by this table: it names the members they already read, and
// a member added to it must be optional.
//
// Plain constant data (string literals and enums, no constructors run, nothing allocated), so the
// crash writer may use it inside a signal handler.
#pragma once

#include <cstdint>
#include <string_view>

namespace vramtrace::snapshot::member {

enum class Json : uint8_t { int64, uint64, hex, string, boolean, array, object };

struct Field {
    std::string_view name;
    Json type;
    bool optional;

    constexpr operator std::string_view() const { return name; }
};

inline constexpr bool kRequired = false;
inline constexpr bool kOptional = true;

// The document's own members. Every top-level array the library writes is present, possibly empty,
// but only the schema-1 ones are required of a file; teardown_count and teardowns are written only
// when a context was torn down; merged_processes and merged_devices only by `vramtrace merge`.
namespace top {
inline constexpr Field format{"format", Json::string, kRequired};
inline constexpr Field schema_version{"schema_version", Json::int64, kRequired};
inline constexpr Field process{"process", Json::object, kRequired};
inline constexpr Field devices{"devices", Json::array, kRequired};
inline constexpr Field dropped{"dropped", Json::object, kRequired};
inline constexpr Field oom_count{"oom_count", Json::uint64, kOptional};
inline constexpr Field peaks{"peaks", Json::array, kOptional};
inline constexpr Field ooms{"ooms", Json::array, kOptional};
inline constexpr Field pools{"pools", Json::array, kOptional};
inline constexpr Field teardown_count{"teardown_count", Json::uint64, kOptional};
inline constexpr Field teardowns{"teardowns", Json::array, kOptional};
inline constexpr Field event_history{"event_history", Json::object, kOptional};
inline constexpr Field nvtx_ranges{"nvtx_ranges", Json::array, kOptional};
inline constexpr Field nvtx_regions{"nvtx_regions", Json::array, kOptional};
inline constexpr Field nvtx_intervals{"nvtx_intervals", Json::array, kOptional};
inline constexpr Field modules{"modules", Json::array, kRequired};
inline constexpr Field frames{"frames", Json::array, kRequired};
inline constexpr Field stacks{"stacks", Json::array, kRequired};
inline constexpr Field allocations{"allocations", Json::array, kRequired};
inline constexpr Field events{"events", Json::array, kOptional};
inline constexpr Field merged_processes{"merged_processes", Json::array, kOptional};
inline constexpr Field merged_devices{"merged_devices", Json::array, kOptional};
inline constexpr Field imbalance{"imbalance", Json::array, kOptional};
inline constexpr Field imbalance_outliers{"imbalance_outliers", Json::array, kOptional};
} // namespace top

namespace process {
inline constexpr Field pid{"pid", Json::int64, kRequired};
inline constexpr Field ppid{"ppid", Json::int64, kRequired};
inline constexpr Field command_line{"command_line", Json::array, kRequired};
inline constexpr Field executable{"executable", Json::string, kRequired};
inline constexpr Field host{"host", Json::string, kRequired};
inline constexpr Field start_time_ns{"start_time_ns", Json::uint64, kRequired};
inline constexpr Field dump_time_ns{"dump_time_ns", Json::uint64, kRequired};
inline constexpr Field driver_version{"driver_version", Json::int64, kRequired};
inline constexpr Field reason{"reason", Json::string, kRequired};
inline constexpr Field vramtrace_version{"vramtrace_version", Json::string, kRequired};
inline constexpr Field stack_depth{"stack_depth", Json::uint64, kRequired};
inline constexpr Field dump_monotonic_ns{"dump_monotonic_ns", Json::uint64, kOptional};
inline constexpr Field rank{"rank", Json::string, kOptional};
inline constexpr Field symbolized{"symbolized", Json::boolean, kOptional};
inline constexpr Field signal{"signal", Json::string, kOptional};
inline constexpr Field signal_sender_pid{"signal_sender_pid", Json::int64, kOptional};
inline constexpr Field signal_sender_uid{"signal_sender_uid", Json::int64, kOptional};
inline constexpr Field python{"python", Json::string, kOptional};
} // namespace process

namespace devices {
inline constexpr Field device{"device", Json::int64, kRequired};
inline constexpr Field current_bytes{"current_bytes", Json::uint64, kRequired};
inline constexpr Field peak_bytes{"peak_bytes", Json::uint64, kRequired};
inline constexpr Field allocation_count{"allocation_count", Json::uint64, kRequired};
inline constexpr Field free_count{"free_count", Json::uint64, kRequired};
inline constexpr Field total_allocated_bytes{"total_allocated_bytes", Json::uint64, kRequired};
inline constexpr Field total_freed_bytes{"total_freed_bytes", Json::uint64, kRequired};
inline constexpr Field uuid{"uuid", Json::string, kOptional};
inline constexpr Field pci_bus_id{"pci_bus_id", Json::string, kOptional};
inline constexpr Field total_memory_bytes{"total_memory_bytes", Json::uint64, kOptional};
inline constexpr Field process_used_bytes{"process_used_bytes", Json::uint64, kOptional};
inline constexpr Field graph_reserved_bytes{"graph_reserved_bytes", Json::uint64, kOptional};
inline constexpr Field graph_used_bytes{"graph_used_bytes", Json::uint64, kOptional};
inline constexpr Field graph_reserved_high_bytes{"graph_reserved_high_bytes", Json::uint64, kOptional};
inline constexpr Field graph_used_high_bytes{"graph_used_high_bytes", Json::uint64, kOptional};
} // namespace devices

namespace dropped {
inline constexpr Field allocations{"allocations", Json::uint64, kRequired};
inline constexpr Field stacks{"stacks", Json::uint64, kRequired};
inline constexpr Field peak_sites{"peak_sites", Json::uint64, kOptional};
inline constexpr Field nvtx_range_stacks{"nvtx_range_stacks", Json::uint64, kOptional};
inline constexpr Field nvtx_range_names{"nvtx_range_names", Json::uint64, kOptional};
inline constexpr Field nvtx_regions{"nvtx_regions", Json::uint64, kOptional};
inline constexpr Field nvtx_regions_outside{"nvtx_regions_outside", Json::uint64, kOptional};
inline constexpr Field nvtx_unregisters_unknown{"nvtx_unregisters_unknown", Json::uint64, kOptional};
inline constexpr Field nvtx_intervals{"nvtx_intervals", Json::uint64, kOptional};
} // namespace dropped

namespace peaks {
inline constexpr Field device{"device", Json::int64, kRequired};
inline constexpr Field peak_bytes{"peak_bytes", Json::uint64, kRequired};
inline constexpr Field time_ns{"time_ns", Json::uint64, kRequired};
inline constexpr Field sites{"sites", Json::array, kRequired};
inline constexpr Field ranges{"ranges", Json::array, kOptional};
} // namespace peaks

// The records of peaks[].ranges: what one NVTX range stack held at the peak.
namespace ranges {
inline constexpr Field range{"range", Json::uint64, kRequired};
inline constexpr Field bytes{"bytes", Json::uint64, kRequired};
inline constexpr Field count{"count", Json::uint64, kRequired};
} // namespace ranges

// The records of nvtx_ranges: one NVTX range stack.
namespace nvtx_ranges {
inline constexpr Field id{"id", Json::uint64, kRequired};
inline constexpr Field domains{"domains", Json::array, kRequired};
inline constexpr Field names{"names", Json::array, kRequired};
inline constexpr Field categories{"categories", Json::array, kOptional};
} // namespace nvtx_ranges

// The records of nvtx_regions: one live region of a pool (NVTX memory API).
namespace nvtx_regions {
inline constexpr Field address{"address", Json::hex, kRequired};
inline constexpr Field size{"size", Json::uint64, kRequired};
inline constexpr Field segment{"segment", Json::hex, kRequired};
inline constexpr Field segment_size{"segment_size", Json::uint64, kRequired};
inline constexpr Field heap{"heap", Json::hex, kRequired};
inline constexpr Field device{"device", Json::int64, kRequired};
inline constexpr Field range{"range", Json::uint64, kRequired};
inline constexpr Field thread_id{"thread_id", Json::uint64, kRequired};
// Merged snapshots only: the merged_processes[].input of the process the region is of.
inline constexpr Field input{"input", Json::uint64, kOptional};
} // namespace nvtx_regions

// The records of nvtx_intervals: one NVTX start/end range; end_ns and end_thread are left out while
// it is open.
namespace nvtx_intervals {
inline constexpr Field domain{"domain", Json::string, kRequired};
inline constexpr Field name{"name", Json::string, kRequired};
inline constexpr Field category{"category", Json::string, kOptional};
inline constexpr Field start_ns{"start_ns", Json::uint64, kRequired};
inline constexpr Field end_ns{"end_ns", Json::uint64, kOptional};
inline constexpr Field start_thread{"start_thread", Json::uint64, kRequired};
inline constexpr Field end_thread{"end_thread", Json::uint64, kOptional};
// Merged snapshots only: the merged_processes[].input of the process the interval is of.
inline constexpr Field input{"input", Json::uint64, kOptional};
} // namespace nvtx_intervals

// The records of peaks[].sites and teardowns[].sites: what one stack held.
namespace sites {
inline constexpr Field stack{"stack", Json::uint64, kRequired};
inline constexpr Field bytes{"bytes", Json::uint64, kRequired};
inline constexpr Field count{"count", Json::uint64, kRequired};
} // namespace sites

namespace ooms {
inline constexpr Field time_ns{"time_ns", Json::uint64, kRequired};
inline constexpr Field device{"device", Json::int64, kRequired};
inline constexpr Field requested_bytes{"requested_bytes", Json::uint64, kRequired};
inline constexpr Field api{"api", Json::string, kRequired};
inline constexpr Field stream{"stream", Json::hex, kRequired};
inline constexpr Field stack{"stack", Json::uint64, kRequired};
inline constexpr Field thread_id{"thread_id", Json::uint64, kRequired};
inline constexpr Field result{"result", Json::int64, kRequired};
inline constexpr Field tracked_bytes{"tracked_bytes", Json::uint64, kRequired};
inline constexpr Field device_free_bytes{"device_free_bytes", Json::uint64, kOptional};
inline constexpr Field device_total_bytes{"device_total_bytes", Json::uint64, kOptional};
} // namespace ooms

namespace pools {
inline constexpr Field handle{"handle", Json::hex, kRequired};
inline constexpr Field device{"device", Json::int64, kRequired};
inline constexpr Field is_default{"is_default", Json::boolean, kRequired};
inline constexpr Field reserved_bytes{"reserved_bytes", Json::uint64, kRequired};
inline constexpr Field used_bytes{"used_bytes", Json::uint64, kRequired};
inline constexpr Field reserved_high_bytes{"reserved_high_bytes", Json::uint64, kRequired};
inline constexpr Field used_high_bytes{"used_high_bytes", Json::uint64, kRequired};
// Older files list a device's graph memory as a pool with this set; readers move it to the device.
inline constexpr Field is_graph_memory{"is_graph_memory", Json::boolean, kOptional};
} // namespace pools

namespace teardowns {
inline constexpr Field time_ns{"time_ns", Json::uint64, kRequired};
inline constexpr Field api{"api", Json::string, kRequired};
inline constexpr Field cause{"cause", Json::string, kRequired};
inline constexpr Field device{"device", Json::int64, kRequired};
inline constexpr Field context{"context", Json::uint64, kRequired};
inline constexpr Field ended_count{"ended_count", Json::uint64, kRequired};
inline constexpr Field ended_bytes{"ended_bytes", Json::uint64, kRequired};
inline constexpr Field ended_host_bytes{"ended_host_bytes", Json::uint64, kRequired};
inline constexpr Field sites{"sites", Json::array, kRequired};
inline constexpr Field other_bytes{"other_bytes", Json::uint64, kRequired};
inline constexpr Field other_count{"other_count", Json::uint64, kRequired};
} // namespace teardowns

namespace event_history {
inline constexpr Field capacity{"capacity", Json::uint64, kRequired};
inline constexpr Field recorded{"recorded", Json::uint64, kRequired};
inline constexpr Field wrapped{"wrapped", Json::boolean, kRequired};
inline constexpr Field complete_from_ns{"complete_from_ns", Json::uint64, kRequired};
} // namespace event_history

namespace modules {
inline constexpr Field path{"path", Json::string, kRequired};
inline constexpr Field base{"base", Json::hex, kRequired};
inline constexpr Field build_id{"build_id", Json::string, kRequired};
} // namespace modules

namespace frames {
inline constexpr Field address{"address", Json::hex, kRequired};
inline constexpr Field module{"module", Json::int64, kRequired};
inline constexpr Field module_offset{"module_offset", Json::hex, kRequired};
inline constexpr Field function{"function", Json::string, kRequired};
inline constexpr Field file{"file", Json::string, kRequired};
inline constexpr Field line{"line", Json::uint64, kRequired};
inline constexpr Field python{"python", Json::boolean, kOptional};
inline constexpr Field inlined{"inlined", Json::array, kOptional};
} // namespace frames

namespace inlined {
inline constexpr Field function{"function", Json::string, kRequired};
inline constexpr Field file{"file", Json::string, kRequired};
inline constexpr Field line{"line", Json::uint64, kRequired};
} // namespace inlined

namespace stacks {
inline constexpr Field id{"id", Json::uint64, kRequired};
inline constexpr Field frames{"frames", Json::array, kRequired};
inline constexpr Field call_site{"call_site", Json::int64, kRequired};
inline constexpr Field via{"via", Json::int64, kOptional};
inline constexpr Field category{"category", Json::string, kOptional};
} // namespace stacks

namespace allocations {
inline constexpr Field address{"address", Json::hex, kRequired};
inline constexpr Field size{"size", Json::uint64, kRequired};
inline constexpr Field kind{"kind", Json::string, kRequired};
inline constexpr Field device{"device", Json::int64, kRequired};
inline constexpr Field api{"api", Json::string, kRequired};
inline constexpr Field stream{"stream", Json::hex, kRequired};
inline constexpr Field thread_id{"thread_id", Json::uint64, kRequired};
inline constexpr Field time_ns{"time_ns", Json::uint64, kRequired};
inline constexpr Field stack{"stack", Json::uint64, kRequired};
inline constexpr Field size_is_estimate{"size_is_estimate", Json::boolean, kOptional};
inline constexpr Field context{"context", Json::uint64, kOptional};
inline constexpr Field range{"range", Json::uint64, kOptional};
} // namespace allocations

// Every event has type, time_ns and thread_id; alloc, free and oom events the next six (oom events
// without address and kind), marks a label, frees that a context teardown made freed_by.
namespace events {
inline constexpr Field type{"type", Json::string, kRequired};
inline constexpr Field time_ns{"time_ns", Json::uint64, kRequired};
inline constexpr Field thread_id{"thread_id", Json::uint64, kRequired};
inline constexpr Field label{"label", Json::string, kOptional};
inline constexpr Field device{"device", Json::int64, kOptional};
inline constexpr Field address{"address", Json::hex, kOptional};
inline constexpr Field kind{"kind", Json::string, kOptional};
inline constexpr Field size{"size", Json::uint64, kOptional};
inline constexpr Field api{"api", Json::string, kOptional};
inline constexpr Field stack{"stack", Json::uint64, kOptional};
inline constexpr Field freed_by{"freed_by", Json::string, kOptional};
inline constexpr Field range{"range", Json::uint64, kOptional};
} // namespace events

// Written by `vramtrace merge`: one record per process that went into a merged snapshot.
namespace merged_processes {
inline constexpr Field input{"input", Json::uint64, kRequired};
inline constexpr Field file{"file", Json::string, kRequired};
inline constexpr Field pid{"pid", Json::int64, kRequired};
inline constexpr Field host{"host", Json::string, kRequired};
inline constexpr Field command_line{"command_line", Json::array, kRequired};
inline constexpr Field reason{"reason", Json::string, kRequired};
inline constexpr Field rank{"rank", Json::int64, kRequired};
inline constexpr Field live_bytes{"live_bytes", Json::uint64, kRequired};
inline constexpr Field live_allocations{"live_allocations", Json::uint64, kRequired};
inline constexpr Field dropped_allocations{"dropped_allocations", Json::uint64, kRequired};
inline constexpr Field dropped_stacks{"dropped_stacks", Json::uint64, kRequired};
inline constexpr Field oom_count{"oom_count", Json::uint64, kOptional};
} // namespace merged_processes

// Written by `vramtrace merge`: one record per device of each merged process.
namespace merged_devices {
inline constexpr Field input{"input", Json::uint64, kRequired};
inline constexpr Field device{"device", Json::int64, kRequired};
inline constexpr Field uuid{"uuid", Json::string, kRequired};
inline constexpr Field current_bytes{"current_bytes", Json::uint64, kRequired};
inline constexpr Field peak_bytes{"peak_bytes", Json::uint64, kRequired};
inline constexpr Field allocation_count{"allocation_count", Json::uint64, kRequired};
inline constexpr Field free_count{"free_count", Json::uint64, kRequired};
inline constexpr Field total_allocated_bytes{"total_allocated_bytes", Json::uint64, kRequired};
inline constexpr Field total_freed_bytes{"total_freed_bytes", Json::uint64, kRequired};
} // namespace merged_devices

// Written by `vramtrace merge`: how the ranks compare, one record per device role (docs/cli.md,
// "Imbalance"): the distribution of their current and peak bytes (the input and rank holding the
// minimum and the maximum), the median absolute deviation of the peaks and the scale the outlier
// rule divides by.
namespace imbalance {
inline constexpr Field role{"role", Json::string, kRequired};
inline constexpr Field role_index{"role_index", Json::uint64, kRequired};
inline constexpr Field ranks{"ranks", Json::uint64, kRequired};
inline constexpr Field current_min_bytes{"current_min_bytes", Json::uint64, kRequired};
inline constexpr Field current_min_input{"current_min_input", Json::uint64, kRequired};
inline constexpr Field current_min_rank{"current_min_rank", Json::int64, kRequired};
inline constexpr Field current_median_bytes{"current_median_bytes", Json::uint64, kRequired};
inline constexpr Field current_max_bytes{"current_max_bytes", Json::uint64, kRequired};
inline constexpr Field current_max_input{"current_max_input", Json::uint64, kRequired};
inline constexpr Field current_max_rank{"current_max_rank", Json::int64, kRequired};
inline constexpr Field peak_min_bytes{"peak_min_bytes", Json::uint64, kRequired};
inline constexpr Field peak_min_input{"peak_min_input", Json::uint64, kRequired};
inline constexpr Field peak_min_rank{"peak_min_rank", Json::int64, kRequired};
inline constexpr Field peak_median_bytes{"peak_median_bytes", Json::uint64, kRequired};
inline constexpr Field peak_max_bytes{"peak_max_bytes", Json::uint64, kRequired};
inline constexpr Field peak_max_input{"peak_max_input", Json::uint64, kRequired};
inline constexpr Field peak_max_rank{"peak_max_rank", Json::int64, kRequired};
inline constexpr Field peak_mad_bytes{"peak_mad_bytes", Json::uint64, kRequired};
inline constexpr Field scale_bytes{"scale_bytes", Json::uint64, kRequired};
inline constexpr Field outliers{"outliers", Json::uint64, kRequired};
} // namespace imbalance

// Written by `vramtrace merge`: one record per rank whose peak is an outlier of its role, with the
// call sites that make it heavier than the median rank (sites[]: a stack of the call site, the
// bytes above that site's median over the role's ranks, the rank's allocations there at its peak;
// sites_known false: the rank came from a merged input, whose peaks are sums over its processes).
namespace imbalance_outliers {
inline constexpr Field imbalance{"imbalance", Json::uint64, kRequired};
inline constexpr Field input{"input", Json::uint64, kRequired};
inline constexpr Field rank{"rank", Json::int64, kRequired};
inline constexpr Field host{"host", Json::string, kRequired};
inline constexpr Field device{"device", Json::int64, kRequired};
inline constexpr Field peak_bytes{"peak_bytes", Json::uint64, kRequired};
inline constexpr Field sites_known{"sites_known", Json::boolean, kRequired};
inline constexpr Field sites{"sites", Json::array, kRequired};
} // namespace imbalance_outliers

} // namespace vramtrace::snapshot::member
