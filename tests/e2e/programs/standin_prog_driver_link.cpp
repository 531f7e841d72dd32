// Links -lcuda (the stand-in driver) and calls the driver API directly, the way a program built
// against cuda.h does: cuInit, primary context, cuMemAlloc (= cuMemAlloc_v2 through cuda.h).
// Leaks 2 MiB, frees 1 MiB + 4 KiB. Usage: standin_prog_driver_link [--device N]
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "expect_live.h"

namespace {

void check(CUresult r, const char* what, int line) {
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    cuGetErrorName(r, &name);
    std::fprintf(stderr, "standin_prog_driver_link: line %d: %s failed: %s\n", line, what, name ? name : "?");
    std::exit(1);
  }
}

}  // namespace

#define CU_CHECK(call) check((call), #call, __LINE__)

constexpr size_t kLeakedBytes = 2u << 20;             // 2 MiB, leaked
constexpr size_t kFreedBytes = (1u << 20) + 4096;     // freed

STANDIN_NOINLINE void allocate_with_driver(int device) {
  CUdeviceptr freed = 0;
  CU_CHECK(cuMemAlloc(&freed, kFreedBytes));
  CUdeviceptr leaked = 0;
  const int line = __LINE__; CU_CHECK(cuMemAlloc(&leaked, kLeakedBytes));
  CU_CHECK(cuMemsetD8(leaked, 0x11, kLeakedBytes));
  CU_CHECK(cuMemFree(freed));
  print_expect_live(kLeakedBytes, "cuMemAlloc_v2", device, __func__, __FILE__, line);
}

int main(int argc, char** argv) {
  int ordinal = 0;
  if (argc == 3 && std::strcmp(argv[1], "--device") == 0) {
    ordinal = std::atoi(argv[2]);
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--device N]\n", argv[0]);
    return 2;
  }
  CU_CHECK(cuInit(0));
  CUdevice dev = 0;
  CU_CHECK(cuDeviceGet(&dev, ordinal));
  CUcontext ctx = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU_CHECK(cuCtxSetCurrent(ctx));
  CUdevice current = -1;
  CU_CHECK(cuCtxGetDevice(&current));
  if (current != dev) {
    std::fprintf(stderr, "standin_prog_driver_link: context device %d, expected %d\n", current, dev);
    return 1;
  }
  std::printf("standin_prog_driver_link: device %d\n", ordinal);
  allocate_with_driver(ordinal);
  CU_CHECK(cuCtxSynchronize());
  return 0;
}
