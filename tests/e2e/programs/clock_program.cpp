// The times that records carry against the program's own CLOCK_MONOTONIC (test_clock.cpp): after a
// first allocation (which starts the reporter that fits the counter line) and a pause, PAIRS
// cudaMalloc/cudaFree pairs of sizes 4096 + i, each bracketed by clock_gettime readings, with a
// 75 ms pause after every tenth:
//   vt_clock_program PAIRS      prints "pair I BEFORE_ALLOC AFTER_ALLOC AFTER_FREE" per pair
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>

namespace {
unsigned long long now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<unsigned long long>(ts.tv_sec) * 1000000000ull + static_cast<unsigned long long>(ts.tv_nsec);
}
} // namespace

int main(int argc, char **argv) {
    const int pairs = argc > 1 ? std::atoi(argv[1]) : 100;
    void *first = nullptr;
    if (cudaMalloc(&first, 1) != cudaSuccess || cudaFree(first) != cudaSuccess) return 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    for (int i = 0; i < pairs; ++i) {
        void *p = nullptr;
        const unsigned long long a = now_ns();
        if (cudaMalloc(&p, 4096 + static_cast<size_t>(i)) != cudaSuccess) return 1;
        const unsigned long long b = now_ns();
        if (cudaFree(p) != cudaSuccess) return 1;
        const unsigned long long c = now_ns();
        std::printf("pair %d %llu %llu %llu\n", i, a, b, c);
        // 1.1 s in all: the line is refitted twice (at 510 and 1,010 ms) while the pairs run.
        if (i % 10 == 9) std::this_thread::sleep_for(std::chrono::milliseconds(75));
    }
    return 0;
}
