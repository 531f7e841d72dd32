// The exporters (tools/export/) on one fixed snapshot: each format byte for byte against a golden
// file in data/ (regenerate with VT_UPDATE_GOLDEN=1 after a deliberate change, then review the
// diff), plus exact checks of what the golden files must say, the option errors and the encoders.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <zlib.h>

#include "export/export.h"
#include "export/export_common.h"
#include "export/pickle_writer.h"
#include "export/protobuf_writer.h"
#include "export_fixture.h"

using namespace vramtrace;
using exporter::At;
using exporter::Options;

namespace {

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

size_t count_of(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

void check_golden(const std::string &name, const std::string &got) {
    std::string path = std::string(VT_TEST_DATA_DIR) + "/" + name;
    if (std::getenv("VT_UPDATE_GOLDEN")) {
        std::ofstream(path, std::ios::binary) << got;
    }
    std::string want = read_file(path);
    INFO("golden file " << path);
    CHECK(got.size() == want.size());
    CHECK(got == want);
}

std::string gunzip(const std::string &data) {
    z_stream zs{};
    REQUIRE(inflateInit2(&zs, 15 + 16) == Z_OK);
    std::string out(1 << 20, '\0');
    zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
    zs.avail_in = uInt(data.size());
    zs.next_out = reinterpret_cast<Bytef *>(out.data());
    zs.avail_out = uInt(out.size());
    int rc = inflate(&zs, Z_FINISH);
    out.resize(zs.total_out);
    inflateEnd(&zs);
    REQUIRE(rc == Z_STREAM_END);
    return out;
}

} // namespace

TEST_CASE("chrome trace of the fixture matches the golden file", "[export]") {
    std::vector<std::string> notes;
    std::string out = exporter::export_chrome(vt_export_test::fixture_snapshot(), {}, &notes);
    check_golden("chrome.json", out);
    CHECK(notes.empty());
    // Device 0 starts from 0 before its first event (1 MiB live at the dump, net +1 MiB in history),
    // ts are microseconds since the process start (monotonic 1 s).
    CHECK(out.find("{\"name\": \"tracked bytes cuda:0\", \"ph\": \"C\", \"ts\": 500000.000, \"pid\": 4242, \"args\": "
                   "{\"bytes\": 0}}") != std::string::npos);
    CHECK(out.find("\"ts\": 1000000.000, \"pid\": 4242, \"args\": {\"bytes\": 4194304}}") != std::string::npos);
    CHECK(out.find("{\"name\": \"epoch \\\"1\\\" \\u003ca;b>\", \"cat\": \"mark\", \"ph\": \"i\", \"s\": \"g\", "
                   "\"ts\": 1500000.000") != std::string::npos);
}

TEST_CASE("chrome trace without event history uses the live allocations and says so", "[export]") {
    snapshot::Snapshot s = vt_export_test::fixture_snapshot();
    s.events = {};
    std::vector<std::string> notes;
    Options device0;
    device0.device = 0;
    std::string out = exporter::export_chrome(s, device0, &notes);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find("no event history") != std::string::npos);
    CHECK(out.find("\"tracked bytes cuda:0\", \"ph\": \"C\", \"ts\": 500000.000, \"pid\": 4242, \"args\": {\"bytes\": 0}}") !=
          std::string::npos);
    CHECK(out.find("\"tracked bytes cuda:0\", \"ph\": \"C\", \"ts\": 500000.000, \"pid\": 4242, \"args\": {\"bytes\": "
                   "1048576}}") != std::string::npos);
    CHECK(out.find("cuda:1") == std::string::npos);
    CHECK(out.find("\"cat\": \"oom\"") != std::string::npos); // from Snapshot::ooms
    check_golden("chrome_no_history_device0.json", out);
}

