// Out of memory under the OOM trigger (tests/e2e/test_triggers.cpp). Run it with
// STANDIN_CUDA_DEVICE_BYTES=67108864 (a 64 MiB device): it holds 16 MiB + 8 MiB on device 0, then
// asks for 48 MiB N times (argv[1], default 1) from request_too_much, each answered
// cudaErrorMemoryAllocation with the pointer untouched and errno as it was. It prints its oracle:
//   expect-live ...                              what it holds (at the OOM and at exit)
//   expect-oom <bytes> <api> <device> <function> <file>:<line>   the failing request
//   result <code> pointer-untouched <0|1> errno <value>          what each failing call left
// and exits 3 (a distinctive status, to check it is kept).
#include <cuda_runtime_api.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "expect_live.h"

namespace {

constexpr size_t kMiB = 1 << 20;

}  // namespace

// Outside the anonymous namespace: the call sites are named plainly in the reports.
static STANDIN_NOINLINE void* hold_weights() {
  void* p = nullptr;
  if (cudaMalloc(&p, 16 * kMiB) != cudaSuccess) std::exit(1);
  print_expect_live(16 * kMiB, "cudaMalloc", 0, "hold_weights", __FILE__, __LINE__ - 1);
  return p;
}

static STANDIN_NOINLINE void* hold_activations() {
  void* p = nullptr;
  if (cudaMalloc(&p, 8 * kMiB) != cudaSuccess) std::exit(1);
  print_expect_live(8 * kMiB, "cudaMalloc", 0, "hold_activations", __FILE__, __LINE__ - 1);
  return p;
}

static STANDIN_NOINLINE void request_too_much(bool print_oracle) {
  void* const sentinel = reinterpret_cast<void*>(0x5eed0000);
  void* p = sentinel;
  errno = EDOM;
  cudaError_t e = cudaMalloc(&p, 48 * kMiB);
  int after = errno;
  if (print_oracle)
    std::printf("expect-oom %zu cudaMalloc 0 request_too_much %s:%d\n", 48 * kMiB,
                standin_basename(__FILE__), __LINE__ - 4);
  std::printf("result %d pointer-untouched %d errno %d\n", static_cast<int>(e), p == sentinel ? 1 : 0, after);
  (void)cudaGetLastError();
}



int main(int argc, char** argv) {
  int count = argc > 1 ? std::atoi(argv[1]) : 1;
  void* weights = hold_weights();
  void* activations = hold_activations();
  for (int i = 0; i < count; ++i) request_too_much(i == 0);
  std::fflush(stdout);
  (void)weights;
  (void)activations;
  return 3;
}
