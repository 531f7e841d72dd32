// Call-site keys and the streaming per-site reduction of a snapshot. See call_sites.h.
#include "analysis/call_sites.h"

#include "input/offline_symbolize.h"
#include "report/text_safety.h"
#include "snapshot/snapshot_fields.h"
#include "report/text_format.h"

#include <algorithm>
#include <istream>
#include <iterator>
#include <map>
#include <tuple>
#include <unordered_map>

namespace vramtrace::cli {

namespace {

using snapshot::Allocation;
using snapshot::Frame;
using snapshot::Module;
using snapshot::Stack;

template <class T> void insert_sorted_unique(std::vector<T> &list, const T &value) {
    auto it = std::lower_bound(list.begin(), list.end(), value);
    if (it == list.end() || *it != value) list.insert(it, value);
}

void append_part(std::string &key, const std::string &part) {
    if (!key.empty()) key += kKeySeparator;
    key += part;
}

// What the collector keeps of a frame: enough for frame_key.
struct KeptFrame {
    int module = -1;
    uint32_t line = 0;
    uint64_t address = 0;
    uint64_t module_offset = 0;
    std::string function;
    std::string file; // base name only
};

struct KeptStack {
    size_t position = 0;             // index in the file's stacks array, for messages
    int call_site = -1;
    std::vector<uint32_t> key_frames; // indices into frames of the frames that make the key
    std::string via_label;           // Stack::via_label, "" when none
    std::string category;            // category_of the stack
    uint32_t max_frame = 0;          // the largest frame index of the whole stack, and where it is
    size_t max_frame_at = 0;
    bool has_frames = false;
};

struct DeviceBytes {
    int device = 0;
    uint64_t bytes = 0;
    uint64_t count = 0;
};

struct RunningTotal {
    size_t first_allocation = 0; // index of the first allocation naming this stack, for messages
    uint64_t bytes = 0;
    uint64_t count = 0;
    std::vector<int> devices;
    std::vector<std::string> apis;
    std::vector<DeviceBytes> per_device; // for the totals per category
};

class SiteCollector final : public snapshot::SnapshotSink {
public:
    SiteCollector(const SiteKeyOptions &options, SnapshotSites &out) : options_(options), out_(out) {}

    void on_schema_version(int version) override { out_.schema_version = version; }
    void on_process(snapshot::ProcessInfo &&p) override { out_.process = std::move(p); }
    void on_device(snapshot::DeviceTotals &&d) override { out_.devices.push_back(d); }
    void on_dropped(uint64_t allocations, uint64_t stacks) override {
        out_.dropped_allocations = allocations;
        out_.dropped_stacks = stacks;
    }
    void on_module(Module &&m) override { modules_.emplace_back(snapshot::path_basename(m.path)); }
    void on_frame(Frame &&f) override {
        KeptFrame k;
        k.module = f.module;
        k.line = f.line;
        k.address = f.address;
        k.module_offset = f.module_offset;
        k.function = std::move(f.function);
        k.file = std::string(snapshot::path_basename(f.file));
        frames_.push_back(std::move(k));
    }
    void on_stack(Stack &&s) override {
        size_t position = stack_count_++;
        if (!error_.empty()) return;
        error_ = snapshot::references::stack_id(position, s.id);
        if (error_.empty()) error_ = snapshot::references::stack_indices(position, s);
        if (!error_.empty()) return;
        KeptStack k;
        k.position = position;
        k.call_site = s.call_site;
        for (size_t i = 0; i < s.frames.size(); ++i)
            if (!k.has_frames || s.frames[i] > k.max_frame) k.max_frame = s.frames[i], k.max_frame_at = i, k.has_frames = true;
        if (s.call_site >= 0)
            for (size_t i = size_t(s.call_site); i < s.frames.size() && k.key_frames.size() < options_.frames; ++i)
                k.key_frames.push_back(s.frames[i]);
        k.via_label = std::move(s.via_label);
        k.category = std::string(category_of(&s));
        if (!stacks_.emplace(s.id, std::move(k)).second) error_ = snapshot::references::duplicate_stack(s.id);
    }
    void on_range_stack(snapshot::RangeStack &&r) override { ranges_.range_stacks.push_back(std::move(r)); }
    void on_allocation(Allocation &&a) override {
        size_t index = allocation_count_++;
        if (!snapshot::counts_as_held(a)) return;
        auto &by_range = range_live_[{a.device, a.range}];
        by_range.first += a.size, ++by_range.second;
        auto [it, inserted] = totals_.try_emplace(a.stack);
        RunningTotal &t = it->second;
        if (inserted) t.first_allocation = index;
        t.bytes += a.size;
        t.count += 1;
        insert_sorted_unique(t.devices, a.device);
        insert_sorted_unique(t.apis, a.api);
        auto d = std::find_if(t.per_device.begin(), t.per_device.end(),
                              [&](const DeviceBytes &x) { return x.device == a.device; });
        if (d == t.per_device.end()) d = t.per_device.insert(t.per_device.end(), DeviceBytes{a.device});
        d->bytes += a.size;
        d->count += 1;
    }
    void on_merged_process(snapshot::MergedProcess &&) override { ++out_.merged_processes; }
    void on_oom_count(uint64_t count) override { out_.oom_count = count; }
    void on_peak(snapshot::DevicePeak &&p) override { peaks_.push_back(std::move(p)); }
    void on_oom(snapshot::OomEvent &&o) override { oom_stacks_.push_back(o.stack); }
    void on_event(snapshot::Event &&e) override {
        if (e.stack != 0) event_stacks_.try_emplace(e.stack, event_count_);
        ++event_count_;
    }

