// write_snapshot_json -> file -> the CLI's reader gives back the same Snapshot, field by field.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include "../../../tools/snapshot_reader.h"
#include "report_test_data.h"
#include "reporting/snapshot_writer.h"

using namespace vramtrace::report;

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
    REQUIRE(vramtrace::cli::read_snapshot_file(dir.file("golden.json"), &back, &error));
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
    REQUIRE(vramtrace::cli::read_snapshot_file(dir.file("extreme.json"), &back, &error));
    compare(s, back);
}

TEST_CASE("round trip: invalid UTF-8 comes back as U+FFFD", "[roundtrip]") {
    Snapshot s = vt_test::golden_snapshot();
    s.frames[1].function = "bad\xff" "name";
    vt_test::TempDir dir;
    write_file(s, dir.file("utf8.json"));
    Snapshot back;
    std::string error;
    REQUIRE(vramtrace::cli::read_snapshot_file(dir.file("utf8.json"), &back, &error));
    CHECK(back.frames[1].function == "bad\xEF\xBF\xBDname");
    back.frames[1].function = s.frames[1].function;
    CHECK(back == s);
}

TEST_CASE("round trip: an empty snapshot", "[roundtrip]") {
    vt_test::TempDir dir;
    write_file(Snapshot{}, dir.file("empty.json"));
    Snapshot back = vt_test::golden_snapshot();
    std::string error;
    REQUIRE(vramtrace::cli::read_snapshot_file(dir.file("empty.json"), &back, &error));
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
    REQUIRE(vramtrace::cli::read_snapshot_file(dir.file("big.json"), &back, &error));
    CHECK(back == s);
}

TEST_CASE("the reader sorts stacks by id and the writer writes them back in that order", "[roundtrip]") {
    Snapshot s = vt_test::golden_snapshot();
    std::reverse(s.stacks.begin(), s.stacks.end());
    vt_test::TempDir dir;
    write_file(s, dir.file("reversed.json"));
    Snapshot back;
    std::string error;
    REQUIRE(vramtrace::cli::read_snapshot_file(dir.file("reversed.json"), &back, &error));
    CHECK(back == vt_test::golden_snapshot());
}

TEST_CASE("data/summary_input.json is the golden snapshot, as the writer writes it", "[roundtrip]") {
    std::string path = std::string(VT_TEST_DATA_DIR) + "/summary_input.json";
    Snapshot back;
    std::string error;
    REQUIRE(vramtrace::cli::read_snapshot_file(path, &back, &error));
    compare(vt_test::golden_snapshot(), back);

    vt_test::TempDir dir;
    write_file(vt_test::golden_snapshot(), dir.file("again.json"));
    CHECK(vt_test::read_file(dir.file("again.json")) == vt_test::read_file(path));
}
