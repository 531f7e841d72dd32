// The scoped peak of DeviceCounters (vramtrace_scope_reset / vramtrace_scope_stats): the highest
// current bytes since the last reset, leaving the process peak and its composition alone.
#include <catch2/catch.hpp>

#include <cstdint>
#include <thread>
#include <vector>

#include "tracking/device_counters.h"

using vramtrace::DeviceCounters;

TEST_CASE("scope peak: a reset starts from the current bytes", "[scope]") {
    DeviceCounters c;
    c.on_alloc(0, 1000, 1, 10);
    c.on_alloc(0, 500, 2, 20);
    c.on_free(0, 1000, 1);
    CHECK(c.scope_peak(0) == 1500); // no reset yet: since the start
    c.reset_scope();
    CHECK(c.scope_peak(0) == 500);
    c.on_alloc(0, 200, 3, 30);
    c.on_free(0, 200, 3);
    c.on_alloc(0, 100, 3, 40);
    CHECK(c.scope_peak(0) == 700);
    CHECK(c.totals(0).peak_bytes == 1500); // the process peak is untouched
    c.reset_scope();
    CHECK(c.scope_peak(0) == 600);
    CHECK(c.scope_peak(1) == 0);
    c.on_alloc(1, 64, 4, 50);
    CHECK(c.scope_peak(1) == 64);
    CHECK(c.scope_peak(0) == 600);
    uint64_t sum = 0;
    c.for_each_peak_site(0, [&](uint32_t, uint64_t bytes, uint64_t) { sum += bytes; });
    CHECK(sum == 1500);
}

TEST_CASE("scope peak: threads that allocate and free after a reset", "[scope]") {
    DeviceCounters c;
    c.on_alloc(0, 4096, 1, 1);
    c.reset_scope();
    constexpr int kThreads = 4;
    constexpr int kRounds = 20000;
    std::vector<std::thread> threads;
    // Each thread holds at most 3 x 100 bytes at once, so the scoped peak is at most
    // 4096 + 4 x 300; one thread holding its 300 alone is always reached.
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&c, t] {
            for (int i = 0; i < kRounds; ++i) {
                c.on_alloc(0, 100, 2 + t, 1);
                c.on_alloc(0, 100, 2 + t, 1);
                c.on_alloc(0, 100, 2 + t, 1);
                c.on_free(0, 100, 2 + t);
                c.on_free(0, 100, 2 + t);
                c.on_free(0, 100, 2 + t);
            }
        });
    for (auto &th : threads) th.join();
    CHECK(c.totals(0).current_bytes == 4096);
    CHECK(c.scope_peak(0) >= 4096 + 300);
    CHECK(c.scope_peak(0) <= 4096 + kThreads * 300);
    CHECK(c.scope_peak(0) % 100 == 96);
    c.reset_scope();
    CHECK(c.scope_peak(0) == 4096);
}
