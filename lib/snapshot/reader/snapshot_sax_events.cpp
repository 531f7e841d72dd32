// The SAX events of SnapshotSaxHandler (snapshot_sax_handler.h) and what they open and close: the
// top-level members, their records, the lists and nested records inside a record, and the
// containers skipped whole; each record complete is handed to the sink.
#include "snapshot/reader/snapshot_sax_handler.h"

#include "snapshot/device_range.h"

namespace vramtrace::snapshot::schema {

bool SnapshotSaxHandler::boolean(bool v) {
    Scalar s{Scalar::Bool};
    s.b = v;
    return scalar(s);
}

bool SnapshotSaxHandler::number_integer(number_integer_t v) {
    Scalar s{Scalar::Int};
    s.i = v;
    return scalar(s);
}

bool SnapshotSaxHandler::number_unsigned(number_unsigned_t v) {
    Scalar s{Scalar::Uint};
    s.u = v;
    return scalar(s);
}

bool SnapshotSaxHandler::string(string_t &v) {
    Scalar s{Scalar::String};
    s.s = &v;
    return scalar(s);
}

bool SnapshotSaxHandler::key(string_t &k) {
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

bool SnapshotSaxHandler::parse_error(std::size_t, const std::string &, const nlohmann::detail::exception &ex) {
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

std::string SnapshotSaxHandler::record_path() const {
    std::string path(top_name());
    if (is_array_member(top_)) path += "[" + std::to_string(index_) + "]";
    return path;
}

std::string SnapshotSaxHandler::field_path() const {
    std::string path = record_path();
    if (field_ >= 0) {
        with_record([&](auto &, const auto &fields) {
            if (size_t(field_) < fields.size()) path.append(".").append(fields[size_t(field_)].name);
        });
    }
    return path;
}

std::string SnapshotSaxHandler::sub_path() const {
    return field_path() + "[" + std::to_string(sub_index_) + "]";
}

std::string SnapshotSaxHandler::sub_field_path() const {
    std::string path = sub_path();
    with_sub([&](auto &, const auto &fields) {
        if (sub_field_ >= 0 && size_t(sub_field_) < fields.size()) path.append(".").append(fields[size_t(sub_field_)].name);
    });
    return path;
}

bool SnapshotSaxHandler::fail(std::string message) {
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

bool SnapshotSaxHandler::open(bool object) {
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

bool SnapshotSaxHandler::close() {
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

bool SnapshotSaxHandler::begin_record() {
    ctx_.push_back(Ctx{Ctx::Record});
    seen_fields_ = 0;
    field_ = -1;
    with_record([](auto &record, const auto &) { record = std::remove_reference_t<decltype(record)>{}; });
    return true;
}

bool SnapshotSaxHandler::end_record() {
    bool ok = true;
    std::string missing;
    with_record([&](auto &, const auto &fields) {
        for (size_t i = 0; i < fields.size() && ok; ++i)
            if (!fields[i].optional && !(seen_fields_ & (1u << i))) ok = false, missing = fields[i].name;
    });
    field_ = -1;
    if (!ok) return fail(record_path() + ": missing field \"" + missing + "\"");
    if (const int *device = record_device(); device && !device_ordinal_valid(*device))
        return fail(record_path() + ".device: " + std::to_string(*device) + " is not a device ordinal (" +
                    std::to_string(kMinDeviceOrdinal) + " to " +
                    std::to_string(kMaxDeviceOrdinal) + ")");
    if (top_ == Top::Events && event_.type != "alloc" && event_.type != "free" && event_.type != "mark" &&
        event_.type != "oom")
        return fail(record_path() + ".type: \"" + printable(event_.type) +
                    "\" is not one of \"alloc\", \"free\", \"mark\", \"oom\"");
    if (!ignoring_) deliver();
    if (is_object_member(top_)) mark_top();
    else ++index_;
    return true;
}

const int *SnapshotSaxHandler::record_device() const {
    switch (top_) {
    case Top::Devices: return &device_.device;
    case Top::Allocations: return &allocation_.device;
    case Top::MergedDevices: return &merged_device_.device;
    case Top::Peaks: return &peak_.device;
    case Top::Ooms: return &oom_.device;
    case Top::Pools: return &pool_.device;
    case Top::Events: return &event_.device;
    case Top::ImbalanceOutliers: return &imbalance_outlier_.device;
    case Top::NvtxRegions: return &nvtx_region_.device;
    default: return nullptr;
    }
}

void SnapshotSaxHandler::deliver() {
    switch (top_) {
    case Top::Process: sink_.on_process(std::move(process_)); break;
    case Top::Dropped:
        sink_.on_dropped(dropped_.allocations, dropped_.stacks);
        sink_.on_dropped_peak_sites(dropped_.peak_sites);
        if (dropped_.nvtx_range_stacks != 0 || dropped_.nvtx_range_names != 0)
            sink_.on_dropped_nvtx(dropped_.nvtx_range_stacks, dropped_.nvtx_range_names);
        if (dropped_.nvtx_regions != 0 || dropped_.nvtx_regions_outside != 0 || dropped_.nvtx_unregisters_unknown != 0)
            sink_.on_dropped_nvtx_regions(dropped_.nvtx_regions, dropped_.nvtx_regions_outside,
                                          dropped_.nvtx_unregisters_unknown);
        if (dropped_.nvtx_intervals != 0) sink_.on_dropped_nvtx_intervals(dropped_.nvtx_intervals);
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
    case Top::Imbalance: sink_.on_imbalance(std::move(imbalance_)); break;
    case Top::ImbalanceOutliers: sink_.on_imbalance_outlier(std::move(imbalance_outlier_)); break;
    case Top::NvtxRanges: sink_.on_range_stack(std::move(range_stack_)); break;
    case Top::NvtxRegions: sink_.on_nvtx_region(std::move(nvtx_region_)); break;
    case Top::NvtxIntervals: sink_.on_nvtx_interval(std::move(nvtx_interval_)); break;
    default: break;
    }
}

bool SnapshotSaxHandler::field_is_list() const {
    bool list = false;
    with_record([&](auto &, const auto &fields) {
        std::visit([&](auto member) { list = is_vector_member<decltype(member)>; },
                   fields[size_t(field_)].member);
    });
    return list;
}

bool SnapshotSaxHandler::field_is_sub_list() const {
    bool sub = false;
    with_record([&](auto &, const auto &fields) {
        std::visit([&](auto member) { sub = is_sub_list<decltype(member)>; }, fields[size_t(field_)].member);
    });
    return sub;
}

void SnapshotSaxHandler::clear_list() {
    with_record([&](auto &record, const auto &fields) {
        std::visit(
            [&](auto member) {
                if constexpr (is_vector_member<decltype(member)> && !is_sub_list<decltype(member)>)
                    (record.*member).clear();
            },
            fields[size_t(field_)].member);
    });
}

} // namespace vramtrace::snapshot::schema
