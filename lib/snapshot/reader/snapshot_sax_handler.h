// The SAX handler behind read_snapshot_stream (snapshot_reader.cpp): nlohmann::json's events
// driving a small state machine over the schema of docs/snapshot-format.md (the field tables:
// snapshot_schema.h). Its events, containers and records: snapshot_sax_events.cpp; the scalars it
// converts into fields: snapshot_sax_scalars.cpp. Internal to the reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "snapshot/reader/snapshot_reader.h"
#include "snapshot/reader/snapshot_schema.h"

namespace vramtrace::snapshot::schema {

class SnapshotSaxHandler final : public nlohmann::json_sax<nlohmann::json> {
public:
    SnapshotSaxHandler(std::istream &in, const std::string &name, SnapshotSink &sink)
        : in_(in), name_(name), sink_(sink) {}

    // The result once sax_parse returned.
    bool finish(bool parsed, std::string *error);

    // ---- nlohmann::json_sax ----
    bool null() override { return scalar(Scalar{Scalar::Null}); }
    bool boolean(bool v) override;
    bool number_integer(number_integer_t v) override;
    bool number_unsigned(number_unsigned_t v) override;
    bool number_float(number_float_t, const string_t &) override { return scalar(Scalar{Scalar::Float}); }
    bool string(string_t &v) override;
    bool binary(binary_t &) override { return scalar(Scalar{Scalar::Null}); } // not produced for JSON

    bool start_object(std::size_t) override { return open(true); }
    bool start_array(std::size_t) override { return open(false); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }

    bool key(string_t &k) override;
    bool parse_error(std::size_t, const std::string &, const nlohmann::detail::exception &ex) override;

private:
    struct Ctx {
        enum Kind { Root, Record, RecordArray, List, SubArray, SubRecord, Skip } kind;
        size_t skip_nested = 0; // Skip: containers opened inside the skipped one
    };

    // ---- where we are, for messages ----
    std::string record_path() const;
    std::string field_path() const;
    std::string sub_path() const;
    std::string sub_field_path() const;
    std::string_view top_name() const { return top_ == Top::Unknown ? "?" : kTopNames[size_t(top_)]; }

    // Calls fn(record, fields) for the record type of the current top-level member.
    template <class Fn> void with_record(Fn &&fn) const {
        auto *self = const_cast<SnapshotSaxHandler *>(this);
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
        case Top::Imbalance: fn(self->imbalance_, Schema<ImbalanceRole>::fields); break;
        case Top::ImbalanceOutliers: fn(self->imbalance_outlier_, Schema<ImbalanceOutlier>::fields); break;
        case Top::NvtxRanges: fn(self->range_stack_, Schema<RangeStack>::fields); break;
        case Top::NvtxRegions: fn(self->nvtx_region_, Schema<NvtxRegion>::fields); break;
        case Top::NvtxIntervals: fn(self->nvtx_interval_, Schema<NvtxInterval>::fields); break;
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
    static bool is_object_member(Top t) { return t == Top::Process || t == Top::Dropped || t == Top::EventHistory; }
    static bool is_array_member(Top t) {
        return t == Top::Devices || t == Top::Modules || t == Top::Frames || t == Top::Stacks ||
               t == Top::Allocations || t == Top::MergedProcesses || t == Top::MergedDevices || t == Top::Peaks ||
               t == Top::Ooms || t == Top::Pools || t == Top::Events || t == Top::Teardowns || t == Top::Imbalance ||
               t == Top::ImbalanceOutliers || t == Top::NvtxRanges || t == Top::NvtxRegions ||
               t == Top::NvtxIntervals;
    }

    // An error. Once "format" confirmed the file, the parse stops. Before that the file may still
    // turn out to be foreign, which is the better message: remember the error, skip everything but
    // the top-level "format" member, and decide at the end.
    bool fail(std::string message);

    // Containers and records (snapshot_sax_events.cpp).
    bool open(bool object);
    bool close();
    bool begin_record();
    bool end_record();

    // The device ordinal of the record just read, for the records that have one.
    const int *record_device() const;

    void deliver();
    void mark_top() { top_seen_ |= 1u << unsigned(top_); }
    bool field_is_list() const;
    bool field_is_sub_list() const;
    void clear_list();

    // Scalars into the fields of the records (snapshot_sax_scalars.cpp).
    bool scalar(const Scalar &v);
    bool sub_scalar(const Scalar &v);
    bool top_scalar(const Scalar &v);
    // A top-level count (oom_count, teardown_count), handed to the sink through `deliver`.
    bool top_count(const Scalar &v, void (SnapshotSink::*deliver)(uint64_t));
    bool record_scalar(const Scalar &v);
    bool list_scalar(const Scalar &v);
    void check_complete();

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
    ImbalanceRole imbalance_;
    ImbalanceOutlier imbalance_outlier_;
    RangeStack range_stack_;
    NvtxRegion nvtx_region_;
    NvtxInterval nvtx_interval_;
};

} // namespace vramtrace::snapshot::schema
