// The merge's own tables: the distinct modules, frames, stacks and call sites of all inputs,
// each interned once under a key that matches it across processes; the spool of re-numbered
// allocations; and the device and call-site rows the report is made of. The inputs are read by
// merge_read.cpp, the merged snapshot written by merge_write.cpp, the report text made by
// merge_text.cpp.
#include "analysis/merge_core.h"
#include "analysis/merge_file_state.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <map>
#include <tuple>

#include <unistd.h>

#include "common/json_text.h"
#include "snapshot/snapshot_model.h"
#include "report/text_format.h"
#include "snapshot/snapshot_fields.h"

namespace vramtrace::cli {

namespace {

void append_bytes(std::string &key, const void *p, size_t n) { key.append(static_cast<const char *>(p), n); }

// The lists that make a range stack what it is, in the order they enter its key (intern_range):
// the same lists in two inputs are one merged range stack. Two stacks that differ only in a
// range's category are two stacks, as the library keeps them.
std::array<const std::vector<std::string> *, 3> range_lists(const snapshot::RangeStack &r) {
    return {&r.domains, &r.names, &r.categories};
}

// A list of categories with none set says what no list says (the library leaves it out then).
bool no_category(const std::vector<std::string> &categories) {
    return std::all_of(categories.begin(), categories.end(), [](const std::string &c) { return c.empty(); });
}

} // namespace

Merger::Merger(const SiteKeyOptions &keys, std::FILE *spool) : keys_(keys), spool_(spool) {}

uint32_t Merger::intern_module(const snapshot::Module &m) {
    std::string key = m.path;
    key += '\0';
    key += m.build_id;
    auto [it, inserted] = module_index_.try_emplace(std::move(key), uint32_t(modules_.size()));
    if (inserted) modules_.push_back(m);
    return it->second;
}

uint32_t Merger::intern_frame(const snapshot::Frame &f, int merged_module) {
    // A frame in a known module is the same frame in every process that loaded that module, wherever
    // it was loaded; elsewhere only the address can tell.
    std::string key;
    if (merged_module >= 0) {
        key = "m";
        append_bytes(key, &merged_module, sizeof merged_module);
        append_bytes(key, &f.module_offset, sizeof f.module_offset);
    } else {
        key = f.python ? "p" : "a";
        append_bytes(key, &f.address, sizeof f.address);
        append_bytes(key, &f.line, sizeof f.line);
        key += f.function;
        key += '\0';
        key += f.file;
    }
    auto [it, inserted] = frame_index_.try_emplace(std::move(key), uint32_t(frames_.size()));
    if (inserted) {
        frames_.push_back(f);
        frames_.back().module = merged_module;
    }
    return it->second;
}

uint32_t Merger::no_stack_site() {
    auto [it, inserted] = site_index_.try_emplace(std::string(kNoStackKey), uint32_t(sites_.size()));
    if (inserted) sites_.push_back(Site{std::string(kNoStackKey)});
    return it->second;
}

uint32_t Merger::intern_range(const snapshot::RangeStack &given) {
    snapshot::RangeStack range = given;
    if (no_category(range.categories)) range.categories.clear();
    // Each list as its length, then each string as its length and its bytes: no two different
    // lists make one key.
    std::string key;
    for (const std::vector<std::string> *list : range_lists(range)) {
        uint32_t n = uint32_t(list->size());
        append_bytes(key, &n, sizeof n);
        for (const std::string &item : *list) {
            uint32_t length = uint32_t(item.size());
            append_bytes(key, &length, sizeof length);
            key += item;
        }
    }
    auto [it, inserted] = range_index_.try_emplace(std::move(key), uint32_t(ranges_.size() + 1));
    if (inserted) {
        ranges_.push_back(std::move(range));
        ranges_.back().id = it->second;
    }
    return it->second;
}

std::string Merger::range_label(uint32_t range) const {
    if (range == 0 || range > ranges_.size()) return report::range_stack_label(snapshot::Snapshot{}, range);
    return report::range_stack_label(ranges_[range - 1]);
}

std::vector<MergedRoleRanges> Merger::ranges_by_role() const {
    std::vector<MergedRoleRanges> out;
    if (ranges_.empty()) return out;
    for (const auto &[role, by_range] : role_ranges_) {
        MergedRoleRanges r;
        r.role = role;
        for (const auto &[range, t] : by_range) r.rows.push_back({range, t.live_bytes, t.live_count, t.peak_bytes});
        std::stable_sort(r.rows.begin(), r.rows.end(), [&](const MergedRangeRow &a, const MergedRangeRow &b) {
            if (a.peak_bytes != b.peak_bytes) return a.peak_bytes > b.peak_bytes;
            if (a.live_bytes != b.live_bytes) return a.live_bytes > b.live_bytes;
            return range_label(a.range) < range_label(b.range);
        });
        out.push_back(std::move(r));
    }
    return out;
}

uint32_t Merger::intern_stack(std::vector<uint32_t> frames, const snapshot::Stack &stack) {
    const int call_site = stack.call_site;
    // A via outside the stack (a file's own, kept for a stack read before its frames) is none.
    const int via = stack.via >= 0 && size_t(stack.via) < frames.size() ? stack.via : -1;
    std::string key;
    append_bytes(key, &call_site, sizeof call_site);
    append_bytes(key, &via, sizeof via);
    append_bytes(key, frames.data(), frames.size() * sizeof(uint32_t));
    key += stack.category;
    key += '\0';
    key += stack.via_label;
    auto [it, inserted] = stack_index_.try_emplace(std::move(key), uint32_t(stacks_.size() + 1));
    if (!inserted) return it->second;
    // Its call-site key, as call_sites.h builds it.
    std::string site_key;
    if (call_site < 0) {
        site_key = kNoCallSiteKey;
    } else {
        unsigned taken = 0;
        for (size_t i = size_t(call_site); i < frames.size() && taken < keys_.frames; ++i, ++taken) {
            const snapshot::Frame &f = frames_[frames[i]];
            if (!site_key.empty()) site_key += kKeySeparator;
            site_key += frame_key(f.module >= 0 ? std::string_view(modules_[size_t(f.module)].path) : "", f, keys_.lines);
            if (taken == 0) site_key += via_key(stack.via_label);
        }
    }
    auto [s, new_site] = site_index_.try_emplace(site_key, uint32_t(sites_.size()));
    if (new_site) sites_.push_back(Site{std::move(site_key), uint32_t(stacks_.size() + 1)});
    Stack st;
    st.frames = std::move(frames);
    st.call_site = call_site;
    st.via = via;
    st.category = stack.category;
    st.site = s->second;
    stacks_.push_back(std::move(st));
    return it->second;
}

void Merger::spool_allocation(const snapshot::Allocation &a, uint32_t merged_stack, uint32_t merged_range) {
    if (!spool_ || spool_failed_) return;
    auto escaped = [&](const std::string &s) -> const std::string & {
        auto it = escaped_.find(s);
        if (it == escaped_.end()) it = escaped_.emplace(s, json_string(s)).first;
        return it->second;
    };
    std::string line = spooled_ == 0 ? "    " : ",\n    ";
    namespace f = snapshot::member::allocations;
    line += "{" + json_key(f::address) + "\"" + report::hex_u64(a.address) + "\", " + json_key(f::size) +
            std::to_string(a.size) + ", " + json_key(f::kind) + escaped(a.kind) + ", " + json_key(f::device) +
            std::to_string(a.device) + ", " + json_key(f::api) + escaped(a.api) + ", " + json_key(f::stream) + "\"" +
            report::hex_u64(a.stream) + "\", " + json_key(f::thread_id) + std::to_string(a.thread_id) + ", " +
            json_key(f::time_ns) + std::to_string(a.time_ns) + ", " + json_key(f::stack) + std::to_string(merged_stack) +
            (a.size_is_estimate ? ", " + json_key(f::size_is_estimate) + "true" : "") +
            (merged_range != 0 ? ", " + json_key(f::range) + std::to_string(merged_range) + "}" : "}");
    if (std::fwrite(line.data(), 1, line.size(), spool_) != line.size()) {
        spool_failed_ = true;
        spool_errno_ = errno;
        return;
    }
    ++spooled_;
}

bool Merger::spool_mark(long long *offset) {
    if (!spool_) return true;
    off_t at = ::ftello(spool_);
    if (at < 0) return false;
    *offset = at;
    return true;
}

bool Merger::spool_rewind(long long offset, uint64_t count) {
    if (!spool_) return true;
    if (std::fflush(spool_) != 0 || ::ftruncate(::fileno(spool_), off_t(offset)) != 0 ||
        ::fseeko(spool_, off_t(offset), SEEK_SET) != 0)
        return false;
    spooled_ = count;
    return true;
}

std::vector<MergedDeviceRow> Merger::devices() const {
    // One GPU has one UUID wherever it is seen (two processes of one node, each with its own
    // CUDA_VISIBLE_DEVICES, see it under different ordinals); without one, host + ordinal is all
    // there is. Rows matched by UUID name where they were seen.
    std::map<std::tuple<std::string, int, std::string>, MergedDeviceRow> rows;
    std::map<std::string, std::vector<std::string>> seen_as; // uuid -> "HOST cuda:N", first seen first
    for (const snapshot::MergedDevice &d : process_devices_) {
        const std::string &host = d.input < process_hosts_.size() ? process_hosts_[d.input] : std::string();
        std::string where = (host.empty() ? "?" : host) + " " + report::device_label(d.device);
        auto key = d.uuid.empty() ? std::make_tuple(host, d.device, std::string())
                                  : std::make_tuple(std::string(), 0, d.uuid);
        MergedDeviceRow &r = rows[key];
        if (r.processes == 0) {
            r.host = d.uuid.empty() ? host : std::string();
            r.device = d.device;
            r.uuid = d.uuid;
            r.identity = where;
        }
        if (!d.uuid.empty()) {
            auto &list = seen_as[d.uuid];
            if (std::find(list.begin(), list.end(), where) == list.end()) list.push_back(where);
            std::string names;
            for (const std::string &w : list) names += (names.empty() ? "" : ", ") + w;
            r.identity = d.uuid + " (" + names + ")";
        }
        ++r.processes;
        r.current_bytes += d.current_bytes;
        r.peak_sum += d.peak_bytes;
        r.peak_max = std::max(r.peak_max, d.peak_bytes);
    }
    std::vector<MergedDeviceRow> out;
    out.reserve(rows.size());
    for (auto &[key, row] : rows) out.push_back(std::move(row));
    return out;
}

std::string Merger::site_key_of_stack(uint32_t stack) const {
    if (stack == 0 || stack > stacks_.size()) return std::string(kNoStackKey);
    return sites_[stacks_[stack - 1].site].key;
}

std::vector<MergedSiteRow> Merger::sites() const {
    std::vector<MergedSiteRow> out;
    for (const Site &s : sites_)
        if (s.live_count > 0) out.push_back(MergedSiteRow{s.key, s.live_bytes, s.live_count, s.files});
    std::sort(out.begin(), out.end(), [](const MergedSiteRow &a, const MergedSiteRow &b) {
        if (a.live_bytes != b.live_bytes) return a.live_bytes > b.live_bytes;
        if (a.live_count != b.live_count) return a.live_count > b.live_count;
        return a.key < b.key;
    });
    return out;
}

// The merged id of the input's range stack at `local` in its nvtx_ranges (interned on first use).
uint32_t Merger::merged_range_of(FileState &state, size_t local) {
    if (state.range_merged.size() < state.ranges.size()) state.range_merged.resize(state.ranges.size(), 0);
    uint32_t &merged = state.range_merged[local];
    if (merged == 0) merged = intern_range(state.ranges[local]);
    return merged;
}

// The merged id of the input's stack at `local` in its stacks (interned on first use).
uint32_t Merger::merged_stack_of(FileState &state, size_t local) {
    if (state.stack_merged.size() < state.stacks.size()) state.stack_merged.resize(state.stacks.size(), 0);
    if (state.stack_merged[local] != 0) return state.stack_merged[local];
    const snapshot::Stack &st = state.stacks[local];
    std::vector<uint32_t> frames;
    frames.reserve(st.frames.size());
    for (uint32_t f : st.frames) frames.push_back(merged_frame_of(state, f));
    uint32_t id = intern_stack(std::move(frames), st);
    state.stack_merged[local] = id;
    return id;
}

// The merged index of the input's frame at `local` in its frames (interned on first use, with its module).
uint32_t Merger::merged_frame_of(FileState &state, uint32_t local) {
    if (state.frame_merged.size() < state.frames.size()) state.frame_merged.resize(state.frames.size(), 0);
    if (state.frame_merged[local] != 0) return state.frame_merged[local] - 1;
    const snapshot::Frame &f = state.frames[local];
    int module = -1;
    if (f.module >= 0) {
        if (state.module_merged.size() < state.modules.size()) state.module_merged.resize(state.modules.size(), 0);
        uint32_t &mm = state.module_merged[size_t(f.module)];
        if (mm == 0) mm = intern_module(state.modules[size_t(f.module)]) + 1;
        module = int(mm - 1);
    }
    uint32_t merged = intern_frame(f, module);
    state.frame_merged[local] = merged + 1;
    return merged;
}

} // namespace vramtrace::cli
