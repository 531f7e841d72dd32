// The tracking pieces behind exact accounting across context teardowns and VMM lifetimes: context
// generations (ContextRegistry), taking every record of a context out of the live table while other
// threads allocate and free (LiveTable::take_matching), and the references and mappings of VMM
// handles (VmmLedger).
#include <catch2/catch.hpp>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "tracking/context_registry.h"
#include "tracking/live_table.h"
#include "tracking/vmm_ledger.h"

using namespace vramtrace;

namespace {

AllocationRecord record(uint64_t address, uint16_t context, uint64_t size = 256) {
    AllocationRecord r;
    r.address = address;
    r.size = size;
    r.context = context;
    r.device = 0;
    return r;
}

} // namespace

TEST_CASE("context registry: one id per generation, superseded before a teardown, retired after it",
          "[contexts]") {
    static ContextRegistry reg; // 64 KiB: static storage, as in the tracker
    const uint64_t primary = 0x5000, created = 0x6000;
    uint16_t p1 = reg.id_for(primary, 0);
    CHECK(p1 == 1);
    CHECK(reg.id_for(primary, 0) == p1);
    uint16_t c1 = reg.note_created(created, 0);
    CHECK(c1 == 2);
    CHECK(reg.is_created(c1));
    CHECK_FALSE(reg.is_created(p1));
    std::vector<uint16_t> primaries;
    reg.for_each_live_primary(0, [&](uint16_t id) { primaries.push_back(id); });
    CHECK(primaries == std::vector<uint16_t>{p1});
    // A teardown begins: what is allocated from now on gets a fresh id; p1 still names its records.
    uint64_t epoch = reg.epoch();
    reg.supersede(&p1, 1);
    CHECK(reg.epoch() == epoch + 1);
    uint16_t p2 = reg.id_for(primary, 0);
    CHECK(p2 == 3);
    CHECK(reg.device_of(p2) == 0);
    CHECK(reg.handle_of(p2) == primary);
    std::vector<uint16_t> live;
    reg.for_each_live_id(primary, [&](uint16_t id) { live.push_back(id); });
    CHECK(live == std::vector<uint16_t>({p1, p2}));
    // It ended the context: p1 names nothing any more; the next generation is p2.
    reg.retire(p1);
    CHECK(reg.epoch() == epoch + 2);
    live.clear();
    reg.for_each_live_id(primary, [&](uint16_t id) { live.push_back(id); });
    CHECK(live == std::vector<uint16_t>{p2});
    // A created context's successor is created too.
    reg.supersede(&c1, 1);
    uint16_t c2 = reg.id_for(created, 0);
    CHECK(c2 == 4);
    CHECK(reg.is_created(c2));
    CHECK(reg.id_for(0, 0) == 0);
}

TEST_CASE("context registry: past its capacity a context gets id 0, and the registry says it is full",
          "[contexts]") {
    static ContextRegistry reg;
    for (uint32_t i = 0; i < ContextRegistry::kCapacity; ++i) REQUIRE(reg.id_for(0x1000 + i, 1) == i + 1);
    CHECK_FALSE(reg.id_for(0x999999, 1) != 0);
    CHECK(reg.full());
    CHECK(reg.used() == ContextRegistry::kCapacity);
    CHECK(reg.id_for(0x1000, 1) == 1); // known handles keep their ids
}

// One thread keeps inserting and erasing records of context 2 and inserting records of context 1
// while the main thread takes context 1 out repeatedly. Every context-1 record ends up taken
// exactly once (by a take, or still in the table at the end), no context-2 record is ever taken,
// and the table holds exactly what was not taken.
TEST_CASE("live table: taking every record of a context while other threads allocate", "[contexts]") {
    static LiveTable table(10);
    constexpr uint64_t kPerThread = 20000;
    std::atomic<bool> go{false};
    std::atomic<uint64_t> thread_failures{0}; // Catch2's assertions are for the main thread only
    std::thread ctx1([&] {
        while (!go.load()) {
        }
        for (uint64_t i = 0; i < kPerThread; ++i)
            if (!table.insert(record(0x100000 + i * 256, 1))) thread_failures.fetch_add(1);
    });
    std::thread ctx2([&] {
        while (!go.load()) {
        }
        for (uint64_t i = 0; i < kPerThread; ++i) {
            if (!table.insert(record(0x90000000 + i * 256, 2))) thread_failures.fetch_add(1);
            if (i % 2 == 0) {
                AllocationRecord out;
                if (!table.erase(0x90000000 + i * 256, &out) || out.context != 2) thread_failures.fetch_add(1);
            }
        }
    });
    go.store(true);
    std::vector<AllocationRecord> taken;
    auto of_context_1 = [](const AllocationRecord &r) { return r.context == 1; };
    for (int round = 0; round < 200; ++round) table.take_matching(of_context_1, &taken);
    ctx1.join();
    ctx2.join();
    CHECK(thread_failures.load() == 0);
    table.take_matching(of_context_1, &taken);
    std::set<uint64_t> addresses;
    for (const AllocationRecord &r : taken) {
        CHECK(r.context == 1);
        addresses.insert(r.address);
    }
    CHECK(taken.size() == kPerThread);
    CHECK(addresses.size() == kPerThread);
    CHECK(table.live_count() == kPerThread / 2); // context 2's odd records
    uint64_t left = 0;
    table.for_each([&](const AllocationRecord &r) {
        CHECK(r.context == 2);
        ++left;
    });
    CHECK(left == kPerThread / 2);
}

