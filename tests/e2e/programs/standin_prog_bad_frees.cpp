// Frees that fail must reach the driver and come back with the driver's own result, and a free
// that fails must leave the allocation tracked (vramtrace takes the record out before forwarding
// and puts it back on failure). Prints each call's result, so that the traced and untraced runs
// can be compared line by line, and the expect-live oracle for what stays live.
#include <cstdio>
#include <cuda_runtime_api.h>

#include "expect_live.h"

STANDIN_NOINLINE static void *keep_buffer(std::size_t bytes) {
  void *p = nullptr;
  const int line = __LINE__; cudaError_t rc = cudaMalloc(&p, bytes);
  if (rc != cudaSuccess) return nullptr;
  print_expect_live(bytes, "cudaMalloc", 0, __func__, __FILE__, line);
  return p;
}

int main() {
  void *kept = keep_buffer(6u << 20);
  if (kept == nullptr) return 1;
  int stack_object = 0;
  // A pointer the driver never handed out.
  std::printf("free unknown: %d\n", static_cast<int>(cudaFree(&stack_object)));
  // The wrong free for a device pointer: the driver refuses it, the buffer stays allocated.
  std::printf("freehost of a device pointer: %d\n", static_cast<int>(cudaFreeHost(kept)));
  // A double free.
  void *twice = nullptr;
  if (cudaMalloc(&twice, 4096) != cudaSuccess) return 1;
  std::printf("first free: %d\n", static_cast<int>(cudaFree(twice)));
  std::printf("second free: %d\n", static_cast<int>(cudaFree(twice)));
  std::printf("free null: %d\n", static_cast<int>(cudaFree(nullptr)));
  return 0;
}
