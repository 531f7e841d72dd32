// write_snapshot_json -> file -> the CLI's reader gives back the same Snapshot, field by field.
#include <catch2/catch.hpp>

#include <cstdio>
#include <optional>

#include <fcntl.h>
#include <unistd.h>

#include "snapshot/reader/snapshot_reader.h"
#include "report_test_data.h"
#include "snapshot/snapshot_writer.h"
#include "report/text_format.h"

using namespace vramtrace::report;
using namespace vramtrace::snapshot;

namespace {

void write_file(const Snapshot &s, const std::string &path) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    std::string error;
    bool ok = write_snapshot_json(s, fd, &error);
    INFO(error);
    REQUIRE(ok);
    REQUIRE(::close(fd) == 0);
}

// Field-by-field comparison, so that a failure names the field.
void compare(const Snapshot &a, const Snapshot &b) {
    CHECK(a.schema_version == b.schema_version);
    const ProcessInfo &p = a.process, &q = b.process;
    CHECK(p.pid == q.pid);
    CHECK(p.ppid == q.ppid);
    CHECK(p.command_line == q.command_line);
    CHECK(p.executable == q.executable);
    CHECK(p.host == q.host);
    CHECK(p.start_time_ns == q.start_time_ns);
    CHECK(p.dump_time_ns == q.dump_time_ns);
    CHECK(p.driver_version == q.driver_version);
    CHECK(p.reason == q.reason);
    CHECK(p.vramtrace_version == q.vramtrace_version);
    CHECK(p.stack_depth == q.stack_depth);
    CHECK(a.dropped_allocations == b.dropped_allocations);
    CHECK(a.dropped_stacks == b.dropped_stacks);
    REQUIRE(a.devices.size() == b.devices.size());
    for (size_t i = 0; i < a.devices.size(); ++i) {
        INFO("devices[" << i << "]");
        const DeviceTotals &d = a.devices[i], &e = b.devices[i];
        CHECK(d.device == e.device);
        CHECK(d.current_bytes == e.current_bytes);
        CHECK(d.peak_bytes == e.peak_bytes);
        CHECK(d.allocation_count == e.allocation_count);
        CHECK(d.free_count == e.free_count);
        CHECK(d.total_allocated_bytes == e.total_allocated_bytes);
        CHECK(d.total_freed_bytes == e.total_freed_bytes);
    }
    REQUIRE(a.modules.size() == b.modules.size());
    for (size_t i = 0; i < a.modules.size(); ++i) {
        INFO("modules[" << i << "]");
        CHECK(a.modules[i].path == b.modules[i].path);
        CHECK(a.modules[i].base == b.modules[i].base);
        CHECK(a.modules[i].build_id == b.modules[i].build_id);
    }
    REQUIRE(a.frames.size() == b.frames.size());
    for (size_t i = 0; i < a.frames.size(); ++i) {
        INFO("frames[" << i << "]");
        const Frame &f = a.frames[i], &g = b.frames[i];
        CHECK(f.address == g.address);
        CHECK(f.module == g.module);
        CHECK(f.module_offset == g.module_offset);
        CHECK(f.function == g.function);
        CHECK(f.file == g.file);
        CHECK(f.line == g.line);
    }
    REQUIRE(a.stacks.size() == b.stacks.size());
    for (size_t i = 0; i < a.stacks.size(); ++i) {
        INFO("stacks[" << i << "]");
        CHECK(a.stacks[i].id == b.stacks[i].id);
        CHECK(a.stacks[i].frames == b.stacks[i].frames);
        CHECK(a.stacks[i].call_site == b.stacks[i].call_site);
    }
    REQUIRE(a.allocations.size() == b.allocations.size());
    for (size_t i = 0; i < a.allocations.size(); ++i) {
        INFO("allocations[" << i << "]");
        const Allocation &x = a.allocations[i], &y = b.allocations[i];
        CHECK(x.address == y.address);
        CHECK(x.size == y.size);
        CHECK(x.kind == y.kind);
        CHECK(x.device == y.device);
        CHECK(x.api == y.api);
        CHECK(x.stream == y.stream);
        CHECK(x.thread_id == y.thread_id);
        CHECK(x.time_ns == y.time_ns);
        CHECK(x.stack == y.stack);
    }
    CHECK(a == b); // and nothing was forgotten above
}

} // namespace

