// pprof's profile.proto (perftools.profiles.Profile), gzip-compressed, as `pprof -http` and
// `go tool pprof` read it. Encoded with protobuf_writer.h (field numbers: profile.proto beside
// this file) and compressed with zlib. Mapping of the snapshot: docs/exports.md.
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include <zlib.h>

#include "export/export.h"
#include "export/export_common.h"
#include "export/protobuf_writer.h"
#include "report/text_format.h"

namespace vramtrace::exporter {

namespace {

class StringTable {
public:
    StringTable() { intern(""); }
    int64_t intern(const std::string &s) {
        auto [it, inserted] = index_.try_emplace(s, int64_t(strings_.size()));
        if (inserted) strings_.push_back(s);
        return it->second;
    }
    const std::vector<std::string> &strings() const { return strings_; }

private:
    std::vector<std::string> strings_;
    std::unordered_map<std::string, int64_t> index_;
};

// One sample: the stack, the device and (at exit) the memory kind and entry point.
struct SampleKey {
    int device;
    uint32_t stack;
    std::string kind, api;
    uint32_t range = 0; // the allocation's NVTX range stack (at exit only)
    bool operator<(const SampleKey &o) const {
        return std::tie(device, stack, kind, api, range) < std::tie(o.device, o.stack, o.kind, o.api, o.range);
    }
};
struct SampleValue {
    uint64_t count = 0, bytes = 0;
};

ProtoWriter value_type(StringTable &strings, const char *type, const char *unit) {
    ProtoWriter w;
    w.int64_field(1, strings.intern(type));
    w.int64_field(2, strings.intern(unit));
    return w;
}

std::string gzip(const std::string &data) {
    z_stream zs{};
    // windowBits 15 + 16: a gzip wrapper (header with mtime 0), not zlib's.
    if (deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::bad_alloc();
    std::string out(deflateBound(&zs, uLong(data.size())) + 32, '\0');
    zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
    zs.avail_in = uInt(data.size());
    zs.next_out = reinterpret_cast<Bytef *>(out.data());
    zs.avail_out = uInt(out.size());
    int rc = deflate(&zs, Z_FINISH);
    size_t written = zs.total_out;
    deflateEnd(&zs);
    if (rc != Z_STREAM_END) throw std::bad_alloc(); // the bound was too small: not expected
    out.resize(written);
    return out;
}

} // namespace

std::string export_pprof_uncompressed(const snapshot::Snapshot &snapshot, const Options &options,
                                      std::vector<std::string> *) {
    const At at = options.at.value_or(At::Exit);
    StringTable strings;
    ProtoWriter profile;
    profile.message_field(1, value_type(strings, "inuse_objects", "count"));
    profile.message_field(1, value_type(strings, "inuse_space", "bytes"));

    std::map<SampleKey, SampleValue> samples;
    if (at == At::Exit) {
        for (const snapshot::Allocation &a : snapshot.allocations) {
            if (!snapshot::counts_as_held(a) || !device_wanted(options, a.device)) continue;
            uint32_t stack = snapshot.find_stack(a.stack) ? a.stack : 0;
            SampleValue &v = samples[{a.device, stack, a.kind, a.api, a.range}];
            v.count += 1;
            v.bytes += a.size;
        }
    } else {
        for (const WeightedStack &w : weighted_stacks(snapshot, options, At::Peak)) {
            SampleValue &v = samples[{w.device, w.stack, "", ""}];
            v.count += w.count;
            v.bytes += w.bytes;
        }
    }

    // Locations: one per snapshot frame (id = index + 1), plus one for "no stack".
    const uint64_t no_stack_location = snapshot.frames.size() + 1;
    std::set<uint64_t> used_locations;
    for (const auto &[key, value] : samples) {
        std::vector<uint64_t> ids;
        if (const snapshot::Stack *stack = snapshot.find_stack(key.stack)) {
            for (uint32_t index : stack->frames)
                if (index < snapshot.frames.size()) ids.push_back(uint64_t(index) + 1);
        }
        if (ids.empty()) ids.push_back(no_stack_location);
        used_locations.insert(ids.begin(), ids.end());
        ProtoWriter sample;
        sample.packed_field(1, ids);
        sample.packed_field(2, {value.count, value.bytes});
        auto label = [&](const char *name, const std::string &text) {
            if (text.empty()) return;
            ProtoWriter l;
            l.int64_field(1, strings.intern(name));
            l.int64_field(2, strings.intern(text));
            sample.message_field(3, l);
        };
        label("device", report::device_label(key.device));
        label("kind", key.kind);
        label("api", key.api);
        label("category", std::string(category_text(snapshot, key.stack)));
        // The NVTX range stack open at the allocation (docs/nvtx.md), when the snapshot has any.
        if (at == At::Exit && !snapshot.range_stacks.empty())
            label("nvtx_range", report::range_stack_label(snapshot, key.range));
        profile.message_field(2, sample);
    }

    // Functions (deduplicated by name and file) and the locations' lines; mappings of used modules.
    std::map<std::pair<std::string, std::string>, uint64_t> function_ids;
    std::vector<ProtoWriter> functions;
    auto function_id = [&](const std::string &name, const std::string &file) {
        auto [it, inserted] = function_ids.try_emplace({name, file}, function_ids.size() + 1);
        if (inserted) {
            ProtoWriter f;
            f.varint_field(1, it->second);
            f.int64_field(2, strings.intern(name));
            f.int64_field(3, strings.intern(name));
            if (!file.empty()) f.int64_field(4, strings.intern(file));
            functions.push_back(std::move(f));
        }
        return it->second;
    };
    struct ModuleUse {
        uint64_t limit = 0;
        bool functions = false, files = false, lines = false, inlined = false;
    };
    std::map<int, ModuleUse> modules;
    std::vector<ProtoWriter> locations;
    for (uint64_t id : used_locations) {
        ProtoWriter loc;
        loc.varint_field(1, id);
        auto line = [&](uint64_t function, uint32_t number) {
            ProtoWriter l;
            l.varint_field(1, function);
            if (number != 0) l.int64_field(2, number);
            loc.message_field(4, l);
        };
        if (id == no_stack_location) {
            line(function_id(std::string(kNoStackName), ""), 0);
        } else {
            const snapshot::Frame &frame = snapshot.frames[id - 1];
            if (const snapshot::Module *module = snapshot.find_module(frame)) {
                ModuleUse &use = modules[frame.module];
                use.limit = std::max(use.limit, module->base + frame.module_offset + 1);
                use.functions |= !frame.function.empty();
                use.files |= !frame.file.empty();
                use.lines |= frame.line != 0;
                use.inlined |= !frame.inlined.empty();
                loc.varint_field(2, uint64_t(frame.module) + 1);
            }
            loc.varint_field(3, frame.address);
            // Inlined functions first, the real function last (profile.proto's order).
            for (const snapshot::Frame::Inlined &in : frame.inlined)
                line(function_id(in.function.empty() ? "??" : in.function, in.file), in.line);
            line(function_id(frame_name(snapshot, frame), frame.file), frame.line);
        }
        locations.push_back(std::move(loc));
    }
    for (const auto &[index, use] : modules) {
        const snapshot::Module &module = snapshot.modules[size_t(index)];
        ProtoWriter m;
        m.varint_field(1, uint64_t(index) + 1);
        m.varint_field(2, module.base);
        m.varint_field(3, std::max(use.limit, module.base + 1));
        m.int64_field(5, strings.intern(module.path));
        if (!module.build_id.empty()) m.int64_field(6, strings.intern(module.build_id));
        if (use.functions) m.varint_field(7, 1);
        if (use.files) m.varint_field(8, 1);
        if (use.lines) m.varint_field(9, 1);
        if (use.inlined) m.varint_field(10, 1);
        profile.message_field(3, m);
    }
    for (const ProtoWriter &loc : locations) profile.message_field(4, loc);
    for (const ProtoWriter &f : functions) profile.message_field(5, f);

    int64_t comment_version = strings.intern("vramtrace " + snapshot.process.vramtrace_version);
    int64_t comment_process = strings.intern("pid " + to_dec_signed(snapshot.process.pid) + " on " +
                                             snapshot.process.host + ", snapshot reason " + snapshot.process.reason);
    int64_t comment_at = strings.intern(at == At::Exit ? "live at the dump" : "live at each device's peak");
    ProtoWriter period_type = value_type(strings, "space", "bytes");
    int64_t default_type = strings.intern("inuse_space");

    for (const std::string &s : strings.strings()) profile.bytes_field(6, s);
    if (snapshot.process.dump_time_ns != 0) profile.int64_field(9, int64_t(snapshot.process.dump_time_ns));
    profile.message_field(11, period_type);
    profile.int64_field(12, 1);
    profile.packed_field(13, {uint64_t(comment_version), uint64_t(comment_process), uint64_t(comment_at)});
    profile.int64_field(14, default_type);
    return profile.bytes();
}

std::string export_pprof(const snapshot::Snapshot &snapshot, const Options &options, std::vector<std::string> *notes) {
    return gzip(export_pprof_uncompressed(snapshot, options, notes));
}

} // namespace vramtrace::exporter
