// The peak composition of DeviceCounters: what was live, per stack, when a device's tracked bytes
// were highest; the site bytes always sum to the peak.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <map>
#include <thread>
#include <tuple>
#include <vector>

#include "tracking/asymmetric_fence.h"
#include "tracking/device_counters.h"

using vramtrace::DeviceCounters;
using vramtrace::DevicePeakView;

namespace {

struct Composition {
    DevicePeakView view;
    std::map<uint32_t, std::pair<uint64_t, uint64_t>> sites; // stack -> (bytes, count)
    uint64_t sum = 0;
};

Composition read(const DeviceCounters &c, int device) {
    Composition out;
    out.view = c.for_each_peak_site(device, [&](uint32_t stack, uint64_t bytes, uint64_t count) {
        out.sites[stack] = {bytes, count};
        out.sum += bytes;
    });
    return out;
}

} // namespace

TEST_CASE("peak sites: a known sequence on one thread", "[peak]") {
    DeviceCounters c;
    c.on_alloc(0, 100, 1, 10);  // A
    c.on_alloc(0, 300, 2, 20);  // B -> peak 400 at t=20
    c.on_free(0, 300, 2);       // free B
    c.on_alloc(0, 50, 3, 30);   // C (smaller): 150, not a peak
    c.on_alloc(0, 200, 1, 40);  // A again: 350, not a peak
    c.on_alloc(1, 7, 9, 50);    // another device, unaffected
    Composition p = read(c, 0);
    CHECK(p.view.peak_bytes == 400);
    CHECK(p.view.time_ns == 20);
    REQUIRE(p.sites.size() == 2);
    CHECK(p.sites[1] == std::make_pair(uint64_t{100}, uint64_t{1}));
    CHECK(p.sites[2] == std::make_pair(uint64_t{300}, uint64_t{1}));
    CHECK(p.sum == 400);

    // A new, higher peak replaces the composition: A 300 (2), C 50, D 100 = 450.
    c.on_alloc(0, 100, 4, 60);
    p = read(c, 0);
    CHECK(p.view.peak_bytes == 450);
    CHECK(p.view.time_ns == 60);
    REQUIRE(p.sites.size() == 3);
    CHECK(p.sites[1] == std::make_pair(uint64_t{300}, uint64_t{2}));
    CHECK(p.sites[3] == std::make_pair(uint64_t{50}, uint64_t{1}));
    CHECK(p.sites[4] == std::make_pair(uint64_t{100}, uint64_t{1}));

    // Changes after the peak leave it alone (copy-on-write of each touched site).
    c.on_free(0, 100, 1);
    c.on_free(0, 100, 4);
    c.on_alloc(0, 10, 5, 70);
    p = read(c, 0);
    CHECK(p.view.peak_bytes == 450);
    CHECK(p.sites.size() == 3);
    CHECK(p.sum == 450);

    Composition other = read(c, 1);
    CHECK(other.view.peak_bytes == 7);
    REQUIRE(other.sites.size() == 1);
    CHECK(other.sites[9] == std::make_pair(uint64_t{7}, uint64_t{1}));
    CHECK(read(c, 5).sites.empty());
}

TEST_CASE("peak sites: stack 0 and stack ids in far apart chunks", "[peak]") {
    DeviceCounters c;
    const uint32_t far = 5u << DeviceCounters::kChunkLog2 | 17u; // another chunk of the directory
    c.on_alloc(-1, 64, 0, 1);
    c.on_alloc(-1, 32, far, 2);
    c.on_alloc(-1, 16, 0xffffffffu, 3);
    Composition p = read(c, -1);
    CHECK(p.view.peak_bytes == 112);
    REQUIRE(p.sites.size() == 3);
    CHECK(p.sites[0] == std::make_pair(uint64_t{64}, uint64_t{1}));
    CHECK(p.sites[far] == std::make_pair(uint64_t{32}, uint64_t{1}));
    CHECK(p.sites[0xffffffffu] == std::make_pair(uint64_t{16}, uint64_t{1}));
    CHECK(c.dropped_sites() == 0);
}

