// Measurements for the performance docs; hidden (run with: vramtrace_tracking_tests "[perf]").
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <vector>

#include "tracking/live_table.h"
#include "tracking/stack_depot.h"
#include "tracking_test_support.h"

using vramtrace::AllocationRecord;
using vramtrace::LiveTable;
using vramtrace::StackDepot;
using namespace vramtrace::test;

namespace {
double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
} // namespace

TEST_CASE("perf: LiveTable insert+erase pair, single thread", "[.][perf]") {
    for (const uint64_t live : {uint64_t{0}, uint64_t{1000}, uint64_t{100000}}) {
        LiveTable t(16);
        for (uint64_t i = 0; i < live; ++i)
            REQUIRE(t.insert(make_record(device_address(1000000 + i), i + 1, 1)));
        const uint64_t n = 10000000;
        AllocationRecord r = make_record(device_address(0), 1, 1);
        AllocationRecord out;
        const double t0 = now_s();
        for (uint64_t i = 0; i < n; ++i) {
            r.address = device_address(i & 4095);
            r.time_ns = i;
            t.insert(r);
            t.erase(r.address, &out);
        }
        const double t1 = now_s();
        for (uint64_t i = 0; i < n; ++i)
            t.erase(device_address(5000000 + i), &out); // unknown addresses
        const double t2 = now_s();
        WARN("live=" << live << ": insert+erase pair " << (t1 - t0) * 1e9 / n << " ns; erase of unknown address "
                     << (t2 - t1) * 1e9 / n << " ns; longest probe " << t.longest_probe());
        CHECK(t.live_count() == live);
    }
}

TEST_CASE("perf: LiveTable mapped bytes per live entry", "[.][perf]") {
    for (const uint64_t n : {uint64_t{1000}, uint64_t{30000}, uint64_t{32768}, uint64_t{100000}, uint64_t{1000000}}) {
        LiveTable t(16);
        for (uint64_t i = 0; i < n; ++i)
            REQUIRE(t.insert(make_record(device_address(i), i + 1, 1)));
        WARN("live=" << n << ": levels " << t.levels() << ", mapped " << t.mapped_bytes() << " B, "
                     << double(t.mapped_bytes()) / n << " B per live entry");
    }
}

TEST_CASE("perf: StackDepot mapped bytes per unique stack, intern cost", "[.][perf]") {
    for (const uint32_t depth : {16u, 32u, 64u}) {
        for (const uint32_t n : {1000u, 100000u}) {
            StackDepot d;
            std::vector<uintptr_t> frames(depth);
            Rng rng(depth);
            const double t0 = now_s();
            for (uint32_t i = 0; i < n; ++i) {
                for (uint32_t f = 0; f < depth; ++f)
                    frames[f] = 0x400000 + rng.below(1 << 20) * 4;
                d.intern(frames.data(), depth);
            }
            const double t1 = now_s();
            REQUIRE(d.size() == n);
            // Re-intern of a known stack (the common case at every allocation).
            const uint32_t reps = 1000000;
            uint32_t sink = 0;
            const double t2 = now_s();
            for (uint32_t i = 0; i < reps; ++i)
                sink += d.intern(frames.data(), depth);
            const double t3 = now_s();
            WARN("depth " << depth << ", " << n << " stacks: mapped " << d.mapped_bytes() << " B, "
                          << double(d.mapped_bytes()) / n << " B per unique stack; new intern "
                          << (t1 - t0) * 1e9 / n << " ns, known intern " << (t3 - t2) * 1e9 / reps << " ns"
                          << (sink == 0 ? "!" : ""));
        }
    }
}
