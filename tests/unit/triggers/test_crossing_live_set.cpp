// The crossing's live set rebuilt from a later snapshot (lib/triggers/crossing_live_set.h).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "triggers/crossing_live_set.h"

using vramtrace::snapshot::Allocation;
using vramtrace::snapshot::Event;
using vramtrace::snapshot::Snapshot;
using vramtrace::triggers::Crossing;
using vramtrace::triggers::live_set_at_crossing;

namespace {

constexpr uint64_t kMiB = 1 << 20;

Allocation allocation(uint64_t address, uint64_t size, uint32_t stack, uint64_t time_ns, int device = 0) {
    Allocation a;
    a.address = address;
    a.size = size;
    a.kind = "device";
    a.device = device;
    a.api = "cudaMalloc";
    a.stack = stack;
    a.time_ns = time_ns;
    return a;
}

Event event(const char *type, uint64_t address, uint64_t size, uint32_t stack, uint64_t time_ns, int device = 0) {
    Event e;
    e.type = type;
    e.address = address;
    e.size = size;
    e.stack = stack;
    e.time_ns = time_ns;
    e.device = device;
    e.kind = "device";
    e.api = type == std::string("alloc") ? "cudaMalloc" : "cudaFree";
    return e;
}

// The program of the e2e test: a (6 MiB, stack 1) at 100, b (3 MiB, stack 2) at 200 crosses 8 MiB;
// then b is freed at 300, and c (1 MiB, stack 3) takes b's address at 400 and is freed at 500,
// while device 1 allocates d at 450; e (1 MiB, stack 4) at 600 is live when the snapshot is taken.
Snapshot after_the_crossing() {
    Snapshot s;
    s.allocations = {allocation(0xa000, 6 * kMiB, 1, 100), allocation(0xd000, kMiB, 5, 450, 1),
                     allocation(0xe000, kMiB, 4, 600)};
    s.events.capacity = 64;
    s.events.recorded = 7;
    s.events.complete_from_ns = 0;
    s.events.events = {event("alloc", 0xa000, 6 * kMiB, 1, 100), event("alloc", 0xb000, 3 * kMiB, 2, 200),
                       event("free", 0xb000, 3 * kMiB, 2, 300),  event("alloc", 0xb000, kMiB, 3, 400),
                       event("alloc", 0xd000, kMiB, 5, 450, 1),  event("free", 0xb000, kMiB, 3, 500),
                       event("alloc", 0xe000, kMiB, 4, 600)};
    return s;
}

Crossing crossing_at_9_mib() {
    Crossing c;
    c.device = 0;
    c.live_bytes = 9 * kMiB;
    c.threshold = 8 * kMiB;
    c.time_ns = 250;
    c.events_lost = 2;
    return c;
}

} // namespace

TEST_CASE("crossing live set: undoing the events after the crossing gives back what was live then") {
    std::vector<Allocation> live;
    REQUIRE(live_set_at_crossing(after_the_crossing(), crossing_at_9_mib(), 2, &live));
    REQUIRE(live.size() == 2);
    // b comes back from its free event (no allocation time there: it sorts first).
    CHECK(live[0].address == 0xb000);
    CHECK(live[0].size == 3 * kMiB);
    CHECK(live[0].stack == 2);
    CHECK(live[0].device == 0);
    CHECK(live[1].address == 0xa000);
    CHECK(live[1].size == 6 * kMiB);
    CHECK(live[1].stack == 1);
}

TEST_CASE("crossing live set: with nothing after the crossing the snapshot's own set is kept") {
    Snapshot s = after_the_crossing();
    Crossing c = crossing_at_9_mib();
    c.time_ns = 600;
    c.live_bytes = 7 * kMiB; // a and e on device 0
    std::vector<Allocation> live;
    REQUIRE(live_set_at_crossing(s, c, 2, &live));
    REQUIRE(live.size() == 2);
    CHECK(live[0].address == 0xa000);
    CHECK(live[1].address == 0xe000);
}

TEST_CASE("crossing live set: no rebuild that cannot be shown exact") {
    std::vector<Allocation> live{allocation(1, 1, 1, 1)};
    SECTION("the event history is off") {
        Snapshot s = after_the_crossing();
        s.events = {};
        CHECK_FALSE(live_set_at_crossing(s, crossing_at_9_mib(), 2, &live));
    }
    SECTION("the history wrapped past the crossing") {
        Snapshot s = after_the_crossing();
        s.events.complete_from_ns = 260;
        CHECK_FALSE(live_set_at_crossing(s, crossing_at_9_mib(), 2, &live));
    }
    SECTION("the ring dropped an event since the crossing") {
        CHECK_FALSE(live_set_at_crossing(after_the_crossing(), crossing_at_9_mib(), 3, &live));
    }
    SECTION("the rebuilt bytes are not the crossing's (a free not yet in the history)") {
        Snapshot s = after_the_crossing();
        s.events.events.erase(s.events.events.begin() + 2); // b's free
        CHECK_FALSE(live_set_at_crossing(s, crossing_at_9_mib(), 2, &live));
    }
    CHECK(live.empty());
}

TEST_CASE("crossing live set: kinds that do not count toward the device stay out of the byte check") {
    Snapshot s = after_the_crossing();
    Allocation mapping = allocation(0xf000, 2 * kMiB, 6, 150);
    mapping.kind = "vmm_mapping";
    s.allocations.push_back(mapping);
    std::vector<Allocation> live;
    REQUIRE(live_set_at_crossing(s, crossing_at_9_mib(), 2, &live));
    REQUIRE(live.size() == 3);
    CHECK(live[2].address == 0xf000);
    CHECK(live[2].kind == "vmm_mapping");
}
