// PyTorch's memory snapshot pickle (what torch.cuda.memory._snapshot() returns), for
// pytorch.org/memory_viz and torch.cuda._memory_viz. vramtrace sees cudaMalloc-level allocations,
// not a caching allocator's blocks, so each live allocation is one segment holding one block of
// its size, and the history becomes segment_alloc+alloc / free_requested+free_completed+segment_free
// pairs per device. Field mapping: docs/exports.md.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "export/export.h"
#include "export/export_common.h"
#include "export/pickle_writer.h"
#include "snapshot/device_range.h"
#include "report/text_format.h"

namespace vramtrace::exporter {

namespace {

class FrameCache {
public:
    explicit FrameCache(const snapshot::Snapshot &snapshot) : snapshot_(snapshot) {}
    // Writes the list of frames ({"filename", "line", "name"}, leaf first) of a stack: in full the
    // first time (then memoized), as a memo reference after that.
    void write(PickleWriter &out, uint32_t stack_id) {
        auto it = memo_.find(stack_id);
        if (it != memo_.end()) return out.memo_get(it->second);
        out.raw(frames(stack_id));
        if (std::optional<uint32_t> index = out.memoize()) memo_.emplace(stack_id, *index);
    }

private:
    std::string frames(uint32_t stack_id) {
        PickleWriter w(true);
        w.begin_list();
        for (const NamedFrame &f : expand_stack(snapshot_, snapshot_.find_stack(stack_id))) {
            w.item();
            w.begin_dict();
            w.key("filename");
            std::string file = f.file;
            if (file.empty() && f.frame >= 0) {
                const snapshot::Module *m = snapshot_.find_module(snapshot_.frames[size_t(f.frame)]);
                file = m ? m->path : "??";
            }
            w.str(file.empty() ? "??" : file);
            w.key("line");
            w.integer(f.line);
            w.key("name");
            w.str(f.name);
            w.end_dict();
        }
        w.end_list();
        return w.fragment();
    }

