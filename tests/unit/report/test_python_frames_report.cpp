// Python frames in the snapshot model (docs/python-frames.md): written and read back, described,
// grouped by their line, stacks without a Python part marked; old files without the fields read.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fcntl.h>
#include <string>
#include <unistd.h>

#include "snapshot/snapshot_model.h"
#include "report/text_format.h"
#include "report/call_site_groups.h"
#include "snapshot/snapshot_writer.h"
#include "report/summary_format.h"
#include "snapshot/reader/snapshot_reader.h"

using namespace vramtrace;

namespace {

snapshot::Snapshot python_snapshot() {
    snapshot::Snapshot s;
    s.process.pid = 9;
    s.process.python = "3.11.2";
    s.modules = {{"/usr/lib/libfoo.so", 0x7f0000000000, ""}};
    snapshot::Frame native;
    native.address = 0x7f0000001234;
    native.module = 0;
    native.module_offset = 0x1234;
    native.function = "worker";
    snapshot::Frame py;
    py.address = 0x5059000000000001ull;
    py.function = "Net.forward";
    py.file = "/home/me/model.py";
    py.line = 88;
    py.python = true;
    s.frames = {native, py};
    s.stacks = {{1, {0, 1}, 1}, {2, {0}, 0}};
    snapshot::DeviceTotals d;
    d.current_bytes = 3 << 20;
    s.devices = {d};
    snapshot::Allocation a;
    a.size = 2 << 20;
    a.kind = "device";
    a.api = "cudaMalloc";
    a.stack = 1;
    a.address = 0x1000;
    snapshot::Allocation b = a;
    b.size = 1 << 20;
    b.stack = 2;
    b.address = 0x2000;
    s.allocations = {a, b};
    return s;
}

} // namespace

TEST_CASE("python report: frames and the interpreter version survive writing and reading") {
    snapshot::Snapshot s = python_snapshot();
    char path[] = "/tmp/vt-python-report-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    std::string error;
    REQUIRE(snapshot::write_snapshot_json(s, fd, &error));
    close(fd);
    snapshot::Snapshot back;
    bool ok = snapshot::read_snapshot_file(path, &back, &error);
    unlink(path);
    INFO(error);
    REQUIRE(ok);
    CHECK(back.process.python == "3.11.2");
    REQUIRE(back.frames.size() == 2);
    CHECK(!back.frames[0].python);
    CHECK(back.frames[1].python);
    CHECK(back.frames[1] == s.frames[1]);
}

TEST_CASE("python report: call sites by Python line, stacks without a Python part marked") {
    snapshot::Snapshot s = python_snapshot();
    CHECK(report::describe_frame(s, s.frames[1]) == "Net.forward at /home/me/model.py:88 (python)");
    auto groups = report::group_live_by_call_site(s);
    REQUIRE(groups.size() == 2);
    CHECK(groups[0].location == "Net.forward at /home/me/model.py:88 (python)");
    CHECK(groups[1].location == "worker (libfoo.so+0x1234) [no Python frames]");
    std::string summary = report::format_summary(s);
    CHECK(summary.find("vramtrace: Python 3.11.2: call sites are Python lines") != std::string::npos);
    // Without an interpreter (older files, VRAMTRACE_PYTHON=0) nothing is marked.
    s.process.python.clear();
    CHECK(report::group_live_by_call_site(s)[1].location == "worker (libfoo.so+0x1234)");
    CHECK(report::format_summary(s).find("Python") == std::string::npos);
}
