// LiveTable: single-threaded contracts, growth across levels, tombstone reuse.
#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tracking/live_table.h"
#include "tracking_test_support.h"

using vramtrace::AllocationRecord;
using vramtrace::LiveTable;
using vramtrace::MemoryKind;
using namespace vramtrace::test;

namespace {

// Mirrors the level layout in live_table.cpp: a 1216-byte header (19 lines: the fixed fields, 16
// counter stripes, the estimate, the longest probe), then 8 bytes of key and 48 bytes of record per
// slot, one probe-bound byte per 8 slots, rounded up to whole pages.
uint64_t level_bytes(uint64_t slots) {
    const uint64_t raw = 1216 + slots * (8 + 48) + slots / 8;
    return (raw + 4095) / 4096 * 4096;
}

std::unordered_map<uint64_t, AllocationRecord> collect(const LiveTable &t, uint64_t *visits) {
    std::unordered_map<uint64_t, AllocationRecord> seen;
    *visits = 0;
    t.for_each([&](const AllocationRecord &r) {
        ++*visits;
        seen.emplace(r.address, r);
    });
    return seen;
}

} // namespace

TEST_CASE("LiveTable: insert, find and erase one record", "[live_table]") {
    LiveTable t(4);
    CHECK(t.levels() == 1);
    CHECK(t.live_count() == 0);

    AllocationRecord r;
    r.address = 0x7f0000001000;
    r.size = 1 << 20;
    r.stream = 0xabc;
    r.time_ns = 123456789;
    r.stack_id = 7;
    r.thread_id = 4242;
    r.device = vramtrace::kHostDevice;
    r.kind = MemoryKind::HostPinned;
    r.api = 17;
    REQUIRE(t.insert(r));
    CHECK(t.live_count() == 1);

    AllocationRecord got;
    REQUIRE(t.find(r.address, &got));
    CHECK(same(got, r));
    CHECK(t.find(r.address, nullptr));
    CHECK(t.live_count() == 1); // find does not remove

    AllocationRecord erased;
    REQUIRE(t.erase(r.address, &erased));
    CHECK(same(erased, r));
    CHECK(t.live_count() == 0);
    CHECK_FALSE(t.find(r.address, &got));
    CHECK_FALSE(t.erase(r.address, &erased));
    CHECK(t.dropped() == 0);

    // The same address comes back (the allocator reused it) with different content.
    AllocationRecord again = make_record(r.address, 99, 5);
    REQUIRE(t.insert(again));
    REQUIRE(t.find(r.address, &got));
    CHECK(same(got, again));
    REQUIRE(t.erase(r.address, nullptr)); // out may be null
    CHECK(t.live_count() == 0);
}

TEST_CASE("LiveTable: many records, every field round-trips", "[live_table]") {
    LiveTable t(10);
    const uint64_t n = 400; // stays within the first level (1024 slots, half = 512)
    for (uint64_t i = 0; i < n; ++i)
        REQUIRE(t.insert(make_record(device_address(i), i + 1, static_cast<uint32_t>(i % 7))));
    CHECK(t.live_count() == n);
    CHECK(t.levels() == 1);
    for (uint64_t i = 0; i < n; ++i) {
        AllocationRecord got;
        REQUIRE(t.find(device_address(i), &got));
        CHECK(same(got, make_record(device_address(i), i + 1, static_cast<uint32_t>(i % 7))));
    }
    for (uint64_t i = 0; i < n; i += 2) {
        AllocationRecord got;
        REQUIRE(t.erase(device_address(i), &got));
        CHECK(same(got, make_record(device_address(i), i + 1, static_cast<uint32_t>(i % 7))));
    }
    CHECK(t.live_count() == n / 2);
    for (uint64_t i = 0; i < n; ++i)
        CHECK(t.find(device_address(i), nullptr) == (i % 2 == 1));
}

