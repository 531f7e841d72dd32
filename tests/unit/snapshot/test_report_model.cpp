// The report model's lookups and shared helpers.
#include <catch2/catch.hpp>

#include "report_test_data.h"

using namespace vramtrace::report;

TEST_CASE("format_bytes: binary units, two decimals, rounded half up", "[model]") {
    CHECK(format_bytes(0) == "0 B");
    CHECK(format_bytes(1023) == "1023 B");
    CHECK(format_bytes(1024) == "1.00 KiB");
    CHECK(format_bytes(1536) == "1.50 KiB");
    CHECK(format_bytes(1029) == "1.00 KiB");  // 1.0048828 -> 1.00
    CHECK(format_bytes(1030) == "1.01 KiB");  // 1.0058594 -> 1.01
    CHECK(format_bytes(3145728) == "3.00 MiB");
    CHECK(format_bytes(1048575) == "1.00 MiB"); // 1023.999 KiB rounds into the next unit
    CHECK(format_bytes(1073741824) == "1.00 GiB");
    CHECK(format_bytes(1099511627776ull) == "1.00 TiB");
    CHECK(format_bytes(1125899906842624ull) == "1.00 PiB");
    CHECK(format_bytes(UINT64_MAX) == "16.00 EiB");
}

// The cases the HTML viewer's fmtBytes is held to as well (tests/browser/viewer_test.cjs): the two
// round the same way.
TEST_CASE("format_bytes: the cases of data/format_bytes_cases.txt", "[model]") {
    std::istringstream cases(vt_test::read_file(std::string(VT_TEST_DATA_DIR) + "/format_bytes_cases.txt"));
    int checked = 0;
    for (std::string line; std::getline(cases, line);) {
        if (line.empty() || line[0] == '#') continue;
        size_t tab = line.find('\t');
        REQUIRE(tab != std::string::npos);
        uint64_t bytes = std::stoull(line.substr(0, tab));
        CHECK(format_bytes(bytes) == line.substr(tab + 1));
        ++checked;
    }
    CHECK(checked == 21);
}

TEST_CASE("format_bytes_exact adds the byte count above 1 KiB", "[model]") {
    CHECK(format_bytes_exact(512) == "512 B");
    CHECK(format_bytes_exact(3145728) == "3.00 MiB (3145728 B)");
    CHECK(format_bytes_exact(4194816) == "4.00 MiB (4194816 B)");
}

TEST_CASE("format_duration", "[model]") {
    CHECK(format_duration(0) == "0 ms");
    CHECK(format_duration(849600000) == "850 ms");
    CHECK(format_duration(5250000000ull) == "5.25 s");
    CHECK(format_duration(59994000000ull) == "59.99 s");
    CHECK(format_duration(59996000000ull) == "1 min 00 s");
    CHECK(format_duration(725000000000ull) == "12 min 05 s");
    CHECK(format_duration(11220000000000ull) == "3 h 07 min");
}

TEST_CASE("device labels, hex, basenames", "[model]") {
    CHECK(device_label(0) == "cuda:0");
    CHECK(device_label(7) == "cuda:7");
    CHECK(device_label(-1) == "host");
    CHECK(device_label(-2) == "unknown");
    CHECK(device_label(-5) == "device -5");
    CHECK(hex_u64(0) == "0x0");
    CHECK(hex_u64(0x7f3a00000000) == "0x7f3a00000000");
    CHECK(hex_u64(UINT64_MAX) == "0xffffffffffffffff");
    CHECK(path_basename("/usr/lib/libcudart.so.13") == "libcudart.so.13");
    CHECK(path_basename("train") == "train");
    CHECK(path_basename("/dir/") == "");
}

TEST_CASE("find_stack: binary search on sorted ids, linear fallback otherwise", "[model]") {
    Snapshot s = vt_test::golden_snapshot();
    CHECK(s.find_stack(0) == nullptr);
    CHECK(s.find_stack(99) == nullptr);
    for (uint32_t id = 1; id <= 6; ++id) {
        const Stack *st = s.find_stack(id);
        REQUIRE(st != nullptr);
        CHECK(st->id == id);
    }
    std::swap(s.stacks[0], s.stacks[5]); // ids 6,2,3,4,5,1
    for (uint32_t id = 1; id <= 6; ++id) {
        const Stack *st = s.find_stack(id);
        REQUIRE(st != nullptr);
        CHECK(st->id == id);
    }
    CHECK(Snapshot{}.find_stack(1) == nullptr);
}

