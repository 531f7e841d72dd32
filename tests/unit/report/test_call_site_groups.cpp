// Grouping a snapshot's allocations and stack weights by call site (report/call_site_groups.h).
#include <catch2/catch.hpp>

#include "report/call_site_groups.h"
#include "report_test_data.h"

using namespace vramtrace::report;
using namespace vramtrace::snapshot;

TEST_CASE("group_live_by_call_site groups, totals and orders", "[call_site_groups]") {
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

TEST_CASE("group_live_by_call_site: ties break on count, then on a stable key", "[call_site_groups]") {
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

TEST_CASE("group_live_by_call_site: frames without file:line group by module offset", "[call_site_groups]") {
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

TEST_CASE("group_live_by_call_site: sizes that hold the most bytes come first", "[call_site_groups]") {
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