TEST_CASE("folded stacks at exit and at the peak", "[export]") {
    snapshot::Snapshot s = vt_export_test::fixture_snapshot();
    std::string exit_out = exporter::export_folded(s, {}, nullptr);
    CHECK(exit_out == "cuda:0;main;make_buffer(unsigned long);alloc_helper<float>(unsigned long)_[i];cudaMalloc 1048576\n"
                      "cuda:1;worker(int);cudaMalloc 2097152\n"
                      "host;(no stack captured) 4096\n");
    Options peak;
    peak.at = At::Peak;
    peak.device = 0;
    std::string peak_out = exporter::export_folded(s, peak, nullptr);
    CHECK(peak_out == "main;make_buffer(unsigned long);alloc_helper<float>(unsigned long)_[i];cudaMalloc 1048576\n"
                      "main;train+0x2000;cudaMalloc 3145728\n");
    check_golden("folded_exit.txt", exit_out);
    check_golden("folded_peak_device0.txt", peak_out);
}

TEST_CASE("pprof: golden protobuf, and the gzip'd file inflates to it", "[export]") {
    snapshot::Snapshot s = vt_export_test::fixture_snapshot();
    std::string raw = exporter::export_pprof_uncompressed(s, {}, nullptr);
    check_golden("pprof_exit.pb", raw);
    std::string gz = exporter::export_pprof(s, {}, nullptr);
    REQUIRE(gz.size() > 10);
    CHECK(uint8_t(gz[0]) == 0x1f);
    CHECK(uint8_t(gz[1]) == 0x8b);
    CHECK(gunzip(gz) == raw);
    Options peak;
    peak.at = At::Peak;
    check_golden("pprof_peak.pb", exporter::export_pprof_uncompressed(s, peak, nullptr));
}

TEST_CASE("pickle of the fixture matches the golden file", "[export]") {
    std::vector<std::string> notes;
    std::string out = exporter::export_pickle(vt_export_test::fixture_snapshot(), {}, &notes);
    check_golden("memory_snapshot.pickle", out);
    CHECK(out.substr(0, 2) == "\x80\x04");
    CHECK(out.back() == '.');
    REQUIRE(notes.size() == 1); // the host-pinned allocation
    CHECK(notes[0].rfind("1 live allocation(s) left out", 0) == 0);
}

// The page without the bodies of its <style> and viewer <script> (tools/export/html/viewer_*.js, viewer.css):
// the golden file holds what the exporter writes from the snapshot, the browser tests the viewer.
// tests/cli/cli_test.sh strips the CLI's page the same way (sed).
static std::string without_assets(const std::string &page) {
    std::string out;
    bool skipping = false;
    for (size_t at = 0; at < page.size();) {
        size_t end = page.find('\n', at);
        end = end == std::string::npos ? page.size() : end + 1;
        std::string_view line(page.data() + at, end - at);
        if (skipping && (line.rfind("</style>", 0) == 0 || line.rfind("</script>", 0) == 0)) skipping = false;
        if (!skipping) out += line;
        if (line == "<style>\n" || line == "<script>\n") skipping = true;
        at = end;
    }
    return out;
}

TEST_CASE("html report of the fixture matches the golden file", "[export]") {
    std::vector<std::string> notes;
    std::string out = exporter::export_html(vt_export_test::fixture_snapshot(), {}, &notes);
    check_golden("report.html", without_assets(out));
    CHECK(notes.empty());
    CHECK(out.find("://") == std::string::npos); // self-contained: nothing fetched
    CHECK(out.find("innerHTML") == std::string::npos); // the viewer inserts text only
    CHECK(out.find("<h2>Top call sites at each device's peak</h2>") != std::string::npos);
    CHECK(out.find("\"epoch \\\"1\\\" \\u003ca;b>\"") != std::string::npos); // the mark, as JSON text
    // The page is the viewer with the data: two scripts, the data's type is not JavaScript.
    CHECK(count_of(out, "<script") == 2);
    CHECK(count_of(out, "</script>") == 2);
    CHECK(out.find("<script type=\"application/json\" id=\"vt-data\">{\"mode\":\"single\"") != std::string::npos);
}