TEST_CASE("call_site_frame and find_module guard every index", "[model]") {
    Snapshot s = vt_test::golden_snapshot();
    const Frame *f = s.call_site_frame(*s.find_stack(1));
    REQUIRE(f != nullptr);
    CHECK(f->function == "make_buffer(unsigned long)");
    CHECK(s.call_site_frame(*s.find_stack(4)) == nullptr); // call_site -1
    Stack bad{9, {0, 77}, 1};                               // frame index out of range
    CHECK(s.call_site_frame(bad) == nullptr);
    Stack bad_site{9, {0}, 3}; // call_site past the stack's end
    CHECK(s.call_site_frame(bad_site) == nullptr);
    CHECK(s.find_module(s.frames[5]) == nullptr);
    REQUIRE(s.find_module(s.frames[0]) != nullptr);
    CHECK(s.find_module(s.frames[0])->path == "/usr/lib/x86_64-linux-gnu/libcudart.so.13");
    Frame far{0x1, 12, 0, "", "", 0};
    CHECK(s.find_module(far) == nullptr);
}

TEST_CASE("describe_frame", "[model]") {
    Snapshot s = vt_test::golden_snapshot();
    CHECK(describe_frame(s, s.frames[1]) == "make_buffer(unsigned long) at /src/train.cpp:42 (train)");
    CHECK(describe_frame(s, s.frames[4]) == "worker_thread() (train+0x3000)");
    CHECK(describe_frame(s, s.frames[0]) == "cudaMalloc (libcudart.so.13+0x12345)");
    CHECK(describe_frame(s, s.frames[5]) == "?? (0x7fffe0001000)");
    Frame file_no_line{0x10, -1, 0, "f", "/a.c", 0};
    CHECK(describe_frame(s, file_no_line) == "f at /a.c");
}

TEST_CASE("group_live_by_call_site groups, totals and orders", "[model]") {
    Snapshot s = vt_test::golden_snapshot();
    std::vector<CallSiteGroup> g = group_live_by_call_site(s);
    REQUIRE(g.size() == 6);

    CHECK(g[0].location == "load_weights(char const*) at /src/model.cpp:17 (train)");
    CHECK(g[0].kind == CallSiteGroup::Kind::Frame);
    CHECK(g[0].frame == 3);
    CHECK(g[0].live_bytes == 8388608 + 1048576);
    CHECK(g[0].live_count == 2);
    CHECK(g[0].apis == std::vector<std::string>{"cudaMallocAsync", "cudaMallocManaged"});
    CHECK(g[0].devices == std::vector<int>{0, 1});
    CHECK(g[0].sizes == std::vector<std::pair<uint64_t, uint64_t>>{{8388608, 1}, {1048576, 1}});

    // Stacks 1 and 5 reach make_buffer through two return addresses on one line: one call site.
    CHECK(g[1].location == "make_buffer(unsigned long) at /src/train.cpp:42 (train)");
    CHECK(g[1].live_bytes == 2 * 2097152 + 512);
    CHECK(g[1].live_count == 3);
    CHECK(g[1].apis == std::vector<std::string>{"cudaMalloc"});
    CHECK(g[1].sizes == std::vector<std::pair<uint64_t, uint64_t>>{{2097152, 2}, {512, 1}});

    CHECK(g[2].kind == CallSiteGroup::Kind::NoCallSite);
    CHECK(g[2].live_bytes == 3145728);
    CHECK(g[2].devices == std::vector<int>{1});
    CHECK(g[3].location == "worker_thread() (train+0x3000)");
    CHECK(g[3].devices == std::vector<int>{-1});
    CHECK(g[4].kind == CallSiteGroup::Kind::NoStack);
    CHECK(g[4].location == "(no stack captured)");
    CHECK(g[4].live_bytes == 4096);
    CHECK(g[5].location == "?? (0x7fffe0001000)");
    CHECK(g[5].live_bytes == 1000);

    uint64_t bytes = 0, count = 0;
    for (const auto &group : g) bytes += group.live_bytes, count += group.live_count;
    CHECK(bytes == 16848360);
    CHECK(count == 9);
}

