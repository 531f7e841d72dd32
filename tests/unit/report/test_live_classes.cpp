// The exit-time classes of live allocations (lib/report/live_classes.h): the intervals, each
// class's boundary, and that every allocation is in exactly one class.
#include <catch2/catch.hpp>

#include "report/live_classes.h"

using namespace vramtrace::report;
using namespace vramtrace::snapshot;

namespace {

constexpr uint64_t kStart = 1'000'000'000;      // CLOCK_MONOTONIC at the library's start
constexpr uint64_t kRun = 10'000'000'000;       // a 10 s run

// Three call sites (stacks 1, 2, 3: params.py:10, cache.py:20, once.py:30), a run of 10 s.
Snapshot base() {
    Snapshot s;
    s.process.reason = "exit";
    s.process.start_time_ns = 1'700'000'000'000'000'000ull;
    s.process.dump_time_ns = s.process.start_time_ns + kRun;
    s.process.dump_monotonic_ns = kStart + kRun;
    s.modules = {{"/bin/train", 0x1000, ""}};
    s.frames = {{0x1100, 0, 0x100, "params", "params.py", 10},
                {0x1200, 0, 0x200, "cache", "cache.py", 20},
                {0x1300, 0, 0x300, "once", "once.py", 30}};
    s.stacks = {{1, {0}, 0}, {2, {1}, 0}, {3, {2}, 0}};
    return s;
}

void mark(Snapshot &s, uint64_t t, std::string label) {
    Event e;
    e.type = "mark";
    e.time_ns = t;
    e.label = std::move(label);
    s.events.events.push_back(e);
}

void alloc(Snapshot &s, uint32_t stack, uint64_t size, uint64_t t) {
    Allocation a;
    a.address = 0x7f0000000000 + s.allocations.size() * 0x100000;
    a.size = size;
    a.kind = "device";
    a.api = "cudaMalloc";
    a.time_ns = t;
    a.stack = stack;
    s.allocations.push_back(a);
}

} // namespace

