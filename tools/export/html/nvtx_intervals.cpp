// Reads "nvtx_intervals" from a snapshot's JSON. See nvtx_intervals.h.
#include "export/html/nvtx_intervals.h"

#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

namespace vramtrace::exporter::html {

namespace {

constexpr const char *kMember = "nvtx_intervals";

bool unsigned_field(const nlohmann::json &record, const char *name, uint64_t max, uint64_t *out) {
    auto it = record.find(name);
    if (it == record.end() || !it->is_number_unsigned()) return false;
    uint64_t v = it->get<uint64_t>();
    if (v > max) return false;
    *out = v;
    return true;
}

bool parse_record(const nlohmann::json &record, NvtxInterval *out) {
    if (!record.is_object()) return false;
    auto name = record.find("name"), domain = record.find("domain");
    if (name == record.end() || !name->is_string()) return false;
    if (domain != record.end() && !domain->is_string()) return false;
    out->name = name->get<std::string>();
    if (domain != record.end()) out->domain = domain->get<std::string>();
    uint64_t thread = 0, v = 0;
    constexpr uint64_t kU64 = std::numeric_limits<uint64_t>::max(), kU32 = std::numeric_limits<uint32_t>::max();
    if (!unsigned_field(record, "start_ns", kU64, &out->start_ns)) return false;
    if (!unsigned_field(record, "start_thread", kU32, &thread)) return false;
    out->start_thread = uint32_t(thread);
    // end_ns and end_thread come together: both present (closed) or both absent (open).
    bool has_end = record.contains("end_ns"), has_end_thread = record.contains("end_thread");
    if (has_end != has_end_thread) return false;
    if (has_end) {
        if (!unsigned_field(record, "end_ns", kU64, &v) || v < out->start_ns) return false;
        out->end_ns = v;
        if (!unsigned_field(record, "end_thread", kU32, &thread)) return false;
        out->end_thread = uint32_t(thread);
    }
    return true;
}

} // namespace

bool read_nvtx_intervals(const std::string &path, std::vector<NvtxInterval> *out, std::string *error) {
    out->clear();
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        *error = "cannot read the file again for nvtx_intervals";
        return false;
    }
    // Every top-level member but nvtx_intervals is dropped as soon as its key is seen.
    bool keep = false;
    auto only_intervals = [&keep](int depth, nlohmann::json::parse_event_t event, nlohmann::json &parsed) {
        if (depth == 1 && event == nlohmann::json::parse_event_t::key) keep = parsed == kMember;
        if (depth == 1 && event == nlohmann::json::parse_event_t::key) return keep;
        return depth == 0 || keep;
    };
    nlohmann::json root = nlohmann::json::parse(in, only_intervals, false);
    if (root.is_discarded() || !root.is_object()) {
        *error = "cannot parse the file again for nvtx_intervals";
        return false;
    }
    auto it = root.find(kMember);
    if (it == root.end()) return true;
    if (!it->is_array()) {
        *error = "nvtx_intervals is not an array: no interval is drawn";
        return false;
    }
    out->reserve(it->size());
    for (const nlohmann::json &record : *it) {
        NvtxInterval interval;
        if (!parse_record(record, &interval)) {
            out->clear();
            *error = "nvtx_intervals holds a record that is not {domain, name, start_ns, end_ns, start_thread, "
                     "end_thread}: no interval is drawn";
            return false;
        }
        out->push_back(std::move(interval));
    }
    return true;
}

} // namespace vramtrace::exporter::html
