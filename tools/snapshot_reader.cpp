// Streaming snapshot reader: nlohmann::json's SAX interface driving a small state machine over the
// schema of docs/snapshot-format.md. See snapshot_reader.h for the contract.
#include "snapshot_reader.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <istream>
#include <limits>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "reporting/device_range.h"

namespace vramtrace::cli {

namespace {

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
std::string printable(std::string_view text, size_t limit = 60) {
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

const char *kind_name(Scalar::Kind kind) {
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
bool convert(const Scalar &v, int64_t &out, std::string *why) {
    if (v.kind == Scalar::Int) return out = v.i, true;
    if (v.kind == Scalar::Uint && v.u <= uint64_t(std::numeric_limits<int64_t>::max()))
        return out = int64_t(v.u), true;
    *why = v.kind == Scalar::Uint ? "integer " + std::to_string(v.u) + " is out of range"
                                  : std::string("expected an integer, got ") + kind_name(v.kind);
    return false;
}
bool convert(const Scalar &v, uint64_t &out, std::string *why) {
    if (v.kind == Scalar::Uint) return out = v.u, true;
    *why = v.kind == Scalar::Int ? "expected an unsigned integer, got " + std::to_string(v.i)
                                 : std::string("expected an unsigned integer, got ") + kind_name(v.kind);
    return false;
}
bool convert(const Scalar &v, int &out, std::string *why) {
    int64_t wide = 0;
    if (!convert(v, wide, why)) return false;
    if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max()) {
        *why = "integer " + std::to_string(wide) + " is out of range";
        return false;
    }
    return out = int(wide), true;
}
bool convert(const Scalar &v, uint32_t &out, std::string *why) {
    uint64_t wide = 0;
    if (!convert(v, wide, why)) return false;
    if (wide > std::numeric_limits<uint32_t>::max()) {
        *why = "integer " + std::to_string(wide) + " is out of range";
        return false;
    }
    return out = uint32_t(wide), true;
}
bool convert(const Scalar &v, bool &out, std::string *why) {
    if (v.kind == Scalar::Bool) return out = v.b, true;
    *why = std::string("expected true or false, got ") + kind_name(v.kind);
    return false;
}
bool convert(const Scalar &v, std::optional<uint64_t> &out, std::string *why) {
    uint64_t value = 0;
    if (!convert(v, value, why)) return false;
    out = value;
    return true;
}
bool convert(const Scalar &v, std::string &out, std::string *why) {
    if (v.kind != Scalar::String) {
        *why = std::string("expected a string, got ") + kind_name(v.kind);
        return false;
    }
    out = std::move(*v.s);
    return true;
}
// Addresses: "0x" followed by 1 to 16 hex digits.
bool convert_hex(const Scalar &v, uint64_t &out, std::string *why) {
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

class Handler final : public nlohmann::json_sax<nlohmann::json> {
public:
    Handler(std::istream &in, const std::string &name, SnapshotSink &sink) : in_(in), name_(name), sink_(sink) {}

    // The result once sax_parse returned.
    bool finish(bool parsed, std::string *error) {
        if (parsed && error_.empty()) check_complete();
        if (error_.empty()) return true;
        if (error) *error = name_ + ": " + error_;
        return false;
    }

    // ---- nlohmann::json_sax ----
    bool null() override { return scalar(Scalar{Scalar::Null}); }
    bool boolean(bool v) override {
        Scalar s{Scalar::Bool};
        s.b = v;
        return scalar(s);
    }
    bool number_integer(number_integer_t v) override {
        Scalar s{Scalar::Int};
        s.i = v;
        return scalar(s);
    }
    bool number_unsigned(number_unsigned_t v) override {
        Scalar s{Scalar::Uint};
        s.u = v;
        return scalar(s);
    }
    bool number_float(number_float_t, const string_t &) override { return scalar(Scalar{Scalar::Float}); }
    bool string(string_t &v) override {
        Scalar s{Scalar::String};
        s.s = &v;
        return scalar(s);
    }
    bool binary(binary_t &) override { return scalar(Scalar{Scalar::Null}); } // not produced for JSON

    bool start_object(std::size_t) override { return open(true); }
    bool start_array(std::size_t) override { return open(false); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }

    bool key(string_t &k) override {
        Ctx &c = ctx_.back();
        if (c.kind == Ctx::Skip) return true;
        if (c.kind == Ctx::Root) {
            top_ = Top::Unknown;
            for (size_t i = 0; i < kTopNames.size(); ++i)
                if (k == kTopNames[i] && (!ignoring_ || i == 0)) top_ = Top(i);
            return true;
        }
        if (c.kind == Ctx::SubRecord) {
            sub_field_ = -1;
            with_sub([&](auto &, const auto &fields) {
                for (size_t i = 0; i < fields.size(); ++i)
                    if (fields[i].name == k) sub_field_ = int(i);
            });
            return true;
        }
        // A record: find the field.
        field_ = -1;
        with_record([&](auto &, const auto &fields) {
            for (size_t i = 0; i < fields.size(); ++i)
                if (fields[i].name == k) field_ = int(i);
        });
        return true;
    }

    bool parse_error(std::size_t, const std::string &, const nlohmann::detail::exception &ex) override {
        std::string what = ex.what();
        if (auto bracket = what.find("] "); what.rfind("[json.exception", 0) == 0 && bracket != std::string::npos)
            what.erase(0, bracket + 2);
        what = printable(what, 200);
        // The input ended inside the document (possibly inside a token: "missing closing quote").
        bool end_of_input = what.find("unexpected end of input") != std::string::npos;
        bool at_end = end_of_input || in_.eof();
        if (!seen_any_ && end_of_input) // nothing but whitespace
            error_ = "empty file (no JSON document), not a vramtrace snapshot";
        else if (at_end) error_ = "truncated JSON (" + what + ")";
        else if (!seen_any_) error_ = "not JSON, not a vramtrace snapshot (" + what + ")";
        else error_ = "malformed JSON (" + what + ")";
        return false;
    }

private:
    struct Ctx {
        enum Kind { Root, Record, RecordArray, List, SubArray, SubRecord, Skip } kind;
        size_t skip_nested = 0; // Skip: containers opened inside the skipped one
    };

    // ---- where we are, for messages ----
    std::string record_path() const {
        std::string path(top_name());
        if (is_array_member(top_)) path += "[" + std::to_string(index_) + "]";
        return path;
    }
    std::string field_path() const {
        std::string path = record_path();
        if (field_ >= 0) {
            with_record([&](auto &, const auto &fields) {
                if (size_t(field_) < fields.size()) path.append(".").append(fields[size_t(field_)].name);
            });
        }
        return path;
    }
    std::string_view top_name() const { return top_ == Top::Unknown ? "?" : kTopNames[size_t(top_)]; }

    // Calls fn(record, fields) for the record type of the current top-level member.
    template <class Fn> void with_record(Fn &&fn) const {
        auto *self = const_cast<Handler *>(this);
        switch (top_) {
        case Top::Process: fn(self->process_, Schema<ProcessInfo>::fields); break;
        case Top::Dropped: fn(self->dropped_, Schema<Dropped>::fields); break;
        case Top::Devices: fn(self->device_, Schema<DeviceTotals>::fields); break;
        case Top::Modules: fn(self->module_, Schema<Module>::fields); break;
        case Top::Frames: fn(self->frame_, Schema<Frame>::fields); break;
        case Top::Stacks: fn(self->stack_, Schema<Stack>::fields); break;
        case Top::Allocations: fn(self->allocation_, Schema<Allocation>::fields); break;
        case Top::MergedProcesses: fn(self->merged_process_, Schema<MergedProcess>::fields); break;
        case Top::MergedDevices: fn(self->merged_device_, Schema<MergedDevice>::fields); break;
        case Top::Peaks: fn(self->peak_, Schema<DevicePeak>::fields); break;
        case Top::Ooms: fn(self->oom_, Schema<OomEvent>::fields); break;
        case Top::Pools: fn(self->pool_, Schema<Pool>::fields); break;
        case Top::EventHistory: fn(self->history_, Schema<EventHistory>::fields); break;
        case Top::Events: fn(self->event_, Schema<Event>::fields); break;
        case Top::Teardowns: fn(self->teardown_, Schema<Teardown>::fields); break;
        default: break;
        }
    }
    // Calls fn(list, fields) for the list of nested records of the current field, when it is one.
    template <class Fn> void with_sub(Fn &&fn) const {
        if (field_ < 0) return;
        with_record([&](auto &record, const auto &fields) {
            std::visit(
                [&](auto member) {
                    if constexpr (is_sub_list<decltype(member)>) {
                        auto &list = record.*member;
                        using Sub = typename std::remove_reference_t<decltype(list)>::value_type;
                        fn(list, Schema<Sub>::fields);
                    }
                },
                fields[size_t(field_)].member);
        });
    }
    std::string sub_path() const {
        return field_path() + "[" + std::to_string(sub_index_) + "]";
    }
    std::string sub_field_path() const {
        std::string path = sub_path();
        with_sub([&](auto &, const auto &fields) {
            if (sub_field_ >= 0 && size_t(sub_field_) < fields.size()) path.append(".").append(fields[size_t(sub_field_)].name);
        });
        return path;
    }
    static bool is_object_member(Top t) { return t == Top::Process || t == Top::Dropped || t == Top::EventHistory; }
    static bool is_array_member(Top t) {
        return t == Top::Devices || t == Top::Modules || t == Top::Frames || t == Top::Stacks ||
               t == Top::Allocations || t == Top::MergedProcesses || t == Top::MergedDevices || t == Top::Peaks ||
               t == Top::Ooms || t == Top::Pools || t == Top::Events || t == Top::Teardowns;
    }

    // An error. Once "format" confirmed the file, the parse stops. Before that the file may still
    // turn out to be foreign, which is the better message: remember the error, skip everything but
    // the top-level "format" member, and decide at the end.
    bool fail(std::string message) {
        if (format_ok_) {
            error_ = std::move(message);
            return false;
        }
        if (deferred_.empty()) deferred_ = std::move(message);
        ignoring_ = true;
        size_t open_below_root = ctx_.size() - 1;
        ctx_.resize(1);
        if (open_below_root > 0) ctx_.push_back(Ctx{Ctx::Skip, open_below_root - 1});
        return true;
    }

    bool open(bool object) {
        seen_any_ = true;
        if (ctx_.empty()) {
            if (!object) {
                error_ = "not a vramtrace snapshot (the document is a JSON array, not an object)";
                return false;
            }
            ctx_.push_back(Ctx{Ctx::Root});
            return true;
        }
        Ctx &c = ctx_.back();
        const char *got = object ? "an object" : "an array";
        switch (c.kind) {
        case Ctx::Skip:
            ++c.skip_nested;
            return true;
        case Ctx::Root:
            if (top_ == Top::Unknown) break;
            if (object && is_object_member(top_)) return begin_record();
            if (!object && is_array_member(top_)) {
                index_ = 0;
                ctx_.push_back(Ctx{Ctx::RecordArray});
                return true;
            }
            ctx_.push_back(Ctx{Ctx::Skip});
            return fail(std::string(top_name()) + ": expected " +
                        (is_object_member(top_) ? "an object" : is_array_member(top_) ? "an array" : "a scalar") +
                        ", got " + got);
        case Ctx::RecordArray:
            if (object) return begin_record();
            ctx_.push_back(Ctx{Ctx::Skip});
            return fail(record_path() + ": expected an object, got an array");
        case Ctx::Record: {
            if (field_ < 0) break; // an unknown member: skip its value
            if (!object && field_is_sub_list()) {
                sub_index_ = 0;
                with_sub([](auto &list, const auto &) { list.clear(); });
                seen_fields_ |= 1u << unsigned(field_);
                ctx_.push_back(Ctx{Ctx::SubArray});
                return true;
            }
            bool list = field_is_list();
            if (!object && list) {
                list_index_ = 0;
                clear_list();
                seen_fields_ |= 1u << unsigned(field_);
                ctx_.push_back(Ctx{Ctx::List});
                return true;
            }
            ctx_.push_back(Ctx{Ctx::Skip});
            return fail(field_path() + ": expected " + (list ? "an array" : "a scalar") + ", got " + got);
        }
        case Ctx::List:
            ctx_.push_back(Ctx{Ctx::Skip});
            return fail(field_path() + "[" + std::to_string(list_index_) + "]: expected a scalar, got " + got);
        case Ctx::SubArray:
            if (object) {
                with_sub([](auto &list, const auto &) { list.emplace_back(); });
                sub_seen_ = 0;
                sub_field_ = -1;
                ctx_.push_back(Ctx{Ctx::SubRecord});
                return true;
            }
            ctx_.push_back(Ctx{Ctx::Skip});
            return fail(sub_path() + ": expected an object, got an array");
        case Ctx::SubRecord:
            if (sub_field_ < 0) break; // an unknown member: skip its value
            ctx_.push_back(Ctx{Ctx::Skip});
            return fail(sub_field_path() + ": expected a scalar, got " + got);
        }
        ctx_.push_back(Ctx{Ctx::Skip});
        return true;
    }

    bool close() {
        if (ctx_.empty()) return true;
        Ctx &c = ctx_.back();
        if (c.kind == Ctx::Skip && c.skip_nested > 0) {
            --c.skip_nested;
            return true;
        }
        Ctx::Kind kind = c.kind;
        ctx_.pop_back();
        switch (kind) {
        case Ctx::Root:
            root_closed_ = true;
            return true;
        case Ctx::Record:
            return end_record();
        case Ctx::RecordArray:
            mark_top();
            return true;
        case Ctx::SubRecord: {
            std::string missing;
            with_sub([&](auto &, const auto &fields) {
                for (size_t i = 0; i < fields.size() && missing.empty(); ++i)
                    if (!fields[i].optional && !(sub_seen_ & (1u << i))) missing = fields[i].name;
            });
            sub_field_ = -1;
            if (!missing.empty()) return fail(sub_path() + ": missing field \"" + missing + "\"");
            ++sub_index_;
            return true;
        }
        case Ctx::List:
        case Ctx::SubArray:
        case Ctx::Skip:
            return true;
        }
        return true;
    }

    bool begin_record() {
        ctx_.push_back(Ctx{Ctx::Record});
        seen_fields_ = 0;
        field_ = -1;
        with_record([](auto &record, const auto &) { record = std::remove_reference_t<decltype(record)>{}; });
        return true;
    }

    bool end_record() {
        bool ok = true;
        std::string missing;
        with_record([&](auto &, const auto &fields) {
            for (size_t i = 0; i < fields.size() && ok; ++i)
                if (!fields[i].optional && !(seen_fields_ & (1u << i))) ok = false, missing = fields[i].name;
        });
        field_ = -1;
        if (!ok) return fail(record_path() + ": missing field \"" + missing + "\"");
        if (const int *device = record_device(); device && !report::device_ordinal_valid(*device))
            return fail(record_path() + ".device: " + std::to_string(*device) + " is not a device ordinal (" +
                        std::to_string(report::kMinDeviceOrdinal) + " to " +
                        std::to_string(report::kMaxDeviceOrdinal) + ")");
        if (top_ == Top::Events && event_.type != "alloc" && event_.type != "free" && event_.type != "mark" &&
            event_.type != "oom")
            return fail(record_path() + ".type: \"" + printable(event_.type) +
                        "\" is not one of \"alloc\", \"free\", \"mark\", \"oom\"");
        if (!ignoring_) deliver();
        if (is_object_member(top_)) mark_top();
        else ++index_;
        return true;
    }

    // The device ordinal of the record just read, for the records that have one.
    const int *record_device() const {
        switch (top_) {
        case Top::Devices: return &device_.device;
        case Top::Allocations: return &allocation_.device;
        case Top::MergedDevices: return &merged_device_.device;
        case Top::Peaks: return &peak_.device;
        case Top::Ooms: return &oom_.device;
        case Top::Pools: return &pool_.device;
        case Top::Events: return &event_.device;
        default: return nullptr;
        }
    }

    void deliver() {
        switch (top_) {
        case Top::Process: sink_.on_process(std::move(process_)); break;
        case Top::Dropped:
            sink_.on_dropped(dropped_.allocations, dropped_.stacks);
            sink_.on_dropped_peak_sites(dropped_.peak_sites);
            break;
        case Top::Devices: sink_.on_device(std::move(device_)); break;
        case Top::Modules: sink_.on_module(std::move(module_)); break;
        case Top::Frames: sink_.on_frame(std::move(frame_)); break;
        case Top::Stacks: sink_.on_stack(std::move(stack_)); break;
        case Top::Allocations: sink_.on_allocation(std::move(allocation_)); break;
        case Top::MergedProcesses: sink_.on_merged_process(std::move(merged_process_)); break;
        case Top::MergedDevices: sink_.on_merged_device(std::move(merged_device_)); break;
        case Top::Peaks: sink_.on_peak(std::move(peak_)); break;
        case Top::Ooms: sink_.on_oom(std::move(oom_)); break;
        case Top::Pools: sink_.on_pool(std::move(pool_)); break;
        case Top::EventHistory: sink_.on_event_history(std::move(history_)); break;
        case Top::Events: sink_.on_event(std::move(event_)); break;
        case Top::Teardowns: sink_.on_teardown(std::move(teardown_)); break;
        default: break;
        }
    }

    void mark_top() { top_seen_ |= 1u << unsigned(top_); }

    bool field_is_list() const {
        bool list = false;
        with_record([&](auto &, const auto &fields) {
            std::visit([&](auto member) { list = is_vector_member<decltype(member)>; },
                       fields[size_t(field_)].member);
        });
        return list;
    }
    bool field_is_sub_list() const {
        bool sub = false;
        with_record([&](auto &, const auto &fields) {
            std::visit([&](auto member) { sub = is_sub_list<decltype(member)>; }, fields[size_t(field_)].member);
        });
        return sub;
    }

    void clear_list() {
        with_record([&](auto &record, const auto &fields) {
            std::visit(
                [&](auto member) {
                    if constexpr (is_vector_member<decltype(member)> && !is_sub_list<decltype(member)>)
                        (record.*member).clear();
                },
                fields[size_t(field_)].member);
        });
    }

    bool scalar(const Scalar &v) {
        seen_any_ = true;
        if (ctx_.empty()) {
            error_ = std::string("not a vramtrace snapshot (the document is ") + kind_name(v.kind) +
                     ", not an object)";
            return false;
        }
        Ctx &c = ctx_.back();
        switch (c.kind) {
        case Ctx::Skip: return true;
        case Ctx::Root: return top_scalar(v);
        case Ctx::RecordArray: return fail(record_path() + ": expected an object, got " + kind_name(v.kind));
        case Ctx::Record: return record_scalar(v);
        case Ctx::List: return list_scalar(v);
        case Ctx::SubArray: return fail(sub_path() + ": expected an object, got " + kind_name(v.kind));
        case Ctx::SubRecord: return sub_scalar(v);
        }
        return true;
    }

    bool sub_scalar(const Scalar &v) {
        if (sub_field_ < 0) return true; // unknown member
        std::string why;
        bool ok = true;
        with_sub([&](auto &list, const auto &fields) {
            const auto &f = fields[size_t(sub_field_)];
            std::visit(
                [&](auto member) {
                    using Member = decltype(member);
                    if constexpr (!is_vector_member<Member>) {
                        auto &target = list.back().*member;
                        using T = std::remove_reference_t<decltype(target)>;
                        if constexpr (std::is_same_v<T, uint64_t>)
                            ok = f.hex ? convert_hex(v, target, &why) : convert(v, target, &why);
                        else
                            ok = convert(v, target, &why);
                    } else {
                        ok = false, why = "nested lists are not expected here";
                    }
                },
                f.member);
        });
        if (!ok) return fail(sub_field_path() + ": " + why);
        sub_seen_ |= 1u << unsigned(sub_field_);
        return true;
    }

    bool top_scalar(const Scalar &v) {
        switch (top_) {
        case Top::Unknown: return true;
        case Top::Format:
            if (v.kind != Scalar::String) {
                error_ = std::string("not a vramtrace snapshot (\"format\" is ") + kind_name(v.kind) + ")";
                return false;
            }
            if (*v.s != report::kFormatName) {
                error_ = "not a vramtrace snapshot (\"format\" is \"" + printable(*v.s) + "\", expected \"" +
                         report::kFormatName + "\")";
                return false;
            }
            format_ok_ = true;
            mark_top();
            if (ignoring_) {
                error_ = std::move(deferred_);
                return false;
            }
            return true;
        case Top::OomCount: {
            uint64_t count = 0;
            std::string why;
            if (!convert(v, count, &why)) return fail("oom_count: " + why);
            mark_top();
            if (!ignoring_) sink_.on_oom_count(count);
            return true;
        }
        case Top::TeardownCount: {
            uint64_t count = 0;
            std::string why;
            if (!convert(v, count, &why)) return fail("teardown_count: " + why);
            mark_top();
            if (!ignoring_) sink_.on_teardown_count(count);
            return true;
        }
        case Top::SchemaVersion: {
            int version = 0;
            std::string why;
            if (!convert(v, version, &why)) return fail("schema_version: " + why);
            if (version > report::kSchemaVersion)
                return fail("schema_version " + std::to_string(version) + " is newer than this vramtrace reads (" +
                            std::to_string(report::kSchemaVersion) + "); use a newer vramtrace");
            if (version < 1) return fail("schema_version " + std::to_string(version) + " is not valid");
            mark_top();
            if (!ignoring_) sink_.on_schema_version(version);
            return true;
        }
        default:
            return fail(std::string(top_name()) + ": expected " +
                        (is_object_member(top_) ? "an object" : "an array") + ", got " + kind_name(v.kind));
        }
    }

    bool record_scalar(const Scalar &v) {
        if (field_ < 0) return true; // unknown member
        std::string why;
        bool ok = true, list = false;
        with_record([&](auto &record, const auto &fields) {
            const auto &f = fields[size_t(field_)];
            std::visit(
                [&](auto member) {
                    using T = std::remove_reference_t<decltype(record.*member)>;
                    if constexpr (is_vector_member<decltype(member)>) {
                        list = true;
                    } else if constexpr (std::is_same_v<T, uint64_t>) {
                        ok = f.hex ? convert_hex(v, record.*member, &why) : convert(v, record.*member, &why);
                    } else {
                        ok = convert(v, record.*member, &why);
                    }
                },
                f.member);
        });
        if (list) ok = false, why = std::string("expected an array, got ") + kind_name(v.kind);
        if (!ok) return fail(field_path() + ": " + why);
        seen_fields_ |= 1u << unsigned(field_);
        return true;
    }

    bool list_scalar(const Scalar &v) {
        std::string why;
        bool ok = true;
        with_record([&](auto &record, const auto &fields) {
            std::visit(
                [&](auto member) {
                    if constexpr (is_vector_member<decltype(member)> && !is_sub_list<decltype(member)>) {
                        auto &list = record.*member;
                        typename std::remove_reference_t<decltype(list)>::value_type item{};
                        ok = convert(v, item, &why);
                        if (ok) list.push_back(std::move(item));
                    }
                },
                fields[size_t(field_)].member);
        });
        if (!ok) return fail(field_path() + "[" + std::to_string(list_index_) + "]: " + why);
        ++list_index_;
        return true;
    }

    void check_complete() {
        if (!format_ok_) {
            error_ = "not a vramtrace snapshot (no \"format\": \"" + std::string(report::kFormatName) + "\" member)";
            return;
        }
        if (!root_closed_) {
            error_ = "truncated JSON";
            return;
        }
        for (size_t i = 0; i < kRequiredTop; ++i)
            if (!(top_seen_ & (1u << i))) {
                error_ = "missing member \"" + std::string(kTopNames[i]) + "\"";
                return;
            }
    }

    std::istream &in_; // only to tell a truncated input (the parser hit its end) from a malformed one
    const std::string &name_;
    SnapshotSink &sink_;
    std::vector<Ctx> ctx_;
    Top top_ = Top::Unknown;
    size_t index_ = 0;      // element of the current top-level array
    int field_ = -1;        // field of the current record, -1 unknown
    size_t list_index_ = 0; // element of the current list field
    size_t sub_index_ = 0;  // element of the current list of nested records
    int sub_field_ = -1;    // field of the current nested record, -1 unknown
    uint32_t sub_seen_ = 0;
    uint32_t seen_fields_ = 0;
    uint32_t top_seen_ = 0;
    bool seen_any_ = false, format_ok_ = false, ignoring_ = false, root_closed_ = false;
    std::string error_, deferred_;

    ProcessInfo process_;
    Dropped dropped_;
    DeviceTotals device_;
    Module module_;
    Frame frame_;
    Stack stack_;
    Allocation allocation_;
    MergedProcess merged_process_;
    MergedDevice merged_device_;
    DevicePeak peak_;
    OomEvent oom_;
    Pool pool_;
    EventHistory history_;
    Event event_;
    Teardown teardown_;
};

// Collects everything into a Snapshot.
class CollectingSink final : public SnapshotSink {
public:
    explicit CollectingSink(report::Snapshot &s) : s_(s) {}
    void on_schema_version(int v) override { s_.schema_version = v; }
    void on_process(ProcessInfo &&p) override { s_.process = std::move(p); }
    void on_device(DeviceTotals &&d) override { s_.devices.push_back(std::move(d)); }
    void on_dropped(uint64_t a, uint64_t st) override { s_.dropped_allocations = a, s_.dropped_stacks = st; }
    void on_module(Module &&m) override { s_.modules.push_back(std::move(m)); }
    void on_frame(Frame &&f) override { s_.frames.push_back(std::move(f)); }
    void on_stack(Stack &&st) override { s_.stacks.push_back(std::move(st)); }
    void on_allocation(Allocation &&a) override { s_.allocations.push_back(std::move(a)); }
    void on_dropped_peak_sites(uint64_t n) override { s_.dropped_peak_sites = n; }
    void on_oom_count(uint64_t n) override { s_.oom_count = n; }
    void on_peak(DevicePeak &&p) override { s_.peaks.push_back(std::move(p)); }
    void on_oom(OomEvent &&o) override { s_.ooms.push_back(std::move(o)); }
    void on_pool(Pool &&p) override { s_.pools.push_back(std::move(p)); }
    void on_event_history(EventHistory &&h) override {
        auto events = std::move(s_.events.events); // `events` may come before `event_history`
        s_.events = std::move(h);
        s_.events.events = std::move(events);
    }
    void on_event(Event &&e) override { s_.events.events.push_back(std::move(e)); }
    void on_teardown_count(uint64_t n) override { s_.teardown_count = n; }
    void on_teardown(Teardown &&td) override { s_.teardowns.push_back(std::move(td)); }

private:
    report::Snapshot &s_;
};

} // namespace

// Cross references of a complete snapshot; "" when all hold. Sorts stacks by id.
std::string check_snapshot_references(report::Snapshot &s, const StackReferences *allocation_stacks,
                                      const StackReferences *event_stacks) {
    auto idx = [](const char *array, size_t i) { return std::string(array) + "[" + std::to_string(i) + "]"; };
    for (size_t i = 0; i < s.frames.size(); ++i) {
        int m = s.frames[i].module;
        if (m < -1 || (m >= 0 && size_t(m) >= s.modules.size()))
            return idx("frames", i) + ".module: " + std::to_string(m) + " is not an index into modules (" +
                   std::to_string(s.modules.size()) + " entries)";
    }
    for (size_t i = 0; i < s.stacks.size(); ++i) {
        const Stack &st = s.stacks[i];
        if (st.id == 0) return idx("stacks", i) + ".id: 0 is reserved for \"no stack\"";
        for (size_t k = 0; k < st.frames.size(); ++k)
            if (st.frames[k] >= s.frames.size())
                return idx("stacks", i) + ".frames[" + std::to_string(k) + "]: " + std::to_string(st.frames[k]) +
                       " is not an index into frames (" + std::to_string(s.frames.size()) + " entries)";
        if (st.call_site < -1 || (st.call_site >= 0 && size_t(st.call_site) >= st.frames.size()))
            return idx("stacks", i) + ".call_site: " + std::to_string(st.call_site) +
                   " is not an index into this stack's frames (" + std::to_string(st.frames.size()) + " entries)";
    }
    if (!std::is_sorted(s.stacks.begin(), s.stacks.end(), [](const Stack &a, const Stack &b) { return a.id < b.id; }))
        std::stable_sort(s.stacks.begin(), s.stacks.end(), [](const Stack &a, const Stack &b) { return a.id < b.id; });
    for (size_t i = 1; i < s.stacks.size(); ++i)
        if (s.stacks[i].id == s.stacks[i - 1].id)
            return "stacks: id " + std::to_string(s.stacks[i].id) + " appears more than once";
    auto dangling = [&](uint32_t id) { return id != 0 && !s.find_stack(id); };
    auto not_a_stack = [](uint32_t id) { return ".stack: " + std::to_string(id) + " is not the id of an entry in stacks"; };
    // The first record (lowest index) that names a missing stack, of those a sink did not keep.
    auto first_dangling = [&](const StackReferences *refs, const char *array) -> std::string {
        if (!refs) return {};
        const std::pair<const uint32_t, size_t> *first = nullptr;
        for (const auto &ref : *refs)
            if (dangling(ref.first) && (!first || ref.second < first->second)) first = &ref;
        return first ? idx(array, first->second) + not_a_stack(first->first) : std::string();
    };
    for (size_t i = 0; i < s.allocations.size(); ++i)
        if (dangling(s.allocations[i].stack)) return idx("allocations", i) + not_a_stack(s.allocations[i].stack);
    if (std::string problem = first_dangling(allocation_stacks, "allocations"); !problem.empty()) return problem;
    for (size_t i = 0; i < s.peaks.size(); ++i)
        for (size_t k = 0; k < s.peaks[i].sites.size(); ++k)
            if (dangling(s.peaks[i].sites[k].stack))
                return idx("peaks", i) + idx(".sites", k) + not_a_stack(s.peaks[i].sites[k].stack);
    for (size_t i = 0; i < s.ooms.size(); ++i)
        if (dangling(s.ooms[i].stack)) return idx("ooms", i) + not_a_stack(s.ooms[i].stack);
    for (size_t i = 0; i < s.events.events.size(); ++i)
        if (dangling(s.events.events[i].stack)) return idx("events", i) + not_a_stack(s.events.events[i].stack);
    for (size_t i = 0; i < s.teardowns.size(); ++i)
        for (size_t k = 0; k < s.teardowns[i].sites.size(); ++k)
            if (dangling(s.teardowns[i].sites[k].stack))
                return idx("teardowns", i) + idx(".sites", k) + not_a_stack(s.teardowns[i].sites[k].stack);
    return first_dangling(event_stacks, "events");
}

namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Passes a stream's bytes to the JSON parser and notes any NUL byte: the parser takes a NUL for the
// end of the input, so a valid snapshot followed by a NUL and anything else would otherwise pass.
// JSON text never holds a raw NUL.
class NulWatchingBuf : public std::streambuf {
public:
    explicit NulWatchingBuf(std::streambuf *inner) : inner_(inner) {}
    bool saw_nul() const { return saw_nul_; }

protected:
    int_type underflow() override {
        if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
        std::streamsize n = inner_ ? inner_->sgetn(buf_, sizeof buf_) : 0;
        if (n <= 0) return traits_type::eof();
        if (std::memchr(buf_, 0, size_t(n)) != nullptr) saw_nul_ = true;
        setg(buf_, buf_, buf_ + n);
        return traits_type::to_int_type(buf_[0]);
    }

private:
    std::streambuf *inner_;
    char buf_[1 << 16];
    bool saw_nul_ = false;
};

} // namespace

bool read_snapshot_stream(std::istream &in, const std::string &name, SnapshotSink &sink, std::string *error) {
    try {
        NulWatchingBuf watched(in.rdbuf());
        std::istream text(&watched);
        Handler handler(text, name, sink);
        bool parsed = nlohmann::json::sax_parse(text, &handler, nlohmann::json::input_format_t::json,
                                                /*strict=*/true, /*ignore_comments=*/false);
        if (!handler.finish(parsed, error)) return false;
        if (watched.saw_nul() || watched.sgetc() != std::char_traits<char>::eof()) {
            if (error) *error = name + ": bytes after the end of the snapshot (a NUL byte or other data)";
            return false;
        }
        if (in.bad()) {
            if (error) *error = name + ": read error";
            return false;
        }
        return true;
    } catch (const std::bad_alloc &) {
        if (error) *error = name + ": out of memory while reading";
    } catch (const std::exception &e) {
        if (error) *error = name + ": cannot read: " + printable(e.what(), 200);
    } catch (...) {
        if (error) *error = name + ": cannot read (unknown error)";
    }
    return false;
}

bool open_snapshot_input(const std::string &path, int *fd, std::string *error) {
    // Without waiting: a FIFO with no writer, a terminal, must not block the type check.
    int f = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (f < 0) {
        int err = errno;
        struct stat st {};
        if (error)
            *error = err == ENXIO && ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)
                         ? path + ": is a socket, not a snapshot file (only regular files and FIFOs are read)"
                         : path + ": cannot open: " + errno_text(err);
        return false;
    }
    struct stat st {};
    if (::fstat(f, &st) != 0) {
        if (error) *error = path + ": cannot read: " + errno_text(errno);
        ::close(f);
        return false;
    }
    const char *kind = nullptr;
    if (S_ISDIR(st.st_mode)) kind = "is a directory, not a snapshot file";
    else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) kind = "is a device, not a snapshot file (only regular files and FIFOs are read)";
    else if (S_ISSOCK(st.st_mode)) kind = "is a socket, not a snapshot file (only regular files and FIFOs are read)";
    else if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) kind = "is not a regular file or FIFO, not a snapshot file";
    if (kind) {
        if (error) *error = path + ": " + kind;
        ::close(f);
        return false;
    }
    if (S_ISFIFO(st.st_mode)) {
        // Read once, as it comes. A read of a FIFO that no writer has opened yet would end at
        // once, so wait until one has written (or come and gone); when that takes a while, say so
        // instead of hanging silently.
        bool noted = false;
        for (;;) {
            pollfd p{f, POLLIN, 0};
            int ready = ::poll(&p, 1, noted ? -1 : 200);
            if (ready > 0 || (ready < 0 && errno != EINTR)) break;
            if (ready == 0 && !noted) {
                std::string note = "vramtrace: note: " + path + " is a FIFO: waiting for a writer (read once, as it comes)\n";
                std::fputs(note.c_str(), stderr);
                noted = true;
            }
        }
    }
    ::fcntl(f, F_SETFL, ::fcntl(f, F_GETFL) & ~O_NONBLOCK);
    *fd = f;
    return true;
}