TEST_CASE("LiveTable: erase and find of unknown addresses", "[live_table]") {
    LiveTable t(6);
    AllocationRecord out;
    // Empty table.
    CHECK_FALSE(t.erase(0x1000, &out));
    CHECK_FALSE(t.find(0x1000, &out));
    CHECK_FALSE(t.erase(0, &out)); // 0 is never live
    CHECK(t.live_count() == 0);

    for (uint64_t i = 0; i < 20; ++i)
        REQUIRE(t.insert(make_record(device_address(i), i + 1, 1)));
    // Unknown addresses next to, between and far from live ones.
    for (uint64_t i = 20; i < 2000; ++i) {
        CHECK_FALSE(t.erase(device_address(i), &out));
        CHECK_FALSE(t.erase(device_address(i) + 8, &out));
        CHECK_FALSE(t.find(device_address(i), &out));
    }
    CHECK_FALSE(t.erase(~uint64_t{0}, &out)); // reserved key values are never live
    CHECK(t.live_count() == 20);
    for (uint64_t i = 0; i < 20; ++i)
        CHECK(t.find(device_address(i), nullptr));
    CHECK(t.dropped() == 0);
}

TEST_CASE("LiveTable: address 0 and reserved keys are refused and counted as dropped", "[live_table]") {
    LiveTable t(4);
    AllocationRecord r = make_record(0, 1, 1);
    CHECK_FALSE(t.insert(r));
    r.address = ~uint64_t{0};
    CHECK_FALSE(t.insert(r));
    CHECK(t.dropped() == 2);
    CHECK(t.live_count() == 0);
}

TEST_CASE("LiveTable: for_each visits exactly the live set", "[live_table]") {
    LiveTable t(5); // 32 slots: the 3000 records below spread over 8 levels (16 + 32 + ... + 2048)
    const uint64_t n = 3000;
    for (uint64_t i = 0; i < n; ++i)
        REQUIRE(t.insert(make_record(device_address(i), 1000 + i, 3)));
    // Erase every third record (from all levels).
    for (uint64_t i = 0; i < n; i += 3)
        REQUIRE(t.erase(device_address(i), nullptr));
    const uint64_t expected = n - (n + 2) / 3;
    CHECK(t.live_count() == expected);
    CHECK(t.levels() == 8);

    uint64_t visits = 0;
    auto seen = collect(t, &visits);
    CHECK(visits == expected); // no record visited twice
    REQUIRE(seen.size() == expected);
    for (uint64_t i = 0; i < n; ++i) {
        auto it = seen.find(device_address(i));
        if (i % 3 == 0) {
            CHECK(it == seen.end());
        } else {
            REQUIRE(it != seen.end());
            CHECK(same(it->second, make_record(device_address(i), 1000 + i, 3)));
        }
    }

    // Erase everything: the walk sees nothing.
    for (uint64_t i = 0; i < n; ++i)
        CHECK(t.erase(device_address(i), nullptr) == (i % 3 != 0));
    CHECK(t.live_count() == 0);
    collect(t, &visits);
    CHECK(visits == 0);
}

