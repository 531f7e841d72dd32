#include "commands/top_model.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <unordered_map>

#include "input/offline_symbolize.h"
#include "live/protocol.h"
#include "report/text_safety.h"
#include "symbolize/call_site.h"
#include "symbolize/symbolizer.h"
#include "report/text_format.h"
#include "report/call_site_groups.h"

namespace vramtrace::cli {
namespace {

using nlohmann::json;

uint64_t hex_or_number(const json &v) {
    if (v.is_number_unsigned() || v.is_number_integer()) return v.get<uint64_t>();
    if (v.is_string()) return std::stoull(v.get<std::string>(), nullptr, 16);
    return 0;
}

template <class T> T get_or(const json &o, const char *name, T fallback) {
    auto it = o.find(name);
    if (it == o.end() || it->is_null()) return fallback;
    return it->get<T>();
}

std::optional<uint64_t> opt_u64(const json &o, const char *name) {
    auto it = o.find(name);
    if (it == o.end() || !it->is_number()) return std::nullopt;
    return it->get<uint64_t>();
}

} // namespace

struct LiveNamer::State {
    std::vector<snapshot::Module> modules; // the set the symbolizer was made for
    UsableModules usable;
    std::unique_ptr<symbolize::Symbolizer> symbolizer;
};

LiveNamer::LiveNamer() : state_(std::make_unique<State>()) {}
LiveNamer::~LiveNamer() = default;

void LiveNamer::name(snapshot::Snapshot &snapshot) {
    State &st = *state_;
    // A reading lists only the modules its frames fall in, so the set grows as new stacks come;
    // a symbolizer is made again only when a module appears that the current one does not know.
    bool known = st.symbolizer != nullptr;
    for (const snapshot::Module &m : snapshot.modules)
        if (known && std::find(st.modules.begin(), st.modules.end(), m) == st.modules.end()) known = false;
    if (!known) {
        for (const snapshot::Module &m : snapshot.modules)
            if (std::find(st.modules.begin(), st.modules.end(), m) == st.modules.end()) st.modules.push_back(m);
        st.usable = check_modules_on_disk(st.modules);
        std::vector<symbolize::LoadedModule> loaded;
        for (size_t i = 0; i < st.modules.size(); ++i) {
            if (st.usable.index[i] < 0) continue;
            symbolize::LoadedModule m;
            m.path = st.modules[i].path;
            m.base = st.modules[i].base;
            m.build_id = st.modules[i].build_id;
            loaded.push_back(std::move(m));
        }
        symbolize::SymbolizerOptions options;
        st.symbolizer = std::make_unique<symbolize::Symbolizer>(std::move(loaded), std::move(options));
    }
    for (snapshot::Frame &f : snapshot.frames) {
        if (f.python || f.module < 0 || size_t(f.module) >= snapshot.modules.size()) continue;
        auto it = std::find(st.modules.begin(), st.modules.end(), snapshot.modules[size_t(f.module)]);
        size_t all = size_t(it - st.modules.begin());
        if (st.usable.index[all] < 0) continue;
        symbolize::SymbolizedAddress r = st.symbolizer->lookup(f.address);
        if (r.module != st.usable.index[all]) continue;
        f.function = std::move(r.function);
        f.file = std::move(r.file);
        f.line = r.line;
        f.inlined = std::move(r.inlined);
    }
    snapshot.process.symbolized = true;
}

namespace {

// Text shown from a reading: escaped as every string the CLI shows is.
std::string shown(std::string_view text) { return report::escape_control_characters(text); }

// A reading past the protocol's bounds (live/protocol.h): what it holds, for the one line.
struct OverBounds {
    std::string what;
};
void bound(size_t count, size_t most, const char *what) {
    if (count > most)
        throw OverBounds{std::to_string(count) + " " + what + ", at most " + std::to_string(most)};
}
// A member, its number of elements checked before anything is copied out of it.
const json &bounded_array(const json &o, const char *name, size_t most, const char *what) {
    const json &a = o.at(name);
    bound(a.size(), most, what);
    return a;
}
std::string bounded_name(const json &o, const char *name) {
    std::string text = get_or<std::string>(o, name, "");
    bound(text.size(), live::kReadingNameBytes, "bytes in a Python frame's name");
    return text;
}

// Counts the values of a JSON text without building it, stopping past `most`: a document costs
// tens of bytes a value, so 32 MiB of "{}," would otherwise be a gigabyte.
struct ValueCounter {
    size_t count = 0, most = 0;
    bool more() { return ++count <= most; }
    bool null() { return more(); }
    bool boolean(bool) { return more(); }
    bool number_integer(json::number_integer_t) { return more(); }
    bool number_unsigned(json::number_unsigned_t) { return more(); }
    bool number_float(json::number_float_t, const json::string_t &) { return more(); }
    bool string(json::string_t &) { return more(); }
    bool binary(json::binary_t &) { return more(); }
    bool start_object(size_t) { return more(); }
    bool key(json::string_t &) { return true; }
    bool end_object() { return true; }
    bool start_array(size_t) { return more(); }
    bool end_array() { return true; }
    bool parse_error(size_t, const std::string &, const nlohmann::detail::exception &) { return false; }
};

} // namespace

bool parse_live_reading(const std::string &text, LiveNamer &namer, int device, LiveView *out, std::string *error,
                        bool with_sites) {
    if (text.size() > live::kMaxAnswerBytes) {
        *error = "the reading is over the protocol's bounds (" + std::to_string(text.size()) + " bytes, at most " +
                 std::to_string(live::kMaxAnswerBytes) + ")";
        return false;
    }
    ValueCounter counter;
    counter.most = live::kReadingValues;
    json::sax_parse(text, &counter);
    if (counter.count > counter.most) {
        *error = "the reading is over the protocol's bounds (more than " + std::to_string(counter.most) + " JSON values)";
        return false;
    }
    json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || get_or<std::string>(doc, "format", "") != live::kFormatName) {
        *error = "the answer is not a live reading";
        return false;
    }
    if (doc.contains("error")) {
        *error = "the process says: " + get_or<std::string>(doc, "error", "");
        return false;
    }
    try {
        LiveView v;
        const json &p = doc.at("process");
        v.pid = p.at("pid").get<int64_t>();
        for (const json &arg : p.at("command_line")) v.command_line.push_back(shown(arg.get<std::string>()));
        v.rank = shown(get_or<std::string>(p, "rank", ""));
        v.host = shown(get_or<std::string>(p, "host", ""));
        v.executable = shown(get_or<std::string>(p, "executable", ""));
        v.exit_snapshot = shown(get_or<std::string>(p, "exit_snapshot", ""));
        v.monotonic_ns = get_or<uint64_t>(p, "monotonic_ns", 0);
        v.live_snapshots = get_or<uint64_t>(p, "live_snapshots", 0);
        for (const json &d : doc.at("devices")) {
            LiveDevice ld;
            snapshot::DeviceTotals &t = ld.totals;
            t.device = d.at("device").get<int>();
            t.current_bytes = d.at("current_bytes").get<uint64_t>();
            t.peak_bytes = d.at("peak_bytes").get<uint64_t>();
            t.allocation_count = get_or<uint64_t>(d, "allocation_count", 0);
            t.free_count = get_or<uint64_t>(d, "free_count", 0);
            t.total_allocated_bytes = get_or<uint64_t>(d, "total_allocated_bytes", 0);
            t.total_freed_bytes = get_or<uint64_t>(d, "total_freed_bytes", 0);
            t.uuid = shown(get_or<std::string>(d, "uuid", ""));
            t.total_memory_bytes = opt_u64(d, "total_memory_bytes");
            t.process_used_bytes = opt_u64(d, "process_used_bytes");
            t.graph_reserved_bytes = opt_u64(d, "graph_reserved_bytes");
            v.devices.push_back(std::move(ld));
        }
        v.live_allocations = get_or<uint64_t>(doc, "live_allocations", 0);
        v.live_bytes = get_or<uint64_t>(doc, "live_bytes", 0);
        const json &left = doc.at("sites_left_out");
        v.left_out_sites = get_or<uint64_t>(left, "sites", 0);
        v.left_out_bytes = get_or<uint64_t>(left, "bytes", 0);
        v.left_out_count = get_or<uint64_t>(left, "count", 0);

        // The stacks as a snapshot model, named and attributed as a snapshot file's would be.
        snapshot::Snapshot s;
        if (with_sites) {
            const json &sites_in = bounded_array(doc, "sites", live::kReadingSites, "sites");
            const json &frames_in = bounded_array(doc, "frames", live::kReadingFrames, "frames");
            const json &stacks_in = bounded_array(doc, "stacks", live::kReadingStacks, "stacks");
            for (const json &st : stacks_in)
                bound(bounded_array(st, "frames", SIZE_MAX, "").size(), live::kReadingStackFrames, "frames in one stack");
            s.process.symbolized = false;
            for (const json &m : doc.at("modules"))
                s.modules.push_back({m.at("path").get<std::string>(), hex_or_number(m.at("base")),
                                     get_or<std::string>(m, "build_id", "")});
            s.frames.reserve(frames_in.size());
            for (const json &f : frames_in) {
                snapshot::Frame frame;
                frame.address = hex_or_number(f.at("address"));
                frame.python = get_or<bool>(f, "python", false);
                if (frame.python) {
                    frame.function = bounded_name(f, "function");
                    frame.file = bounded_name(f, "file");
                    frame.line = get_or<uint32_t>(f, "line", 0);
                } else if (f.contains("module")) {
                    frame.module = f.at("module").get<int>();
                    frame.module_offset = hex_or_number(f.at("module_offset"));
                    if (frame.module < 0 || size_t(frame.module) >= s.modules.size()) frame.module = -1;
                }
                s.frames.push_back(std::move(frame));
            }
            for (const json &st : stacks_in) {
                snapshot::Stack stack;
                stack.id = st.at("id").get<uint32_t>();
                for (const json &i : st.at("frames")) {
                    uint32_t k = i.get<uint32_t>();
                    if (k < s.frames.size()) stack.frames.push_back(k);
                }
                s.stacks.push_back(std::move(stack));
            }
            std::sort(s.stacks.begin(), s.stacks.end(), [](const snapshot::Stack &a, const snapshot::Stack &b) { return a.id < b.id; });
            namer.name(s);
            assign_call_sites(s);

            struct Weighted {
                report::StackWeight weight;
                int device;
            };
            std::vector<Weighted> weights;
            for (const json &site : sites_in) {
                int d = site.at("device").get<int>();
                if (device >= -2 && d != device) continue;
                weights.push_back({{site.at("stack").get<uint32_t>(), site.at("bytes").get<uint64_t>(),
                                    site.at("count").get<uint64_t>()},
                                   d});
            }
            std::vector<report::StackWeight> all;
            for (const Weighted &w : weights) all.push_back(w.weight);
            // One grouping pass, which also says which group each stack fell in (for its category,
            // devices and the stack to expand).
            std::vector<size_t> group_of;
            std::vector<report::CallSiteGroup> groups = report::group_by_call_site(s, all, &group_of);
            std::unordered_map<uint32_t, const snapshot::Stack *> stack_by_id;
            for (const snapshot::Stack &st : s.stacks) stack_by_id.try_emplace(st.id, &st);
            // Each frame a kept stack uses, described once.
            v.frames.assign(s.frames.size(), std::string());
            std::vector<bool> described(s.frames.size(), false);
            auto frame_indices = [&](const snapshot::Stack *stack) {
                std::vector<uint32_t> out;
                if (stack == nullptr) return out;
                for (uint32_t f : stack->frames) {
                    if (!described[f]) {
                        v.frames[f] = shown(report::describe_frame(s, s.frames[f]));
                        described[f] = true;
                    }
                    out.push_back(f);
                }
                return out;
            };
            std::vector<LiveSite> sites(groups.size());
            std::vector<uint64_t> heaviest(groups.size(), 0);
            std::vector<std::set<int>> devices(groups.size());
            for (size_t k = 0; k < weights.size(); ++k) {
                const Weighted &w = weights[k];
                size_t g = group_of[k];
                devices[g].insert(w.device);
                auto found = stack_by_id.find(w.weight.stack);
                const snapshot::Stack *stack = found == stack_by_id.end() ? nullptr : found->second;
                sites[g].stacks.push_back({w.weight.bytes, w.weight.count, w.device, frame_indices(stack)});
                if (w.weight.bytes <= heaviest[g] && !sites[g].stack.empty()) continue;
                heaviest[g] = w.weight.bytes;
                sites[g].category = stack != nullptr ? shown(stack->category) : "";
                sites[g].stack = sites[g].stacks.back().frames;
            }
            for (size_t i = 0; i < groups.size(); ++i) {
                LiveSite &site = sites[i];
                std::stable_sort(site.stacks.begin(), site.stacks.end(),
                                 [](const LiveSite::MergedStack &a, const LiveSite::MergedStack &b) { return a.bytes > b.bytes; });
                site.location = shown(groups[i].location);
                site.bytes = groups[i].live_bytes;
                site.count = groups[i].live_count;
                site.devices.assign(devices[i].begin(), devices[i].end());
                if (groups[i].kind == report::CallSiteGroup::Kind::Frame && groups[i].frame >= 0) {
                    const snapshot::Frame &f = s.frames[size_t(groups[i].frame)];
                    site.function = shown(f.function);
                    site.file = shown(f.file);
                    site.line = f.line;
                }
            }
            v.sites = std::move(sites);
        }

        for (const json &pool : doc.at("pools")) {
            snapshot::Pool pl;
            pl.handle = hex_or_number(pool.at("handle"));
            pl.device = pool.at("device").get<int>();
            pl.is_default = get_or<bool>(pool, "is_default", false);
            pl.reserved_bytes = get_or<uint64_t>(pool, "reserved_bytes", 0);
            pl.used_bytes = get_or<uint64_t>(pool, "used_bytes", 0);
            v.pools.push_back(pl);
        }
        v.oom_count = get_or<uint64_t>(doc, "oom_count", 0);
        for (const json &o : bounded_array(doc, "ooms", live::kReadingOoms, "out-of-memory failures")) {
            snapshot::OomEvent e;
            e.time_ns = get_or<uint64_t>(o, "time_ns", 0);
            e.device = get_or<int>(o, "device", -2);
            e.requested_bytes = get_or<uint64_t>(o, "requested_bytes", 0);
            e.api = shown(get_or<std::string>(o, "api", ""));
            e.stack = get_or<uint32_t>(o, "stack", 0);
            v.ooms.push_back(std::move(e));
        }
        if (doc.contains("history")) {
            const json &h = doc.at("history");
            v.has_history = true;
            for (const json &d : h.at("devices")) {
                int ordinal = d.at("device").get<int>();
                const json &bytes = bounded_array(d, "bytes", live::kHistorySeconds, "seconds of history");
                for (LiveDevice &ld : v.devices)
                    if (ld.totals.device == ordinal) ld.history = bytes.get<std::vector<int64_t>>();
            }
            for (const json &m : bounded_array(h, "marks", live::kHistoryMarks, "marks"))
                v.marks.push_back({get_or<uint64_t>(m, "time_ns", 0), shown(get_or<std::string>(m, "label", ""))});
        }
        v.serve_cpu_ns = get_or<uint64_t>(doc, "serve_cpu_ns", 0);
        *out = std::move(v);
        return true;
    } catch (const OverBounds &e) {
        *error = "the reading is over the protocol's bounds (" + e.what + ")";
        return false;
    } catch (const json::exception &e) {
        *error = std::string("the reading is malformed (") + e.what() + ")";
        return false;
    } catch (const std::invalid_argument &) {
        *error = "the reading is malformed (a hex field)";
        return false;
    } catch (const std::out_of_range &) {
        *error = "the reading is malformed (a hex field)";
        return false;
    }
}

