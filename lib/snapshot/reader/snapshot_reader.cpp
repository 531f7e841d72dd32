// Streaming snapshot reader: nlohmann::json's SAX interface driving a small state machine over the
// schema of docs/snapshot-format.md (the field tables: snapshot_schema.h). See snapshot_reader.h
// for the contract; whole files: snapshot_files.cpp; cross references: snapshot_references.cpp.
// Longer than most files here: the state machine is one idea, and its states call each other.
#include "snapshot/reader/snapshot_reader.h"

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

#include "snapshot/reader/snapshot_schema.h"

namespace vramtrace::cli {
namespace {

using namespace schema;

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
                error_ = "not a vramtrace snapshot (\"" + std::string(member::top::format) + "\" is " +
                         kind_name(v.kind) + ")";
                return false;
            }
            if (*v.s != report::kFormatName) {
                error_ = "not a vramtrace snapshot (\"" + std::string(member::top::format) + "\" is \"" +
                         printable(*v.s) + "\", expected \"" + report::kFormatName + "\")";
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
            if (!convert(v, count, &why)) return fail(std::string(top_name()) + ": " + why);
            mark_top();
            if (!ignoring_) sink_.on_oom_count(count);
            return true;
        }
        case Top::TeardownCount: {
            uint64_t count = 0;
            std::string why;
            if (!convert(v, count, &why)) return fail(std::string(top_name()) + ": " + why);
            mark_top();
            if (!ignoring_) sink_.on_teardown_count(count);
            return true;
        }
        case Top::SchemaVersion: {
            int version = 0;
            std::string why;
            if (!convert(v, version, &why)) return fail(std::string(top_name()) + ": " + why);
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
            error_ = "not a vramtrace snapshot (no \"" + std::string(member::top::format) + "\": \"" +
                     std::string(report::kFormatName) + "\" member)";
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

} // namespace

namespace {

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

} // namespace vramtrace::cli
