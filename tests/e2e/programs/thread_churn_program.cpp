// Thread churn: thousands of short-lived threads each allocate and free through the runtime; every
// 250th keeps its allocation. Prints the expect-live oracle and how much the resident set grew
// between the end of a warm-up wave and the end of a much larger second wave, so a per-thread leak
// in the tracker (or anything it makes the program keep) shows up as growth.
//   rss-growth-kib <KiB>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "expect_live.h"

static std::mutex g_print;

static long resident_kib() {
    FILE *f = std::fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "VmRSS:", 6) == 0) kib = std::atol(line + 6);
    if (f) std::fclose(f);
    return kib;
}

// Outside any namespace: the oracle names the call site by its plain function name.
STANDIN_NOINLINE void keep_one(size_t bytes) {
    void *p = nullptr;
    int line = __LINE__ + 1;
    if (cudaMalloc(&p, bytes) != cudaSuccess) std::exit(2);
    std::lock_guard<std::mutex> lock(g_print);
    print_expect_live(bytes, "cudaMalloc", 0, "keep_one", __FILE__, line);
}

static void worker(int index) {
    size_t bytes = 4096 + static_cast<size_t>(index % 8) * 256;
    void *p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess || cudaFree(p) != cudaSuccess) std::exit(2);
    if (index % 500 == 0) keep_one(bytes);
}

// Threads run 16 at a time, as a thread pool that keeps replacing its workers would.
static void wave(int first, int count) {
    for (int base = first; base < first + count; base += 16) {
        std::vector<std::thread> threads;
        for (int i = base; i < base + 16 && i < first + count; ++i) threads.emplace_back(worker, i);
        for (auto &t : threads) t.join();
    }
}

int main(int argc, char **argv) {
    int second = argc > 1 ? std::atoi(argv[1]) : 16000;
    // Two warm-up waves first: the tracker's table and depot touch their pages as new addresses and
    // stacks come, up to a bound; what is measured is the wave after that.
    wave(0, 2000);
    wave(2000, 2000);
    long warm = resident_kib();
    wave(4000, second);
    long after = resident_kib();
    std::printf("rss-growth-kib %ld\n", after - warm);
    return 0;
}
