// Allocation + free pairs in a loop, for counting what the tracer adds per pair
// (test_hot_path_calls.cpp): PAIRS stream-ordered pairs on a stream of its own, then PAIRS
// cudaMalloc/cudaFree pairs, on THREADS threads at once (each its own stream).
//   vt_pairs_program PAIRS [THREADS]
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char **argv) {
    const long pairs = argc > 1 ? std::atol(argv[1]) : 1000;
    const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
    if (cudaFree(nullptr) != cudaSuccess) return 1;
    std::vector<int> failed(static_cast<size_t>(threads), 0);
    auto work = [&](int t) {
        cudaStream_t s = nullptr;
        if (cudaStreamCreate(&s) != cudaSuccess) {
            failed[static_cast<size_t>(t)] = 1;
            return;
        }
        for (long i = 0; i < pairs; ++i) {
            void *p = nullptr;
            if (cudaMallocAsync(&p, 4096, s) != cudaSuccess || cudaFreeAsync(p, s) != cudaSuccess) failed[t] = 1;
        }
        for (long i = 0; i < pairs; ++i) {
            void *p = nullptr;
            if (cudaMalloc(&p, 4096) != cudaSuccess || cudaFree(p) != cudaSuccess) failed[t] = 1;
        }
        cudaStreamSynchronize(s);
        cudaStreamDestroy(s);
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
    for (auto &th : pool) th.join();
    for (int f : failed)
        if (f) return 1;
    std::printf("pairs-done %ld\n", pairs * threads);
    return 0;
}