TEST_CASE("LiveTable: grows through many levels and every entry stays findable", "[live_table]") {
    // 16 slots in the first level; each level takes entries until half full, then the next (twice
    // as large) is published. 1M entries need levels of 16 .. 2^20 slots: 17 levels, whose first 16
    // hold 8 * (2^16 - 1) = 524280 entries. (Under TSan: 200000 entries, 15 levels.)
    LiveTable t(4);
    const uint64_t n = kUnderTsan ? 200000 : 1000000;
    const unsigned expected_levels = kUnderTsan ? 15 : 17;
    uint64_t bad = 0;
    for (uint64_t i = 0; i < n; ++i)
        if (!t.insert(make_record(device_address(i), i + 1, 9)))
            ++bad;
    CHECK(bad == 0);
    CHECK(t.live_count() == n);
    CHECK(t.dropped() == 0);
    CHECK(t.levels() == expected_levels);
    uint64_t capacity_of_full_levels = 0; // entries the levels before the newest took
    for (unsigned l = 0; l + 1 < expected_levels; ++l)
        capacity_of_full_levels += uint64_t{8} << l;
    CHECK(capacity_of_full_levels < n);
    CHECK(capacity_of_full_levels + (uint64_t{8} << (expected_levels - 1)) >= n);
    uint64_t bytes = 0;
    for (unsigned l = 0; l < expected_levels; ++l)
        bytes += level_bytes(uint64_t{16} << l);
    CHECK(t.mapped_bytes() == bytes);
    CHECK(t.longest_probe() <= LiveTable::kProbeLimit);

    for (uint64_t i = 0; i < n; ++i) {
        AllocationRecord got;
        if (!t.find(device_address(i), &got) || !same(got, make_record(device_address(i), i + 1, 9)))
            ++bad;
    }
    CHECK(bad == 0);

    uint64_t visits = 0;
    uint64_t inconsistent = 0;
    t.for_each([&](const AllocationRecord &r) {
        ++visits;
        inconsistent += consistent(r) ? 0 : 1;
    });
    CHECK(visits == n);
    CHECK(inconsistent == 0);

    // Erase in an order unrelated to insertion (odd then even), checking each copy.
    for (uint64_t parity = 1; parity <= 2; ++parity) {
        for (uint64_t i = parity % 2; i < n; i += 2) {
            AllocationRecord got;
            if (!t.erase(device_address(i), &got) || !same(got, make_record(device_address(i), i + 1, 9)))
                ++bad;
        }
    }
    CHECK(bad == 0);
    CHECK(t.live_count() == 0);
    CHECK(t.levels() == expected_levels); // levels are never removed
    CHECK(t.mapped_bytes() == bytes); // nor unmapped
}

TEST_CASE("LiveTable: tombstones are reused, probes stay bounded under churn", "[live_table]") {
    // 4096 slots, 1900 live (46%): 2M allocate/free cycles with never-seen-before addresses. Without
    // tombstone reuse the level would run out of EMPTY slots after ~2200 inserts and the table would
    // grow; with reuse it must stay one level, with no drop, and short probes.
    LiveTable t(12);
    const uint64_t mapped = t.mapped_bytes();
    CHECK(mapped == level_bytes(4096));
    const uint64_t live = 1900;
    const uint64_t cycles = kUnderTsan ? 200000 : 2000000;

    std::vector<std::pair<uint64_t, uint64_t>> held; // (address, serial)
    uint64_t next_addr = 0;
    uint64_t serial = 0;
    for (uint64_t i = 0; i < live; ++i) {
        held.emplace_back(device_address(next_addr++), ++serial);
        REQUIRE(t.insert(make_record(held.back().first, held.back().second, 2)));
    }
    Rng rng(42);
    uint64_t bad = 0;
    for (uint64_t c = 0; c < cycles; ++c) {
        const size_t k = rng.below(held.size());
        AllocationRecord got;
        if (!t.erase(held[k].first, &got) || !same(got, make_record(held[k].first, held[k].second, 2)))
            ++bad;
        held[k] = {device_address(next_addr++), ++serial};
        if (!t.insert(make_record(held[k].first, held[k].second, 2)))
            ++bad;
    }
    CHECK(bad == 0);
    CHECK(t.levels() == 1);
    CHECK(t.mapped_bytes() == mapped);
    CHECK(t.dropped() == 0);
    CHECK(t.live_count() == live);
    const uint32_t longest = t.longest_probe();
    CHECK(longest <= LiveTable::kProbeLimit);
    WARN("longest insert probe after " << cycles << " churn cycles: " << longest);

    for (const auto &[addr, s] : held) {
        AllocationRecord got;
        REQUIRE(t.find(addr, &got));
        CHECK(same(got, make_record(addr, s, 2)));
    }
    uint64_t visits = 0;
    auto seen = collect(t, &visits);
    CHECK(visits == live);
    CHECK(seen.size() == live);
    // Frees of addresses that were live once and of never-seen ones fail.
    for (uint64_t i = 0; i < 1000; ++i) {
        CHECK_FALSE(t.erase(device_address(i), nullptr));
        CHECK_FALSE(t.erase(device_address(next_addr + i), nullptr));
    }
    CHECK(t.live_count() == live);
}

