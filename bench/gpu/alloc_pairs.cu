// GPU benchmark of the interception path on a real driver: a tight loop of allocation + free pairs,
// cudaMallocAsync/cudaFreeAsync (stream-ordered, served from the device's memory pool) or
// cudaMalloc/cudaFree, from T threads at once (each with its own stream), made at the bottom of a
// recursion of F frames so the captured stack is that deep. Prints one line:
//   RESULT api=async threads=4 frames=32 pairs=800000 seconds=0.41 ns_per_pair=... pairs_per_s=...
// ns_per_pair is wall time per pair per thread (seconds * threads / pairs).
//
//   nvcc -O2 -std=c++17 alloc_pairs.cu -o alloc_pairs -lcuda [-cudart shared]
//   alloc_pairs async|sync [PAIRS_PER_THREAD [THREADS [FRAMES [BYTES]]]]
// ALLOC_PAIRS_QUERY=stream_device|ctx_device adds, untraced, the driver query a traced hook makes
// after each allocation (cuStreamGetDevice / cuCtxGetDevice): its price inside the driver under the
// same contention, without vramtrace. ALLOC_PAIRS_SPIN_NS=N adds N ns of busy work per pair, outside
// any CUDA call, between the allocation and its free: what work of that size costs the loop when no
// lock is held across it. ALLOC_PAIRS_SPIN_AFTER_FREE_NS=N adds N ns between the free and the next
// allocation (the other gap a hook's work can fall in). Both read the clock while they spin, so they
// cannot be shorter than two clock reads (about 40 ns).
// ALLOC_PAIRS_WORK_NS=N adds about N ns of arithmetic after the allocation and again after the free
// (both gaps), with no clock read: a chain of dependent multiply-adds whose rate is measured once at
// start on the main thread, before the workers run (printed as work_iters_per_ns). For gaps smaller
// than SPIN's floor; the sizes are approximate: the call itself adds a few ns, and a core that runs
// slower with all 16 busy takes longer for the same iterations.
// ALLOC_PAIRS_SHARED_ATOMIC=1 adds one atomic add to a counter that every thread shares after the
// allocation and one after the free: the single shared write per operation that a tracker keeping
// exact per-device bytes cannot avoid.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "../descend.h"

namespace {

using vtbench::descend;

// A dependent chain the compiler cannot fold away: about one multiply-add latency per iteration.
__attribute__((noinline)) uint64_t busy_work(uint64_t iterations) {
    uint64_t x = iterations | 1;
    for (uint64_t i = 0; i < iterations; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        asm volatile("" : "+r"(x));
    }
    return x;
}

// Iterations of busy_work() per ns on this core, from one timed run of 2e7 iterations.
double work_rate() {
    constexpr uint64_t kIterations = 20000000;
    auto t0 = std::chrono::steady_clock::now();
    uint64_t sink = busy_work(kIterations);
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    asm volatile("" ::"r"(sink));
    return ns > 0 ? kIterations / ns : 1.0;
}

std::atomic<uint64_t> g_shared_counter{0};

void spin(long ns) {
    auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
    while (std::chrono::steady_clock::now() < until) {
    }
}

bool check(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return true;
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    return false;
}

} // namespace

