// Stack capture alone: the cached walk (capture_stack, what libvramtrace.so uses) against libunwind's
// own walk (capture_stack_unwinder, the code before the cache), called at the bottom of a recursion
// of N frames so that the stack really is that deep. Built twice: bench_capture_fp (frame pointers)
// and bench_capture_nofp (-fomit-frame-pointer).
//
//   bench_capture_fp [--check-only] [google benchmark flags]
//
// Before timing it checks that both walks return the same frames at every depth from 0 to 300
// frames of recursion with limits 1..256, from this program and from threads; it exits 1 when they differ.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <utility>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "capture_probe.h"


namespace {

using CaptureFn = uint32_t (*)(uintptr_t *, uint32_t);

// Both walks are called from this one call instruction, so their frames must match exactly.
__attribute__((noinline)) uint32_t call_capture(CaptureFn fn, uintptr_t *out, uint32_t max_depth) {
    uint32_t n = fn(out, max_depth);
    asm volatile("" ::: "memory");
    return n;
}

// A recursion of `frames` real frames (noinline, not a tail call), then fn() at the bottom.
template <class F> __attribute__((noinline)) void descend(int frames, F &fn) {
    if (frames <= 0) {
        fn();
    } else {
        descend(frames - 1, fn);
    }
    asm volatile("" ::: "memory");
}

// Two functions of different frame shapes, alternated, so a walk crosses more than one rule.
template <class F> void descend_narrow(int frames, F &fn);
template <class F> __attribute__((noinline)) void descend_wide(int frames, F &fn) {
    volatile char pad[200];
    pad[0] = static_cast<char>(frames);
    if (frames <= 0)
        fn();
    else
        descend_narrow(frames - 1, fn);
    asm volatile("" ::: "memory");
    (void)pad[0];
}
template <class F> __attribute__((noinline)) void descend_narrow(int frames, F &fn) {
    if (frames <= 0)
        fn();
    else
        descend_wide(frames - 1, fn);
    asm volatile("" ::: "memory");
}

// Distinct functions per Tag: four call paths with different return addresses at every frame.
template <int Tag, class F> __attribute__((noinline)) void descend_tag(int frames, F &fn) {
    if (frames <= 0)
        fn();
    else
        descend_tag<Tag>(frames - 1, fn);
    asm volatile("" ::: "memory");
}

int check_equal(const char *where) {
    int failures = 0;
    for (int frames : {0, 1, 5, 16, 31, 32, 33, 64, 100, 300}) {
        for (uint32_t limit : {1u, 2u, 16u, 32u, 64u, 256u}) {
            for (int shape = 0; shape < 2; ++shape) {
                uintptr_t a[256], b[256], a2[256];
                uint32_t n[3] = {0, 0, 0};
                // One call instruction for all three, so every frame must be the same. The second
                // cached walk is served entirely from the cache.
                CaptureFn fns[3] = {vtp_capture, vtp_capture_unwinder, vtp_capture};
                uintptr_t *bufs[3] = {a, b, a2};
                auto fn = [&] {
                    for (int k = 0; k < 3; ++k) n[k] = call_capture(fns[k], bufs[k], limit);
                };
                if (shape == 0)
                    descend(frames, fn);
                else
                    descend_wide(frames, fn);
                uint32_t na = n[0], nb = n[1], na2 = n[2];
                bool same = na == nb && na2 == nb && std::memcmp(a, b, na * sizeof(uintptr_t)) == 0 &&
                            std::memcmp(a2, b, na * sizeof(uintptr_t)) == 0;
                if (!same && ++failures <= 4) {
                    std::fprintf(stderr, "MISMATCH (%s) frames=%d limit=%u shape=%d: cached %u/%u, libunwind %u\n",
                                 where, frames, limit, shape, na, na2, nb);
                    for (uint32_t i = 0; i < 12 && (i < na || i < nb); ++i)
                        std::fprintf(stderr, "  %3u %#lx %#lx\n", i, i < na ? (unsigned long)a[i] : 0ul,
                                     i < nb ? (unsigned long)b[i] : 0ul);
                }
            }
        }
    }
    return failures;
}

// Captures through other code: libc's qsort calling back (no frame pointers, rules from libc's
// .eh_frame) and a signal handler (the signal frame sends the walk to libunwind). Both walks must agree.
int g_special_failures = 0;
void compare_here(const char *where) {
    uintptr_t a[256], b[256], a2[256];
    uint32_t n[3] = {0, 0, 0};
    CaptureFn fns[3] = {vtp_capture, vtp_capture_unwinder, vtp_capture};
    uintptr_t *bufs[3] = {a, b, a2};
    for (int k = 0; k < 3; ++k) n[k] = call_capture(fns[k], bufs[k], 256);
    if (n[0] != n[1] || n[2] != n[1] || std::memcmp(a, b, n[0] * sizeof(uintptr_t)) != 0 ||
        std::memcmp(a2, b, n[0] * sizeof(uintptr_t)) != 0 || n[1] < 3) {
        ++g_special_failures;
        std::fprintf(stderr, "MISMATCH (%s): cached %u/%u, libunwind %u\n", where, n[0], n[2], n[1]);
    }
}
int by_value(const void *x, const void *y) {
    static int once = 0;
    if (once++ == 0) compare_here("inside qsort");
    return *static_cast<const int *>(x) - *static_cast<const int *>(y);
}
void on_signal(int) { compare_here("signal handler"); }
int check_special() {
    g_special_failures = 0;
    int v[64];
    for (int i = 0; i < 64; ++i) v[i] = (i * 37) % 64;
    std::qsort(v, 64, sizeof v[0], by_value);
    std::signal(SIGUSR1, on_signal);
    std::raise(SIGUSR1);
    return g_special_failures;
}

double minimum(const std::vector<double> &v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }

void BM_Capture(benchmark::State &state, CaptureFn fn) {
    const int frames = static_cast<int>(state.range(0));
    const uint32_t limit = static_cast<uint32_t>(state.range(1));
    uint32_t got = 0;
    auto body = [&] {
        uintptr_t out[256];
        for (auto _ : state) {
            got = call_capture(fn, out, limit);
            benchmark::DoNotOptimize(out[0]);
        }
    };
    descend(frames, body);
    state.counters["frames_captured"] = got;
    state.SetItemsProcessed(state.iterations());
}

// Each capture from another of four call paths, so the per-thread memo of the last walk never
// matches and every frame takes the shared cache: the worst case for the memo. The recursion is
// part of each iteration; capture/recursion_only times it alone, to subtract.
void BM_CaptureMixed(benchmark::State &state, CaptureFn fn) {
    const int frames = static_cast<int>(state.range(0));
    const uint32_t limit = static_cast<uint32_t>(state.range(1));
    uintptr_t out[256];
    uint32_t got = 0;
    auto body = [&] {
        if (fn != nullptr) got = call_capture(fn, out, limit);
        benchmark::DoNotOptimize(out[0]);
    };
    unsigned i = 0;
    for (auto _ : state) {
        switch (i++ & 3) {
        case 0: descend_tag<0>(frames, body); break;
        case 1: descend_tag<1>(frames, body); break;
        case 2: descend_tag<2>(frames, body); break;
        default: descend_tag<3>(frames, body); break;
        }
    }
    state.counters["frames_captured"] = got;
}

// Sixteen call paths in turn with about 2 MiB of other memory traffic between captures, and only
// the capture timed: the shape of a framework's allocations (PyTorch allocates from hundreds of call
// paths, with the interpreter's own work in between), where the caches' lines have gone cold.
template <int Tag> __attribute__((noinline)) void descend_many(int frames, void (*fn)(void *), void *ctx) {
    if (frames <= 0)
        fn(ctx);
    else
        descend_many<Tag>(frames - 1, fn, ctx);
    asm volatile("" ::: "memory");
}
// The same paths, but each reaching the capture at its own stack pointer (a frame of its own size
// at the bottom), as the call paths of a framework mostly do: each finds its own recent walk.
template <int Tag> __attribute__((noinline)) void pad_then(void (*fn)(void *), void *ctx) {
    volatile char pad[16 * (Tag + 1)];
    pad[0] = 0;
    fn(ctx);
    asm volatile("" ::: "memory");
    (void)pad[0];
}
template <int Tag> __attribute__((noinline)) void descend_many_own_sp(int frames, void (*fn)(void *), void *ctx) {
    if (frames <= 0)
        pad_then<Tag>(fn, ctx);
    else
        descend_many_own_sp<Tag>(frames - 1, fn, ctx);
    asm volatile("" ::: "memory");
}
using DescendFn = void (*)(int, void (*)(void *), void *);
template <int... Tags> constexpr std::array<DescendFn, sizeof...(Tags)> descend_table(std::integer_sequence<int, Tags...>) {
    return {&descend_many<Tags>...};
}
constexpr auto kManyPaths = descend_table(std::make_integer_sequence<int, 16>{});
template <int... Tags>
constexpr std::array<DescendFn, sizeof...(Tags)> descend_own_sp_table(std::integer_sequence<int, Tags...>) {
    return {&descend_many_own_sp<Tags>...};
}
constexpr auto kManyPathsOwnSp = descend_own_sp_table(std::make_integer_sequence<int, 16>{});

struct ColdCtx {
    CaptureFn fn;
    uintptr_t *out;
    uint32_t limit;
    uint32_t got;
    double seconds;
};
void timed_capture(void *p) {
    auto *c = static_cast<ColdCtx *>(p);
    auto t0 = std::chrono::steady_clock::now();
    c->got = call_capture(c->fn, c->out, c->limit);
    auto t1 = std::chrono::steady_clock::now();
    c->seconds = std::chrono::duration<double>(t1 - t0).count();
}
template <bool kOwnSp> void BM_CaptureManyPathsCold(benchmark::State &state, CaptureFn fn) {
    const int frames = static_cast<int>(state.range(0));
    std::vector<uint64_t> traffic(2u << 20 >> 3); // 2 MiB: more than this machine's L2 per core
    uintptr_t out[256];
    ColdCtx c{fn, out, static_cast<uint32_t>(state.range(1)), 0, 0};
    unsigned i = 0;
    for (auto _ : state) {
        for (size_t k = 0; k < traffic.size(); k += 8) traffic[k] += k; // a line written each step
        (kOwnSp ? kManyPathsOwnSp : kManyPaths)[i++ % kManyPaths.size()](frames, timed_capture, &c);
        state.SetIterationTime(c.seconds);
    }
    benchmark::DoNotOptimize(traffic.data());
    state.counters["frames_captured"] = c.got;
}

} // namespace