TEST_CASE("round trip: the golden snapshot", "[roundtrip]") {
    vt_test::TempDir dir;
    Snapshot s = vt_test::golden_snapshot();
    write_file(s, dir.file("golden.json"));
    Snapshot back;
    std::string error;
    REQUIRE(vramtrace::snapshot::read_snapshot_file(dir.file("golden.json"), &back, &error));
    CHECK(error.empty());
    compare(s, back);
}

TEST_CASE("round trip: extreme values and awkward strings", "[roundtrip]") {
    Snapshot s = vt_test::golden_snapshot();
    s.process.pid = INT64_MAX;
    s.process.ppid = -1;
    s.process.command_line = {"", "quote\"back\\slash", "tab\tnew\nline", std::string("nul\0byte", 8), "é日本😀",
                              std::string("\x01\x1f\x7f", 3)};
    s.process.start_time_ns = UINT64_MAX;
    s.process.driver_version = INT32_MIN;
    s.process.stack_depth = UINT32_MAX;
    s.process.reason = "api";
    s.devices.push_back({-2, UINT64_MAX, UINT64_MAX, UINT64_MAX, 0, UINT64_MAX, 0});
    s.dropped_allocations = UINT64_MAX;
    s.modules[0].base = UINT64_MAX;
    s.frames[0].address = UINT64_MAX;
    s.frames[0].module_offset = 0;
    s.frames[1].line = UINT32_MAX;
    s.stacks.push_back({UINT32_MAX, {}, -1});
    s.allocations[0].address = UINT64_MAX;
    s.allocations[0].size = 0;
    s.allocations[0].stream = UINT64_MAX;
    s.allocations[0].thread_id = UINT32_MAX;
    s.allocations[0].stack = UINT32_MAX;

    vt_test::TempDir dir;
    write_file(s, dir.file("extreme.json"));
    Snapshot back;
    std::string error;
    REQUIRE(vramtrace::snapshot::read_snapshot_file(dir.file("extreme.json"), &back, &error));
    compare(s, back);
}

TEST_CASE("round trip: invalid UTF-8 comes back as U+FFFD", "[roundtrip]") {
    Snapshot s = vt_test::golden_snapshot();
    s.frames[1].function = "bad\xff" "name";
    vt_test::TempDir dir;
    write_file(s, dir.file("utf8.json"));
    Snapshot back;
    std::string error;
    REQUIRE(vramtrace::snapshot::read_snapshot_file(dir.file("utf8.json"), &back, &error));
    CHECK(back.frames[1].function == "bad\xEF\xBF\xBDname");
    back.frames[1].function = s.frames[1].function;
    CHECK(back == s);
}

TEST_CASE("round trip: an empty snapshot", "[roundtrip]") {
    vt_test::TempDir dir;
    write_file(Snapshot{}, dir.file("empty.json"));
    Snapshot back = vt_test::golden_snapshot();
    std::string error;
    REQUIRE(vramtrace::snapshot::read_snapshot_file(dir.file("empty.json"), &back, &error));
    compare(Snapshot{}, back);
}

TEST_CASE("round trip: 100k allocations", "[roundtrip]") {
    Snapshot s = vt_test::golden_snapshot();
    for (uint32_t i = 0; i < 100000; ++i) {
        Allocation a = s.allocations[i % 9];
        a.address = 0x7e0000000000 + uint64_t(i) * 512;
        a.time_ns = i;
        s.allocations.push_back(a);
    }
    vt_test::TempDir dir;
    write_file(s, dir.file("big.json"));
    Snapshot back;
    std::string error;
    REQUIRE(vramtrace::snapshot::read_snapshot_file(dir.file("big.json"), &back, &error));
    CHECK(back == s);
}

TEST_CASE("the reader sorts stacks by id and the writer writes them back in that order", "[roundtrip]") {
    Snapshot s = vt_test::golden_snapshot();
    std::reverse(s.stacks.begin(), s.stacks.end());
    vt_test::TempDir dir;
    write_file(s, dir.file("reversed.json"));
    Snapshot back;
    std::string error;
    REQUIRE(vramtrace::snapshot::read_snapshot_file(dir.file("reversed.json"), &back, &error));
    CHECK(back == vt_test::golden_snapshot());
}