TEST_CASE("LiveTable: a level past half full sends inserts to the next level", "[live_table]") {
    LiveTable t(6); // 64 slots
    for (uint64_t i = 0; i < 32; ++i)
        REQUIRE(t.insert(make_record(device_address(i), i + 1, 1)));
    CHECK(t.levels() == 1);
    REQUIRE(t.insert(make_record(device_address(32), 33, 1)));
    CHECK(t.levels() == 2);
    CHECK(t.mapped_bytes() == level_bytes(64) + level_bytes(128));
    // Erasing from the old level lets no new insert go back there, but everything stays findable.
    for (uint64_t i = 0; i < 16; ++i)
        REQUIRE(t.erase(device_address(i), nullptr));
    for (uint64_t i = 100; i < 150; ++i)
        REQUIRE(t.insert(make_record(device_address(i), i + 1, 1)));
    CHECK(t.levels() == 2);
    CHECK(t.live_count() == 33 - 16 + 50);
    for (uint64_t i = 16; i <= 32; ++i)
        CHECK(t.find(device_address(i), nullptr));
    for (uint64_t i = 100; i < 150; ++i)
        CHECK(t.find(device_address(i), nullptr));
}

namespace {

// Virtual size of this process in bytes (first field of /proc/self/statm, in pages).
uint64_t current_vm_bytes() {
    FILE *f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr)
        return 0;
    unsigned long pages = 0;
    const int got = std::fscanf(f, "%lu", &pages);
    std::fclose(f);
    return got == 1 ? uint64_t{pages} * 4096 : 0;
}

} // namespace

TEST_CASE("LiveTable: when no level can be mapped, inserts are dropped and counted", "[live_table]") {
    if (kUnderShadowSanitizer) {
        WARN("skipped: an address-space limit would break the sanitizer's own mappings");
        return;
    }
    LiveTable t(4);
    const uint64_t attempts = 300000;
    std::vector<char> ok(attempts, 0); // allocated before the limit is lowered

    // Leave the table about 2 MiB of address space: levels up to 2^15 slots (1.8 MiB) fit, nothing
    // bigger. Nothing else may allocate while the limit is in force (no Catch macros in between).
    rlimit saved{};
    REQUIRE(getrlimit(RLIMIT_AS, &saved) == 0);
    const uint64_t vm = current_vm_bytes();
    REQUIRE(vm != 0);
    rlimit tight = saved;
    tight.rlim_cur = vm + (2u << 20);
    REQUIRE(setrlimit(RLIMIT_AS, &tight) == 0);
    uint64_t inserted = 0;
    for (uint64_t i = 0; i < attempts; ++i) {
        ok[i] = t.insert(make_record(device_address(i), i + 1, 4)) ? 1 : 0;
        inserted += ok[i];
    }
    const int restored = setrlimit(RLIMIT_AS, &saved);
    REQUIRE(restored == 0);

    const unsigned levels = t.levels();
    INFO("levels " << levels << ", inserted " << inserted << ", dropped " << t.dropped());
    CHECK(levels >= 5);
    CHECK(levels <= 13);
    CHECK(inserted < attempts);
    CHECK(t.dropped() == attempts - inserted);
    CHECK(t.live_count() == inserted);
    // The newest level kept taking inserts beyond half full (better than dropping them) until its
    // probes ran past the limit.
    const uint64_t newest_slots = uint64_t{16} << (levels - 1);
    const uint64_t in_older_levels = 8 * ((uint64_t{1} << (levels - 1)) - 1);
    CHECK(inserted - in_older_levels > newest_slots / 2);
    CHECK(inserted - in_older_levels <= newest_slots);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < attempts; ++i)
        if (t.find(device_address(i), nullptr) != (ok[i] != 0))
            ++bad;
    CHECK(bad == 0);
    uint64_t visits = 0;
    t.for_each([&](const AllocationRecord &) { ++visits; });
    CHECK(visits == inserted);
    // Once memory is back, growth resumes.
    CHECK(t.insert(make_record(device_address(attempts), 1, 4)));
    CHECK(t.levels() == levels + 1);
}