    // After a successful read: checks the cross references and fills out_.sites. "" or the problem.
    std::string finish() {
        if (!error_.empty()) return error_;
        for (size_t i = 0; i < frames_.size(); ++i)
            if (std::string p = snapshot::references::frame_module(i, frames_[i].module, modules_.size()); !p.empty()) return p;
        for (const auto &[id, s] : stacks_)
            if (s.has_frames)
                if (std::string p = snapshot::references::stack_frame(s.position, s.max_frame_at, s.max_frame, frames_.size());
                    !p.empty())
                    return p;
        // Stacks named but not listed: the first such record of allocations, then peaks, OOMs and
        // events, with the messages of read_snapshot_file.
        using snapshot::references::missing_stack;
        using snapshot::references::record;
        auto missing = [&](uint32_t id) { return id != 0 && stacks_.find(id) == stacks_.end(); };
        const std::pair<const uint32_t, RunningTotal> *first = nullptr;
        for (const auto &entry : totals_)
            if (missing(entry.first) && (!first || entry.second.first_allocation < first->second.first_allocation))
                first = &entry;
        if (first) return missing_stack(record(snapshot::member::top::allocations, first->second.first_allocation), first->first);
        for (size_t i = 0; i < peaks_.size(); ++i)
            for (size_t k = 0; k < peaks_[i].sites.size(); ++k)
                if (missing(peaks_[i].sites[k].stack))
                    return missing_stack(record(snapshot::member::top::peaks, i) + record(".sites", k),
                                         peaks_[i].sites[k].stack);
        for (size_t i = 0; i < oom_stacks_.size(); ++i)
            if (missing(oom_stacks_[i])) return missing_stack(record(snapshot::member::top::ooms, i), oom_stacks_[i]);
        const std::pair<const uint32_t, size_t> *first_event = nullptr;
        for (const auto &ref : event_stacks_)
            if (missing(ref.first) && (!first_event || ref.second < first_event->second)) first_event = &ref;
        if (first_event) return missing_stack(record(snapshot::member::top::events, first_event->second), first_event->first);

        auto key_of_stack = [&](uint32_t stack_id) {
            return stack_id == 0 ? std::string(kNoStackKey) : key_of(stacks_.find(stack_id)->second);
        };
        std::map<std::string, SiteTotals> sites;
        // What each site held at each device's peak.
        out_.has_peak_composition = true;
        for (const snapshot::DeviceTotals &d : out_.devices) {
            bool recorded = d.peak_bytes == 0;
            for (const snapshot::DevicePeak &p : peaks_) recorded = recorded || p.device == d.device;
            out_.has_peak_composition = out_.has_peak_composition && recorded;
        }
        if (out_.has_peak_composition) {
            std::map<std::string, std::map<int, uint64_t>> at_peak;
            for (const snapshot::DevicePeak &p : peaks_)
                for (const snapshot::PeakSite &site : p.sites)
                    if (site.bytes != 0) at_peak[key_of_stack(site.stack)][p.device] += site.bytes;
            for (auto &[key, per_device] : at_peak)
                sites[key].at_peak.assign(per_device.begin(), per_device.end());
        }
        for (auto &[stack_id, t] : totals_) {
            SiteTotals &site = sites[key_of_stack(stack_id)];
            site.live_bytes += t.bytes;
            site.live_count += t.count;
            for (int d : t.devices) insert_sorted_unique(site.devices, d);
            for (const std::string &api : t.apis) insert_sorted_unique(site.apis, api);
        }
        out_.sites.reserve(sites.size());
        for (auto &[key, site] : sites) {
            site.key = key;
            out_.live_bytes += site.live_bytes;
            out_.live_count += site.live_count;
            out_.sites.push_back(std::move(site));
        }
        // Live bytes per device and category.
        std::map<std::tuple<int64_t, size_t, std::string>, CategoryTotals> categories;
        for (const auto &[stack_id, t] : totals_) {
            std::string_view category = stack_id == 0 ? category_of(nullptr) : stacks_.find(stack_id)->second.category;
            for (const DeviceBytes &d : t.per_device) {
                CategoryTotals &c =
                    categories[{report::device_order_rank(d.device), category_rank(category), std::string(category)}];
                c.device = d.device;
                c.category = std::string(category);
                c.live_bytes += d.bytes;
                c.live_count += d.count;
            }
        }
        for (auto &[order, c] : categories) out_.categories.push_back(std::move(c));
        // Live bytes and bytes at the peak per device and NVTX range stack, by name (ids are the
        // run's own).
        bool any_range = !ranges_.range_stacks.empty();
        for (const snapshot::DevicePeak &p : peaks_) any_range = any_range || !p.ranges.empty();
        if (any_range) {
            std::sort(ranges_.range_stacks.begin(), ranges_.range_stacks.end(),
                      [](const snapshot::RangeStack &a, const snapshot::RangeStack &b) { return a.id < b.id; });
            std::map<std::pair<int64_t, std::string>, RangeTotals> rows;
            auto row = [&](int device, uint32_t id) -> RangeTotals & {
                std::string label = report::range_stack_label(ranges_, id);
                RangeTotals &r = rows[{report::device_order_rank(device), label}];
                r.device = device, r.range = label;
                return r;
            };
            for (const auto &[key, value] : range_live_) {
                RangeTotals &r = row(key.first, key.second);
                r.live_bytes += value.first, r.live_count += value.second;
            }
            for (const snapshot::DevicePeak &p : peaks_)
                for (const snapshot::RangePeak &rp : p.ranges) row(p.device, rp.range).at_peak += rp.bytes;
            for (auto &[order, r] : rows) out_.ranges.push_back(std::move(r));
        }
        return {};
    }

private:
    std::string key_of(const KeptStack &s) const {
        if (s.call_site < 0) return std::string(kNoCallSiteKey);
        std::string key;
        for (size_t n = 0; n < s.key_frames.size(); ++n) {
            const KeptFrame &k = frames_[s.key_frames[n]];
            Frame f;
            f.module = k.module;
            f.line = k.line;
            f.address = k.address;
            f.module_offset = k.module_offset;
            f.function = k.function;
            f.file = k.file;
            append_part(key, frame_key(k.module >= 0 ? std::string_view(modules_[size_t(k.module)]) : "", f,
                                       options_.lines));
            if (n == 0) key += via_key(s.via_label);
        }
        return key;
    }