// summary_input.json was written before the fields added within schema 1: it must keep reading as
// the golden snapshot (those fields at their defaults), and the writer adds only those fields.
TEST_CASE("data/summary_input.json (an older schema 1 file) still reads as the golden snapshot", "[roundtrip]") {
    std::string path = std::string(VT_TEST_DATA_DIR) + "/summary_input.json";
    Snapshot back;
    std::string error;
    REQUIRE(vramtrace::snapshot::read_snapshot_file(path, &back, &error));
    compare(vt_test::golden_snapshot(), back);

    vt_test::TempDir dir;
    write_file(vt_test::golden_snapshot(), dir.file("again.json"));
    std::string now = vt_test::read_file(dir.file("again.json"));
    std::string before = vt_test::read_file(path);
    CHECK(now.size() > before.size());
    Snapshot again;
    REQUIRE(vramtrace::snapshot::read_snapshot_file(dir.file("again.json"), &again, &error));
    CHECK(again == back);
}

// Every field added within schema 1, with values that differ from the defaults.
Snapshot with_every_new_field() {
    Snapshot s = vt_test::doc_example_snapshot();
    s.process.symbolized = false;
    s.process.rank = "17";
    s.dropped_peak_sites = 3;
    s.devices.push_back({-1, 4096, 8192, 2, 1, 8192, 4096});          // host: no identity, no totals
    s.devices.back().total_memory_bytes = 0;                          // present but 0: kept
    s.frames[2].inlined = {{"a()", "/a.h", 1}, {"b(int)", "", 0}};
    s.allocations.push_back({0x7f3a10000000, 12345, "array", 0, "cuArray3DCreate_v2", 0, 7, 9, 2});
    s.allocations.back().size_is_estimate = true;
    s.peaks.push_back({-1, 8192, 5, {{0, 8192, 2}}});
    s.ooms.push_back({126000000, 1, 1, "cuMemAlloc_v2", 0x5000, 0, 9, 2, std::nullopt, std::nullopt, 0});
    s.oom_count = 5;
    s.pools.push_back({0x10, 1, false, 0, 0, 0, 0});
    s.devices[0].graph_reserved_bytes = 4096;
    s.devices[0].graph_used_bytes = 0;
    s.devices[0].graph_reserved_high_bytes = 8192;
    s.devices[0].graph_used_high_bytes = 0;
    s.allocations.push_back({0x7f3a20000000, 2097152, "device", 0, "cuMemAlloc_v2", 0, 7, 10, 2});
    s.allocations.back().context = 3;
    s.teardown_count = 2;
    s.teardowns.push_back({126000004, "cuDevicePrimaryCtxReset_v2", "context_reset", 0, 3, 2, 4096, 2048, {{2, 4096, 1}, {0, 2048, 1}}, 0, 0});
    s.process.signal = "SIGSEGV";
    s.events.wrapped = true;
    s.events.recorded = 70000;
    s.events.events.push_back({"mark", 126000001, -2, 0, 0, "", "", 0, 1, "\xc3\xa9poch \"2\"\n"});
    s.events.events.push_back({"alloc", 126000002, -1, 0x1000, 0, "host_pinned", "cudaMallocHost", 0, 1, ""});
    s.events.events.push_back({"free", 126000003, 0, 0x7f3a30000000, 4096, "device", "cuMemAlloc_v2", 2, 7, ""});
    s.events.events.back().freed_by = "context_reset";
    return s;
}

TEST_CASE("round trip: every field added within schema 1", "[roundtrip]") {
    vt_test::TempDir dir;
    Snapshot s = with_every_new_field();
    write_file(s, dir.file("new.json"));
    Snapshot back;
    std::string error;
    REQUIRE(vramtrace::snapshot::read_snapshot_file(dir.file("new.json"), &back, &error));
    compare(s, back);
    CHECK(back.process.symbolized == false);
    CHECK(back.process.rank == "17");
    CHECK(back.process.dump_monotonic_ns == 130456789);
    CHECK(back.dropped_peak_sites == 3);
    CHECK(back.devices[0].uuid == "GPU-8d3c6f2a-1b4e-4c5d-9e8f-7a6b5c4d3e2f");
    CHECK(back.devices[0].pci_bus_id == "0000:3b:00.0");
    CHECK(back.devices[0].total_memory_bytes == std::optional<uint64_t>(85899345920ull));
    CHECK(back.devices[0].process_used_bytes == std::optional<uint64_t>(541065216ull));
    CHECK(back.devices[1].total_memory_bytes == std::optional<uint64_t>(0));
    CHECK(!back.devices[1].process_used_bytes.has_value());
    CHECK(back.frames[2].inlined.size() == 2);
    CHECK(back.allocations[1].size_is_estimate);
    CHECK(back.peaks.size() == 2);
    CHECK(back.peaks[0].sites.size() == 2);
    CHECK(back.ooms[1].device_free_bytes == std::nullopt);
    CHECK(back.ooms[0].device_free_bytes == std::optional<uint64_t>(3221225472ull));
    CHECK(back.oom_count == 5);
    CHECK(back.pools.size() == 2);
    CHECK(back.devices[0].graph_reserved_bytes == std::optional<uint64_t>(4096));
    CHECK(back.devices[0].graph_reserved_high_bytes == std::optional<uint64_t>(8192));
    CHECK(!back.devices[1].graph_reserved_bytes.has_value());
    CHECK(back.allocations[2].context == 3);
    CHECK(back.events.events[6].freed_by == "context_reset");
    CHECK(back.teardown_count == 2);
    REQUIRE(back.teardowns.size() == 1);
    CHECK(back.teardowns[0].sites.size() == 2);
    CHECK(back.process.signal == "SIGSEGV");
    CHECK(back.events.wrapped);
    CHECK(back.events.events.size() == 7);
    CHECK(back.events.events[4].label == "\xc3\xa9poch \"2\"\n");
    CHECK(back == s);
}