bool parse_snapshot_answer(const std::string &text, std::string *path, std::string *error) {
    json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || get_or<std::string>(doc, "format", "") != live::kFormatName) {
        *error = "the answer is not the live protocol's";
        return false;
    }
    if (doc.contains("snapshot") && doc["snapshot"].is_string()) {
        *path = doc["snapshot"].get<std::string>();
        return true;
    }
    *error = "the process says: " + get_or<std::string>(doc, "error", "no snapshot written");
    return false;
}

// A stack's frames as text.
static json frame_texts(const LiveView &v, const std::vector<uint32_t> &frames) {
    json out = json::array();
    for (uint32_t f : frames) out.push_back(v.frames[f]);
    return out;
}

// A site's merged stacks as the JSON reading lists them.
static json merged_stacks(const LiveView &v, const LiveSite &site) {
    json out = json::array();
    for (const LiveSite::MergedStack &m : site.stacks)
        out.push_back({{"bytes", m.bytes}, {"count", m.count}, {"device", m.device}, {"frames", frame_texts(v, m.frames)}});
    return out;
}

std::string live_view_json(const LiveView &v, size_t top) {
    json out = json::object();
    out["pid"] = v.pid;
    out["command_line"] = v.command_line;
    out["rank"] = v.rank;
    out["exit_snapshot"] = v.exit_snapshot;
    json devices = json::array();
    for (const LiveDevice &d : v.devices) {
        json row = {{"device", d.totals.device},
                    {"current_bytes", d.totals.current_bytes},
                    {"peak_bytes", d.totals.peak_bytes},
                    {"allocation_count", d.totals.allocation_count},
                    {"free_count", d.totals.free_count}};
        if (d.totals.process_used_bytes) row["process_used_bytes"] = *d.totals.process_used_bytes;
        if (d.totals.total_memory_bytes) row["total_memory_bytes"] = *d.totals.total_memory_bytes;
        if (!d.history.empty()) row["history_bytes"] = d.history;
        devices.push_back(std::move(row));
    }
    out["devices"] = std::move(devices);
    out["live_allocations"] = v.live_allocations;
    out["live_bytes"] = v.live_bytes;
    json sites = json::array();
    for (size_t i = 0; i < v.sites.size() && i < top; ++i) {
        const LiveSite &s = v.sites[i];
        sites.push_back({{"function", s.function},
                         {"file", s.file},
                         {"line", s.line},
                         {"location", s.location},
                         {"bytes", s.bytes},
                         {"count", s.count},
                         {"category", s.category},
                         {"devices", s.devices},
                         {"stack", frame_texts(v, s.stack)},
                         {"stacks", merged_stacks(v, s)}});
    }
    out["top_sites"] = std::move(sites);
    uint64_t more_bytes = v.left_out_bytes, more_count = v.left_out_count;
    for (size_t i = top; i < v.sites.size(); ++i) more_bytes += v.sites[i].bytes, more_count += v.sites[i].count;
    out["other_sites"] = {{"bytes", more_bytes}, {"count", more_count}};
    json pools = json::array();
    for (const snapshot::Pool &p : v.pools)
        pools.push_back({{"device", p.device}, {"is_default", p.is_default}, {"reserved_bytes", p.reserved_bytes},
                         {"used_bytes", p.used_bytes}});
    out["pools"] = std::move(pools);
    out["oom_count"] = v.oom_count;
    json ooms = json::array();
    for (const snapshot::OomEvent &o : v.ooms)
        ooms.push_back({{"time_ns", o.time_ns}, {"device", o.device}, {"requested_bytes", o.requested_bytes}, {"api", o.api}});
    out["ooms"] = std::move(ooms);
    if (v.has_history) {
        json marks = json::array();
        for (const LiveMark &m : v.marks) marks.push_back({{"time_ns", m.time_ns}, {"label", m.label}});
        out["marks"] = std::move(marks);
    }
    out["serve_cpu_ns"] = v.serve_cpu_ns;
    return out.dump(2) + "\n";
}

} // namespace vramtrace::cli