    SiteKeyOptions options_;
    SnapshotSites &out_;
    std::vector<std::string> modules_; // base names
    std::vector<KeptFrame> frames_;
    std::unordered_map<uint32_t, KeptStack> stacks_;
    std::unordered_map<uint32_t, RunningTotal> totals_; // by stack id (0: no stack)
    std::vector<snapshot::DevicePeak> peaks_;
    snapshot::Snapshot ranges_; // only its range_stacks: the names of the range ids
    std::map<std::pair<int, uint32_t>, std::pair<uint64_t, uint64_t>> range_live_; // (device, range) -> bytes, count
    std::vector<uint32_t> oom_stacks_;
    snapshot::StackReferences event_stacks_;
    size_t stack_count_ = 0, allocation_count_ = 0, event_count_ = 0;
    std::string error_;
};

bool finish_collect(SiteCollector &collector, const std::string &name, SnapshotSites *out, std::string *error) {
    std::string problem = collector.finish();
    if (problem.empty()) return true;
    if (error) *error = name + ": " + problem;
    *out = SnapshotSites{};
    return false;
}

} // namespace

std::string frame_key(std::string_view module_path, const Frame &frame, bool lines) {
    std::string out = frame.function.empty() ? "??" : frame.function;
    std::string_view module = snapshot::path_basename(module_path);
    if (!frame.file.empty()) {
        out += " at ";
        out += snapshot::path_basename(frame.file);
        if (lines && frame.line != 0) out += ":" + std::to_string(frame.line);
        if (!module.empty()) out.append(" (").append(module).append(")");
    } else if (!module.empty()) {
        out.append(" (").append(module);
        if (lines || frame.function.empty()) out += "+" + report::hex_u64(frame.module_offset);
        out += ")";
    } else if (lines || frame.function.empty()) {
        out += " (" + report::hex_u64(frame.address) + ")";
    }
    // A key is printed one per line (diff, merge): no control character of a name, not even a
    // line feed, reaches the output raw.
    return report::escape_control_characters(out);
}

std::string stack_key(const snapshot::Snapshot &snapshot, const Stack &stack, const SiteKeyOptions &options) {
    if (stack.call_site < 0) return std::string(kNoCallSiteKey);
    std::string key;
    unsigned taken = 0;
    for (size_t i = size_t(stack.call_site); i < stack.frames.size() && taken < options.frames; ++i, ++taken) {
        if (stack.frames[i] >= snapshot.frames.size()) break;
        const Frame &f = snapshot.frames[stack.frames[i]];
        const Module *m = snapshot.find_module(f);
        append_part(key, frame_key(m ? std::string_view(m->path) : "", f, options.lines));
        if (taken == 0) key += via_key(stack.via_label);
    }
    return key;
}

std::string via_key(std::string_view via_label) {
    if (via_label.empty()) return {};
    return std::string(kViaSeparator) + report::escape_control_characters(via_label);
}

std::string_view category_of(const Stack *stack) {
    return stack && !stack->category.empty() ? std::string_view(stack->category) : std::string_view("other");
}

size_t category_rank(std::string_view category) {
    size_t n = std::size(kCategoryOrder);
    for (size_t i = 0; i < n; ++i)
        if (kCategoryOrder[i] == category) return i;
    return n;
}

// Collects what read(SiteCollector &) passes through; *out is left empty on failure.
template <class Read>
bool collect_through(const std::string &name, const SiteKeyOptions &options, SnapshotSites *out, std::string *error,
                     Read &&read) {
    *out = SnapshotSites{};
    out->name = name;
    try {
        SiteCollector collector(options, *out);
        if (!read(collector)) {
            *out = SnapshotSites{};
            return false;
        }
        return finish_collect(collector, name, out, error);
    } catch (const std::bad_alloc &) {
        if (error) *error = name + ": out of memory while reading";
    }
    *out = SnapshotSites{};
    return false;
}

bool collect_sites(std::istream &in, const std::string &name, const SiteKeyOptions &options, SnapshotSites *out,
                   std::string *error) {
    return collect_through(name, options, out, error,
                           [&](SiteCollector &c) {
                               SymbolizingSink rules(c, name); // the frame rules, as stream_snapshot_file applies them
                               return snapshot::read_snapshot_stream(in, name, rules, error);
                           });
}

bool collect_sites_from_file(const std::string &path, const SiteKeyOptions &options, Progress *progress,
                             SnapshotSites *out, std::string *error) {
    return collect_through(path, options, out, error,
                           [&](SiteCollector &c) { return stream_snapshot_file(path, c, progress, error); });
}

} // namespace vramtrace::cli
