// Recent walks (lib/tracking/recent_walks.h): a stack captured from the same stack pointer is
// replayed only while every word the walk read still holds, and a replay gives libunwind's frames.
// Captures go through the probe library (tests/support/capture_probe.h), a shared library of its
// own, so that the frames captured are this program's. Each case runs on a new thread: a thread's
// first capture starts with no walks of its own, so the counters move by exact amounts.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <pthread.h>
#include <thread>
#include <vector>

#include "capture_probe.h"
#include "tracking/recent_walks.h"
#include "tracking/stack_words.h"
#include "tracking/startup_code.h"


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

// Runs f on a new thread whose stack is `stack` (so that two threads in turn have the same stack
// addresses, as when glibc reuses a freed thread's stack).
template <class F> bool on_thread_with_stack(std::vector<char> &stack, F &f) {
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return false;
    bool ok = pthread_attr_setstack(&attr, stack.data(), stack.size()) == 0;
    pthread_t th;
    ok = ok && pthread_create(
                   &th, &attr, [](void *p) -> void * { (*static_cast<F *>(p))(); return nullptr; }, &f) == 0;
    pthread_attr_destroy(&attr);
    return ok && pthread_join(th, nullptr) == 0;
}

} // namespace

TEST_CASE("recent walks: a stack seen a second time is stored, then replayed with libunwind's frames",
          "[walks]") {
    Counts before{}, after{};
    Taken t[4];
    on_new_thread([&] {
        before = counts();
#pragma GCC unroll 1
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
#pragma GCC unroll 1
        for (Taken &x : a) descend<0>(40, 32, &x);
        before = counts();
        descend<1>(40, 32, &b);
        after = counts();
        descend<0>(40, 32, &again); // the first path again: still its own frames, replayed
        last = counts();
    });
    // The case is only meaningful when both paths reach the capture at the same stack pointer.
    // ThreadSanitizer's instrumentation gives the two instantiations frames of different sizes
    // (16 bytes a level apart with GCC 12), so there the case cannot be set up.
#if defined(__SANITIZE_THREAD__)
    if (b.frame_address != a[0].frame_address) {
        WARN("the two call paths reach the capture at different stack pointers under TSan: not checked");
        return;
    }
#endif
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
#pragma GCC unroll 1
        for (Taken &x : t) descend<0>(2, 32, &x);
        after = counts();
    });
    CHECK(after.replayed - before.replayed == 1);
    for (const Taken &x : t) {
        REQUIRE(x.reference.size() < 32); // the case's premise: the stack ends before the limit
        CHECK(x.cached == x.reference);
    }
}

TEST_CASE("recent walks: a thread does not replay the walks of the thread that had its lane before",
          "[walks]") {
    // Two threads in turn on the same stack memory, running the same code: the second takes the
    // lane the first gave back and reaches the capture at the same stack pointer.
    std::vector<char> stack(1 << 20);
    Taken taken[2][3];
    Counts delta[2] = {};
    int phase = 0, captures = 3;
    auto body = [&] {
        Counts start = counts();
#pragma GCC unroll 1
        for (int i = 0; i < captures; ++i) descend<0>(40, 32, &taken[phase][i]);
        Counts end = counts();
        delta[phase] = Counts{end.stored - start.stored, end.replayed - start.replayed};
    };
    REQUIRE(on_thread_with_stack(stack, body));
    phase = 1;
    captures = 1;
    REQUIRE(on_thread_with_stack(stack, body));
    CHECK(delta[0].stored == 1);
    CHECK(delta[0].replayed == 1);
    REQUIRE(taken[1][0].frame_address == taken[0][0].frame_address); // the same stack pointer
    CHECK(delta[1].replayed == 0);
    CHECK(taken[1][0].cached == taken[1][0].reference);
}