TEST_CASE("group_live_by_call_site: ties break on count, then on a stable key", "[model]") {
    Snapshot s;
    s.modules = {{"/bin/app", 0x1000, ""}};
    s.frames = {
        {0x2000, 0, 0x1000, "b()", "/src/b.cpp", 5},
        {0x3000, 0, 0x2000, "a()", "/src/a.cpp", 9},
        {0x4000, 0, 0x3000, "c()", "/src/c.cpp", 1},
    };
    s.stacks = {{1, {0}, 0}, {2, {1}, 0}, {3, {2}, 0}};
    s.allocations = {
        {0x10, 100, "device", 0, "cudaMalloc", 0, 1, 1, 1},                                       // b: 100 in 1
        {0x20, 100, "device", 0, "cudaMalloc", 0, 1, 2, 2},                                       // a: 100 in 1
        {0x30, 50, "device", 0, "cudaMalloc", 0, 1, 3, 3}, {0x40, 50, "device", 0, "cudaMalloc", 0, 1, 4, 3}, // c: 100 in 2
        {0x50, 7, "device", 0, "cudaMalloc", 0, 1, 5, 42},                                        // stack 42 is missing
    };
    auto g = group_live_by_call_site(s);
    REQUIRE(g.size() == 4);
    CHECK(g[0].location == "c() at /src/c.cpp:1 (app)"); // same bytes, more allocations
    CHECK(g[1].location == "a() at /src/a.cpp:9 (app)"); // key order: /src/a.cpp before /src/b.cpp
    CHECK(g[2].location == "b() at /src/b.cpp:5 (app)");
    CHECK(g[3].kind == CallSiteGroup::Kind::NoStack);
    // The order does not depend on the order of the allocations.
    std::reverse(s.allocations.begin(), s.allocations.end());
    auto again = group_live_by_call_site(s);
    REQUIRE(again.size() == 4);
    for (size_t i = 0; i < g.size(); ++i) CHECK(again[i].key == g[i].key);
}

TEST_CASE("group_live_by_call_site: frames without file:line group by module offset", "[model]") {
    Snapshot s;
    s.modules = {{"/bin/app", 0x1000, ""}};
    s.frames = {{0x1100, 0, 0x100, "f", "", 0}, {0x1200, 0, 0x200, "f", "", 0}};
    s.stacks = {{1, {0}, 0}, {2, {1}, 0}};
    s.allocations = {{0x10, 10, "device", 0, "cudaMalloc", 0, 1, 1, 1}, {0x20, 20, "device", 0, "cudaMalloc", 0, 1, 1, 2}};
    auto g = group_live_by_call_site(s);
    REQUIRE(g.size() == 2);
    CHECK(g[0].location == "f (app+0x200)");
    CHECK(g[1].location == "f (app+0x100)");
    CHECK(group_live_by_call_site(Snapshot{}).empty());
}

TEST_CASE("group_live_by_call_site: sizes that hold the most bytes come first", "[model]") {
    Snapshot s;
    s.stacks = {};
    for (uint64_t i = 0; i < 10; ++i) s.allocations.push_back({0x1000 + i, 100, "device", 0, "cudaMalloc", 0, 1, i, 0});
    s.allocations.push_back({0x9000, 500, "device", 0, "cudaMalloc", 0, 1, 20, 0});
    s.allocations.push_back({0x9100, 250, "device", 0, "cudaMalloc", 0, 1, 21, 0});
    s.allocations.push_back({0x9200, 250, "device", 0, "cudaMalloc", 0, 1, 22, 0});
    auto g = group_live_by_call_site(s);
    REQUIRE(g.size() == 1);
    // 10 x 100 = 1000 bytes, then 500 and 2 x 250 (500 each: the larger size first).
    CHECK(g[0].sizes == std::vector<std::pair<uint64_t, uint64_t>>{{100, 10}, {500, 1}, {250, 2}});
}

TEST_CASE("model structs compare field by field", "[model]") {
    Snapshot a = vt_test::golden_snapshot(), b = vt_test::golden_snapshot();
    CHECK(a == b);
    b.allocations[3].thread_id += 1;
    CHECK_FALSE(a == b);
}
