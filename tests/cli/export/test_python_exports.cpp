// Every export shows merged Python + native stacks (docs/python-frames.md): a snapshot whose one
// stack runs cudaMalloc <- at::empty <- Net.forward (model.py:23) <- <module> (train.py:5) <- main.
#include <catch2/catch.hpp>

#include <string>

#include "export/export.h"

using namespace vramtrace;
using namespace vramtrace::exporter;

namespace {

snapshot::Snapshot merged_snapshot() {
    snapshot::Snapshot s;
    s.process.pid = 7;
    s.process.python = "3.12.3";
    s.process.dump_monotonic_ns = 2000;
    s.modules = {{"/usr/bin/python3.12", 0x400000, ""}, {"/usr/lib/libcudart.so.13", 0x7f0000000000, ""}};
    auto native = [&](uint64_t address, int module, const char *function) {
        snapshot::Frame f;
        f.address = address;
        f.module = module;
        f.module_offset = address - s.modules[size_t(module)].base;
        f.function = function;
        s.frames.push_back(f);
    };
    auto python = [&](uint64_t id, const char *function, const char *file, uint32_t line) {
        snapshot::Frame f;
        f.address = 0x5059000000000000ull | id;
        f.function = function;
        f.file = file;
        f.line = line;
        f.python = true;
        s.frames.push_back(f);
    };
    native(0x7f0000001000, 1, "cudaMalloc");
    native(0x401000, 0, "at::empty");
    python(1, "Net.forward", "/home/me/model.py", 23);
    python(2, "<module>", "/home/me/train.py", 5);
    native(0x402000, 0, "main");
    s.stacks = {{1, {0, 1, 2, 3, 4}, 2}};
    snapshot::DeviceTotals d;
    d.device = 0;
    d.current_bytes = d.peak_bytes = d.total_allocated_bytes = 1 << 20;
    d.allocation_count = 1;
    s.devices = {d};
    snapshot::Allocation a;
    a.address = 0x7e0000000000;
    a.size = 1 << 20;
    a.kind = "device";
    a.api = "cudaMalloc";
    a.time_ns = 1000;
    a.stack = 1;
    s.allocations = {a};
    s.peaks = {{0, 1 << 20, 1000, {{1, 1 << 20, 1}}}};
    s.events.capacity = 16;
    s.events.recorded = 1;
    snapshot::Event e;
    e.type = "alloc";
    e.time_ns = 1000;
    e.device = 0;
    e.address = a.address;
    e.size = a.size;
    e.kind = "device";
    e.api = "cudaMalloc";
    e.stack = 1;
    s.events.events = {e};
    return s;
}

std::string run(Format format) {
    std::string out, error;
    std::vector<std::string> notes;
    REQUIRE(export_snapshot(merged_snapshot(), format, {}, &out, &notes, &error));
    return out;
}

} // namespace

TEST_CASE("python exports: folded stacks carry Python frames in place, py-spy style") {
    CHECK(run(Format::Folded) == "main;<module> (train.py:5);Net.forward (model.py:23);at::empty;cudaMalloc 1048576\n");
}

TEST_CASE("python exports: chrome, pprof, pickle and html name the Python call site") {
    CHECK(run(Format::Chrome).find("Net.forward at /home/me/model.py:23 (python)") != std::string::npos);
    std::vector<std::string> notes;
    std::string pprof = export_pprof_uncompressed(merged_snapshot(), {}, &notes);
    for (const char *s : {"Net.forward", "/home/me/model.py", "<module>", "/home/me/train.py", "at::empty"})
        CHECK(pprof.find(s) != std::string::npos);
    std::string pickle = run(Format::Pickle);
    for (const char *s : {"Net.forward", "/home/me/model.py", "<module>", "/home/me/train.py"})
        CHECK(pickle.find(s) != std::string::npos);
    std::string html = run(Format::Html);
    CHECK(html.find("Net.forward") != std::string::npos);
}
