// The summary: golden file, the "vramtrace: " prefix on every line, leaks vs live wording, top-N
// truncation, escaping, and the degenerate snapshots.
#include <catch2/catch.hpp>

#include <sstream>
#include <vector>

#include "report_test_data.h"
#include "report/summary_format.h"

using namespace vramtrace::report;
using namespace vramtrace::snapshot;

namespace {

std::vector<std::string> lines_of(const std::string &text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

void check_every_line_prefixed(const std::string &text) {
    REQUIRE_FALSE(text.empty());
    CHECK(text.back() == '\n');
    for (const std::string &line : lines_of(text)) {
        INFO(line);
        CHECK(line.rfind("vramtrace: ", 0) == 0);
        CHECK(line.back() != ' ');
    }
}

bool has_line(const std::string &text, const std::string &line) {
    for (const std::string &l : lines_of(text))
        if (l == line) return true;
    return false;
}

} // namespace

TEST_CASE("summary of the golden snapshot equals data/summary_golden.txt", "[summary]") {
    std::string expected = vt_test::read_file(std::string(VT_TEST_DATA_DIR) + "/summary_golden.txt");
    REQUIRE_FALSE(expected.empty());
    std::string text = format_summary(vt_test::golden_snapshot());
    CHECK(text == expected);
    check_every_line_prefixed(text);
    // top_n 0 lists every call site: the same here (6 call sites, fewer than the default 10).
    CHECK(format_summary(vt_test::golden_snapshot(), SummaryOptions{0, 5}) == expected);
}

TEST_CASE("summary: top_n truncates both lists and sums up the rest", "[summary]") {
    std::string text = format_summary(vt_test::golden_snapshot(), SummaryOptions{2, 5});
    check_every_line_prefixed(text);
    // Call sites 3..6: 3145728 + 65536 + 4096 + 1000 bytes in 4 allocations, listed once (at
    // exit the live allocations are listed by class only, all of them here before the first mark).
    const std::string rest = "vramtrace:     ... and 4 more call sites: 3.07 MiB (3216360 B) in 4 allocations";
    size_t first = text.find(rest);
    REQUIRE(first != std::string::npos);
    CHECK(text.find(rest, first + 1) == std::string::npos);
    // At exit the table by live bytes would list the same allocations again: it is left out.
    CHECK(text.find("top call sites by live bytes") == std::string::npos);
    CHECK(text.find("worker_thread") == std::string::npos);
    CHECK(has_line(text, "vramtrace: leaked at exit: 9 allocations, 16.07 MiB (16848360 B), from 6 call sites:"));
}

TEST_CASE("summary: sizes per call site are capped", "[summary]") {
    Snapshot s = vt_test::golden_snapshot();
    std::string text = format_summary(s, SummaryOptions{10, 1});
    // Lines longer than 100 columns continue on the next one.
    CHECK(text.find("vramtrace:       4.00 MiB (4194816 B) in 3 allocations: 2 x 2.00 MiB (2097152 B),\n"
                    "vramtrace:         and 1 other size in 1 allocation\n") != std::string::npos);
    CHECK(text.find("vramtrace:       9.00 MiB (9437184 B) in 2 allocations: 1 x 8.00 MiB (8388608 B),\n"
                    "vramtrace:         and 1 other size in 1 allocation\n") != std::string::npos);
}

TEST_CASE("summary: a snapshot on request lists live allocations, not leaks", "[summary]") {
    Snapshot s = vt_test::golden_snapshot();
    s.process.reason = "api";
    std::string text = format_summary(s);
    check_every_line_prefixed(text);
    CHECK(has_line(text, "vramtrace: snapshot taken on request (vramtrace_dump), 5.25 s after start (vramtrace 0.1.0, "
                         "CUDA driver 13.0)"));
    CHECK(has_line(text, "vramtrace: still live at the snapshot: 9 allocations, 16.07 MiB (16848360 B), from 6 call "
                         "sites (the table by live bytes above)"));
    CHECK(has_line(text, "vramtrace: top call sites by live bytes, of 16.07 MiB (16848360 B) live in 9 allocations:"));
    CHECK(text.find("leak") == std::string::npos);
    s.process.reason = "oom";
    CHECK(has_line(format_summary(s), "vramtrace: snapshot taken (reason: oom), 5.25 s after start (vramtrace 0.1.0, "
                                      "CUDA driver 13.0)"));
}

TEST_CASE("summary: nothing live", "[summary]") {
    Snapshot s = vt_test::golden_snapshot();
    s.allocations.clear();
    s.dropped_stacks = 0;
    std::string text = format_summary(s);
    check_every_line_prefixed(text);
    CHECK(lines_of(text).back() == "vramtrace: no leaks: every tracked allocation was freed before exit");
    CHECK(text.find("top call sites") == std::string::npos);
    s.process.reason = "api";
    CHECK(lines_of(format_summary(s)).back() == "vramtrace: no tracked allocation is live at the snapshot");
}

TEST_CASE("summary: an empty snapshot", "[summary]") {
    std::string text = format_summary(Snapshot{});
    check_every_line_prefixed(text);
    CHECK(text == "vramtrace: ==== memory summary: pid 0 ====\n"
                  "vramtrace: live at the snapshot: nothing\n"
                  "vramtrace: ---- details ----\n"
                  "vramtrace: command: (unknown)\n"
                  "vramtrace: snapshot taken (reason unknown), running time unknown\n"
                  "vramtrace: memory by device: none (no allocation went through an intercepted call)\n"
                  "vramtrace: no tracked allocation is live at the snapshot\n");
}

TEST_CASE("summary: dropped allocations are reported", "[summary]") {
    Snapshot s = vt_test::golden_snapshot();
    s.dropped_allocations = 3;
    s.dropped_stacks = 0;
    std::string text = format_summary(s);
    auto lines = lines_of(text);
    REQUIRE(lines.size() >= 2);
    CHECK(lines[lines.size() - 2] == "vramtrace: warning: 3 allocations could not be recorded (no memory for the live "
                                     "table);");
    CHECK(lines.back() == "vramtrace:   the live figures above are incomplete");
    CHECK(text.find("stack could not") == std::string::npos);
}

TEST_CASE("summary: snapshot text never breaks a line", "[summary]") {
    Snapshot s = vt_test::golden_snapshot();
    s.process.command_line = {"./a.out", "two\nlines", "it's", std::string("\x1b[31mred", 8)};
    s.process.host = "evil\nhost";
    s.frames[3].function = "f\r\n()";
    s.allocations[3].api = "cuda\tMalloc";
    std::string text = format_summary(s);
    check_every_line_prefixed(text);
    CHECK(has_line(text, "vramtrace: command: ./a.out 'two\\nlines' 'it'\\''s' '\\x1b[31mred'"));
    CHECK(has_line(text, "vramtrace: ==== memory summary: pid 4242 on evil\\nhost ===="));
    CHECK(text.find("f\\r\\n() at /src/model.cpp:17 (train)") != std::string::npos);
    // The api column is in the table by live bytes, which a snapshot taken on request has.
    s.process.reason = "api";
    CHECK(format_summary(s).find("cuda\\tMalloc") != std::string::npos);
}

TEST_CASE("summary: devices are listed GPUs first, then host, then unknown", "[summary]") {
    Snapshot s;
    s.devices = {{-2, 1, 1, 1, 0, 1, 0}, {-1, 2, 2, 1, 0, 2, 0}, {0, 3, 3, 1, 0, 3, 0}, {2, 4, 4, 1, 0, 4, 0}};
    std::string text = format_summary(s);
    size_t gpu0 = text.find("vramtrace:   cuda:0"), gpu2 = text.find("vramtrace:   cuda:2"),
           host = text.find("vramtrace:   host"), unknown = text.find("vramtrace:   unknown");
    REQUIRE(gpu0 != std::string::npos);
    REQUIRE(gpu2 != std::string::npos);
    REQUIRE(host != std::string::npos);
    REQUIRE(unknown != std::string::npos);
    CHECK(gpu0 < gpu2);
    CHECK(gpu2 < host);
    CHECK(host < unknown);
}

TEST_CASE("summary: running time and versions when partly unknown", "[summary]") {
    Snapshot s = vt_test::golden_snapshot();
    s.process.driver_version = 12040;
    s.process.vramtrace_version.clear();
    s.process.dump_time_ns = s.process.start_time_ns - 1; // clock went backwards
    CHECK(has_line(format_summary(s), "vramtrace: snapshot taken at exit, running time unknown (CUDA driver 12.4)"));
    s.process.driver_version = 0;
    s.process.start_time_ns = 0;
    CHECK(has_line(format_summary(s), "vramtrace: snapshot taken at exit, running time unknown"));
    s.process.command_line.clear();
    CHECK(has_line(format_summary(s), "vramtrace: command: /home/me/train"));
}

// ---- the sections fed by the fields added within schema 1 ----

namespace {

// The golden snapshot with every newer field filled (data/summary_full_golden.txt). Figures:
//   - cuda:0 identity and driver usage: 512 MiB more than tracked;
//   - the peak of cuda:0 (146800640 B = 128 MiB in 1 allocation from load_weights + 12 MiB in 6
//     from make_buffer) 2.00 s after start (dump_monotonic 9 s, run 5.25 s: start at 3.75 s);
//   - a complete event history that agrees with cuda:1's counters (3 allocations, 1 free,
//     6291456 B allocated, 2097152 B freed) but not with cuda:0's or host's:
//       alloc 2 MiB managed, alloc 1 MiB device, free 2 MiB managed, alloc 3 MiB device
//     so cuda:1 gets device memory peak 4 MiB, managed peak 2 MiB, large peak 4 MiB, count peak 2;
//   - 3 OOMs since start, the last 2 kept; two pools on cuda:0;
//   - load_weights' frame has read_tensor(int) inlined into it.
Snapshot full_snapshot() {
    Snapshot s = vt_test::golden_snapshot();
    s.process.rank = "3";
    s.process.dump_monotonic_ns = 9000000000ull;
    for (DeviceTotals &d : s.devices) {
        if (d.device != 0) continue;
        d.uuid = "GPU-8d3c0f6e-1111-2222-3333-444455556666";
        d.pci_bus_id = "0000:3b:00.0";
        d.total_memory_bytes = 85899345920ull; // 80 GiB
        d.process_used_bytes = d.current_bytes + 536870912ull;
    }
    s.frames[3].inlined = {{"read_tensor(int)", "/src/io.h", 88}};
    s.peaks = {{0, 146800640, 5750000000ull, {{2, 134217728, 1}, {1, 12582912, 6}}}};
    auto event = [](const char *type, uint64_t t, int device, uint64_t address, uint64_t size, const char *kind,
                    const char *api, uint32_t stack) {
        Event e;
        e.type = type, e.time_ns = t, e.device = device, e.address = address, e.size = size, e.kind = kind;
        e.api = api, e.stack = stack, e.thread_id = 4242;
        return e;
    };
    s.events.capacity = 65536;
    s.events.recorded = 6;
    s.events.complete_from_ns = 3750000000ull;
    s.events.events = {
        event("alloc", 4000000000ull, 1, 0x7f0050000000, 2097152, "managed", "cudaMallocManaged", 2),
        event("alloc", 4100000000ull, 1, 0x7f0020000000, 1048576, "device", "cudaMallocAsync", 2),
        event("mark", 4150000000ull, -2, 0, 0, "", "", 0),
        event("free", 4200000000ull, 1, 0x7f0050000000, 2097152, "managed", "cudaFree", 2),
        event("alloc", 4300000000ull, 1, 0x7f0030000000, 3145728, "device", "cuMemAlloc_v2", 4),
        event("oom", 4400000000ull, 0, 0, 2147483648ull, "", "cudaMalloc", 1),
    };
    OomEvent a;
    a.time_ns = 4400000000ull, a.device = 0, a.requested_bytes = 2147483648ull, a.api = "cudaMalloc";
    a.stack = 1, a.thread_id = 4242, a.result = 2, a.device_free_bytes = 1073741824ull;
    a.device_total_bytes = 85899345920ull, a.tracked_bytes = 12584424;
    OomEvent b;
    b.time_ns = 8000000000ull, b.device = 1, b.requested_bytes = 1000, b.api = "cuMemAlloc_v2";
    b.stack = 4, b.thread_id = 4242, b.result = 2, b.tracked_bytes = 4194304;
    s.ooms = {a, b};
    s.oom_count = 3;
    Pool def;
    def.handle = 0x5555aaaa0000, def.device = 0, def.is_default = true, def.reserved_bytes = 4194304;
    def.used_bytes = 3211364, def.reserved_high_bytes = 6291456, def.used_high_bytes = 5000000;
    Pool made;
    made.handle = 0x5555bbbb0000, made.device = 0, made.reserved_bytes = 2097152, made.used_bytes = 2000000;
    made.reserved_high_bytes = 2097152, made.used_high_bytes = 2000000;
    s.pools = {made, def};
    return s;
}

} // namespace

TEST_CASE("summary with every section equals data/summary_full_golden.txt", "[summary]") {
    std::string expected = vt_test::read_file(std::string(VT_TEST_DATA_DIR) + "/summary_full_golden.txt");
    REQUIRE_FALSE(expected.empty());
    std::string text = format_summary(full_snapshot());
    CHECK(text == expected);
    check_every_line_prefixed(text);
    for (const std::string &line : lines_of(text)) {
        INFO(line);
        // Only a call site's own text (long C++ names) may make a line longer.
        if (line.find("(inlined into") == std::string::npos) CHECK(line.size() <= 100);
    }
}

TEST_CASE("summary: per-kind figures come from a complete event history that agrees", "[summary]") {
    Snapshot s = full_snapshot();
    std::string text = format_summary(s);
    // cuda:1 replayed: device 4 MiB now, peak 4 MiB, 4 MiB allocated, none freed; managed 0 now,
    // peak/allocated/freed 2 MiB; large: peak 4 MiB, 6 MiB allocated, 2 MiB freed; 2 live at most.
    CHECK(has_line(text, "vramtrace:     device memory      4.00 MiB    4.00 MiB   4.00 MiB        0 B"));
    CHECK(has_line(text, "vramtrace:     managed memory          0 B    2.00 MiB   2.00 MiB   2.00 MiB"));
    CHECK(has_line(text, "vramtrace:     large (>= 1 MiB)   4.00 MiB    4.00 MiB   6.00 MiB   2.00 MiB"));
    CHECK(has_line(text, "vramtrace:   allocations                 2           2          3          1"));
    // cuda:0's counters disagree with the history (120 allocations): unknown there.
    CHECK(has_line(text, "vramtrace:     managed memory     8.00 MiB           -           -           -"));
    // A history that wrapped is not complete: unknown everywhere.
    s.events.wrapped = true;
    std::string wrapped = format_summary(s);
    CHECK_FALSE(has_line(wrapped, "vramtrace:     managed memory          0 B    2.00 MiB   2.00 MiB   2.00 MiB"));
    CHECK(has_line(wrapped, "vramtrace:   allocations                 2           -          3          1"));
}

TEST_CASE("summary: nvidia-smi below the tracked bytes", "[summary]") {
    Snapshot s = full_snapshot();
    s.devices[1].process_used_bytes = 8388608; // devices[1] is cuda:0: it tracks 12584424 B
    CHECK(has_line(format_summary(s), "vramtrace:     nvidia-smi: 8.00 MiB, 4.00 MiB below the 12.00 MiB tracked (managed "
                                      "memory not resident)"));
    CHECK(has_line(format_summary(full_snapshot()), "vramtrace:     nvidia-smi: 524.00 MiB = 12.00 MiB tracked + 512.00 MiB "
                                                    "untracked (context, modules)"));
}

TEST_CASE("summary of an OOM snapshot lists what held the device", "[summary]") {
    Snapshot s = full_snapshot();
    s.process.reason = "oom";
    std::string text = format_summary(s);
    check_every_line_prefixed(text);
    // The last OOM is on cuda:1: 1 MiB from load_weights and 3 MiB with no call site.
    CHECK(has_line(text, "vramtrace:   held on cuda:1 at the last failure (this snapshot): 4.00 MiB (4194304 B) in 2 "
                         "allocations, from:"));
    CHECK(text.find("vramtrace:   1  3.00 MiB  75.0%      1\nvramtrace:      (no call site") != std::string::npos);
    CHECK(text.find("vramtrace:   2  1.00 MiB  25.0%      1\nvramtrace:      read_tensor(int) at /src/io.h:88 "
                    "(inlined into load_weights(char const*) at /src/model.cpp:17) (train)") != std::string::npos);
}