int main(int argc, char **argv) {
    bool check_only = false;
    std::vector<char *> args;
    for (int i = 0; i < argc; ++i) {
        if (std::strcmp(argv[i], "--check-only") == 0)
            check_only = true;
        else
            args.push_back(argv[i]);
    }
    int failures = check_equal("main thread");
    std::thread([&] { failures += check_equal("thread"); }).join();
    // Four threads at once: rules are derived and stored concurrently (a fresh cache would be
    // better; most rules are already there, the memo of each new thread is not).
    std::atomic<int> concurrent{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < 4; ++t) pool.emplace_back([&] { concurrent += check_equal("concurrent threads"); });
    for (auto &th : pool) th.join();
    failures += concurrent.load();
    failures += check_special();
    uint64_t derived = 0, fallbacks = 0;
    vtp_capture_stats(&derived, &fallbacks);
    std::printf("check: cached walk == libunwind walk: %s (%d mismatches; %lu rules derived, %lu fallbacks)\n",
                failures ? "FAIL" : "ok", failures, (unsigned long)derived, (unsigned long)fallbacks);
    if (failures || check_only) return failures ? 1 : 0;

    // N frames of recursion, captured at limit N (0: a stack of only the benchmark harness and main,
    // limit 32).
    for (auto [frames, limit] : {std::pair{0, 32}, {16, 16}, {32, 32}, {64, 64}}) {
        benchmark::RegisterBenchmark("capture/cached", BM_Capture, vtp_capture)
            ->Args({frames, limit})->ArgNames({"frames", "limit"})->ComputeStatistics("min", minimum);
        benchmark::RegisterBenchmark("capture/libunwind", BM_Capture, vtp_capture_unwinder)
            ->Args({frames, limit})->ArgNames({"frames", "limit"})->ComputeStatistics("min", minimum);
    }
    benchmark::RegisterBenchmark("capture/cached/alternating_paths", BM_CaptureMixed, vtp_capture)
        ->Args({32, 32})->ArgNames({"frames", "limit"})->ComputeStatistics("min", minimum);
    benchmark::RegisterBenchmark("capture/recursion_only/alternating_paths", BM_CaptureMixed, CaptureFn{nullptr})
        ->Args({32, 32})->ArgNames({"frames", "limit"})->ComputeStatistics("min", minimum);
    benchmark::RegisterBenchmark("capture/cached/16_paths_cold", BM_CaptureManyPathsCold<false>, vtp_capture)
        ->Args({32, 32})->ArgNames({"frames", "limit"})->UseManualTime()->ComputeStatistics("min", minimum);
    benchmark::RegisterBenchmark("capture/cached/16_paths_cold_own_sp", BM_CaptureManyPathsCold<true>,
                                 vtp_capture)
        ->Args({32, 32})->ArgNames({"frames", "limit"})->UseManualTime()->ComputeStatistics("min", minimum);
    int n = static_cast<int>(args.size());
    benchmark::Initialize(&n, args.data());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    vtp_capture_stats(&derived, &fallbacks);
    uint64_t replayed = 0, stored = 0;
    vtp_replay_stats(&stored, &replayed);
    std::printf("after timing: %lu rules derived, %lu fallbacks; %lu walks stored, %lu replayed\n",
                (unsigned long)derived, (unsigned long)fallbacks, (unsigned long)stored, (unsigned long)replayed);
    return 0;
}