// Files written before the device rows carried graph memory listed it as a pool with
// is_graph_memory: the reader moves it into its device's row (adding the row when there is none).
TEST_CASE("round trip: an older file's graph memory pool becomes its device's graph memory", "[roundtrip]") {
    vt_test::TempDir dir;
    Snapshot s = vt_test::doc_example_snapshot();
    s.pools.push_back({0, 0, false, 4096, 1024, 8192, 2048});
    s.pools.back().is_graph_memory = true;
    s.pools.push_back({0, 5, false, 2048, 0, 2048, 0});
    s.pools.back().is_graph_memory = true;
    // The writer no longer writes the member: spell it as older files did.
    write_file(s, dir.file("written.json"));
    std::string text = vt_test::read_file(dir.file("written.json"));
    size_t pools_before = s.pools.size() - 2;
    for (int device : {0, 5}) {
        std::string row = "\"device\": " + std::to_string(device) + ", \"is_default\": false, \"reserved_bytes\": ";
        size_t at = text.find("\"handle\": \"0x0\", " + row);
        REQUIRE(at != std::string::npos);
        size_t end = text.find('}', at);
        text.insert(end, ", \"is_graph_memory\": true");
    }
    {
        std::FILE *f = std::fopen(dir.file("old.json").c_str(), "wb");
        REQUIRE(f != nullptr);
        REQUIRE(std::fwrite(text.data(), 1, text.size(), f) == text.size());
        REQUIRE(std::fclose(f) == 0);
    }
    Snapshot back;
    std::string error;
    REQUIRE(vramtrace::snapshot::read_snapshot_file(dir.file("old.json"), &back, &error));
    CHECK(back.pools.size() == pools_before);
    CHECK(back.devices[0].graph_reserved_bytes == std::optional<uint64_t>(4096));
    CHECK(back.devices[0].graph_used_bytes == std::optional<uint64_t>(1024));
    CHECK(back.devices[0].graph_used_high_bytes == std::optional<uint64_t>(2048));
    REQUIRE(back.devices.back().device == 5);
    CHECK(back.devices.back().current_bytes == 0);
    CHECK(back.devices.back().graph_reserved_bytes == std::optional<uint64_t>(2048));
}

TEST_CASE("round trip: NVTX start/end intervals, closed and still open, and their dropped count", "[roundtrip]") {
    vt_test::TempDir dir;
    Snapshot s = vt_test::golden_snapshot();
    s.nvtx_intervals.push_back({"", "load phase", 1000, 5000, 41, 41});
    s.nvtx_intervals.push_back({"", "handoff", 2000, 4000, 41, 42});
    s.nvtx_intervals.push_back({"ml", "epoch", 6000, 0, 41, 0});
    s.dropped_nvtx_intervals = 7;
    write_file(s, dir.file("intervals.json"));

    FILE *f = fopen(dir.file("intervals.json").c_str(), "r");
    REQUIRE(f != nullptr);
    std::string text;
    for (int c; (c = fgetc(f)) != EOF;) text += char(c);
    fclose(f);
    // The open interval has neither end_ns nor end_thread.
    CHECK(text.find("{\"domain\": \"ml\", \"name\": \"epoch\", \"start_ns\": 6000, \"start_thread\": 41}") !=
          std::string::npos);
    CHECK(text.find("{\"domain\": \"\", \"name\": \"handoff\", \"start_ns\": 2000, \"end_ns\": 4000, "
                    "\"start_thread\": 41, \"end_thread\": 42}") != std::string::npos);
    CHECK(text.find("\"nvtx_intervals\": 7") != std::string::npos);

    Snapshot back;
    std::string error;
    REQUIRE(vramtrace::snapshot::read_snapshot_file(dir.file("intervals.json"), &back, &error));
    CHECK(back.nvtx_intervals == s.nvtx_intervals);
    CHECK(back.dropped_nvtx_intervals == 7);
    compare(s, back);
}

