// monotonic_ns()'s counter line (core/tsc_line.h, core/tsc_clock.h): the line arithmetic on exact
// numbers, a long run of calibrations against a drifting clock, and the real clock of this machine.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>
#include <x86intrin.h>

#include "core/clock.h"
#include "core/tsc_clock.h"
#include "core/tsc_line.h"

using vramtrace::tsc::holds_at;
using vramtrace::tsc::Line;
using vramtrace::tsc::next_line;
using vramtrace::tsc::ns_at;
using vramtrace::tsc::Sample;

namespace {

constexpr uint64_t kHalf = uint64_t{1} << 31; // 0.5 ns per tick
constexpr uint64_t kHold = 2'000'000'000ull;
const Sample kPrevious{1'000'000, 10'000};
const Sample kNow{1'000'000 + 1'000'000'000, 10'000 + 500'000'000}; // 1e9 ticks in 500 ms

Line line_through(uint64_t tsc, uint64_t ns) { return Line{tsc, ns, kHalf, 4'000'000'000ull}; }

} // namespace

TEST_CASE("a first line starts at the sample, at the measured rate") {
    Line l = next_line(Line{}, kPrevious, kNow, kNow.tsc, 0, kHold);
    CHECK(l.base_tsc == kNow.tsc);
    CHECK(l.base_ns == kNow.ns);
    CHECK(l.mult == kHalf);
    CHECK(l.max_ticks == 4'000'000'000ull); // 2 s at 0.5 ns per tick
    CHECK(ns_at(l, kNow.tsc + 2'000) == kNow.ns + 1'000);
    CHECK(ns_at(l, kNow.tsc + 3) == kNow.ns + 1); // rounded down
}

TEST_CASE("a line holds from its base for max_ticks, not before and not after") {
    Line l = next_line(Line{}, kPrevious, kNow, kNow.tsc, 0, kHold);
    CHECK(holds_at(l, kNow.tsc));
    CHECK(holds_at(l, kNow.tsc + 4'000'000'000ull));
    CHECK_FALSE(holds_at(l, kNow.tsc + 4'000'000'001ull));
    CHECK_FALSE(holds_at(l, kNow.tsc - 1));
    CHECK_FALSE(holds_at(Line{}, kNow.tsc));
}

TEST_CASE("a line that runs ahead is slowed to meet the clock one period later, never stepped back") {
    // The line in use stands 1,000 ns ahead of CLOCK_MONOTONIC at the new sample.
    Line current = line_through(kNow.tsc - 1'000'000, kNow.ns - 500'000 + 1'000);
    REQUIRE(ns_at(current, kNow.tsc) == kNow.ns + 1'000);
    Line l = next_line(current, kPrevious, kNow, kNow.tsc, 0, kHold);
    CHECK(l.base_ns == kNow.ns + 1'000);
    // (500,000,000 - 1,000) ns over 1e9 ticks, 32.32: 0.499999 * 2^32 = 2147479353.03
    CHECK(l.mult == 2147479353ull);
    CHECK(ns_at(l, kNow.tsc + 1'000'000'000) == kNow.ns + 500'000'000 - 1);
}

TEST_CASE("a line that runs behind steps forward to the clock") {
    Line current = line_through(kNow.tsc - 1'000'000, kNow.ns - 500'000 - 1'000);
    Line l = next_line(current, kPrevious, kNow, kNow.tsc, 0, kHold);
    CHECK(l.base_ns == kNow.ns);
    CHECK(l.mult == kHalf);
}

TEST_CASE("a line far ahead is slowed by at most a thousandth of its rate") {
    Line current = line_through(kNow.tsc - 1'000'000, kNow.ns - 500'000 + 10'000'000); // 10 ms ahead
    Line l = next_line(current, kPrevious, kNow, kNow.tsc, 0, kHold);
    CHECK(l.base_ns == kNow.ns + 10'000'000);
    CHECK(l.mult == kHalf - kHalf / 1000);
}

TEST_CASE("a line published after its sample starts at the publish counter, at or above the line in use") {
    // The line in use runs 5 us ahead at the sample, and the reporter publishes 1 ms of ticks later.
    Line current = line_through(kNow.tsc - 1'000'000, kNow.ns - 500'000 + 5'000);
    const uint64_t at = kNow.tsc + 2'000'000;
    Line l = next_line(current, kPrevious, kNow, at, 0, kHold);
    CHECK(l.base_tsc == at);
    CHECK(l.base_ns == ns_at(current, at));
    CHECK(l.base_ns == kNow.ns + 1'005'000);
    // Slowed to meet CLOCK_MONOTONIC 1e9 ticks after the sample: (500,000,000 - 1,005,000) ns over
    // 998,000,000 ticks, 32.32: 0.49999499 * 2^32 = 2147462130.6
    CHECK(l.mult == 2147462130ull);
    for (uint64_t later : {0ull, 1ull, 1000ull, 998'000'000ull}) CHECK(ns_at(l, at + later) >= ns_at(current, at));
}

TEST_CASE("a floor lifts the next line: a dropped line's times are not undercut") {
    const uint64_t floor = kNow.ns + 9'000'000; // the dropped line had reached 9 ms past the sample
    Line l = next_line(Line{}, kPrevious, kNow, kNow.tsc, floor, kHold);
    CHECK(l.base_ns == floor);
    CHECK(l.mult == kHalf - kHalf / 1000); // as slow as allowed, to let CLOCK_MONOTONIC catch up
    // Without a floor, the same samples start the line at the sample.
    CHECK(next_line(Line{}, kPrevious, kNow, kNow.tsc, 0, kHold).base_ns == kNow.ns);
}

TEST_CASE("samples out of order or a rate that moved give no line") {
    CHECK(next_line(Line{}, kNow, kPrevious, kPrevious.tsc, 0, kHold).mult == 0);
    CHECK(next_line(Line{}, kNow, kNow, kNow.tsc, 0, kHold).mult == 0);
    // 2% faster than the line in use (the tolerance is 1%).
    Sample faster{kNow.tsc, kPrevious.ns + 510'000'000};
    CHECK(next_line(line_through(kPrevious.tsc, kPrevious.ns), kPrevious, faster, faster.tsc, 0, kHold).mult == 0);
    // 0.5% is within it.
    Sample close{kNow.tsc, kPrevious.ns + 502'500'000};
    CHECK(next_line(line_through(kPrevious.tsc, kPrevious.ns), kPrevious, close, close.tsc, 0, kHold).mult != 0);
}

TEST_CASE("calibrations every 500 ms against a drifting, jittery clock: never back, within 5 us") {
    // The "true" CLOCK_MONOTONIC runs at 1/2.6 ns per tick (2.6 GHz) and its rate wanders by up to
    // 20 ppm over 13 s (NTP's slewing); each sample is off by up to 40 ns (the gap between two vDSO
    // reads).
    auto truth = [](uint64_t tsc) {
        const double t = static_cast<double>(tsc), wave = 2.6e10 / (2 * 3.141592653589793);
        return static_cast<uint64_t>(t / 2.6 + 20e-6 * wave * (1 - std::cos(t / wave)) / 2.6);
    };
    const uint64_t period = 1'300'000'000ull; // 500 ms of ticks
    uint64_t tsc = 5'000'000'000ull;
    Sample previous{tsc, truth(tsc)};
    Line line;
    uint64_t last = 0, worst = 0;
    for (int k = 1; k <= 200; ++k) {
        // Readings across the period before the calibration, on the line in use.
        for (uint64_t step = 0; step < period; step += period / 97) {
            const uint64_t at = tsc + step;
            if (!holds_at(line, at)) continue;
            const uint64_t ns = ns_at(line, at);
            REQUIRE(ns >= last);
            last = ns;
            const uint64_t want = truth(at);
            const uint64_t err = ns > want ? ns - want : want - ns;
            if (err > worst) worst = err;
        }
        tsc += period;
        const uint64_t jitter = (static_cast<uint64_t>(k) * 2654435761u) % 81;
        Sample now{tsc, truth(tsc) + jitter - 40};
        Line next = next_line(line, previous, now, now.tsc, 0, kHold);
        REQUIRE(next.mult != 0);
        if (holds_at(line, tsc)) REQUIRE(next.base_ns >= ns_at(line, tsc));
        line = next;
        previous = now;
    }
    CHECK(worst < 5'000); // 3.2 us here: the rate moves by ~5 ppm per period
}

namespace {

// The line this machine fits, or false when it keeps to the vDSO (then checks that it says why).
bool fit_here() {
    vramtrace::tsc::reset();
    vramtrace::tsc::g_line.floor_ns.store(0);
    CHECK(std::strcmp(vramtrace::tsc::describe(), "vDSO: not calibrated yet") == 0);
    vramtrace::tsc::calibrate();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    vramtrace::tsc::calibrate();
    const char *how = vramtrace::tsc::describe();
    INFO(how);
    if (std::strncmp(how, "tsc line, ", 10) == 0) return true;
    // Not an x86-64 machine whose kernel keeps time by the counter: readings are the vDSO's.
    CHECK(std::strncmp(how, "vDSO: ", 6) == 0);
    CHECK(vramtrace::tsc::g_line.copy[0].mult.load() == 0);
    return false;
}

} // namespace

TEST_CASE("this machine's clock: the counter line agrees with clock_gettime") {
    if (!fit_here()) return;
    uint64_t last = 0, worst = 0;
    for (int i = 0; i < 200'000; ++i) {
        const uint64_t before = vramtrace::vdso_monotonic_ns();
        const uint64_t t = vramtrace::monotonic_ns();
        const uint64_t after = vramtrace::vdso_monotonic_ns();
        REQUIRE(t >= last);
        last = t;
        const uint64_t off = t < before ? before - t : t > after ? t - after : 0;
        if (off > worst) worst = off;
    }
    INFO("worst distance outside the two vDSO readings: " << worst << " ns");
    CHECK(worst < 20'000);
    vramtrace::tsc::reset();
    CHECK(vramtrace::tsc::g_line.copy[0].mult.load() == 0);
    CHECK(vramtrace::tsc::g_line.copy[1].mult.load() == 0);
    CHECK(vramtrace::tsc::g_line.seq.load() % 2 == 0);
    vramtrace::tsc::g_line.floor_ns.store(0);
}

TEST_CASE("this machine's clock: no reader steps back while the line is refitted every 200 us") {
    if (!fit_here()) return;
    std::atomic<bool> stop{false};
    std::thread writer([&] {
        while (!stop.load(std::memory_order_relaxed)) {
            const uint64_t until = vramtrace::vdso_monotonic_ns() + 200'000;
            while (vramtrace::vdso_monotonic_ns() < until) {
            }
            vramtrace::tsc::calibrate();
        }
    });
    std::atomic<uint64_t> steps_back{0}, reads{0};
    auto reader = [&] {
        uint64_t last = 0, back = 0, n = 0;
        const uint64_t end = vramtrace::vdso_monotonic_ns() + 700'000'000ull;
        while (vramtrace::vdso_monotonic_ns() < end)
            for (int i = 0; i < 10'000; ++i, ++n) {
                const uint64_t t = vramtrace::monotonic_ns();
                back += t < last;
                last = t;
            }
        steps_back += back;
        reads += n;
    };
    // More readers than cores, so that readers are preempted, some between reading the line and
    // reading the counter while the writer publishes the next line.
    std::vector<std::thread> others;
    for (unsigned i = 0; i < std::thread::hardware_concurrency(); ++i) others.emplace_back(reader);
    reader();
    for (std::thread &t : others) t.join();
    stop = true;
    writer.join();
    INFO(reads.load() << " readings; " << vramtrace::tsc::describe());
    CHECK(reads.load() > 1'000'000);
    CHECK(steps_back.load() == 0);
    vramtrace::tsc::reset();
    vramtrace::tsc::g_line.floor_ns.store(0);
}

TEST_CASE("this machine's clock: an expired line and a reset line leave no reading below their end") {
    if (!fit_here()) return;
    using vramtrace::tsc::publish;
    // A line 5 ms ahead of CLOCK_MONOTONIC that expired 1,000 ticks after its base, 2,000 ago.
    Line ahead;
    ahead.base_tsc = __rdtsc() - 2'000;
    ahead.base_ns = vramtrace::vdso_monotonic_ns() + 5'000'000;
    ahead.mult = vramtrace::tsc::g_line.copy[0].mult.load();
    ahead.max_ticks = 1'000;
    publish(ahead);
    const uint64_t end = ns_at(ahead, ahead.base_tsc + ahead.max_ticks);
    CHECK(vramtrace::monotonic_ns() == end); // the vDSO is 5 ms behind: the line's end stands
    // The same line, still holding: a reset (a fork child's start) keeps readings at or above it.
    ahead.max_ticks = 4'000'000'000ull;
    publish(ahead);
    const uint64_t before_reset = vramtrace::monotonic_ns();
    vramtrace::tsc::reset();
    CHECK(vramtrace::tsc::g_line.floor_ns.load() >= before_reset);
    CHECK(vramtrace::monotonic_ns() >= before_reset);
    const uint64_t lifted = vramtrace::monotonic_ns();
    CHECK(lifted < vramtrace::vdso_monotonic_ns() + 6'000'000);
    vramtrace::tsc::g_line.floor_ns.store(0);
    const uint64_t unlifted = vramtrace::monotonic_ns();
    CHECK(unlifted <= vramtrace::vdso_monotonic_ns());
}