TEST_CASE("html compare page holds both snapshots", "[export]") {
    std::vector<std::string> notes;
    snapshot::Snapshot base = vt_export_test::fixture_snapshot();
    base.process.pid = 1111;
    std::string out = exporter::export_html_compare(base, vt_export_test::fixture_snapshot(), {}, &notes);
    CHECK(notes.empty());
    CHECK(out.find("<h1>vramtrace compare</h1>") != std::string::npos);
    CHECK(out.find("<p><b>base:</b> ./train --epochs 3<br>pid 1111 on node17") != std::string::npos);
    CHECK(out.find("<p><b>new:</b> ./train --epochs 3<br>pid 4242 on node17") != std::string::npos);
    CHECK(out.find("{\"mode\":\"compare\",\"names\":[\"base\",\"new\"],\"runs\":[{\"title\"") != std::string::npos);
    CHECK(count_of(out, "\"title\":\"./train --epochs 3\"") == 2);
}

TEST_CASE("export_snapshot refuses what the snapshot cannot give", "[export]") {
    snapshot::Snapshot s = vt_export_test::fixture_snapshot();
    std::string out, error;
    std::vector<std::string> notes;
    Options bad_device;
    bad_device.device = 7;
    CHECK_FALSE(exporter::export_snapshot(s, exporter::Format::Folded, bad_device, &out, &notes, &error));
    CHECK(error == "the snapshot has no device cuda:7");
    s.peaks.clear();
    Options peak;
    peak.at = At::Peak;
    CHECK_FALSE(exporter::export_snapshot(s, exporter::Format::Pprof, peak, &out, &notes, &error));
    CHECK(error.find("no peak composition") != std::string::npos);
    // html falls back to the dump, with a note.
    CHECK(exporter::export_snapshot(s, exporter::Format::Html, {}, &out, &notes, &error));
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find("no peak composition") != std::string::npos);
    exporter::Format f;
    CHECK(exporter::parse_format("pickle", &f));
    CHECK(f == exporter::Format::Pickle);
    CHECK_FALSE(exporter::parse_format("json", &f));
}

TEST_CASE("pickle writer encodes integers and batches long lists", "[export]") {
    exporter::PickleWriter w(true);
    w.integer(255);
    w.integer(65535);
    w.integer(-1);
    w.integer(int64_t(1) << 40);
    w.integer(-(int64_t(1) << 40));
    w.unsigned_integer(UINT64_MAX);
    CHECK(w.fragment() == std::string("K\xff" "M\xff\xff" "J\xff\xff\xff\xff"
                                      "\x8a\x06\x00\x00\x00\x00\x00\x01"
                                      "\x8a\x06\x00\x00\x00\x00\x00\xff"
                                      "\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00", 2 + 3 + 5 + 8 + 8 + 11));
    exporter::PickleWriter list(true);
    list.begin_list();
    for (int i = 0; i < 1001; ++i) {
        list.item();
        list.integer(1);
    }
    list.end_list();
    // ] ( K1 x1000 e ( K1 e
    std::string want = "](" + std::string(1000 * 2, '\0') + "e(K\x01" "e";
    for (int i = 0; i < 1000; ++i) want[2 + 2 * i] = 'K', want[3 + 2 * i] = '\x01';
    CHECK(list.fragment() == want);
    exporter::PickleWriter memo(true);
    memo.str("x");
    CHECK(memo.memoize() == 0);
    memo.memo_get(0);
    for (int i = 1; i < 300; ++i) memo.memoize();
    memo.memo_get(299);
    CHECK(memo.fragment() == std::string("\x8c\x01x\x94h\x00", 6) + std::string(299, '\x94') +
                                 std::string("j\x2b\x01\x00\x00", 5));
    exporter::PickleWriter empty(true);
    empty.begin_dict();
    empty.end_dict();
    CHECK(empty.fragment() == "}");
}

TEST_CASE("protobuf writer: varints, packed fields, negative int64", "[export]") {
    exporter::ProtoWriter w;
    w.varint_field(1, 300);
    w.int64_field(2, -1);
    w.packed_field(3, {1, 150});
    w.packed_field(4, {});
    CHECK(w.bytes() == std::string("\x08\xac\x02" "\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01" "\x1a\x03\x01\x96\x01", 3 + 11 + 5));
}

