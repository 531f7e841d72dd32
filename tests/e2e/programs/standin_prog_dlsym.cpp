// Reaches the driver the way JAX's CUDA plugin does: dlopen("libcuda.so.1") and dlsym of the
// versioned names (cuInit, cuMemAlloc_v2, cuMemFree_v2, ...), never cuGetProcAddress.
// Leaks 3 MiB, frees 512 KiB + 64.
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "expect_live.h"

namespace {

void* handle = nullptr;

void* must_dlsym(const char* name) {
  void* fn = dlsym(handle, name);
  if (fn == nullptr) {
    std::fprintf(stderr, "standin_prog_dlsym: dlsym(%s) failed: %s\n", name, dlerror());
    std::exit(1);
  }
  return fn;
}

void check(CUresult r, const char* what, int line) {
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "standin_prog_dlsym: line %d: %s failed: %d\n", line, what, static_cast<int>(r));
    std::exit(1);
  }
}

}  // namespace

#define CU_CHECK(call) check((call), #call, __LINE__)

struct Driver {
  PFN_cuInit_v2000 init;
  PFN_cuDeviceGet_v2000 deviceGet;
  PFN_cuDevicePrimaryCtxRetain_v7000 primaryCtxRetain;
  PFN_cuCtxSetCurrent_v4000 ctxSetCurrent;
  PFN_cuMemAlloc_v3020 memAlloc;
  PFN_cuMemFree_v3020 memFree;
};

constexpr size_t kLeakedBytes = 3u << 20;         // 3 MiB, leaked
constexpr size_t kFreedBytes = (512u << 10) + 64;  // freed

STANDIN_NOINLINE void allocate_via_dlsym(const Driver& d) {
  CUdeviceptr leaked = 0;
  const int line = __LINE__; CU_CHECK(d.memAlloc(&leaked, kLeakedBytes));
  CUdeviceptr freed = 0;
  CU_CHECK(d.memAlloc(&freed, kFreedBytes));
  CU_CHECK(d.memFree(freed));
  print_expect_live(kLeakedBytes, "cuMemAlloc_v2", 0, __func__, __FILE__, line);
}

int main() {
  handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "standin_prog_dlsym: dlopen(libcuda.so.1) failed: %s\n", dlerror());
    return 1;
  }
  Driver d{};
  d.init = reinterpret_cast<PFN_cuInit_v2000>(must_dlsym("cuInit"));
  d.deviceGet = reinterpret_cast<PFN_cuDeviceGet_v2000>(must_dlsym("cuDeviceGet"));
  d.primaryCtxRetain = reinterpret_cast<PFN_cuDevicePrimaryCtxRetain_v7000>(must_dlsym("cuDevicePrimaryCtxRetain"));
  d.ctxSetCurrent = reinterpret_cast<PFN_cuCtxSetCurrent_v4000>(must_dlsym("cuCtxSetCurrent"));
  d.memAlloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(must_dlsym("cuMemAlloc_v2"));
  d.memFree = reinterpret_cast<PFN_cuMemFree_v3020>(must_dlsym("cuMemFree_v2"));

  CU_CHECK(d.init(0));
  CUdevice dev = 0;
  CU_CHECK(d.deviceGet(&dev, 0));
  CUcontext ctx = nullptr;
  CU_CHECK(d.primaryCtxRetain(&ctx, dev));
  CU_CHECK(d.ctxSetCurrent(ctx));
  std::printf("standin_prog_dlsym: driver functions from dlsym\n");
  allocate_via_dlsym(d);
  return 0;
}
