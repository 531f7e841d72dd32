// Internal limits: when no memory can be mapped for the tracker's structures, every record, stack
// and peak site that cannot be stored is counted, never lost silently. Mapping failures are
// injected with set_mapping_failure_for_testing (what VRAMTRACE_TEST_FAIL_MAPPINGS does in the
// library).
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "tracking/device_counters.h"
#include "tracking/live_table.h"
#include "tracking/raw_memory.h"
#include "tracking/stack_depot.h"

using namespace vramtrace;

namespace {

struct MappingsFail {
    MappingsFail() { set_mapping_failure_for_testing(true); }
    ~MappingsFail() { set_mapping_failure_for_testing(false); }
};

AllocationRecord record_at(uint64_t address, uint64_t size) {
    AllocationRecord r{};
    r.address = address;
    r.size = size;
    r.stack_id = 1;
    return r;
}

} // namespace

TEST_CASE("live table: records that find no memory are counted as dropped", "[limits]") {
    std::optional<LiveTable> t;
    {
        MappingsFail fail;
        t.emplace(4); // its first level cannot be mapped
        for (uint64_t i = 0; i < 5; ++i) CHECK_FALSE(t->insert(record_at(0x700000000000 + (i << 20), 64)));
    }
    CHECK(t->dropped() == 5);
    CHECK(t->live_count() == 0);
    // Memory again: the next insert maps a level and succeeds.
    CHECK(t->insert(record_at(0x710000000000, 64)));
    CHECK(t->live_count() == 1);
    CHECK(t->dropped() == 5);
}

TEST_CASE("live table: a full level that cannot grow keeps what fits and counts the rest", "[limits]") {
    LiveTable t(4); // 16 slots: grows at 8 live
    for (uint64_t i = 0; i < 8; ++i) REQUIRE(t.insert(record_at(0x700000000000 + (i << 20), 64)));
    uint64_t accepted = 0;
    const uint64_t attempts = 40;
    {
        MappingsFail fail;
        for (uint64_t i = 8; i < 8 + attempts; ++i) accepted += t.insert(record_at(0x700000000000 + (i << 20), 64));
    }
    CHECK(accepted < attempts);                       // the one level holds 16 at most
    CHECK(t.live_count() == 8 + accepted);
    CHECK(t.dropped() == attempts - accepted);        // every refused record is counted
    CHECK(t.levels() == 1);
}

TEST_CASE("stack depot: new stacks that find no memory are counted, known ones still resolve", "[limits]") {
    StackDepot d(8);
    uintptr_t known[3] = {0x1000, 0x2000, 0x3000};
    REQUIRE(d.intern(known, 3) == 1);
    {
        MappingsFail fail;
        // The first node chunk is mapped: more stacks fit in it. Fill it up, then count refusals.
        uint64_t stored = 0, refused = 0;
        for (uintptr_t i = 0; i < 100000 && refused < 3; ++i) {
            uintptr_t frames[4] = {0x5000 + i, 0x6000, 0x7000, 0x8000};
            (d.intern(frames, 4) != 0 ? stored : refused) += 1;
        }
        CHECK(refused == 3);
        CHECK(d.dropped() == 3);
        CHECK(d.size() == 1 + stored);
        CHECK(d.intern(known, 3) == 1); // a stored stack needs no memory
    }
    CHECK(d.dropped() == 3);
}

TEST_CASE("peak sites: allocations whose site finds no memory are counted under stack 0", "[limits]") {
    DeviceCounters c;
    {
        MappingsFail fail;
        c.on_alloc(0, 100, 7, 10);
        c.on_alloc(0, 200, 7, 20);
        c.on_alloc(0, 50, 9, 30);
    }
    CHECK(c.dropped_sites() == 3);
    std::map<uint32_t, std::pair<uint64_t, uint64_t>> sites;
    uint64_t sum = 0;
    DevicePeakView view = c.for_each_peak_site(0, [&](uint32_t stack, uint64_t bytes, uint64_t count) {
        sites[stack] = {bytes, count};
        sum += bytes;
    });
    CHECK(view.peak_bytes == 350);
    CHECK(sum == 350);
    CHECK(sites == std::map<uint32_t, std::pair<uint64_t, uint64_t>>{{0, {350, 3}}});
}