TEST_CASE("recent walks: captures deeper than 32 frames are neither stored nor replayed", "[walks]") {
    Counts before{}, after{};
    Taken t[3];
    on_new_thread([&] {
        before = counts();
#pragma GCC unroll 1
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

TEST_CASE("recent walks: a walk stored under one limit is not replayed under another", "[walks]") {
    Counts before{}, after{};
    Taken deep[3], shallow;
    on_new_thread([&] {
#pragma GCC unroll 1
        for (Taken &x : deep) descend<0>(40, 32, &x);
        before = counts();
        descend<0>(40, 8, &shallow);
        after = counts();
    });
    CHECK(after.replayed == before.replayed);
    REQUIRE(shallow.reference.size() == 8);
    CHECK(shallow.cached == shallow.reference);
}

namespace {
Counts g_at_exit_before, g_at_exit_after;
Taken g_at_exit_taken;
void capture_at_thread_exit(void *) {
    g_at_exit_before = counts();
#pragma GCC unroll 1
    for (int i = 0; i < 4; ++i) descend<0>(4, 32, &g_at_exit_taken);
    g_at_exit_after = counts();
}
} // namespace

TEST_CASE("recent walks: a thread whose lane was given back at exit keeps no walks", "[walks]") {
    // A key made after the probe's lanes key: its destructor runs after the lane went back, as a
    // thread_local destructor that frees device memory would.
    Taken first;
    descend<0>(4, 32, &first); // the probe makes its lanes key (at a lane's first taking) before ours
    pthread_key_t key;
    REQUIRE(pthread_key_create(&key, &capture_at_thread_exit) == 0);
    on_new_thread([&] {
        Taken warm;
        descend<0>(4, 32, &warm); // takes a lane
        pthread_setspecific(key, &key);
    });
    pthread_key_delete(key);
    CHECK(g_at_exit_after.stored == g_at_exit_before.stored);
    CHECK(g_at_exit_after.replayed == g_at_exit_before.replayed);
    CHECK(g_at_exit_taken.cached == g_at_exit_taken.reference);
}

constexpr uint64_t kOwner = 1, kOtherOwner = 2; // two depots' instance()

TEST_CASE("recent walks: a stored walk is refused when any word it read has changed", "[walks]") {
    using namespace vramtrace;
    using namespace vramtrace::walks;
    // A three-step walk written down by hand over a fake stack and fake code, as its list of reads:
    // step 0 (the rule at ip0, its return-address slot, the frame pointer it restores), step 1
    // (its rule, its frame address from that frame pointer, its slot), step 2 (terminal: its rule).
    // The fake code lies outside any object loaded with the process, so its words are checked.
    alignas(16) static uint64_t stack[64];
    alignas(8) static unsigned char code[64];
    for (int i = 0; i < 64; ++i) code[i] = static_cast<unsigned char>(i * 7 + 1);
    const uint64_t sp0 = reinterpret_cast<uint64_t>(&stack[0]);
    const uint64_t ip0 = reinterpret_cast<uint64_t>(&code[9]), ip1 = reinterpret_cast<uint64_t>(&code[17]),
                   ip2 = reinterpret_cast<uint64_t>(&code[25]), bp0 = 0x1234, saved_bp = 0x5678;
    stack[2] = ip1;
    stack[3] = saved_bp;
    stack[6] = ip2;
    bool refused[10] = {};
    int changes = 0;
    bool replayed = false, replayed_again = false, nested_refused = false;
    uintptr_t frames[2] = {};
    uint32_t ids[4] = {1, 1, 1, 1};
    on_new_thread([&] {
        LaneWalks *lw = LaneWalks::acquire();
        if (lw == nullptr) return;
        auto store_walk = [&] {
            Walk &w = lw->start_walk(ip0, sp0, bp0, 32);
            w.bp0_used = true;
            w.add_check(reinterpret_cast<uint64_t>(&code[8]), code_word(ip0));
            w.add_check(sp0 + 16, ip1);
            w.add_check(reinterpret_cast<uint64_t>(&code[16]), code_word(ip1));
            w.add_check(sp0 + 24, saved_bp);
            w.add_check(sp0 + 48, ip2);
            w.add_check(reinterpret_cast<uint64_t>(&code[24]), code_word(ip2));
            w.frame[0] = ip1;
            w.frame[1] = ip2;
            w.depth = 2;
            lw->store();
        };
        store_walk();
        uintptr_t out[32];
        uint32_t depth = 0;
        WalkToken token;
        uint32_t id = 0;
        auto replay = [&](uint64_t ip, uint64_t sp, uint64_t bp, uint32_t limit, uint64_t whose = kOwner) {
            return lw->replay(ip, sp, bp, limit, out, &depth, whose, false, &token, &id);
        };
        replayed = replay(ip0, sp0, bp0, 32) && depth == 2;
        frames[0] = out[0];
        frames[1] = out[1];
        int k = 0;
        for (unsigned char *byte : {&code[8], &code[16], &code[24]}) { // each step's code word
            *byte ^= 0x80;
            refused[k++] = !replay(ip0, sp0, bp0, 32);
            *byte ^= 0x80;
        }
        for (uint64_t *word : {&stack[2], &stack[3], &stack[6]}) { // the slots read
            *word ^= 0x10;
            refused[k++] = !replay(ip0, sp0, bp0, 32);
            *word ^= 0x10;
        }
        refused[k++] = !replay(ip0, sp0, bp0 + 16, 32);  // the starting frame pointer (used)
        refused[k++] = !replay(ip0 + 1, sp0, bp0, 32);   // the starting ip (same code word)
        refused[k++] = !replay(ip0, sp0, bp0, 8);        // another limit
        refused[k++] = !replay(ip0, sp0 + 16, bp0, 32);  // another stack pointer
        changes = k;
        replayed_again = replay(ip0, sp0, bp0, 32);
        // The caller's id of the frames rides on the walk: for its owner only, and only while the
        // walk it was attached to is still the one in that place.
        ids[0] = id; // none attached yet
        lw->attach_id(token, kOwner, 77);
        replay(ip0, sp0, bp0, 32);
        ids[1] = id;
        replay(ip0, sp0, bp0, 32, kOtherOwner);
        ids[2] = id;
        const WalkToken attached = token;
        for (uint32_t n = 0; n < kWays; ++n) store_walk(); // the set's other ways, then this walk's place
        lw->attach_id(attached, kOwner, 99); // names a walk no longer there
        replay(ip0, sp0, bp0, 32);
        ids[3] = id;
        nested_refused = LaneWalks::acquire() == nullptr; // as a signal handler's capture would
        lw->release();
    });
    CHECK(replayed);
    CHECK(frames[0] == ip1);
    CHECK(frames[1] == ip2);
    CHECK(changes == 10);
    for (int k = 0; k < 10; ++k) {
        INFO("change " << k);
        CHECK(refused[k]);
    }
    CHECK(replayed_again);
    CHECK(ids[0] == 0);
    CHECK(ids[1] == 77);
    CHECK(ids[2] == 0);
    CHECK(ids[3] == 0);
    CHECK(nested_refused);
}

TEST_CASE("recent walks: a walk too long for its list is not stored", "[walks]") {
    using namespace vramtrace::walks;
    alignas(16) static uint64_t stack[8];
    const uint64_t sp0 = reinterpret_cast<uint64_t>(&stack[0]);
    bool stored_none = false;
    on_new_thread([&] {
        LaneWalks *lw = LaneWalks::acquire();
        if (lw == nullptr) return;
        const uint64_t before = lw->stored.load();
        Walk &w = lw->start_walk(0x1000, sp0, 0, 32);
        bool room = true;
        for (uint32_t i = 0; i <= kMaxChecks; ++i) room = w.add_check(sp0 + 8, 0);
        CHECK_FALSE(room);
        CHECK(w.checks == kMaxChecks);
        lw->store();
        uintptr_t out[32];
        uint32_t depth = 0, id = 0;
        WalkToken token;
        stored_none = lw->stored.load() == before && !lw->replay(0x1000, sp0, 0, 32, out, &depth, 0, false, &token, &id);
        lw->release();
    });
    CHECK(stored_none);
}

namespace {
__attribute__((noinline)) int code_of_this_program(int x) { return x * 3 + g_sink; }
} // namespace

TEST_CASE("startup code: the program's code is loaded with the process, the heap is not", "[walks]") {
    using namespace vramtrace;
    const uint64_t in_program = reinterpret_cast<uint64_t>(&code_of_this_program) + 4;
    std::vector<unsigned char> heap(64);
    const uint64_t on_heap = reinterpret_cast<uint64_t>(heap.data()) + 9;
    startup_code::forget_for_testing();
    CHECK_FALSE(startup_code::holds(in_program)); // nothing noted yet
    startup_code::note_loaded_objects();
    CHECK(startup_code::holds(in_program));
    CHECK(startup_code::holds(reinterpret_cast<uint64_t>(&pthread_create) + 4)); // libc
    CHECK_FALSE(startup_code::holds(on_heap));
    CHECK_FALSE(startup_code::holds(reinterpret_cast<uint64_t>(&g_sink) + 1)); // data, not code
    startup_code::forget_for_testing();
}