TEST_CASE("chrome trace: NVTX start/end ranges as slices on their starting thread, alloc/free with their range stack", "[export]") {
    snapshot::Snapshot s = vt_export_test::fixture_snapshot();
    s.range_stacks = {{1, {"", "ml"}, {"step", "forward"}}, {2, {""}, {"loader"}}};
    s.events.events[0].range = 1; // alloc 1 MiB
    s.events.events[1].range = 2; // alloc 3 MiB
    s.events.events[3].range = 2; // its free
    // Times: the process started at monotonic 1 s; the dump is at monotonic 6 s.
    s.nvtx_intervals = {{"", "load phase", 1200000000, 2200000000, 4242, 4242},
                        {"", "handoff", 1300000000, 2100000500, 4242, 4243},
                        {"ml", "epoch", 3000000000, 0, 4243, 0}};
    std::vector<std::string> notes;
    std::string out = exporter::export_chrome(s, {}, &notes);
    CHECK(notes.empty());
    CHECK(s.process.dump_monotonic_ns == 6 * 1000000000ull);
    auto line_of = [&](const std::string &start) {
        size_t at = out.find("\n" + start);
        if (at == std::string::npos) return std::string("(no line starting " + start + ")");
        size_t end = out.find('\n', at + 1);
        return out.substr(at + 1, end - at - 1);
    };
    CHECK(line_of("{\"name\": \"load phase\"") ==
          "{\"name\": \"load phase\", \"cat\": \"nvtx\", \"ph\": \"X\", \"ts\": 200000.000, \"dur\": 1000000.000, "
          "\"pid\": 4242, \"tid\": 4242, \"args\": {\"domain\": \"\", \"start_thread\": 4242, \"end_thread\": 4242}},");
    CHECK(line_of("{\"name\": \"handoff\"") ==
          "{\"name\": \"handoff\", \"cat\": \"nvtx\", \"ph\": \"X\", \"ts\": 300000.000, \"dur\": 800000.500, "
          "\"pid\": 4242, \"tid\": 4242, \"args\": {\"domain\": \"\", \"start_thread\": 4242, \"end_thread\": 4243}},");
    // Still open at the dump: it runs to the dump.
    CHECK(line_of("{\"name\": \"ml:epoch\"") ==
          "{\"name\": \"ml:epoch\", \"cat\": \"nvtx\", \"ph\": \"X\", \"ts\": 2000000.000, \"dur\": 3000000.000, "
          "\"pid\": 4242, \"tid\": 4243, \"args\": {\"domain\": \"ml\", \"start_thread\": 4243, \"open\": true}},");
    CHECK(count_of(out, "\"cat\": \"nvtx\"") == 3);
    // The slices come after the counters and before the first instant event.
    CHECK(out.find("\"cat\": \"nvtx\"") > out.rfind("\"ph\": \"C\""));
    CHECK(out.rfind("\"cat\": \"nvtx\"") < out.find("\"ph\": \"i\""));
    CHECK(count_of(out, "\"nvtx_range\": \"step > ml:forward\"}}") == 1);
    CHECK(count_of(out, "\"nvtx_range\": \"loader\"}}") == 2);
    CHECK(count_of(out, "\"nvtx_range\"") == 3);
    CHECK(line_of("{\"name\": \"free 3.00 MiB\"").find("\"nvtx_range\": \"loader\"}},") != std::string::npos);

    // Without the event history, the live allocations carry theirs.
    s.events = {};
    s.allocations[0].range = 1;
    std::string live = exporter::export_chrome(s, {}, &notes);
    CHECK(count_of(live, "\"nvtx_range\": \"step > ml:forward\"}}") == 1);
    CHECK(count_of(live, "\"nvtx_range\"") == 1);
    CHECK(count_of(live, "\"cat\": \"nvtx\"") == 3);
}