namespace {

// An istream's bytes from a file descriptor (closed with it).
class FdReadBuf final : public std::streambuf {
public:
    explicit FdReadBuf(int fd) : fd_(fd) {}
    ~FdReadBuf() override { ::close(fd_); }

protected:
    int_type underflow() override {
        if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
        for (;;) {
            ssize_t n = ::read(fd_, buf_, sizeof buf_);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return traits_type::eof();
            setg(buf_, buf_, buf_ + n);
            return traits_type::to_int_type(*gptr());
        }
    }

private:
    int fd_;
    char buf_[1 << 16];
};

} // namespace

bool read_snapshot_file(const std::string &path, report::Snapshot *out, std::string *error) {
    try {
        *out = report::Snapshot{};
        int fd = -1;
        if (!open_snapshot_input(path, &fd, error)) return false;
        FdReadBuf buf(fd);
        std::istream in(&buf);
        report::Snapshot snapshot;
        CollectingSink sink(snapshot);
        if (!read_snapshot_stream(in, path, sink, error)) return false;
        if (std::string problem = check_snapshot_references(snapshot); !problem.empty()) {
            if (error) *error = path + ": " + problem;
            return false;
        }
        report::adopt_graph_memory_pools(snapshot);
        *out = std::move(snapshot);
        return true;
    } catch (const std::bad_alloc &) {
        if (error) *error = path + ": out of memory while reading";
    } catch (const std::exception &e) {
        if (error) *error = path + ": cannot read: " + printable(e.what(), 200);
    }
    *out = report::Snapshot{};
    return false;
}

} // namespace vramtrace::cli