int main(int argc, char **argv) {
    if (argc < 2 || (std::strcmp(argv[1], "async") != 0 && std::strcmp(argv[1], "sync") != 0)) {
        std::fprintf(stderr, "usage: %s async|sync [PAIRS_PER_THREAD [THREADS [FRAMES [BYTES]]]]\n", argv[0]);
        return 2;
    }
    const bool async = std::strcmp(argv[1], "async") == 0;
    const long pairs = argc > 2 ? std::atol(argv[2]) : (async ? 200000 : 20000);
    const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
    const int frames = argc > 4 ? std::atoi(argv[4]) : 32;
    const size_t bytes = argc > 5 ? static_cast<size_t>(std::atol(argv[5])) : (1 << 20);
    const char *query_env = std::getenv("ALLOC_PAIRS_QUERY");
    const int query = query_env == nullptr ? 0 : std::strcmp(query_env, "stream_device") == 0 ? 1
                                             : std::strcmp(query_env, "ctx_device") == 0     ? 2
                                                                                               : 0;
    const char *spin_env = std::getenv("ALLOC_PAIRS_SPIN_NS");
    const long spin_ns = spin_env ? std::atol(spin_env) : 0;
    const char *spin_free_env = std::getenv("ALLOC_PAIRS_SPIN_AFTER_FREE_NS");
    const long spin_after_free_ns = spin_free_env ? std::atol(spin_free_env) : 0;
    const char *work_env = std::getenv("ALLOC_PAIRS_WORK_NS");
    const double work_ns = work_env ? std::atof(work_env) : 0;
    const double iters_per_ns = work_ns > 0 ? work_rate() : 0;
    const uint64_t work_iterations = static_cast<uint64_t>(work_ns * iters_per_ns + 0.5);
    const char *atomic_env = std::getenv("ALLOC_PAIRS_SHARED_ATOMIC");
    const bool shared_atomic = atomic_env != nullptr && std::strcmp(atomic_env, "1") == 0;
    if (!check(cudaSetDevice(0), "cudaSetDevice") || !check(cudaFree(nullptr), "context")) return 1;

    std::vector<cudaStream_t> streams(static_cast<size_t>(threads));
    for (auto &s : streams)
        if (!check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate")) return 1;
    // Warm-up: the pool grows to its working size and every thread's first call is made.
    std::vector<int> failed(static_cast<size_t>(threads), 0);
    auto work = [&](int t, long count) {
        cudaSetDevice(0);
        cudaStream_t s = streams[static_cast<size_t>(t)];
        auto loop = [&] {
            for (long i = 0; i < count; ++i) {
                void *p = nullptr;
                cudaError_t e1 = async ? cudaMallocAsync(&p, bytes, s) : cudaMalloc(&p, bytes);
                if (query != 0) {
                    int device = -1;
                    if (query == 1) cuStreamGetDevice(reinterpret_cast<CUstream>(s), &device);
                    else cuCtxGetDevice(&device);
                    asm volatile("" ::"r"(device) : "memory");
                }
                if (shared_atomic) g_shared_counter.fetch_add(bytes, std::memory_order_relaxed);
                if (work_iterations > 0) asm volatile("" ::"r"(busy_work(work_iterations)));
                if (spin_ns > 0) spin(spin_ns);
                cudaError_t e2 = async ? cudaFreeAsync(p, s) : cudaFree(p);
                if (shared_atomic) g_shared_counter.fetch_sub(bytes, std::memory_order_relaxed);
                if (work_iterations > 0) asm volatile("" ::"r"(busy_work(work_iterations)));
                if (spin_after_free_ns > 0) spin(spin_after_free_ns);
                if (e1 != cudaSuccess || e2 != cudaSuccess) {
                    failed[static_cast<size_t>(t)] = 1;
                    return;
                }
            }
        };
        descend(frames, loop);
        if (async) cudaStreamSynchronize(s);
    };
    auto run = [&](long count) {
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t) pool.emplace_back(work, t, count);
        for (auto &th : pool) th.join();
    };
    run(pairs / 10 + 1);
    auto t0 = std::chrono::steady_clock::now();
    run(pairs);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int f : failed)
        if (f) {
            std::fprintf(stderr, "an allocation or free failed\n");
            return 1;
        }
    double total = static_cast<double>(pairs) * threads;
    std::printf("RESULT api=%s threads=%d frames=%d pairs=%.0f seconds=%.4f ns_per_pair=%.1f pairs_per_s=%.0f "
                "work_iters_per_ns=%.3f work_iterations=%llu\n",
                async ? "async" : "sync", threads, frames, total, seconds, seconds * 1e9 * threads / total,
                total / seconds, iters_per_ns, static_cast<unsigned long long>(work_iterations));
    return 0;
}
