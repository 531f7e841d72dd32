// Dump benchmark, on the stand-in runtime under LD_PRELOAD=libvramtrace.so: makes N live
// allocations (cudaMallocAsync) from U unique call stacks, then times vramtrace_dump(OUT) in the
// process (snapshot built from the live table, frames symbolized, JSON written and renamed). The
// allocations are freed afterwards so the exit snapshot is small.
//
//   LD_PRELOAD=build/lib/libvramtrace.so bench_dump_program [ALLOCS [STACKS [OUT [BYTES]]]]
//   (defaults 1000000 100000 /tmp/vramtrace-dump-bench.json 256)
//
// Unique stacks come from a binary recursion: stack k takes the left or right function at each of
// 17 levels by the bits of k, so stacks 0..2^17-1 are all different call paths.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime_api.h>
#include <vector>

#include "vramtrace/vramtrace.h"

namespace {

constexpr int kLevels = 17;

struct Job {
    void **slot;
    size_t bytes;
    bool ok = true;
};

void leaf(Job &job) {
    if (cudaMallocAsync(job.slot, job.bytes, nullptr) != cudaSuccess) job.ok = false;
}

void go_right(int level, unsigned path, Job &job);
__attribute__((noinline)) void go_left(int level, unsigned path, Job &job) {
    if (level == kLevels)
        leaf(job);
    else if ((path >> level) & 1)
        go_right(level + 1, path, job);
    else
        go_left(level + 1, path, job);
    asm volatile("" ::: "memory");
}
__attribute__((noinline)) void go_right(int level, unsigned path, Job &job) {
    if (level == kLevels)
        leaf(job);
    else if ((path >> level) & 1)
        go_right(level + 1, path, job);
    else
        go_left(level + 1, path, job);
    asm volatile("" ::: "memory");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

int main(int argc, char **argv) {
    long allocs = argc > 1 ? std::atol(argv[1]) : 1000000;
    long stacks = argc > 2 ? std::atol(argv[2]) : 100000;
    const char *out = argc > 3 ? argv[3] : "/tmp/vramtrace-dump-bench.json";
    size_t bytes = argc > 4 ? static_cast<size_t>(std::atol(argv[4])) : 256;
    if (allocs < 1 || stacks < 1 || stacks > (1L << kLevels)) {
        std::fprintf(stderr, "usage: %s [ALLOCS [STACKS<=%ld [OUT [BYTES]]]]\n", argv[0], 1L << kLevels);
        return 2;
    }
    std::vector<void *> ptrs(static_cast<size_t>(allocs), nullptr);
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < allocs; ++i) {
        Job job{&ptrs[static_cast<size_t>(i)], bytes};
        go_left(0, static_cast<unsigned>(i % stacks), job);
        if (!job.ok) {
            std::fprintf(stderr, "allocation %ld failed\n", i);
            return 1;
        }
    }
    double alloc_s = seconds_since(t0);
    vramtrace_device_stats stats[8];
    int n = vramtrace_stats(stats, 8);
    if (n == VRAMTRACE_ERROR_NOT_LOADED) {
        std::fprintf(stderr, "libvramtrace.so is not loaded (run with LD_PRELOAD)\n");
        return 1;
    }
    uint64_t live = 0;
    for (int d = 0; d < n && d < 8; ++d) live += stats[d].allocation_count - stats[d].free_count;

    t0 = std::chrono::steady_clock::now();
    int rc = vramtrace_dump(out);
    double dump_s = seconds_since(t0);

    t0 = std::chrono::steady_clock::now();
    for (void *p : ptrs) cudaFreeAsync(p, nullptr);
    double free_s = seconds_since(t0);

    std::printf("allocations=%ld unique_stacks=%ld tracked_live=%llu\n", allocs, stacks,
                static_cast<unsigned long long>(live));
    std::printf("alloc_loop_s=%.3f (%.0f ns per traced cudaMallocAsync)\n", alloc_s, alloc_s * 1e9 / allocs);
    std::printf("dump_s=%.3f rc=%d file=%s\n", dump_s, rc, out);
    std::printf("free_loop_s=%.3f\n", free_s);
    return rc == VRAMTRACE_OK ? 0 : 1;
}
