// The CLI's diff and merge: call-site keys, the streaming per-site reduction, the comparison and
// its gate, and merging (tools/call_sites.cpp, diff_core.cpp, merge_core.cpp).
#include <catch2/catch.hpp>

#include <cstdio>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include "../../../tools/call_sites.h"
#include "../../../tools/diff_core.h"
#include "../../../tools/merge_core.h"
#include "../../../tools/snapshot_reader.h"
#include "../../../tools/text_table.h"
#include "report_test_data.h"
#include "reporting/snapshot_writer.h"

using namespace vramtrace::report;
using namespace vramtrace::cli;

namespace {

std::string json_of(const Snapshot &s) {
    vt_test::TempDir dir;
    int fd = ::open(dir.file("s.json").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(write_snapshot_json(s, fd, nullptr));
    ::close(fd);
    return vt_test::read_file(dir.file("s.json"));
}

SnapshotSites sites_of(const Snapshot &s, SiteKeyOptions options = {}) {
    std::istringstream in(json_of(s));
    SnapshotSites out;
    std::string error;
    REQUIRE(collect_sites(in, "s.json", options, &out, &error));
    return out;
}

std::vector<std::tuple<std::string, uint64_t, uint64_t>> rows(const SnapshotSites &s) {
    std::vector<std::tuple<std::string, uint64_t, uint64_t>> out;
    for (const SiteTotals &t : s.sites) out.emplace_back(t.key, t.live_bytes, t.live_count);
    return out;
}

GrowthLimit limit_of(const std::string &text) {
    GrowthLimit limit;
    std::string why;
    INFO(text);
    REQUIRE(parse_growth_limit(text, &limit, &why));
    return limit;
}

std::string limit_error(const std::string &text) {
    GrowthLimit limit;
    std::string why;
    CHECK_FALSE(parse_growth_limit(text, &limit, &why));
    return why;
}

SiteTotals site(const std::string &key, uint64_t bytes, uint64_t count) {
    SiteTotals t;
    t.key = key;
    t.live_bytes = bytes;
    t.live_count = count;
    return t;
}

SnapshotSites run_of(std::vector<SiteTotals> sites, uint64_t peak) {
    SnapshotSites s;
    s.sites = std::move(sites);
    for (const SiteTotals &t : s.sites) s.live_bytes += t.live_bytes, s.live_count += t.live_count;
    DeviceTotals d;
    d.device = 0;
    d.peak_bytes = peak;
    d.current_bytes = s.live_bytes;
    s.devices.push_back(d);
    return s;
}

class MergedRows final : public SnapshotSink {
public:
    std::vector<MergedProcess> processes;
    std::vector<MergedDevice> devices;
    void on_merged_process(MergedProcess &&p) override { processes.push_back(std::move(p)); }
    void on_merged_device(MergedDevice &&d) override { devices.push_back(std::move(d)); }
};

} // namespace

TEST_CASE("diff: frame keys leave out what ASLR and rebuilds change", "[diff]") {
    Frame with_line{0x555555555234, 0, 0x1234, "make_buffer(unsigned long)", "/home/ci/build-17/src/train.cpp", 42};
    CHECK(frame_key("/home/ci/build-17/train", with_line, true) == "make_buffer(unsigned long) at train.cpp:42 (train)");
    CHECK(frame_key("/home/ci/build-17/train", with_line, false) == "make_buffer(unsigned long) at train.cpp (train)");
    CHECK(frame_key("", with_line, true) == "make_buffer(unsigned long) at train.cpp:42");
    Frame no_line{0x7f0000003000, 2, 0x3000, "worker()", "", 0};
    CHECK(frame_key("/usr/lib/libfoo.so.1", no_line, true) == "worker() (libfoo.so.1+0x3000)");
    CHECK(frame_key("/usr/lib/libfoo.so.1", no_line, false) == "worker() (libfoo.so.1)");
    Frame anonymous{0x7f0000003000, 2, 0x3000, "", "", 0};
    CHECK(frame_key("/usr/lib/libfoo.so.1", anonymous, false) == "?? (libfoo.so.1+0x3000)");
    Frame nowhere{0x7fffe0001000, -1, 0, "", "", 0};
    CHECK(frame_key("", nowhere, true) == "?? (0x7fffe0001000)");
    Frame file_no_line{0x1000, 0, 0x1000, "f", "a.cpp", 0};
    CHECK(frame_key("/x/m", file_no_line, true) == "f at a.cpp (m)");
}

TEST_CASE("diff: a snapshot reduced per call site, streaming", "[diff]") {
    SnapshotSites s = sites_of(vt_test::golden_snapshot());
    CHECK(s.schema_version == 1);
    CHECK(s.process.pid == 4242);
    CHECK(s.devices.size() == 3);
    CHECK(s.dropped_stacks == 1);
    CHECK_FALSE(s.has_peak_composition);
    CHECK(rows(s) == std::vector<std::tuple<std::string, uint64_t, uint64_t>>{
                         {std::string(kNoCallSiteKey), 3145728, 1},
                         {"(no stack captured)", 4096, 1},
                         {"?? (0x7fffe0001000)", 1000, 1},
                         {"load_weights(char const*) at model.cpp:17 (train)", 9437184, 2},
                         {"make_buffer(unsigned long) at train.cpp:42 (train)", 4194816, 3},
                         {"worker_thread() (train+0x3000)", 65536, 1},
                     });
    CHECK(s.live_bytes == 16848360);
    CHECK(s.live_count == 9);
    CHECK(s.sites[3].devices == std::vector<int>{0, 1});
    CHECK(s.sites[3].apis == std::vector<std::string>{"cudaMallocAsync", "cudaMallocManaged"});

    // The same totals as the summary's grouping (which keys on full paths).
    auto groups = group_live_by_call_site(vt_test::golden_snapshot());
    REQUIRE(groups.size() == s.sites.size());
    uint64_t grouped = 0;
    for (const auto &g : groups) grouped += g.live_bytes;
    CHECK(grouped == s.live_bytes);

    SnapshotSites two = sites_of(vt_test::golden_snapshot(), SiteKeyOptions{2, true});
    CHECK(rows(two) == std::vector<std::tuple<std::string, uint64_t, uint64_t>>{
                           {std::string(kNoCallSiteKey), 3145728, 1},
                           {"(no stack captured)", 4096, 1},
                           {"?? (0x7fffe0001000)", 1000, 1},
                           {"load_weights(char const*) at model.cpp:17 (train) <- main at train.cpp:90 (train)", 9437184, 2},
                           {"make_buffer(unsigned long) at train.cpp:42 (train) <- main at train.cpp:90 (train)", 4194816, 3},
                           {"worker_thread() (train+0x3000)", 65536, 1},
                       });
    // stack_key on a whole Snapshot gives the same keys.
    Snapshot g = vt_test::golden_snapshot();
    CHECK(stack_key(g, g.stacks[0], SiteKeyOptions{2, true}) == std::get<0>(rows(two)[4]));
    CHECK(stack_key(g, g.stacks[3], {}) == kNoCallSiteKey);
}

TEST_CASE("diff: the per-site reader checks cross references in any member order", "[diff]") {
    std::string json = json_of(vt_test::golden_snapshot());
    auto error_of = [](const std::string &text) {
        std::istringstream in(text);
        SnapshotSites out;
        std::string error;
        bool ok = collect_sites(in, "x.json", {}, &out, &error);
        CHECK((ok ? error.empty() : error.find('\n') == std::string::npos));
        if (!ok) CHECK(out.sites.empty());
        return ok ? std::string() : error;
    };
    CHECK(error_of(json).empty());
    std::string bad_stack = json;
    bad_stack.replace(bad_stack.find("\"stack\": 6}"), 11, "\"stack\": 7}");
    CHECK(error_of(bad_stack) == "x.json: allocations[8].stack: 7 is not the id of an entry in stacks");
    std::string zero_id = json;
    zero_id.replace(zero_id.find("{\"id\": 6,"), 9, "{\"id\": 0,");
    CHECK(error_of(zero_id) == "x.json: stacks[5].id: 0 is reserved for \"no stack\"");
    std::string bad_call_site = json;
    bad_call_site.replace(bad_call_site.find("\"call_site\": -1"), 15, "\"call_site\": 3");
    CHECK(error_of(bad_call_site) == "x.json: stacks[3].call_site: 3 is not an index into this stack's frames (1 entries)");
    // Allocations first, then stacks, frames, modules: the same result.
    std::string head = json.substr(0, json.find("  \"modules\""));
    std::string modules = json.substr(json.find("  \"modules\""), json.find("  \"frames\"") - json.find("  \"modules\""));
    std::string frames = json.substr(json.find("  \"frames\""), json.find("  \"stacks\"") - json.find("  \"frames\""));
    std::string stacks = json.substr(json.find("  \"stacks\""), json.find("  \"allocations\"") - json.find("  \"stacks\""));
    std::string allocations = json.substr(json.find("  \"allocations\""));
    allocations = allocations.substr(0, allocations.rfind(']') + 1) + ",\n";
    std::string reordered = head + allocations + stacks + frames + modules;
    reordered = reordered.substr(0, reordered.rfind(',')) + "\n}\n";
    std::istringstream in(reordered);
    SnapshotSites out;
    std::string error;
    REQUIRE(collect_sites(in, "r.json", {}, &out, &error));
    CHECK(rows(out) == rows(sites_of(vt_test::golden_snapshot())));
}

TEST_CASE("diff: growth limits are parsed exactly", "[diff]") {
    CHECK(limit_of("0").bytes == 0);
    CHECK(limit_of("1048576").bytes == 1048576);
    CHECK(limit_of("10MiB").bytes == 10485760);
    CHECK(limit_of("10mib").bytes == 10485760);
    CHECK(limit_of("1.5GiB").bytes == 1610612736);
    CHECK(limit_of("0.001KiB").bytes == 1);
    CHECK(limit_of("500kB").bytes == 500000);
    CHECK(limit_of("2MB").bytes == 2000000);
    CHECK(limit_of("3B").bytes == 3);
    CHECK(limit_of("1PiB").bytes == 1125899906842624ull);
    CHECK_FALSE(limit_of("5MiB").percent);
    GrowthLimit p = limit_of("5%");
    CHECK(p.percent);
    CHECK(p.micro_percent == 5000000);
    CHECK(limit_of("0.5%").micro_percent == 500000);
    CHECK(limit_of("12.345678%").micro_percent == 12345678);
    CHECK(limit_of("5%").text == "5%");
    CHECK(limit_error("") == "expected a byte count such as 1048576 or 10MiB, or a percentage such as 5%");
    CHECK(limit_error("-1") == "expected a byte count such as 1048576 or 10MiB, or a percentage such as 5%");
    CHECK(limit_error("1.") == "expected a byte count such as 1048576 or 10MiB, or a percentage such as 5%");
    CHECK(limit_error(".5MiB") == "expected a byte count such as 1048576 or 10MiB, or a percentage such as 5%");
    CHECK(limit_error("1.5") == "a byte count has no fraction: 1.5");
    CHECK(limit_error("10 MiB") == "unknown unit ' MiB' (expected a byte count such as 1048576 or 10MiB, or a percentage such as 5%)");
    CHECK(limit_error("1.0000001%") == "at most 6 decimals in a percentage");
    CHECK(limit_error("17000PiB") == "byte count too large: 17000PiB");
    CHECK(limit_error("18446744073709551616") ==
          "expected a byte count such as 1048576 or 10MiB, or a percentage such as 5%");
    CHECK(limit_of("18446744073709551615").bytes == 18446744073709551615ull);
}

TEST_CASE("diff: sites compared, largest growth first, new and gone marked", "[diff]") {
    SnapshotSites base = run_of({site("a", 100, 1), site("b", 4096, 2), site("c", 50, 1), site("same", 7, 7)}, 10000);
    SnapshotSites now = run_of({site("a", 300, 2), site("b", 4096, 1), site("d", 1000, 3), site("same", 7, 7)}, 9000);
    DiffResult d = compute_diff(base, now, {});
    REQUIRE(d.sites.size() == 5);
    CHECK(d.changed == 4);
    CHECK(d.sites[0].key == "d");
    CHECK(d.sites[0].status == SiteDiff::Status::New);
    CHECK(d.sites[1].key == "a");
    CHECK(d.sites[1].status == SiteDiff::Status::Grew);
    CHECK(d.sites[2].key == "b");
    CHECK(d.sites[2].status == SiteDiff::Status::Shrank);
    CHECK(d.sites[3].key == "c");
    CHECK(d.sites[3].status == SiteDiff::Status::Gone);
    CHECK(d.sites[4].key == "same");
    CHECK(d.sites[4].status == SiteDiff::Status::Same);
    CHECK_FALSE(d.sites[0].at_peak.has_value());
    CHECK(d.live_bytes.base == 4253);
    CHECK(d.live_bytes.now == 5403);
    CHECK(d.peak_bytes.base == 10000);
    CHECK(d.peak_bytes.now == 9000);
    CHECK(format_change_bytes(d.sites[0].live_bytes) == "+1000 B");
    CHECK(format_change_bytes(d.sites[3].live_bytes) == "-50 B");
    CHECK(format_change_bytes(Compared{0, 3 << 20}) == "+3.00 MiB (+3145728 B)");
    CHECK(format_change_bytes(Compared{5, 5}) == "0 B");
    CHECK(format_change_count(d.sites[2].live_count) == "-1");

    // Text: only the changed sites unless asked; JSON: the same sites with null peaks.
    std::string text = format_diff_text(base, now, d, {}, nullptr);
    CHECK(text.find("call sites: 4 changed (1 grew, 1 shrank, 1 new, 1 gone), 1 unchanged") != std::string::npos);
    CHECK(text.find("same\n") == std::string::npos);
    CHECK(format_diff_text(base, now, d, DiffTextOptions{true, 0}, nullptr).find("  same\n") != std::string::npos);
    auto j = diff_json(base, now, d, {}, nullptr, nullptr);
    REQUIRE(j["sites"].size() == 4);
    CHECK(j["sites"][0]["bytes_at_peak"].is_null());
    CHECK(j["sites"][3]["live_bytes"]["change"] == -50);
    CHECK(j["totals"]["live_bytes"]["change"] == 1150);
    CHECK(j["gate"].is_null());
}

TEST_CASE("diff: the growth gate", "[diff]") {
    SnapshotSites base = run_of({site("a", 1000, 1), site("b", 0, 0)}, 2000);
    SnapshotSites now = run_of({site("a", 1100, 1), site("new one", 10, 1)}, 1900);
    DiffResult d = compute_diff(base, now, {});
    std::string why;
    auto gate = [&](const std::string &limit, GateMetric metric = GateMetric::Live, const std::string &at = "") {
        auto g = apply_gate(d, limit_of(limit), metric, at, &why);
        REQUIRE(g);
        return *g;
    };
    // Live bytes grew by 110 (11%), the peak shrank by 100.
    CHECK_FALSE(gate("110").exceeded);
    CHECK(gate("109").exceeded);
    CHECK_FALSE(gate("11%").exceeded);
    CHECK(gate("10.999999%").exceeded);
    CHECK_FALSE(gate("0", GateMetric::Peak).exceeded);
    CHECK_FALSE(gate("0%", GateMetric::Peak).exceeded);
    CHECK(gate("109").verdict == "live bytes changed by +110 B, +11.00%: more than the limit 109");
    CHECK(gate("11%").verdict == "live bytes changed by +110 B, +11.00%: within the limit 11% of the base");
    // A site: exact key, else every key containing the text.
    CHECK_FALSE(gate("100", GateMetric::Live, "a").exceeded);
    CHECK(gate("99", GateMetric::Live, "a").exceeded);
    CHECK(gate("99", GateMetric::Live, "a").subject == "live bytes of call site 'a'");
    CHECK(gate("0", GateMetric::Live, "new").subject == "live bytes of the 1 call site containing 'new'");
    // New site: a base of 0 fails any percentage, passes a byte limit it stays within.
    CHECK(gate("1000000%", GateMetric::Live, "new one").exceeded);
    CHECK_FALSE(gate("10", GateMetric::Live, "new one").exceeded);
    CHECK_FALSE(apply_gate(d, limit_of("1"), GateMetric::Live, "zzz", &why));
    CHECK(why == "--site 'zzz' matches no call site of either snapshot");
    CHECK_FALSE(apply_gate(d, limit_of("1"), GateMetric::Peak, "a", &why));
    CHECK(why.find("which these snapshots do not record (schema 1)") != std::string::npos);
}

TEST_CASE("merge: processes, devices and call sites of several snapshots", "[merge]") {
    Snapshot a = vt_test::golden_snapshot();
    Snapshot b = vt_test::golden_snapshot();
    b.process.pid = 5000;
    b.process.host = "node18";
    for (Module &m : b.modules) m.base += 0x100000000; // loaded elsewhere: frames still match
    for (Frame &f : b.frames)
        if (f.module >= 0) f.address += 0x100000000;
    vt_test::TempDir dir;
    std::FILE *spool = std::tmpfile();
    REQUIRE(spool);
    Merger merger(SiteKeyOptions{}, spool);
    std::string error;
    std::istringstream in_a(json_of(a)), in_b(json_of(b));
    REQUIRE(merger.add_stream(in_a, "a.json", &error));
    REQUIRE(merger.add_stream(in_b, "b.json", &error));
    CHECK(merger.files() == 2);
    REQUIRE(merger.processes().size() == 2);
    CHECK(merger.processes()[1].pid == 5000);
    CHECK(merger.processes()[1].file == "b.json");
    CHECK(merger.processes()[1].live_bytes == 16848360);
    CHECK(merger.processes()[1].live_allocations == 9);
    CHECK(merger.process_devices().size() == 6);
    CHECK(merger.live_bytes() == 2 * 16848360);
    CHECK(merger.dropped_stacks() == 2);
    auto devices = merger.devices();
    REQUIRE(devices.size() == 6); // two hosts: cuda:0 of node17 is not cuda:0 of node18
    CHECK(devices[0].identity == "node17 host");
    CHECK(devices[1].identity == "node17 cuda:0");
    CHECK(devices[1].peak_max == 146800640);
    auto sites = merger.sites();
    REQUIRE(sites.size() == 6);
    CHECK(sites[0].key == "load_weights(char const*) at model.cpp:17 (train)");
    CHECK(sites[0].live_bytes == 2 * 9437184);
    CHECK(sites[0].live_count == 4);
    CHECK(sites[0].files == 2);

    // Written out and read back: a valid snapshot with both processes' allocations and the rows.
    std::string path = dir.file("merged.json");
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(merger.write_snapshot(fd, {"vramtrace", "merge", "a.json", "b.json"}, "9.9.9", &error));
    ::close(fd);
    std::fclose(spool);
    Snapshot merged;
    REQUIRE(read_snapshot_file(path, &merged, &error));
    CHECK(merged.process.reason == "merge");
    CHECK(merged.process.pid == 0);
    CHECK(merged.process.host.empty());
    CHECK(merged.process.vramtrace_version == "9.9.9");
    CHECK(merged.process.command_line == std::vector<std::string>{"vramtrace", "merge", "a.json", "b.json"});
    CHECK(merged.modules.size() == 2);
    CHECK(merged.frames.size() == 7);
    CHECK(merged.stacks.size() == 6);
    CHECK(merged.allocations.size() == 18);
    REQUIRE(merged.devices.size() == 3);
    CHECK(merged.devices[1].device == 0);
    CHECK(merged.devices[1].current_bytes == 2 * 12584424);
    CHECK(merged.devices[1].peak_bytes == 2 * 146800640);
    CHECK(merged.dropped_stacks == 2);
    // The summary's grouping of the merged snapshot: every site of one input, twice.
    auto one = group_live_by_call_site(a);
    auto both = group_live_by_call_site(merged);
    REQUIRE(both.size() == one.size());
    for (size_t i = 0; i < one.size(); ++i) {
        CHECK(both[i].key == one[i].key);
        CHECK(both[i].live_bytes == 2 * one[i].live_bytes);
        CHECK(both[i].live_count == 2 * one[i].live_count);
    }
    MergedRows rows;
    std::ifstream again(path);
    REQUIRE(read_snapshot_stream(again, path, rows, &error));
    REQUIRE(rows.processes.size() == 2);
    CHECK(rows.processes[0].file == "a.json");
    CHECK(rows.processes[0].host == "node17");
    CHECK(rows.processes[0].rank == -1);
    CHECK(rows.processes[0].command_line == a.process.command_line);
    CHECK(rows.processes[1].host == "node18");
    REQUIRE(rows.devices.size() == 6);
    CHECK(rows.devices[4] == MergedDevice{1, 0, "", 12584424, 146800640, 120, 115, 1086326248, 1073741824});

    // Merging the merged file with a third snapshot lists three processes.
    Merger outer(SiteKeyOptions{}, nullptr);
    std::ifstream merged_in(path);
    REQUIRE(outer.add_stream(merged_in, path, &error));
    std::istringstream in_c(json_of(vt_test::doc_example_snapshot()));
    REQUIRE(outer.add_stream(in_c, "c.json", &error));
    REQUIRE(outer.processes().size() == 3);
    CHECK(outer.processes()[0].file == "a.json");
    CHECK(outer.processes()[1].file == "b.json");
    CHECK(outer.processes()[2].file == "c.json");
    CHECK(outer.processes()[2].input == 2);
    CHECK(outer.process_devices().size() == 7);
    CHECK(outer.process_devices()[6].input == 2);
    CHECK(outer.live_bytes() == 2 * 16848360 + 1048576);
    std::string text = format_merge_text(outer, 0, {});
    CHECK(text.rfind("merged 2 snapshots: 3 processes on 2 hosts, 6 devices\n", 0) == 0);
    CHECK(text.find("  2  node17  4242  -     cuda:0") != std::string::npos);
}

TEST_CASE("merge: a stream whose allocations come first cannot be read twice", "[merge]") {
    std::string json = json_of(vt_test::doc_example_snapshot());
    size_t at = json.find("  \"allocations\"");
    std::string allocations = json.substr(at, json.rfind(']') + 1 - at);
    std::string rest = json.substr(0, at);
    rest = rest.substr(0, rest.rfind(','));
    std::string reordered = "{\n" + allocations + ",\n" + rest.substr(2) + "\n}\n";
    std::istringstream in(reordered);
    Merger merger(SiteKeyOptions{}, nullptr);
    std::string error;
    CHECK_FALSE(merger.add_stream(in, "r.json", &error));
    CHECK(error == "r.json: its allocations come before its stacks; a stream is read only once");
}

TEST_CASE("reader: the merge members are optional and checked like the others", "[reader]") {
    std::string json = json_of(vt_test::doc_example_snapshot());
    MergedRows rows;
    std::istringstream plain(json);
    std::string error;
    REQUIRE(read_snapshot_stream(plain, "p.json", rows, &error));
    CHECK(rows.processes.empty());
    std::string with = json;
    with.insert(with.find("  \"modules\""),
                "  \"merged_processes\": [{\"input\": 0, \"file\": \"x.json\", \"pid\": 7, \"host\": \"h\", "
                "\"command_line\": [\"a\"], \"reason\": \"exit\", \"rank\": 3, \"live_bytes\": 1, "
                "\"live_allocations\": 1, \"dropped_allocations\": 0, \"dropped_stacks\": 0, \"later\": {}}],\n");
    std::istringstream in(with);
    REQUIRE(read_snapshot_stream(in, "m.json", rows, &error));
    REQUIRE(rows.processes.size() == 1);
    CHECK(rows.processes[0].rank == 3);
    CHECK(rows.processes[0].command_line == std::vector<std::string>{"a"});
    std::string missing = json;
    missing.insert(missing.find("  \"modules\""), "  \"merged_devices\": [{\"input\": 0, \"device\": 0}],\n");
    std::istringstream bad(missing);
    CHECK_FALSE(read_snapshot_stream(bad, "m.json", rows, &error));
    CHECK(error == "m.json: merged_devices[0]: missing field \"uuid\"");
}

TEST_CASE("text tables: aligned columns, one line per row", "[diff]") {
    TextTable t({"a", "long header", "c"});
    t.add({"1", "x", "last"});
    t.add({"22222", "\xc3\xa9t\xc3\xa9", ""});
    CHECK(t.render("  ") == "  a      long header  c\n"
                            "  1      x            last\n"
                            "  22222  \xc3\xa9t\xc3\xa9\n");
    CHECK(one_line("a\nb\tc\x01") == "a\\nb\\tc\\x01");
}

TEST_CASE("diff and merge: every prefix of a snapshot is refused on one line", "[diff][merge]") {
    std::string json = json_of(vt_test::golden_snapshot());
    for (size_t n = 0; n + 1 < json.size(); ++n) {
        INFO("prefix of " << n << " bytes");
        std::string error;
        std::istringstream in(json.substr(0, n));
        SnapshotSites sites;
        CHECK_FALSE(collect_sites(in, "cut.json", {}, &sites, &error));
        CHECK(error.rfind("cut.json: ", 0) == 0);
        CHECK(error.find('\n') == std::string::npos);
        std::istringstream again(json.substr(0, n));
        Merger merger(SiteKeyOptions{}, nullptr);
        error.clear();
        CHECK_FALSE(merger.add_stream(again, "cut.json", &error));
        CHECK(error.rfind("cut.json: ", 0) == 0);
        CHECK(merger.files() == 0);
        CHECK(merger.processes().empty());
    }
}