TEST_CASE("live table: an address freed and allocated again in another context is left alone", "[contexts]") {
    static LiveTable table(6);
    REQUIRE(table.insert(record(0x4000, 1)));
    REQUIRE(table.insert(record(0x5000, 1)));
    REQUIRE(table.insert(record(0x6000, 3)));
    std::vector<AllocationRecord> taken;
    bool swapped = false;
    // The predicate runs during the walk and again on each candidate: swap 0x5000 over to context 3
    // in between, as a free and a new allocation at that address would.
    auto pred = [&](const AllocationRecord &r) {
        if (r.address == 0x5000 && !swapped) {
            swapped = true;
            AllocationRecord old;
            REQUIRE(table.erase(0x5000, &old));
            REQUIRE(table.insert(record(0x5000, 3)));
            return true;
        }
        return r.context == 1;
    };
    CHECK(table.take_matching(pred, &taken) == 1);
    REQUIRE(taken.size() == 1);
    CHECK(taken[0].address == 0x4000);
    AllocationRecord r;
    REQUIRE(table.find(0x5000, &r));
    CHECK(r.context == 3);
    CHECK(table.live_count() == 2);
}

TEST_CASE("vmm ledger: memory ends with the last of the release, the unmaps and the retained references",
          "[contexts]") {
    VmmLedger ledger;
    const uint64_t h = 0xcafe;
    ledger.created(h);
    ledger.mapped(h);
    ledger.mapped(h);
    CHECK_FALSE(ledger.begin(h, 1, 0)); // released while mapped twice
    ledger.end(h, 1, 0, true);
    CHECK_FALSE(ledger.begin(h, 0, 1));
    ledger.end(h, 0, 1, true);
    CHECK(ledger.begin(h, 0, 1));       // the last mapping: the memory goes with this call
    ledger.end(h, 0, 1, true);
    CHECK_FALSE(ledger.known(h));

    // A failed call gives back what it began.
    ledger.created(h);
    CHECK(ledger.begin(h, 1, 0));
    ledger.end(h, 1, 0, false);
    CHECK(ledger.known(h));
    CHECK(ledger.begin(h, 1, 0));
    ledger.end(h, 1, 0, true);
    CHECK_FALSE(ledger.known(h));

    ledger.created(h);
    ledger.mapped(h);
    ledger.retained(h);                 // cuMemRetainAllocationHandle
    CHECK_FALSE(ledger.begin(h, 1, 0));
    ledger.end(h, 1, 0, true);
    CHECK_FALSE(ledger.begin(h, 0, 1));
    ledger.end(h, 0, 1, true);
    CHECK(ledger.begin(h, 1, 0));
    ledger.end(h, 1, 0, true);
    // Handles never created here (another tool's, or made before) are not ours to end.
    bool known = true;
    CHECK_FALSE(ledger.begin(0x1234, 1, 0, &known));
    CHECK_FALSE(known);
}

// Two threads remove the two last mappings of one released handle at once, many times over: in
// each round exactly one of them is told the memory ends.
TEST_CASE("vmm ledger: of two concurrent last unmaps, exactly one ends the memory", "[contexts]") {
    VmmLedger ledger;
    for (int round = 0; round < 2000; ++round) {
        const uint64_t h = 0x1000 + round;
        ledger.created(h);
        ledger.mapped(h);
        ledger.mapped(h);
        REQUIRE_FALSE(ledger.begin(h, 1, 0));
        ledger.end(h, 1, 0, true);
        std::atomic<int> ended{0};
        auto unmap = [&] {
            if (ledger.begin(h, 0, 1)) ended.fetch_add(1);
            ledger.end(h, 0, 1, true);
        };
        std::thread a(unmap), b(unmap);
        a.join();
        b.join();
        REQUIRE(ended.load() == 1);
        REQUIRE_FALSE(ledger.known(h));
    }
}