TEST_CASE("live classes: with marks, before the first is held since start, a site live in every step grew") {
    Snapshot s = base();
    // Marks "step 0" .. "step 4" at 1 s, 2 s, ... 5 s after start.
    for (int k = 0; k < 5; ++k) mark(s, kStart + uint64_t(k + 1) * 1'000'000'000, "step " + std::to_string(k));
    alloc(s, 1, 4 << 20, kStart + 100);                         // parameters, before the first mark
    alloc(s, 1, 1 << 20, kStart + 200);
    for (int k = 0; k < 5; ++k) alloc(s, 2, 2 << 20, kStart + uint64_t(k + 1) * 1'000'000'000 + 5); // every step
    alloc(s, 3, 3 << 20, kStart + 3'500'000'000);              // once, in step 2

    LiveClasses c = classify_live(s);
    REQUIRE(c.intervals.basis == LiveIntervals::Basis::marks);
    REQUIRE(c.intervals.after_first() == 5);
    CHECK(c.intervals.grew_threshold() == 3);
    CHECK(c.intervals.labels == std::vector<std::string>{"step 0", "step 1", "step 2", "step 3", "step 4"});

    REQUIRE(c.held_since_start.size() == 1);
    CHECK(c.held_since_start[0].site.location == "params at params.py:10 (train)");
    CHECK(c.held_since_start[0].site.live_bytes == 5u << 20);
    CHECK(c.held_since_start[0].site.live_count == 2);
    CHECK(c.held_since_start[0].site.sizes == std::vector<std::pair<uint64_t, uint64_t>>{{4 << 20, 1}, {1 << 20, 1}});
    REQUIRE(c.grew.size() == 1);
    CHECK(c.grew[0].site.location == "cache at cache.py:20 (train)");
    CHECK(c.grew[0].site.live_bytes == 10u << 20);
    CHECK(c.grew[0].intervals == 5);
    REQUIRE(c.rest.size() == 1);
    CHECK(c.rest[0].site.location == "once at once.py:30 (train)");
    CHECK(c.bytes[0] == 5u << 20);
    CHECK(c.bytes[1] == 10u << 20);
    CHECK(c.bytes[2] == 3u << 20);
    CHECK(c.count[0] + c.count[1] + c.count[2] == s.allocations.size());
}

TEST_CASE("live classes: grew needs max(2, ceil(n/2)) intervals after the first, exactly") {
    Snapshot s = base();
    for (int k = 0; k < 5; ++k) mark(s, kStart + uint64_t(k + 1) * 1'000'000'000, "step " + std::to_string(k));
    // Site 2 in intervals 1 and 2 (two of five: below 3), site 3 in intervals 1, 3, 5 (three: grew).
    alloc(s, 2, 1000, kStart + 1'000'000'000);  // exactly at mark "step 0": interval 1
    alloc(s, 2, 1000, kStart + 2'500'000'000);
    alloc(s, 2, 1000, kStart + 2'600'000'000);  // interval 2 again: still two intervals
    alloc(s, 3, 500, kStart + 1'999'999'999);   // just before "step 1": interval 1
    alloc(s, 3, 500, kStart + 3'000'000'000);   // interval 3
    alloc(s, 3, 500, kStart + 9'000'000'000);   // after the last mark: interval 5
    LiveClasses c = classify_live(s);
    CHECK(c.held_since_start.empty());
    REQUIRE(c.grew.size() == 1);
    CHECK(c.grew[0].site.location == "once at once.py:30 (train)");
    CHECK(c.grew[0].intervals == 3);
    CHECK(c.grew[0].site.live_count == 3);
    REQUIRE(c.rest.size() == 1);
    CHECK(c.rest[0].site.live_bytes == 3000);
    CHECK(c.rest[0].intervals == 0);
}

TEST_CASE("live classes: a site with allocations before and after the first mark is in two classes, once each") {
    Snapshot s = base();
    mark(s, kStart + 1'000'000'000, "a");
    mark(s, kStart + 2'000'000'000, "b");
    mark(s, kStart + 3'000'000'000, "c");
    alloc(s, 2, 100, kStart + 10);
    alloc(s, 2, 200, kStart + 1'500'000'000);
    alloc(s, 2, 300, kStart + 2'500'000'000);
    LiveClasses c = classify_live(s);
    CHECK(c.intervals.grew_threshold() == 2);
    REQUIRE(c.held_since_start.size() == 1);
    CHECK(c.held_since_start[0].site.live_bytes == 100);
    REQUIRE(c.grew.size() == 1);
    CHECK(c.grew[0].site.live_bytes == 500);
    CHECK(c.grew[0].site.key == c.held_since_start[0].site.key);
    CHECK(c.rest.empty());
}

TEST_CASE("live classes: without marks the run is cut into tenths") {
    Snapshot s = base();
    alloc(s, 1, 64, kStart + kRun / 10 - 1);     // the first 10%: held since start
    alloc(s, 3, 64, kStart + kRun / 10);         // the first instant of the second tenth
    for (int k = 1; k < 10; ++k) alloc(s, 2, 32, kStart + uint64_t(k) * kRun / 10 + 7); // every tenth after
    LiveClasses c = classify_live(s);
    REQUIRE(c.intervals.basis == LiveIntervals::Basis::run_tenths);
    CHECK(c.intervals.after_first() == 9);
    CHECK(c.intervals.grew_threshold() == 5);
    REQUIRE(c.held_since_start.size() == 1);
    CHECK(c.held_since_start[0].site.location == "params at params.py:10 (train)");
    REQUIRE(c.grew.size() == 1);
    CHECK(c.grew[0].site.live_bytes == 9 * 32);
    CHECK(c.grew[0].intervals == 9);
    REQUIRE(c.rest.size() == 1);
    CHECK(c.rest[0].site.location == "once at once.py:30 (train)");
}

TEST_CASE("live classes: marks outside the run are ignored, no marks and no running time: all the rest") {
    Snapshot s = base();
    mark(s, kStart - 5, "before start");
    mark(s, kStart + kRun + 5, "after the dump");
    alloc(s, 1, 64, kStart + 1);
    LiveClasses c = classify_live(s);
    CHECK(c.intervals.basis == LiveIntervals::Basis::run_tenths);
    CHECK(c.held_since_start.size() == 1);

    s.process.reason = "merge"; // several processes: their marks are not of one run
    c = classify_live(s);
    CHECK(c.intervals.basis == LiveIntervals::Basis::none);
    CHECK(c.rest.size() == 1);

    s.process.reason = "exit";
    s.process.dump_monotonic_ns = 0;
    s.events.events.clear();
    c = classify_live(s);
    CHECK(c.intervals.basis == LiveIntervals::Basis::none);
    CHECK(c.held_since_start.empty());
    CHECK(c.grew.empty());
    REQUIRE(c.rest.size() == 1);
    CHECK(c.rest[0].site.live_bytes == 64);
}

TEST_CASE("live classes: records with counts, and memory that is not held is not classified") {
    Snapshot s = base();
    mark(s, kStart + 1'000'000'000, "a");
    std::vector<LiveRecord> live = {{1, 0, 4096, kStart + 1, 3}, {2, 1, 100, kStart + 1'000'000'001, 2}};
    LiveClasses c = classify_live(s, live, s.events.events);
    REQUIRE(c.held_since_start.size() == 1);
    CHECK(c.held_since_start[0].site.live_bytes == 3 * 4096);
    CHECK(c.held_since_start[0].site.live_count == 3);
    CHECK(c.held_since_start[0].site.devices == std::vector<int>{0});
    REQUIRE(c.rest.size() == 1);
    CHECK(c.rest[0].site.devices == std::vector<int>{1});

    Snapshot t = base();
    alloc(t, 1, 64, kStart + 1);
    t.allocations.back().kind = "ipc_imported";
    c = classify_live(t);
    CHECK(c.count[0] + c.count[1] + c.count[2] == 0);
}
