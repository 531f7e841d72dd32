// The exporters carry the frame rules' attribution (docs/attribution.md, docs/exports.md): on the
// snapshot recorded on the H200 by PyTorch's default caching allocator
// (tests/unit/report/data/torch_default_checkpoint.json), read as `vramtrace export` reads it
// (the rules applied again), each format's categories add up to the summary's, and the via goes
// where the format shows the call site.
#include <catch2/catch.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "export/export.h"
#include "export_fixture.h"
#include "input/offline_symbolize.h"
#include "snapshot/reader/snapshot_reader.h"

using namespace vramtrace;

namespace {

snapshot::Snapshot recorded() {
    snapshot::Snapshot s;
    std::string error;
    INFO(error);
    REQUIRE(snapshot::read_snapshot_file(VT_TORCH_SNAPSHOT, &s, &error));
    cli::symbolize_offline(s, VT_TORCH_SNAPSHOT); // named already: applies the frame rules
    return s;
}

// Live bytes at the dump per category, as the summary has them (cuda:0 and host added up).
const std::map<std::string, uint64_t> kLiveByCategory = {
    {"parameter", 18874368},          {"optimizer_state", 33554432}, {"activation", 20971520},
    {"backward", 18874368},           {"library_workspace", 201641488}, {"other", 4},
};

// ---- a minimal reader of the protobuf pprof writes: varints and length-delimited fields ----
struct Field {
    uint32_t number = 0;
    uint64_t value = 0;     // varint
    std::string bytes;      // length-delimited
};
uint64_t varint(const std::string &b, size_t &at) {
    uint64_t v = 0;
    for (int shift = 0; at < b.size(); shift += 7) {
        uint8_t c = uint8_t(b[at++]);
        v |= uint64_t(c & 0x7f) << shift;
        if (c < 0x80) break;
    }
    return v;
}
std::vector<Field> fields(const std::string &b) {
    std::vector<Field> out;
    for (size_t at = 0; at < b.size();) {
        uint64_t key = varint(b, at);
        Field f;
        f.number = uint32_t(key >> 3);
        if ((key & 7) == 0) {
            f.value = varint(b, at);
        } else {
            REQUIRE((key & 7) == 2);
            uint64_t n = varint(b, at);
            f.bytes = b.substr(at, n);
            at += n;
        }
        out.push_back(std::move(f));
    }
    return out;
}

// The pickle loaded with tests/cli/restricted_unpickle.py, reduced by `script` (Python reading `d`).
std::string python_on_pickle(const std::string &pickle, const std::string &script) {
    char path[] = "/tmp/vt-pickle-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, pickle.data(), pickle.size()) == ssize_t(pickle.size()));
    close(fd);
    std::string dir = VT_RESTRICTED_UNPICKLE;
    dir = dir.substr(0, dir.rfind('/'));
    std::string program = "import sys; sys.path.insert(0, '" + dir +
                          "'); from restricted_unpickle import load_restricted; d = load_restricted(open('" + path +
                          "', 'rb').read()); " + script;
    std::string command = "python3 -c \"" + program + "\" 2>&1";
    std::string output;
    FILE *p = popen(command.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[4096];
    while (fgets(buf, sizeof buf, p)) output += buf;
    CHECK(pclose(p) == 0);
    unlink(path);
    return output;
}

} // namespace

TEST_CASE("export attribution: each pprof sample has a category label", "[export][attribution]") {
    std::string raw = exporter::export_pprof_uncompressed(recorded(), {}, nullptr);
    std::vector<std::string> strings;
    for (const Field &f : fields(raw))
        if (f.number == 6) strings.push_back(f.bytes);
    std::map<std::string, uint64_t> bytes;
    size_t samples = 0;
    for (const Field &f : fields(raw)) {
        if (f.number != 2) continue;
        ++samples;
        std::vector<std::string> categories;
        uint64_t space = 0;
        for (const Field &g : fields(f.bytes)) {
            if (g.number == 2) { // packed values: inuse_objects, inuse_space
                size_t at = 0;
                varint(g.bytes, at);
                space = varint(g.bytes, at);
            } else if (g.number == 3) {
                std::vector<Field> label = fields(g.bytes);
                REQUIRE(label.size() == 2);
                if (strings.at(label[0].value) == "category") categories.push_back(strings.at(label[1].value));
            }
        }
        REQUIRE(categories.size() == 1);
        bytes[categories[0]] += space;
    }
    CHECK(samples == 21); // 20 stacks on cuda:0 or the host, one of them on both
    CHECK(bytes == kLiveByCategory);
}

TEST_CASE("export attribution: chrome allocation events carry category and via", "[export][attribution]") {
    nlohmann::json trace = nlohmann::json::parse(exporter::export_chrome(recorded(), {}, nullptr));
    std::map<std::string, uint64_t> bytes;
    size_t allocations = 0, with_via = 0;
    for (const auto &e : trace["traceEvents"]) {
        if (e.value("cat", "") != "alloc") continue;
        ++allocations;
        const auto &args = e["args"];
        std::string category = args["category"];
        bytes[category] += args["size"].get<uint64_t>();
        if (category == "optimizer_state") {
            CHECK(args["call_site"] == "main at /work/main/tests/gpu/attribution/torch_categories.py:49 (python)");
            CHECK(args["via"] == "torch.optim.adam.Adam.step");
        }
        if (category == "parameter") CHECK(args["via"] == "torch.nn.modules.module.Module.cuda");
        if (category == "backward") {
            // The engine's thread: the node names the call site, there is no via.
            CHECK((args["call_site"] == "AddmmBackward0 (libtorch_cpu.so)" ||
                   args["call_site"] == "ReluBackward0 (libtorch_cpu.so)"));
            CHECK_FALSE(args.contains("via"));
        }
        with_via += args.contains("via");
    }
    CHECK(allocations == 22);
    CHECK(with_via == 12); // parameters 2, activation 1, cuDNN handle 3, cuBLASLt workspace 4, optimizer 2
    CHECK(bytes == kLiveByCategory); // nothing is freed in this run: every allocation is live
}

TEST_CASE("export attribution: memory_viz trace entries carry the category it colours by", "[export][attribution]") {
    std::string pickle = exporter::export_pickle(recorded(), {}, nullptr);
    // Per device: each alloc entry's category, that of its segment_alloc, the last entry, and the
    // categories in the order MemoryViz.js collects them (it needs "unknown" among them).
    std::string out = python_on_pickle(
        pickle, "t = d['device_traces'][0]; "
                "a = [e['category'] for e in t if e['action'] == 'alloc']; "
                "s = [e['category'] for e in t if e['action'] == 'segment_alloc']; "
                "seen = []; [seen.append(e['category']) for e in t if 'category' in e and e['category'] not in seen]; "
                "print(len(d['device_traces']), a == s, ' '.join(a)); print(t[-1]); print(' '.join(seen))");
    // cuda:0 only (the host's pinned memory has no place in the pickle): the cuDNN handle 2, the
    // cuBLASLt workspace 4, cublasCreate 3 and the cuBLAS handle 1 are the ten library workspaces
    // before the backward pass, cudnnCreate the two after it.
    CHECK(out == "1 True parameter parameter activation library_workspace library_workspace library_workspace "
                 "library_workspace library_workspace library_workspace library_workspace library_workspace "
                 "library_workspace library_workspace backward backward library_workspace library_workspace "
                 "optimizer_state optimizer_state\n"
                 "{'action': 'snapshot', 'addr': 0, 'size': 0, 'stream': 0, 'time_us': 1796125005797194, "
                 "'frames': [], 'category': 'unknown'}\n"
                 "parameter activation library_workspace backward optimizer_state unknown\n");

    // A program no rule knows: no category (MemoryViz then colours each allocation on its own).
    std::string plain = exporter::export_pickle(vt_export_test::fixture_snapshot(), {}, nullptr);
    CHECK(plain.find("category") == std::string::npos);
    CHECK(plain.find("snapshot") == std::string::npos);
}

TEST_CASE("export attribution: the HTML report lists categories with a colour, as text", "[export][attribution]") {
    exporter::Options at_exit;
    at_exit.at = exporter::At::Exit;
    std::string html = exporter::export_html(recorded(), at_exit, nullptr);
    auto swatch = [](const char *colour) {
        return std::string("<span style=\"display:inline-block;width:.8em;height:.8em;margin-right:.4em;background:") +
               colour + "\"></span>";
    };
    CHECK(html.find("<h2>Memory by category</h2>\n<table><tr><th>category</th><th>bytes</th><th>share</th></tr>\n"
                    "<tr><td>" + swatch("#4e79a7") + "parameter</td><td class=\"n\">18.00 MiB (18874368 B)</td><td class=\"n\">6.4%</td></tr>\n"
                    "<tr><td>" + swatch("#f28e2c") + "optimizer_state</td><td class=\"n\">32.00 MiB (33554432 B)</td><td class=\"n\">11.4%</td></tr>\n"
                    "<tr><td>" + swatch("#59a14f") + "activation</td><td class=\"n\">20.00 MiB (20971520 B)</td><td class=\"n\">7.1%</td></tr>\n"
                    "<tr><td>" + swatch("#e15759") + "backward</td><td class=\"n\">18.00 MiB (18874368 B)</td><td class=\"n\">6.4%</td></tr>\n"
                    "<tr><td>" + swatch("#af7aa1") + "library_workspace</td><td class=\"n\">192.30 MiB (201641488 B)</td><td class=\"n\">68.6%</td></tr>\n"
                    "<tr><td>" + swatch("#bab0ab") + "other</td><td class=\"n\">4 B</td><td class=\"n\">0.0%</td></tr>\n"
                    "</table>\n") != std::string::npos);
    // cuda:0 and host memory at the peaks: the table says which device each row is on.
    CHECK(html.find("<table><tr><th>bytes</th><th>allocations</th><th>device</th><th>category</th><th>call site</th></tr>\n") !=
          std::string::npos);
    CHECK(html.find("<tr><td class=\"n\">32.00 MiB (33554432 B)</td><td class=\"n\">2</td><td>cuda:0</td><td>" + swatch("#f28e2c") +
                    "optimizer_state</td><td>main at /work/main/tests/gpu/attribution/torch_categories.py:49 (python) "
                    "via torch.optim.adam.Adam.step</td></tr>\n") != std::string::npos);

    // Names from a snapshot are text, never markup; a category outside the list is grey.
    snapshot::Snapshot s = vt_export_test::fixture_snapshot();
    s.stacks[0].category = "<img src=x onerror=alert(1)>";
    s.stacks[0].via_label = "a<b>&\"c\"";
    std::string hostile = exporter::export_html(s, at_exit, nullptr);
    CHECK(hostile.find("<img") == std::string::npos);
    CHECK(hostile.find(swatch("#bab0ab") + "&lt;img src=x onerror=alert(1)&gt;</td>") != std::string::npos);
    CHECK(hostile.find(" via a&lt;b&gt;&amp;&quot;c&quot;</td>") != std::string::npos);
    // Without any category but "other" the table is as before.
    std::string plain = exporter::export_html(vt_export_test::fixture_snapshot(), at_exit, nullptr);
    CHECK(plain.find("<h2>Memory by category</h2>") == std::string::npos);
    CHECK(plain.find("<th>category</th>") == std::string::npos);
}
