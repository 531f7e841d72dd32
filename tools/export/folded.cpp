// Folded stacks: one line per distinct stack, root first, frames joined by ';', a space, then the
// bytes ("main;train_step;cudaMalloc 20971520"), as flamegraph.pl, inferno and speedscope read.
// Inlined functions carry flamegraph.pl's "_[i]" annotation; Python frames are
// "function (file.py:line)" as py-spy writes them (docs/python-frames.md). With more than one device in the
// output, each line starts with the device ("cuda:0;main;..."), since bytes of different devices
// do not add up to anything one GPU holds. At exit, when the snapshot names NVTX range stacks, the
// allocation's open ranges come first, outermost first ("step;ml:forward;main;..."; docs/nvtx.md);
// allocations made with no range open start with "(no range)".
#include <map>
#include <tuple>
#include <set>

#include "export/export.h"
#include "export/export_common.h"
#include "report/text_safety.h"
#include "report/text_format.h"

namespace vramtrace::exporter {

namespace {

// ';' separates frames and a line ends at '\n': neither may appear inside a name. Other control
// characters (ESC, a lone byte that is not UTF-8) are written as \xHH: the file is shown on
// terminals.
std::string clean(std::string name) {
    for (char &c : name)
        if (c == ';') c = ':';
        else if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    return report::escape_control_characters(name);
}

} // namespace

std::string export_folded(const snapshot::Snapshot &snapshot, const Options &options, std::vector<std::string> *) {
    const At at = options.at.value_or(At::Exit);
    std::vector<WeightedStack> stacks;
    std::vector<uint32_t> ranges; // beside stacks: the range stack of each entry (at exit with ranges)
    if (at == At::Exit && !snapshot.range_stacks.empty()) {
        std::map<std::tuple<int, uint32_t, uint32_t>, WeightedStack> by_key;
        for (const snapshot::Allocation &a : snapshot.allocations) {
            if (!snapshot::counts_as_held(a) || !device_wanted(options, a.device)) continue;
            uint32_t stack = snapshot.find_stack(a.stack) ? a.stack : 0;
            WeightedStack &w = by_key[{a.device, stack, a.range}];
            w.device = a.device, w.stack = stack, w.bytes += a.size, w.count += 1;
        }
        for (auto &[key, w] : by_key) stacks.push_back(w), ranges.push_back(std::get<2>(key));
    } else {
        stacks = weighted_stacks(snapshot, options, at);
    }
    std::set<int> devices;
    for (const WeightedStack &w : stacks) devices.insert(w.device);
    bool prefix_device = devices.size() > 1;
    // Distinct stacks can fold to the same names (two return addresses in one function): summed.
    std::map<std::string, uint64_t> lines;
    for (size_t k = 0; k < stacks.size(); ++k) {
        const WeightedStack &w = stacks[k];
        std::vector<NamedFrame> frames = expand_stack(snapshot, snapshot.find_stack(w.stack));
        std::string line = prefix_device ? report::device_label(w.device) : std::string();
        auto add = [&](const std::string &name) {
            if (!line.empty()) line += ';';
            line += clean(name);
        };
        if (k < ranges.size()) {
            const snapshot::RangeStack *r = snapshot.find_range(ranges[k]);
            if (r == nullptr) add(report::range_stack_label(snapshot, ranges[k]));
            else
                for (size_t i = 0; i < r->names.size(); ++i)
                    add((i < r->domains.size() && !r->domains[i].empty() ? r->domains[i] + ":" : std::string()) +
                        r->names[i] + report::range_category_suffix(*r, i));
        }
        if (frames.empty()) add(std::string(kNoStackName));
        for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
            const snapshot::Frame *f = it->frame >= 0 ? &snapshot.frames[size_t(it->frame)] : nullptr;
            if (f != nullptr && f->python) // py-spy's form: one Python function is many lines
                add(it->name + " (" + std::string(snapshot::path_basename(f->file)) + ":" + to_dec(f->line) + ")");
            else
                add(it->inlined ? it->name + "_[i]" : it->name);
        }
        lines[line] += w.bytes;
    }
    std::string out;
    for (const auto &[line, bytes] : lines) out += line + " " + to_dec(bytes) + "\n";
    return out;
}

} // namespace vramtrace::exporter