    const snapshot::Snapshot &snapshot_;
    std::unordered_map<uint32_t, uint32_t> memo_; // stack id -> memo index
};

} // namespace

std::string export_pickle(const snapshot::Snapshot &snapshot, const Options &options, std::vector<std::string> *notes) {
    FrameCache frames(snapshot);
    const snapshot::ProcessInfo &proc = snapshot.process;
    // PyTorch's time_us is wall-clock microseconds; without the dump's monotonic time, monotonic.
    auto time_us = [&](uint64_t monotonic_ns) {
        if (proc.dump_monotonic_ns != 0 && proc.dump_time_ns != 0 && monotonic_ns <= proc.dump_monotonic_ns &&
            proc.dump_monotonic_ns - monotonic_ns <= proc.dump_time_ns)
            return int64_t((proc.dump_time_ns - (proc.dump_monotonic_ns - monotonic_ns)) / 1000);
        return int64_t(monotonic_ns / 1000);
    };
    // device_traces has one list per ordinal up to the highest shown: only ordinals the snapshot
    // format allows (the reader refuses others; a snapshot built in memory may still carry them).
    auto cuda_device = [](int device) { return device >= 0 && device <= snapshot::kMaxDeviceOrdinal; };
    auto shown = [&](int device, const std::string &kind, uint64_t size) {
        return cuda_device(device) && device_wanted(options, device) && held_kind(kind) && size != 0;
    };

    std::vector<const snapshot::Allocation *> live;
    uint64_t left_out = 0;
    for (const snapshot::Allocation &a : snapshot.allocations) {
        if (shown(a.device, a.kind, a.size)) live.push_back(&a);
        else if (device_wanted(options, a.device)) ++left_out;
    }
    if (left_out && notes)
        notes->push_back(to_dec(left_out) + " live allocation(s) left out: not on a CUDA device (host-pinned or "
                                            "unknown), not held (IPC imports, VMM mappings) or of size 0");
    std::sort(live.begin(), live.end(), [](auto *a, auto *b) {
        return a->device != b->device ? a->device < b->device : a->address < b->address;
    });
    int max_device = -1;
    for (const snapshot::Allocation *a : live) max_device = std::max(max_device, a->device);
    std::vector<const snapshot::Event *> history;
    for (const snapshot::Event &e : snapshot.events.events) {
        if (e.type == "oom" ? (cuda_device(e.device) && device_wanted(options, e.device))
                            : ((e.type == "alloc" || e.type == "free") && shown(e.device, e.kind, e.size))) {
            history.push_back(&e);
            max_device = std::max(max_device, e.device);
        }
    }
    if (options.device && cuda_device(*options.device)) max_device = std::max(max_device, *options.device);
    // Each device's events (oldest first) and the free bytes recorded with each OOM, looked up once:
    // the work stays linear in the snapshot.
    std::vector<std::vector<const snapshot::Event *>> by_device(size_t(max_device + 1));
    for (const snapshot::Event *e : history) by_device[size_t(e->device)].push_back(e);
    std::map<std::pair<uint64_t, int>, uint64_t> oom_free; // (time_ns, device) -> device_free_bytes
    for (const snapshot::OomEvent &o : snapshot.ooms)
        if (o.device_free_bytes) oom_free[std::make_pair(o.time_ns, o.device)] = *o.device_free_bytes; // the last one
    if (snapshot.events.events.empty() && notes)
        notes->push_back("the snapshot has no event history (" + no_history_reason(snapshot) +
                         "): device_traces are empty, the viewer shows only the allocations live at the dump");

    PickleWriter w;
    w.begin_dict();
    w.key("segments");
    w.begin_list();
    for (const snapshot::Allocation *a : live) {
        w.item();
        w.begin_dict();
        w.key("device");
        w.integer(a->device);
        w.key("address");
        w.unsigned_integer(a->address);
        for (const char *k : {"total_size", "allocated_size", "active_size", "requested_size"}) {
            w.key(k);
            w.unsigned_integer(a->size);
        }
        w.key("stream");
        w.unsigned_integer(a->stream);
        w.key("segment_type");
        w.str(a->size >= (1u << 20) ? "large" : "small");
        w.key("segment_pool_id");
        w.int_pair(0, 0);
        w.key("is_expandable");
        w.boolean(false);
        w.key("frames");
        frames.write(w, a->stack);
        w.key("blocks");
        w.begin_list();
        w.item();
        w.begin_dict();
        w.key("address");
        w.unsigned_integer(a->address);
        w.key("size");
        w.unsigned_integer(a->size);
        w.key("requested_size");
        w.unsigned_integer(a->size);
        w.key("state");
        w.str("active_allocated");
        w.key("frames");
        frames.write(w, a->stack);
        w.end_dict();
        w.end_list();
        w.end_dict();
    }
    w.end_list();

    // The frame rules' categories go where memory_viz reads them: a "category" on each trace entry
    // of an allocation or a free (as PyTorch's profile_plot writes them); the Active Memory Timeline
    // then colours by category with a legend. Only when some stack has a category other than
    // "other" (else every allocation would be one colour). memory_viz colours what has none
    // (blocks live before the history) as "unknown" and fails on a list of categories without it,
    // so each device's trace ends with a "snapshot" entry (the dump, as PyTorch records one) of
    // category "unknown".
    const bool categories = has_categories(snapshot);
    std::map<std::string_view, uint32_t> category_memo; // each name written once, then referenced
    auto category = [&](std::string_view name) {
        if (auto it = category_memo.find(name); it != category_memo.end()) return w.memo_get(it->second);
        w.str(name);
        if (std::optional<uint32_t> index = w.memoize()) category_memo.emplace(name, *index);
    };
    uint64_t dump_ns = proc.dump_monotonic_ns;
    for (const snapshot::Event *e : history) dump_ns = std::max(dump_ns, e->time_ns);
    w.key("device_traces");
    w.begin_list();
    for (const std::vector<const snapshot::Event *> &events : by_device) {
        w.item();
        w.begin_list();
        for (const snapshot::Event *e : events) {
            auto entry = [&](const char *action) {
                w.item();
                w.begin_dict();
                w.key("action");
                w.str(action);
                if (e->type != "oom") {
                    w.key("addr");
                    w.unsigned_integer(e->address);
                }
                w.key("size");
                w.unsigned_integer(e->size);
                w.key("stream");
                w.integer(0);
                w.key("time_us");
                w.integer(time_us(e->time_ns));
                w.key("frames");
                frames.write(w, e->stack);
                if (categories && e->type != "oom") {
                    w.key("category");
                    category(category_text(snapshot, e->stack));
                }
                if (e->type == "oom") {
                    // The free bytes the driver reported right after the failure, when recorded.
                    auto found = oom_free.find(std::make_pair(e->time_ns, e->device));
                    uint64_t device_free = found != oom_free.end() ? found->second : 0;
                    w.key("device_free");
                    w.unsigned_integer(device_free);
                }
                w.end_dict();
            };
            if (e->type == "alloc") {
                entry("segment_alloc");
                entry("alloc");
            } else if (e->type == "free") {
                entry("free_requested");
                entry("free_completed");
                entry("segment_free");
            } else {
                entry("oom");
            }
        }
        if (categories && !events.empty()) {
            w.item();
            w.begin_dict();
            w.key("action");
            w.str("snapshot");
            w.key("addr");
            w.unsigned_integer(0);
            w.key("size");
            w.unsigned_integer(0);
            w.key("stream");
            w.integer(0);
            w.key("time_us");
            w.integer(time_us(dump_ns));
            w.key("frames");
            w.begin_list();
            w.end_list();
            w.key("category");
            category("unknown");
            w.end_dict();
        }
        w.end_list();
    }
    w.end_list();
    w.key("allocator_settings");
    w.begin_dict();
    w.end_dict();
    w.key("external_annotations");
    w.begin_list();
    w.end_list();
    w.end_dict();
    return w.finish();
}

} // namespace vramtrace::exporter
