// The scalars of SnapshotSaxHandler (snapshot_sax_handler.h): each converted into the field it
// belongs to (snapshot_schema.h: convert), a top-level count or version, or refused with a
// message naming where it stood; and, at the end, whether the document was complete.
#include "snapshot/reader/snapshot_sax_handler.h"

namespace vramtrace::snapshot::schema {

bool SnapshotSaxHandler::finish(bool parsed, std::string *error) {
    if (parsed && error_.empty()) check_complete();
    if (error_.empty()) return true;
    if (error) *error = name_ + ": " + error_;
    return false;
}

bool SnapshotSaxHandler::scalar(const Scalar &v) {
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

bool SnapshotSaxHandler::sub_scalar(const Scalar &v) {
    if (sub_field_ < 0) return true; // unknown member
    std::string why;
    bool ok = true;
    with_sub([&](auto &list, const auto &fields) {
        const auto &f = fields[size_t(sub_field_)];
        std::visit(
            [&](auto member) {
                using Member = decltype(member);
                if constexpr (!is_vector_member<Member>) {
                    ok = convert_field(v, f.hex, list.back().*member, &why);
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

bool SnapshotSaxHandler::top_scalar(const Scalar &v) {
    switch (top_) {
    case Top::Unknown: return true;
    case Top::Format:
        if (v.kind != Scalar::String) {
            error_ = "not a vramtrace snapshot (\"" + std::string(member::top::format) + "\" is " +
                     kind_name(v.kind) + ")";
            return false;
        }
        if (*v.s != kFormatName) {
            error_ = "not a vramtrace snapshot (\"" + std::string(member::top::format) + "\" is \"" +
                     printable(*v.s) + "\", expected \"" + kFormatName + "\")";
            return false;
        }
        format_ok_ = true;
        mark_top();
        if (ignoring_) {
            error_ = std::move(deferred_);
            return false;
        }
        return true;
    case Top::OomCount: return top_count(v, &SnapshotSink::on_oom_count);
    case Top::TeardownCount: return top_count(v, &SnapshotSink::on_teardown_count);
    case Top::SchemaVersion: {
        int version = 0;
        std::string why;
        if (!convert(v, version, &why)) return fail(std::string(top_name()) + ": " + why);
        if (version > kSchemaVersion)
            return fail("schema_version " + std::to_string(version) + " is newer than this vramtrace reads (" +
                        std::to_string(kSchemaVersion) + "); use a newer vramtrace");
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

bool SnapshotSaxHandler::top_count(const Scalar &v, void (SnapshotSink::*deliver)(uint64_t)) {
    uint64_t count = 0;
    std::string why;
    if (!convert(v, count, &why)) return fail(std::string(top_name()) + ": " + why);
    mark_top();
    if (!ignoring_) (sink_.*deliver)(count);
    return true;
}

bool SnapshotSaxHandler::record_scalar(const Scalar &v) {
    if (field_ < 0) return true; // unknown member
    std::string why;
    bool ok = true, list = false;
    with_record([&](auto &record, const auto &fields) {
        const auto &f = fields[size_t(field_)];
        std::visit(
            [&](auto member) {
                if constexpr (is_vector_member<decltype(member)>) list = true;
                else ok = convert_field(v, f.hex, record.*member, &why);
            },
            f.member);
    });
    if (list) ok = false, why = std::string("expected an array, got ") + kind_name(v.kind);
    if (!ok) return fail(field_path() + ": " + why);
    seen_fields_ |= 1u << unsigned(field_);
    return true;
}

bool SnapshotSaxHandler::list_scalar(const Scalar &v) {
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

void SnapshotSaxHandler::check_complete() {
    if (!format_ok_) {
        error_ = "not a vramtrace snapshot (no \"" + std::string(member::top::format) + "\": \"" +
                 std::string(kFormatName) + "\" member)";
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

} // namespace vramtrace::snapshot::schema
