// The whole interception path: one cudaMalloc + cudaFree pair (and one cudaMallocAsync +
// cudaFreeAsync pair) on the stand-in runtime, made at the bottom of a recursion of N frames so the
// stack the library captures really is that deep. Run it twice, plain and with
// LD_PRELOAD=libvramtrace.so, and subtract (bench/run's hook_* cases do, for VRAMTRACE_STACK_DEPTH
// 0, 16, 32 and 64). Built as bench_hook_pair_fp (frame pointers) and bench_hook_pair_nofp.
//
//   [LD_PRELOAD=build/lib/libvramtrace.so VRAMTRACE_STACK_DEPTH=32] bench_hook_pair_fp
//       --benchmark_filter='/frames:32/'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <vector>
#include <cstdlib>
#include <cuda_runtime_api.h>

#include "descend.h"

namespace {

using vtbench::descend;

void BM_MallocFree(benchmark::State &state) {
    const size_t bytes = static_cast<size_t>(state.range(1));
    auto body = [&] {
        for (auto _ : state) {
            void *p = nullptr;
            if (cudaMalloc(&p, bytes) != cudaSuccess || cudaFree(p) != cudaSuccess) {
                state.SkipWithError("cudaMalloc/cudaFree failed");
                break;
            }
            benchmark::DoNotOptimize(p);
        }
    };
    descend(static_cast<int>(state.range(0)), body);
    state.SetItemsProcessed(state.iterations());
}

void BM_MallocFreeAsync(benchmark::State &state) {
    const size_t bytes = static_cast<size_t>(state.range(1));
    auto body = [&] {
        for (auto _ : state) {
            void *p = nullptr;
            if (cudaMallocAsync(&p, bytes, nullptr) != cudaSuccess || cudaFreeAsync(p, nullptr) != cudaSuccess) {
                state.SkipWithError("cudaMallocAsync/cudaFreeAsync failed");
                break;
            }
            benchmark::DoNotOptimize(p);
        }
    };
    descend(static_cast<int>(state.range(0)), body);
    state.SetItemsProcessed(state.iterations());
}

double minimum(const std::vector<double> &v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }

} // namespace

// "min" over repetitions: on a shared machine the fastest repetition is the best estimate of the
// cost itself (bench/summarize.py uses it for the single-thread tables).
BENCHMARK(BM_MallocFree)->ComputeStatistics("min", minimum)->ArgNames({"frames", "bytes"})->Args({0, 4096})->Args({16, 4096})->Args({32, 4096})->Args({64, 4096});
BENCHMARK(BM_MallocFreeAsync)->ComputeStatistics("min", minimum)->ArgNames({"frames", "bytes"})->Args({0, 4096})->Args({16, 4096})->Args({32, 4096})->Args({64, 4096});

int main(int argc, char **argv) {
    // Create the context before timing (the first call bootstraps the runtime).
    void *p = nullptr;
    if (cudaMalloc(&p, 1) != cudaSuccess || cudaFree(p) != cudaSuccess) {
        std::fprintf(stderr, "the CUDA runtime does not work here\n");
        return 1;
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