TEST_CASE("peak sites: concurrent threads, sum of sites equals the peak at every read", "[peak]") {
    // Both sides of the writers' fence: the light one (membarrier, where the kernel has it) and the
    // full one it falls back to. This shows that neither breaks the sums; it cannot show that the
    // light one needs its membarrier: the window it closes (between a writer's flag load and its
    // compare-and-swap) is a few nanoseconds, and a run without the syscall passed here too. The
    // argument for it is in asymmetric_fence.h.
    const bool light = GENERATE(true, false);
    DeviceCounters c;
    vramtrace::asym::set_light_writers_for_testing(light);
    INFO("light writers asked: " << light << ", in use: " << vramtrace::asym::light_writers());
    constexpr int kThreads = 4;
    constexpr int kRounds = 20000;
    std::atomic<bool> stop{false};
    std::atomic<int> bad_reads{0}, reads{0};
    std::thread reader([&] {
        while (!stop.load()) {
            Composition p = read(c, 0);
            if (p.sum != p.view.peak_bytes) bad_reads.fetch_add(1);
            reads.fetch_add(1);
        }
    });
    // The writers start once the reader has read, and each waits halfway for one more read: on a
    // loaded machine the reader may otherwise not run while they write, and check nothing.
    while (reads.load() == 0) std::this_thread::yield();
    const int before = reads.load();
    std::vector<std::thread> writers;
    for (int t = 0; t < kThreads; ++t) {
        writers.emplace_back([&, t] {
            // Each thread holds up to 3 live blocks of its own stacks and frees them in turn.
            uint64_t live[3] = {0, 0, 0};
            uint32_t stack_of[3] = {0, 0, 0};
            for (int i = 0; i < kRounds; ++i) {
                if (i == kRounds / 2)
                    while (reads.load() == before) std::this_thread::yield();
                int k = i % 3;
                if (live[k]) c.on_free(0, live[k], stack_of[k]);
                live[k] = uint64_t(1 + (i * 7 + t) % 97) * 4096;
                stack_of[k] = uint32_t(1 + t * 10 + (i % 5));
                c.on_alloc(0, live[k], stack_of[k], uint64_t(i));
            }
            for (int k = 0; k < 3; ++k)
                if (live[k]) c.on_free(0, live[k], stack_of[k]);
        });
    }
    for (auto &w : writers) w.join();
    stop.store(true);
    reader.join();
    vramtrace::asym::set_light_writers_for_testing(true);
    CHECK(bad_reads.load() == 0);
    CHECK(reads.load() > before); // some reads ran while the writers wrote
    Composition p = read(c, 0);
    CHECK(p.sum == p.view.peak_bytes);
    uint64_t count = 0;
    for (auto &[stack, bc] : p.sites) count += bc.second;
    CHECK(count >= 1);
    CHECK(count <= 3 * kThreads);

    // Now deterministic, on the same counters: everything is freed, so a new allocation pair above
    // the old peak names exactly these two sites.
    uint64_t peak = p.view.peak_bytes;
    c.on_alloc(0, peak, 900, 1000);
    c.on_alloc(0, 1, 901, 1001);
    p = read(c, 0);
    CHECK(p.view.peak_bytes == peak + 1);
    CHECK(p.view.time_ns == 1001);
    REQUIRE(p.sites.size() == 2);
    CHECK(p.sites[900] == std::make_pair(peak, uint64_t{1}));
    CHECK(p.sites[901] == std::make_pair(uint64_t{1}, uint64_t{1}));
    std::map<int, uint64_t> current;
    c.for_each_seen([&](const vramtrace::DeviceTotalsView &d) { current[d.device] = d.current_bytes; });
    CHECK(current[0] == peak + 1);
}

TEST_CASE("peak sites: an allocation freed by another thread leaves exact sums", "[peak]") {
    // Sums are per thread lane and linear: the allocation is counted in one lane, its free in another.
    DeviceCounters c;
    std::thread([&] { c.on_alloc(0, 1000, 3, 10); }).join();
    std::thread([&] {
        c.on_alloc(0, 24, 4, 11);
        c.on_free(0, 1000, 3);
        c.on_alloc(0, 500, 5, 12); // below the peak of 1,024: the composition stays
    }).join();
    Composition p = read(c, 0);
    CHECK(p.view.peak_bytes == 1024);
    CHECK(p.view.time_ns == 11);
    REQUIRE(p.sites.size() == 2);
    CHECK(p.sites[3] == std::make_pair(uint64_t{1000}, uint64_t{1}));
    CHECK(p.sites[4] == std::make_pair(uint64_t{24}, uint64_t{1}));
    vramtrace::DeviceTotalsView t = c.totals(0);
    CHECK(t.current_bytes == 524);
    CHECK(t.allocation_count == 3);
    CHECK(t.free_count == 1);
    CHECK(t.total_allocated_bytes == 1524);
    CHECK(t.total_freed_bytes == 1000);
}

TEST_CASE("peak sites: more threads at once than lanes share the last lane, exactly", "[peak]") {
    // 300 threads alive together (lanes::kLanes = 256): the ones without a lane of their own share
    // one under its lock. Each allocates 1 + its index bytes at its own stack, all meet, then each
    // frees half of its own: the peak is every allocation at once.
    DeviceCounters c;
    constexpr unsigned kThreads = 300;
    std::atomic<unsigned> arrived{0};
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            c.on_alloc(1, 1 + t, 1 + t, t);
            arrived.fetch_add(1);
            while (arrived.load() < kThreads) std::this_thread::yield();
            if (t % 2 == 0) c.on_free(1, 1 + t, 1 + t);
        });
    for (auto &th : threads) th.join();
    Composition p = read(c, 1);
    const uint64_t all = uint64_t{kThreads} * (kThreads + 1) / 2;
    CHECK(p.view.peak_bytes == all);
    CHECK(p.sum == all);
    REQUIRE(p.sites.size() == kThreads);
    bool each = true;
    for (unsigned t = 0; t < kThreads; ++t) each &= p.sites[1 + t] == std::make_pair(uint64_t{1 + t}, uint64_t{1});
    CHECK(each);
    uint64_t odd = 0;
    for (unsigned t = 1; t < kThreads; t += 2) odd += 1 + t;
    CHECK(c.totals(1).current_bytes == odd);
}
