// N threads each doing M cudaMalloc/cudaFree cycles of varying sizes, concurrently, on device 0.
// Every thread frees everything except one known buffer (a distinct size per thread), which it
// leaks. Usage: standin_prog_threads [N [M]]   (defaults 4 and 1000)
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "expect_live.h"

namespace {

std::atomic<int> g_errors{0};
int g_leak_line = 0;

size_t leaked_bytes(int thread_index) { return (1u << 20) + 4096u * static_cast<size_t>(thread_index) + 24; }

size_t cycle_bytes(int thread_index, int cycle) {
  return 256u * static_cast<size_t>(1 + (cycle * 7 + thread_index * 13) % 61) + static_cast<size_t>(thread_index);
}

}  // namespace

STANDIN_NOINLINE void thread_worker(int thread_index, int cycles) {
  void* kept = nullptr;
  for (int i = 0; i < cycles; ++i) {
    if (i == cycles / 2) {
      const int line = __LINE__; cudaError_t e = cudaMalloc(&kept, leaked_bytes(thread_index));
      if (e != cudaSuccess) ++g_errors;
      if (thread_index == 0) g_leak_line = line;
    }
    void* p = nullptr;
    if (cudaMalloc(&p, cycle_bytes(thread_index, i)) != cudaSuccess) {
      ++g_errors;
      continue;
    }
    if (cudaFree(p) != cudaSuccess) ++g_errors;
  }
  if (kept == nullptr) ++g_errors;
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 4;
  const int cycles = argc > 2 ? std::atoi(argv[2]) : 1000;
  if (threads <= 0 || cycles <= 0) {
    std::fprintf(stderr, "usage: %s [threads>0 [cycles>0]]\n", argv[0]);
    return 2;
  }
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) pool.emplace_back(thread_worker, t, cycles);
  for (std::thread& th : pool) th.join();
  if (g_errors.load() != 0) {
    std::fprintf(stderr, "standin_prog_threads: %d CUDA calls failed\n", g_errors.load());
    return 1;
  }
  std::printf("standin_prog_threads: %d threads x %d cycles\n", threads, cycles);
  for (int t = 0; t < threads; ++t) {
    print_expect_live(leaked_bytes(t), "cudaMalloc", 0, "thread_worker", __FILE__, g_leak_line);
  }
  return 0;
}
