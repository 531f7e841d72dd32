// Out of memory through the runtime: asks for more than the device holds with cudaMalloc,
// cudaMallocAsync and cudaMallocManaged, checks each answers cudaErrorMemoryAllocation and leaves
// the out pointer unchanged, then carries on (allocates, frees) and exits 0. Leaks nothing.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

namespace {

int failures = 0;

void expect(bool ok, const char* what, int line) {
  if (!ok) {
    std::fprintf(stderr, "standin_prog_oom: line %d: expectation failed: %s\n", line, what);
    ++failures;
  }
}

void check(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "standin_prog_oom: line %d: %s failed: %s\n", line, what, cudaGetErrorName(e));
    std::exit(1);
  }
}

}  // namespace

#define EXPECT(cond) expect((cond), #cond, __LINE__)
#define CUDA_CHECK(call) check((call), #call, __LINE__)

int main() {
  size_t free_before = 0;
  size_t total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
  EXPECT(free_before == total);

  void* const sentinel = reinterpret_cast<void*>(0x5eed0000);
  void* p = sentinel;
  cudaError_t e = cudaMalloc(&p, total + 1);
  EXPECT(e == cudaErrorMemoryAllocation);
  EXPECT(p == sentinel);
  EXPECT(cudaPeekAtLastError() == cudaErrorMemoryAllocation);
  EXPECT(cudaGetLastError() == cudaErrorMemoryAllocation);
  EXPECT(cudaGetLastError() == cudaSuccess);

  p = sentinel;
  e = cudaMallocAsync(&p, total + 4096, nullptr);
  EXPECT(e == cudaErrorMemoryAllocation);
  EXPECT(p == sentinel);

  p = sentinel;
  e = cudaMallocManaged(&p, total * 2, cudaMemAttachGlobal);
  EXPECT(e == cudaErrorMemoryAllocation);
  EXPECT(p == sentinel);
  (void)cudaGetLastError();

  // Fill half the device, then ask for one byte more than what is left.
  void* half = nullptr;
  CUDA_CHECK(cudaMalloc(&half, total / 2));
  size_t free_now = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_now, &total));
  EXPECT(free_now == total - total / 2);
  p = sentinel;
  e = cudaMalloc(&p, free_now + 1);
  EXPECT(e == cudaErrorMemoryAllocation);
  EXPECT(p == sentinel);
  (void)cudaGetLastError();

  // Carry on: a normal allocation works, everything is given back.
  void* small = nullptr;
  CUDA_CHECK(cudaMalloc(&small, 1 << 20));
  CUDA_CHECK(cudaFree(small));
  CUDA_CHECK(cudaFree(half));
  size_t free_after = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
  EXPECT(free_after == free_before);
  EXPECT(cudaGetLastError() == cudaSuccess);

  if (failures != 0) return 1;
  std::printf("standin_prog_oom: out-of-memory answered cudaErrorMemoryAllocation, pointers untouched\n");
  return 0;
}
