// monotonic_ns()'s counter line (core/tsc_line.h, core/tsc_clock.h): the line arithmetic on exact
// numbers, a long run of calibrations against a drifting clock, and the real clock of this machine.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>

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
    Line l = next_line(Line{}, kPrevious, kNow, kHold);
    CHECK(l.base_tsc == kNow.tsc);
    CHECK(l.base_ns == kNow.ns);
    CHECK(l.mult == kHalf);
    CHECK(l.max_ticks == 4'000'000'000ull); // 2 s at 0.5 ns per tick
    CHECK(ns_at(l, kNow.tsc + 2'000) == kNow.ns + 1'000);
    CHECK(ns_at(l, kNow.tsc + 3) == kNow.ns + 1); // rounded down
}

TEST_CASE("a line holds from its base for max_ticks, not before and not after") {
    Line l = next_line(Line{}, kPrevious, kNow, kHold);
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
    Line l = next_line(current, kPrevious, kNow, kHold);
    CHECK(l.base_ns == kNow.ns + 1'000);
    // (500,000,000 - 1,000) ns over 1e9 ticks, 32.32: 0.499999 * 2^32 = 2147479353.03
    CHECK(l.mult == 2147479353ull);
    CHECK(ns_at(l, kNow.tsc + 1'000'000'000) == kNow.ns + 500'000'000 - 1);
}

TEST_CASE("a line that runs behind steps forward to the clock") {
    Line current = line_through(kNow.tsc - 1'000'000, kNow.ns - 500'000 - 1'000);
    Line l = next_line(current, kPrevious, kNow, kHold);
    CHECK(l.base_ns == kNow.ns);
    CHECK(l.mult == kHalf);
}

TEST_CASE("a line far ahead is slowed by at most a thousandth of its rate") {
    Line current = line_through(kNow.tsc - 1'000'000, kNow.ns - 500'000 + 10'000'000); // 10 ms ahead
    Line l = next_line(current, kPrevious, kNow, kHold);
    CHECK(l.base_ns == kNow.ns + 10'000'000);
    CHECK(l.mult == kHalf - kHalf / 1000);
}

TEST_CASE("samples out of order or a rate that moved give no line") {
    CHECK(next_line(Line{}, kNow, kPrevious, kHold).mult == 0);
    CHECK(next_line(Line{}, kNow, kNow, kHold).mult == 0);
    // 2% faster than the line in use (the tolerance is 1%).
    Sample faster{kNow.tsc, kPrevious.ns + 510'000'000};
    CHECK(next_line(line_through(kPrevious.tsc, kPrevious.ns), kPrevious, faster, kHold).mult == 0);
    // 0.5% is within it.
    Sample close{kNow.tsc, kPrevious.ns + 502'500'000};
    CHECK(next_line(line_through(kPrevious.tsc, kPrevious.ns), kPrevious, close, kHold).mult != 0);
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
    unsigned lines = 0;
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
        Line next = next_line(line, previous, now, kHold);
        REQUIRE(next.mult != 0);
        if (holds_at(line, tsc)) REQUIRE(next.base_ns >= ns_at(line, tsc));
        line = next;
        ++lines;
        previous = now;
    }
    CHECK(lines == 200);
    CHECK(worst < 5'000); // 3.2 us here: the rate moves by ~5 ppm per period
}

TEST_CASE("this machine's clock: the counter line agrees with clock_gettime") {
    vramtrace::tsc::reset();
    CHECK(std::strcmp(vramtrace::tsc::describe(), "vDSO: not calibrated yet") == 0);
    CHECK(vramtrace::tsc::g_line.mult.load() == 0);
    vramtrace::tsc::calibrate();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    vramtrace::tsc::calibrate();
    const char *how = vramtrace::tsc::describe();
    INFO(how);
    if (std::strncmp(how, "tsc line", 8) != 0) {
        // Not an x86-64 machine whose kernel keeps time by the counter: readings are the vDSO's.
        CHECK(std::strncmp(how, "vDSO: ", 6) == 0);
        CHECK(vramtrace::tsc::g_line.mult.load() == 0);
        return;
    }
    REQUIRE(vramtrace::tsc::g_line.mult.load() != 0);
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
    CHECK(vramtrace::tsc::g_line.mult.load() == 0);
    CHECK(vramtrace::tsc::g_line.seq.load() % 2 == 0);
}