TEST_CASE("round trip: NVTX categories on range stacks and intervals, left out where there are none", "[roundtrip]") {
    vt_test::TempDir dir;
    Snapshot s = vt_test::golden_snapshot();
    s.range_stacks.push_back({1, {"", "ml"}, {"step", "forward"}, {"", "phase"}});
    s.range_stacks.push_back({2, {""}, {"loader"}, {}});
    s.nvtx_intervals.push_back({"", "load phase", 1000, 5000, 41, 41, "io"});
    s.nvtx_intervals.push_back({"ml", "epoch", 6000, 0, 41, 0, "9"});
    s.nvtx_intervals.push_back({"", "handoff", 7000, 8000, 41, 42, ""});
    write_file(s, dir.file("categories.json"));

    FILE *f = fopen(dir.file("categories.json").c_str(), "r");
    REQUIRE(f != nullptr);
    std::string text;
    for (int c; (c = fgetc(f)) != EOF;) text += char(c);
    fclose(f);
    CHECK(text.find("{\"id\": 1, \"domains\": [\"\", \"ml\"], \"names\": [\"step\", \"forward\"], \"categories\": [\"\", "
                    "\"phase\"]}") != std::string::npos);
    CHECK(text.find("{\"id\": 2, \"domains\": [\"\"], \"names\": [\"loader\"]}") != std::string::npos);
    CHECK(text.find("{\"domain\": \"ml\", \"name\": \"epoch\", \"category\": \"9\", \"start_ns\": 6000, "
                    "\"start_thread\": 41}") != std::string::npos);
    CHECK(text.find("{\"domain\": \"\", \"name\": \"handoff\", \"start_ns\": 7000,") != std::string::npos);

    Snapshot back;
    std::string error;
    REQUIRE(vramtrace::snapshot::read_snapshot_file(dir.file("categories.json"), &back, &error));
    CHECK(back.range_stacks == s.range_stacks);
    CHECK(back.nvtx_intervals == s.nvtx_intervals);
    CHECK(vramtrace::report::range_stack_label(back, 1) == "step > ml:forward [phase]");
    CHECK(vramtrace::report::range_stack_label(back, 2) == "loader");
    compare(s, back);
}

TEST_CASE("round trip: the process rows of NVTX regions and intervals, left out where there are none", "[roundtrip]") {
    vt_test::TempDir dir;
    Snapshot s = vt_test::golden_snapshot();
    s.nvtx_regions.push_back({0x7f1000000000, 4096, 0x7f1000000000, 1048576, 0, 0, 0, 41, uint64_t(1)});
    s.nvtx_regions.push_back({0x7f1000001000, 4096, 0x7f1000000000, 1048576, 0, 0, 0, 41, std::nullopt});
    s.nvtx_intervals.push_back({"", "epoch", 1000, 5000, 41, 41, "", uint64_t(3)});
    s.nvtx_intervals.push_back({"", "step", 2000, 0, 41, 0, "", std::nullopt});
    write_file(s, dir.file("inputs.json"));
    std::string text = vt_test::read_file(dir.file("inputs.json"));
    CHECK(text.find("\"range\": 0, \"thread_id\": 41, \"input\": 1}") != std::string::npos);
    CHECK(text.find("\"range\": 0, \"thread_id\": 41}") != std::string::npos);
    CHECK(text.find("\"end_thread\": 41, \"input\": 3}") != std::string::npos);
    CHECK(text.find("{\"domain\": \"\", \"name\": \"step\", \"start_ns\": 2000, \"start_thread\": 41}") != std::string::npos);

    Snapshot back;
    std::string error;
    REQUIRE(vramtrace::snapshot::read_snapshot_file(dir.file("inputs.json"), &back, &error));
    REQUIRE(back.nvtx_regions.size() == 2);
    CHECK(back.nvtx_regions[0].input == std::optional<uint64_t>(1));
    CHECK(back.nvtx_regions[1].input == std::nullopt);
    CHECK(back.nvtx_intervals[0].input == std::optional<uint64_t>(3));
    CHECK(back.nvtx_intervals[1].input == std::nullopt);
    compare(s, back);
}
