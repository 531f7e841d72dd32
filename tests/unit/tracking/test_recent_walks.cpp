// Recent walks (lib/tracking/recent_walks.h): a stack captured from the same stack pointer is
// replayed only while every word the walk read still holds, and a replay gives libunwind's frames.
// Captures go through the probe library (tests/support/capture_probe.h), a shared library of its
// own, so that the frames captured are this program's. Each case runs on a new thread: a thread's
// first capture starts with no walks of its own, so the counters move by exact amounts.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "capture_probe.h"


namespace {

using Frames = std::vector<uintptr_t>;
using CaptureFn = uint32_t (*)(uintptr_t *, uint32_t);

struct Counts {
    uint64_t stored, replayed;
};
Counts counts() {
    Counts c{};
    vtp_replay_stats(&c.stored, &c.replayed);
    return c;
}

// Both captures are made from this one call instruction, so their frames must be the same.
__attribute__((noinline)) Frames call_capture(CaptureFn fn, uint32_t max_depth) {
    uintptr_t out[256];
    uint32_t n = fn(out, max_depth);
    asm volatile("" ::: "memory");
    return Frames(out, out + n);
}

struct Taken {
    Frames cached, reference;
    uintptr_t frame_address; // of the function that captured: equal frames, equal stack pointer
};

volatile int g_sink;

// A capture and libunwind's walk, from the bottom of `frames` frames of recursion of
// descend<Tag>: two tags have frames of the same sizes at different return addresses (the store
// of Tag keeps the compiler from folding them into one function).
template <int Tag> __attribute__((noinline)) void descend(int frames, uint32_t max_depth, Taken *t) {
    g_sink = Tag;
    if (frames > 0) {
        descend<Tag>(frames - 1, max_depth, t);
    } else {
        const CaptureFn fns[2] = {vtp_capture, vtp_capture_unwinder};
        Frames got[2];
        for (int k = 0; k < 2; ++k) got[k] = call_capture(fns[k], max_depth);
        t->cached = got[0];
        t->reference = got[1];
        t->frame_address = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    }
    asm volatile("" ::: "memory");
}

template <class F> void on_new_thread(F &&f) { std::thread(std::forward<F>(f)).join(); }

} // namespace

TEST_CASE("recent walks: a stack seen a second time is stored, then replayed with libunwind's frames",
          "[walks]") {
    Counts before{}, after{};
    Taken t[4];
    on_new_thread([&] {
        before = counts();
        for (Taken &x : t) descend<0>(40, 32, &x);
        after = counts();
    });
    // First capture: walked and noted; second: walked again and stored; third and fourth: replayed.
    CHECK(after.stored - before.stored == 1);
    CHECK(after.replayed - before.replayed == 2);
    for (const Taken &x : t) {
        REQUIRE(x.cached.size() == 32);
        CHECK(x.cached == x.reference);
        CHECK(x.cached == t[0].cached);
    }
}

TEST_CASE("recent walks: another call path from the same stack pointer is walked, not replayed", "[walks]") {
    Counts before{}, after{}, last{};
    Taken a[3], b, again;
    on_new_thread([&] {
        for (Taken &x : a) descend<0>(40, 32, &x);
        before = counts();
        descend<1>(40, 32, &b);
        after = counts();
        descend<0>(40, 32, &again); // the first path again: still its own frames, replayed
        last = counts();
    });
    // The case is only meaningful when both paths reach the capture at the same stack pointer.
    REQUIRE(b.frame_address == a[0].frame_address);
    CHECK(after.replayed == before.replayed);
    CHECK(b.cached == b.reference);
    CHECK(b.cached != a[0].cached);
    CHECK(last.replayed - after.replayed == 1);
    CHECK(again.cached == a[0].cached);
}

TEST_CASE("recent walks: a stack shorter than the limit is replayed to its outermost frame", "[walks]") {
    Counts before{}, after{};
    Taken t[3];
    on_new_thread([&] {
        before = counts();
        for (Taken &x : t) descend<0>(2, 32, &x);
        after = counts();
    });
    CHECK(after.replayed - before.replayed == 1);
    for (const Taken &x : t) {
        CHECK(x.cached.size() < 32);
        CHECK(x.cached == x.reference);
    }
}

TEST_CASE("recent walks: a thread does not replay the walks of the thread that had its lane before",
          "[walks]") {
    Taken first[3], next;
    Counts stored{}, before{}, after{};
    on_new_thread([&] {
        for (Taken &x : first) descend<0>(40, 32, &x);
        stored = counts();
    });
    // The next thread takes the lane just given back, and glibc may hand it the same stack.
    on_new_thread([&] {
        before = counts();
        descend<0>(40, 32, &next);
        after = counts();
    });
    CHECK(stored.replayed > 0);
    CHECK(after.replayed == before.replayed);
    CHECK(next.cached == next.reference);
}

TEST_CASE("recent walks: captures deeper than 32 frames are neither stored nor replayed", "[walks]") {
    Counts before{}, after{};
    Taken t[3];
    on_new_thread([&] {
        before = counts();
        for (Taken &x : t) descend<0>(70, 64, &x);
        after = counts();
    });
    CHECK(after.stored == before.stored);
    CHECK(after.replayed == before.replayed);
    for (const Taken &x : t) {
        REQUIRE(x.cached.size() == 64);
        CHECK(x.cached == x.reference);
    }
}
