// The CLI's diff and merge: call-site keys, the streaming per-site reduction, the comparison and
// its gate, and merging (tools/analysis/: call_sites.cpp, diff_core.cpp, merge_*.cpp).
#include <catch2/catch.hpp>

#include <cstdio>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include "analysis/call_sites.h"
#include "analysis/diff_core.h"
#include "analysis/merge_core.h"
#include "common/text_table.h"
#include "input/offline_symbolize.h"
#include "input/summary_input.h"
#include "merge_test_io.h"
#include "report_test_data.h"
#include "snapshot/snapshot_writer.h"
#include "report/summary_format.h"
#include "snapshot/reader/snapshot_reader.h"
#include "symbolize/call_site.h"
#include "report/call_site_groups.h"

using namespace vramtrace::report;
using namespace vramtrace::snapshot;
using namespace vramtrace::cli;

namespace {

SnapshotSites sites_of(const Snapshot &s, SiteKeyOptions options = {}) {
    std::istringstream in(vt_test::snapshot_json(s));
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

// Everything a reader delivers, as it came (merge rows included).
class Everything final : public SnapshotSink {
public:
    Snapshot s;
    std::vector<MergedProcess> processes;
    std::vector<MergedDevice> devices;
    size_t calls = 0;
    void on_schema_version(int v) override { ++calls, s.schema_version = v; }
    void on_process(ProcessInfo &&p) override { ++calls, s.process = std::move(p); }
    void on_device(DeviceTotals &&d) override { ++calls, s.devices.push_back(std::move(d)); }
    void on_dropped(uint64_t a, uint64_t st) override { ++calls, s.dropped_allocations = a, s.dropped_stacks = st; }
    void on_module(Module &&m) override { ++calls, s.modules.push_back(std::move(m)); }
    void on_frame(Frame &&f) override { ++calls, s.frames.push_back(std::move(f)); }
    void on_stack(Stack &&st) override { ++calls, s.stacks.push_back(std::move(st)); }
    void on_allocation(Allocation &&a) override { ++calls, s.allocations.push_back(std::move(a)); }
    void on_dropped_peak_sites(uint64_t n) override { ++calls, s.dropped_peak_sites = n; }
    void on_oom_count(uint64_t n) override { ++calls, s.oom_count = n; }
    void on_peak(DevicePeak &&p) override { ++calls, s.peaks.push_back(std::move(p)); }
    void on_oom(OomEvent &&o) override { ++calls, s.ooms.push_back(std::move(o)); }
    void on_pool(Pool &&p) override { ++calls, s.pools.push_back(std::move(p)); }
    void on_event_history(EventHistory &&h) override {
        ++calls;
        h.events = std::move(s.events.events);
        s.events = std::move(h);
    }
    void on_event(Event &&e) override { ++calls, s.events.events.push_back(std::move(e)); }
    void on_merged_process(MergedProcess &&p) override { ++calls, processes.push_back(std::move(p)); }
    void on_merged_device(MergedDevice &&d) override { ++calls, devices.push_back(std::move(d)); }
};

// The document example with one merged-process and one merged-device row: every member there is.
std::string json_with_everything(Snapshot s) {
    std::string json = vt_test::snapshot_json(s);
    json.insert(json.find("  \"modules\""),
                "  \"merged_processes\": [{\"input\": 0, \"file\": \"x.json\", \"pid\": 7, \"host\": \"h\", "
                "\"command_line\": [\"a\"], \"reason\": \"exit\", \"rank\": 3, \"live_bytes\": 1, "
                "\"live_allocations\": 1, \"dropped_allocations\": 0, \"dropped_stacks\": 0, \"oom_count\": 5}],\n"
                "  \"merged_devices\": [{\"input\": 0, \"device\": 0, \"uuid\": \"GPU-1\", \"current_bytes\": 1, "
                "\"peak_bytes\": 2, \"allocation_count\": 3, \"free_count\": 4, \"total_allocated_bytes\": 5, "
                "\"total_freed_bytes\": 6}],\n");
    return json;
}

// A snapshot that says what its devices are and nothing else.
Snapshot devices_only(const std::string &host, std::vector<std::tuple<int, std::string, uint64_t, uint64_t>> devices) {
    Snapshot s;
    s.process.pid = 100;
    s.process.host = host;
    s.process.reason = "exit";
    for (const auto &[ordinal, uuid, current, peak] : devices) {
        DeviceTotals d;
        d.device = ordinal;
        d.uuid = uuid;
        d.current_bytes = current;
        d.peak_bytes = peak;
        s.devices.push_back(d);
    }
    return s;
}

// The document example one run later: cuda:0 peaked 2 MiB higher, all of it from the stack of
// main (stack 2), and two more allocations failed for lack of memory.
Snapshot doc_example_later() {
    Snapshot s = vt_test::doc_example_snapshot();
    s.process.pid = 4343;
    s.process.host = "node18";
    s.process.rank = "3";
    s.devices[0].peak_bytes = 6291456;
    s.peaks[0].peak_bytes = 6291456;
    s.peaks[0].sites[0].bytes = 5242880;
    s.oom_count = 3;
    s.ooms.push_back(s.ooms[0]);
    s.ooms.back().stack = 1;
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
    std::string json = vt_test::snapshot_json(vt_test::golden_snapshot());
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
    CHECK(why.find("which these snapshots do not record (written before vramtrace recorded peaks)") != std::string::npos);
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
    std::istringstream in_a(vt_test::snapshot_json(a)), in_b(vt_test::snapshot_json(b));
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
    Snapshot merged = written_and_read(merger, path, {"vramtrace", "merge", "a.json", "b.json"});
    std::fclose(spool);
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
    std::istringstream in_c(vt_test::snapshot_json(vt_test::doc_example_snapshot()));
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
    // The third process's device has a UUID (the others have none): a row of its own.
    CHECK(text.rfind("merged 2 snapshots: 3 processes on 2 hosts, 7 devices\n", 0) == 0);
    CHECK(text.find("  2  node17  4242  0     cuda:0") != std::string::npos);
    CHECK(text.find("  GPU-8d3c6f2a-1b4e-4c5d-9e8f-7a6b5c4d3e2f (node17 cuda:0)  1 ") != std::string::npos);
}

TEST_CASE("merge: a stream whose allocations come first cannot be read twice", "[merge]") {
    std::string json = vt_test::snapshot_json(vt_test::doc_example_snapshot());
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
    std::string json = vt_test::snapshot_json(vt_test::doc_example_snapshot());
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
    std::string json = vt_test::snapshot_json(vt_test::golden_snapshot());
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

TEST_CASE("sinks: SymbolizingSink hands every record on, whatever it names", "[diff][merge]") {
    std::string json = json_with_everything(vt_test::doc_example_snapshot());
    Everything direct;
    std::string error;
    std::istringstream in(json);
    REQUIRE(read_snapshot_stream(in, "d.json", direct, &error));
    // 1 schema + process + device + dropped (2 calls) + oom_count + peak + oom + pool + history +
    // 4 events + 2 merge rows + 2 modules + 3 frames + 2 stacks + 1 allocation.
    CHECK(direct.calls == 24);
    REQUIRE(direct.processes.size() == 1);
    CHECK(direct.processes[0].oom_count == std::optional<uint64_t>(5));

    Everything through;
    SymbolizingSink symbolizing(through, "d.json");
    std::istringstream again(json);
    REQUIRE(read_snapshot_stream(again, "d.json", symbolizing, &error));
    CHECK(through.calls == direct.calls);
    // What it changes in a named snapshot: the frame rules applied to every stack again.
    Snapshot attributed = direct.s;
    vramtrace::assign_call_sites(attributed);
    CHECK(through.s == attributed);
    REQUIRE(!through.s.stacks.empty());
    CHECK(through.s.stacks[0].category == "other");
    CHECK(through.processes == direct.processes);
    CHECK(through.devices == direct.devices);

    // A crash snapshot (not symbolized; its modules are not on this machine, so its frames stay
    // unnamed): the sink names what it can and still passes on the peaks, OOMs, pools and events.
    Snapshot crash = vt_test::doc_example_snapshot();
    crash.process.symbolized = false;
    crash.process.reason = "crash";
    crash.process.signal = "SIGSEGV";
    for (Frame &f : crash.frames) f.function.clear(), f.file.clear(), f.line = 0, f.inlined.clear();
    Everything named;
    SymbolizingSink crash_sink(named, "c.json");
    std::istringstream crash_in(json_with_everything(crash));
    REQUIRE(read_snapshot_stream(crash_in, "c.json", crash_sink, &error));
    CHECK(named.calls == direct.calls);
    CHECK(named.s.process.symbolized);
    CHECK(named.s.process.signal == "SIGSEGV");
    CHECK(named.s.peaks == direct.s.peaks);
    CHECK(named.s.ooms == direct.s.ooms);
    CHECK(named.s.oom_count == 1);
    CHECK(named.s.pools == direct.s.pools);
    CHECK(named.s.events == direct.s.events);
    CHECK(named.processes == direct.processes);
    CHECK(named.devices == direct.devices);
}

TEST_CASE("diff: what each call site held at the peaks, and the OOM count", "[diff]") {
    SnapshotSites base = sites_of(vt_test::doc_example_snapshot());
    CHECK(base.has_peak_composition);
    CHECK(base.oom_count == std::optional<uint64_t>(1));
    REQUIRE(base.sites.size() == 2);
    // main (stack 2) held 3 MiB at the peak and nothing at the dump.
    CHECK(base.sites[0].key == "main at train.cpp:97 (train)");
    CHECK(base.sites[0].live_count == 0);
    CHECK(base.sites[0].at_peak == std::vector<std::pair<int, uint64_t>>{{0, 3145728}});
    CHECK(base.sites[1].key == "make_buffer(unsigned long) at train.cpp:42 (train)");
    CHECK(base.sites[1].live_bytes == 1048576);
    CHECK(base.sites[1].at_peak == std::vector<std::pair<int, uint64_t>>{{0, 1048576}});

    SnapshotSites now = sites_of(doc_example_later());
    DiffResult d = compute_diff(base, now, {});
    CHECK(d.has_peak_composition);
    REQUIRE(d.oom_count);
    CHECK(d.oom_count->base == 1);
    CHECK(d.oom_count->now == 3);
    REQUIRE(d.changed == 1);
    CHECK(d.sites[0].key == "main at train.cpp:97 (train)");
    CHECK(d.sites[0].status == SiteDiff::Status::Grew);
    CHECK(d.sites[0].at_peak_sum().base == 3145728);
    CHECK(d.sites[0].at_peak_sum().now == 5242880);
    CHECK(d.sites[1].status == SiteDiff::Status::Same);
    std::string text = format_diff_text(base, now, d, {}, nullptr);
    CHECK(text.find("OOM failures      1                     3                     +2\n") != std::string::npos);
    CHECK(text.find("+2.00 MiB (+2097152 B)  grew    main at train.cpp:97 (train)") != std::string::npos);
    CHECK(text.find("(at peak: n/a") == std::string::npos);
    nlohmann::ordered_json j = diff_json(base, now, d, {}, nullptr, nullptr);
    CHECK(j["totals"]["oom_count"].dump() == R"({"base":1,"new":3,"change":2})");
    CHECK(j["sites"][0]["bytes_at_peak"].dump() == R"([{"base":3145728,"new":5242880,"change":2097152,"device":0}])");

    // The gate on one site's bytes at the peaks.
    std::string why;
    auto gate = apply_gate(d, limit_of("2097151"), GateMetric::Peak, "main at train.cpp:97 (train)", &why);
    REQUIRE(gate);
    CHECK(gate->exceeded);
    CHECK(gate->measured.now - gate->measured.base == 2097152);
    gate = apply_gate(d, limit_of("2MiB"), GateMetric::Peak, "main at train.cpp:97 (train)", &why);
    REQUIRE(gate);
    CHECK_FALSE(gate->exceeded);

    // A snapshot without peaks (devices with a peak but no peaks[]) has no composition: n/a.
    SnapshotSites old = sites_of(vt_test::golden_snapshot());
    CHECK_FALSE(old.has_peak_composition);
    DiffResult mixed = compute_diff(old, now, {});
    CHECK_FALSE(mixed.has_peak_composition);
    for (const SiteDiff &site : mixed.sites) CHECK_FALSE(site.at_peak);
    CHECK_FALSE(apply_gate(mixed, limit_of("1"), GateMetric::Peak, "main", &why));
}

TEST_CASE("diff and merge: stacks named by peaks, OOMs and events are checked", "[diff][merge]") {
    auto refused = [](Snapshot s, const std::string &expected) {
        std::string json = vt_test::snapshot_json(s), error;
        std::istringstream a(json), b(json);
        SnapshotSites sites;
        CHECK_FALSE(collect_sites(a, "x.json", {}, &sites, &error));
        CHECK(error == "x.json: " + expected);
        error.clear();
        Merger merger(SiteKeyOptions{}, nullptr);
        CHECK_FALSE(merger.add_stream(b, "x.json", &error));
        CHECK(error == "x.json: " + expected);
        SummaryInput input;
        std::istringstream c(json);
        error.clear();
        CHECK_FALSE(read_summary_input(c, "x.json", &input, &error));
        CHECK(error == "x.json: " + expected);
    };
    Snapshot s = vt_test::doc_example_snapshot();
    s.peaks[0].sites[1].stack = 9;
    refused(s, "peaks[0].sites[1].stack: 9 is not the id of an entry in stacks");
    s = vt_test::doc_example_snapshot();
    s.ooms[0].stack = 8;
    refused(s, "ooms[0].stack: 8 is not the id of an entry in stacks");
    s = vt_test::doc_example_snapshot();
    s.events.events[3].stack = 7;
    s.events.events[2].stack = 6;
    refused(s, "events[2].stack: 6 is not the id of an entry in stacks");
    s = vt_test::doc_example_snapshot();
    s.allocations.push_back(s.allocations[0]);
    s.allocations.push_back(s.allocations[0]);
    s.allocations[2].stack = 5;
    s.allocations[1].stack = 4;
    refused(s, "allocations[1].stack: 4 is not the id of an entry in stacks");
}

TEST_CASE("merge: peaks, OOM records, pools, ranks and inlined frames are kept", "[merge]") {
    Snapshot crash = vt_test::doc_example_snapshot();
    crash.process.symbolized = false;
    crash.process.reason = "crash";
    crash.process.pid = 9;
    std::FILE *spool = std::tmpfile();
    REQUIRE(spool);
    Merger merger(SiteKeyOptions{}, spool);
    std::string error;
    std::istringstream a(vt_test::snapshot_json(vt_test::doc_example_snapshot())), b(vt_test::snapshot_json(doc_example_later()));
    REQUIRE(merger.add_stream(a, "a.json", &error));
    REQUIRE(merger.add_stream(b, "b.json", &error));
    REQUIRE(merger.processes().size() == 2);
    CHECK(merger.processes()[0].oom_count == std::optional<uint64_t>(1));
    CHECK(merger.processes()[0].rank == 0);
    CHECK(merger.processes()[1].oom_count == std::optional<uint64_t>(3));
    CHECK(merger.processes()[1].rank == 3);
    CHECK(merger.oom_count() == std::optional<uint64_t>(4));
    CHECK(merger.has_peak_composition());
    std::string text = format_merge_text(merger, 0, {});
    CHECK(text.find("  0  node17  4242  0     cuda:0   1.00 MiB  4.00 MiB  1 (1.00 MiB) leaked  1    a.json\n") !=
          std::string::npos);
    CHECK(text.find("  1  node18  4343  3     cuda:0   1.00 MiB  6.00 MiB  1 (1.00 MiB) leaked  3    b.json\n") !=
          std::string::npos);

    vt_test::TempDir dir;
    std::string path = dir.file("merged.json");
    Snapshot m = written_and_read(merger, path, {"vramtrace", "merge"});
    std::fclose(spool);
    CHECK(m.oom_count == 4);
    REQUIRE(m.stacks.size() == 2);
    // Merged stack ids in order of first use: make_buffer's (1, the allocation), then main's (2).
    CHECK(m.frames[m.stacks[0].frames[1]].function == "make_buffer(unsigned long)");
    CHECK(m.frames[m.stacks[1].frames[1]].function == "main");
    CHECK(m.frames[m.stacks[0].frames[1]].inlined == std::vector<Frame::Inlined>{{"fill(float*, unsigned long)", "/src/util.h", 12}});
    REQUIRE(m.ooms.size() == 3);
    CHECK(m.ooms[0].stack == 2);
    CHECK(m.ooms[1].stack == 2);
    CHECK(m.ooms[2].stack == 1);
    CHECK(m.ooms[0].requested_bytes == 8589934592ull);
    CHECK(m.ooms[0].device_free_bytes == std::optional<uint64_t>(3221225472ull));
    // cuda:0: the sum of the two peaks, 4 MiB + 6 MiB, and what made them up.
    REQUIRE(m.peaks.size() == 1);
    CHECK(m.peaks[0].device == 0);
    CHECK(m.peaks[0].peak_bytes == 10485760);
    CHECK(m.peaks[0].sites == std::vector<PeakSite>{{2, 8388608, 2}, {1, 2097152, 2}});
    CHECK(m.devices[0].peak_bytes == 10485760);
    CHECK(m.devices[0].uuid == "GPU-8d3c6f2a-1b4e-4c5d-9e8f-7a6b5c4d3e2f"); // both inputs agree
    CHECK(m.devices[0].pci_bus_id == "0000:3b:00.0");
    REQUIRE(m.pools.size() == 2);
    CHECK(m.pools[1].reserved_bytes == 2097152);
    CHECK(m.events.events.empty()); // two processes' clocks: no merged history
    CHECK(m.events.capacity == 0);
    std::string summary = format_summary(m);
    CHECK(summary.find("vramtrace: out-of-memory failures: 4 since start, the last 3:\n") != std::string::npos);
    CHECK(summary.find("vramtrace: peak of cuda:0: 10.00 MiB (10485760 B) in 4 allocations, from:\n") != std::string::npos);

    // The merged snapshot merged again, with a crash snapshot: the rows keep their OOM counts, and
    // the crash snapshot's peaks and OOM record come through the frame-naming reader.
    Merger outer(SiteKeyOptions{}, nullptr);
    std::ifstream merged_in(path);
    REQUIRE(outer.add_stream(merged_in, path, &error));
    std::string crash_path = dir.file("crash.json");
    {
        std::ofstream out(crash_path);
        out << vt_test::snapshot_json(crash);
    }
    REQUIRE(outer.add_file(crash_path, nullptr, &error));
    REQUIRE(outer.processes().size() == 3);
    CHECK(outer.processes()[1].oom_count == std::optional<uint64_t>(3));
    CHECK(outer.processes()[2].reason == "crash");
    CHECK(outer.processes()[2].oom_count == std::optional<uint64_t>(1));
    CHECK(outer.oom_count() == std::optional<uint64_t>(5));
    CHECK(outer.has_peak_composition());
    // An input of before OOM counts makes the total unknown.
    Snapshot old = vt_test::golden_snapshot();
    std::string old_json = vt_test::snapshot_json(old);
    old_json.erase(old_json.find("  \"oom_count\""), old_json.find("  \"peaks\"") - old_json.find("  \"oom_count\""));
    std::istringstream old_in(old_json);
    REQUIRE(outer.add_stream(old_in, "old.json", &error));
    CHECK_FALSE(outer.oom_count());
    CHECK_FALSE(outer.processes()[3].oom_count);
    CHECK_FALSE(outer.has_peak_composition()); // golden_snapshot's devices peaked, with no peaks[]
    CHECK(format_merge_text(outer, 0, {}).find("n/a  old.json") != std::string::npos);
}

TEST_CASE("merge: a range stack is one per list of domains and names, however the names split", "[merge]") {
    // Rank 0 allocates under "a > bc"; rank 1 under "ab > c" (the same characters, split
    // elsewhere) and held "a > bc" (its id 7) at its peak.
    Snapshot a = vt_test::doc_example_snapshot();
    a.range_stacks = {{1, {"", ""}, {"a", "bc"}}};
    a.allocations[0].range = 1;
    a.peaks[0].ranges = {{1, 3145728, 1}, {0, 1048576, 1}};
    Snapshot b = vt_test::doc_example_snapshot();
    b.process.pid = 4343;
    b.range_stacks = {{5, {"", ""}, {"ab", "c"}}, {7, {"", ""}, {"a", "bc"}}};
    b.allocations[0].range = 5;
    b.peaks[0].ranges = {{7, 3145728, 1}, {5, 1048576, 1}};
    std::FILE *spool = std::tmpfile();
    REQUIRE(spool);
    Merger merger(SiteKeyOptions{}, spool);
    std::string error;
    std::istringstream in_a(vt_test::snapshot_json(a)), in_b(vt_test::snapshot_json(b));
    REQUIRE(merger.add_stream(in_a, "a.json", &error));
    REQUIRE(merger.add_stream(in_b, "b.json", &error));
    CHECK(merger.range_stacks() == std::vector<RangeStack>{{1, {"", ""}, {"a", "bc"}}, {2, {"", ""}, {"ab", "c"}}});
    vt_test::TempDir dir;
    std::string path = dir.file("merged.json");
    Snapshot m = written_and_read(merger, path, {"vramtrace", "merge"});
    std::fclose(spool);
    CHECK(m.range_stacks == merger.range_stacks());
    REQUIRE(m.allocations.size() == 2);
    CHECK(m.allocations[0].range == 1);
    CHECK(m.allocations[1].range == 2);
    REQUIRE(m.peaks.size() == 1);
    CHECK(m.peaks[0].peak_bytes == 8388608);
    CHECK(m.peaks[0].ranges == std::vector<RangePeak>{{1, 6291456, 2}, {0, 1048576, 1}, {2, 1048576, 1}});
    std::string text = format_merge_text(merger, 0, {});
    CHECK(text.find("    1.00 MiB (1048576 B)  1            6.00 MiB (6291456 B)  a > bc\n") != std::string::npos);
    CHECK(text.find("    1.00 MiB (1048576 B)  1            1.00 MiB (1048576 B)  ab > c\n") != std::string::npos);
}

TEST_CASE("merge: one GPU is one row by its UUID, whatever host name or ordinal it had", "[merge]") {
    // Two ranks in containers with their own host names on one node, each given both GPUs in the
    // other order (CUDA_VISIBLE_DEVICES=0,1 and 1,0), and a third process whose snapshot has no
    // UUIDs: its device is told apart by host + ordinal.
    Snapshot r0 = devices_only("podA", {{0, "GPU-aaaa", 1000, 1500}, {1, "GPU-bbbb", 2000, 2500}});
    Snapshot r1 = devices_only("podB", {{0, "GPU-bbbb", 30, 35}, {1, "GPU-aaaa", 40, 45}});
    Snapshot r2 = devices_only("podA", {{0, "", 5, 6}});
    Merger merger(SiteKeyOptions{}, nullptr);
    std::string error;
    for (const Snapshot *s : {&r0, &r1, &r2}) {
        std::istringstream in(vt_test::snapshot_json(*s));
        REQUIRE(merger.add_stream(in, "r.json", &error));
    }
    auto rows = merger.devices();
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].identity == "GPU-aaaa (podA cuda:0, podB cuda:1)");
    CHECK(rows[0].uuid == "GPU-aaaa");
    CHECK(rows[0].processes == 2);
    CHECK(rows[0].current_bytes == 1040);
    CHECK(rows[0].peak_sum == 1545);
    CHECK(rows[0].peak_max == 1500);
    CHECK(rows[1].identity == "GPU-bbbb (podA cuda:1, podB cuda:0)");
    CHECK(rows[1].processes == 2);
    CHECK(rows[1].current_bytes == 2030);
    CHECK(rows[1].peak_sum == 2535);
    CHECK(rows[1].peak_max == 2500);
    CHECK(rows[2].identity == "podA cuda:0");
    CHECK(rows[2].uuid.empty());
    CHECK(rows[2].processes == 1);
    CHECK(rows[2].current_bytes == 5);
    CHECK(rows[2].peak_max == 6);
    REQUIRE(merger.process_devices().size() == 5);
    CHECK(merger.process_devices()[2] == MergedDevice{1, 0, "GPU-bbbb", 30, 35, 0, 0, 0, 0});
    std::string text = format_merge_text(merger, 0, {});
    CHECK(text.find("merged 3 snapshots: 3 processes on 2 hosts, 3 devices\n") == 0);
    CHECK(text.find("  GPU-aaaa (podA cuda:0, podB cuda:1)  2          1.02 KiB  1.51 KiB    1.46 KiB\n") !=
          std::string::npos);
}

TEST_CASE("summary: a streamed snapshot prints what format_summary prints for it whole", "[summary]") {
    Snapshot wrapped = vt_test::doc_example_snapshot(); // a history that kept 4 events of 9
    wrapped.events.wrapped = true;
    wrapped.events.recorded = 9;
    wrapped.events.capacity = 4;
    for (const Snapshot &s : {vt_test::golden_snapshot(), vt_test::doc_example_snapshot(), doc_example_later(), wrapped}) {
        std::string json = vt_test::snapshot_json(s), error;
        std::istringstream in(json);
        SummaryInput input;
        REQUIRE(read_summary_input(in, "s.json", &input, &error));
        CHECK(input.head.allocations.empty());
        CHECK(input.head.events.events.empty());
        CHECK(format_summary(input.head, input.body) == format_summary(s));
        CHECK(format_summary(input.head, input.body, SummaryOptions{1, 1}) == format_summary(s, SummaryOptions{1, 1}));
        // The members in reverse order (allocations and events before the stacks): the same.
        nlohmann::ordered_json doc = nlohmann::ordered_json::parse(json), reversed = nlohmann::ordered_json::object();
        std::vector<std::string> keys;
        for (auto it = doc.begin(); it != doc.end(); ++it) keys.push_back(it.key());
        for (auto it = keys.rbegin(); it != keys.rend(); ++it) reversed[*it] = doc[*it];
        std::istringstream back(reversed.dump(1));
        SummaryInput again;
        REQUIRE(read_summary_input(back, "r.json", &again, &error));
        CHECK(format_summary(again.head, again.body) == format_summary(s));
    }
    // 5000 allocations from one stack in two sizes, and 200 from another: three folded entries.
    Snapshot many = vt_test::doc_example_snapshot();
    many.allocations.clear();
    many.events = {};
    for (uint64_t i = 0; i < 5200; ++i) {
        Allocation a{0x7f0000000000 + i * 4096, i % 2 ? 4096u : 512u, "device", 0, "cudaMalloc", 0, 1, i, 1};
        if (i >= 5000) a.stack = 2, a.size = 1 << 20;
        many.allocations.push_back(a);
    }
    std::istringstream in(vt_test::snapshot_json(many));
    SummaryInput input;
    std::string error;
    REQUIRE(read_summary_input(in, "m.json", &input, &error));
    CHECK(input.body.live_entries() == 3);
    std::string text = format_summary(input.head, input.body);
    CHECK(text == format_summary(many));
    CHECK(text.find("vramtrace: leaked at exit: 5200 allocations, 210.99 MiB (221235200 B), from 2 call sites:\n") !=
          std::string::npos);
}

TEST_CASE("merge: each process's graph memory adds up in its device's row", "[merge]") {
    Snapshot a = vt_test::doc_example_snapshot(), b = doc_example_later();
    a.devices[0].graph_reserved_bytes = 33554432;
    a.devices[0].graph_used_bytes = 6291456;
    b.devices[0].graph_reserved_bytes = 2097152;
    b.devices[0].graph_used_bytes = 0;
    Merger merger(SiteKeyOptions{}, nullptr);
    std::string error;
    std::istringstream sa(vt_test::snapshot_json(a)), sb(vt_test::snapshot_json(b));
    REQUIRE(merger.add_stream(sa, "a.json", &error));
    REQUIRE(merger.add_stream(sb, "b.json", &error));
    vt_test::TempDir dir;
    std::string path = dir.file("merged.json");
    Snapshot m = written_and_read(merger, path, {"vramtrace", "merge"});
    REQUIRE(m.devices.size() == 1);
    CHECK(m.devices[0].graph_reserved_bytes == std::optional<uint64_t>(35651584));
    CHECK(m.devices[0].graph_used_bytes == std::optional<uint64_t>(6291456));
    CHECK(!m.devices[0].graph_reserved_high_bytes.has_value());
}
