// Stand-in libnvidia-ml.so.1 (tests only): just what vramtrace asks at dump time. A device is
// found by the stand-in driver's PCI bus id ("0000:1N:00.0" -> physical device N, which the driver
// numbers by its place in CUDA_VISIBLE_DEVICES, as NVML ignores that variable); the calling process is
// listed on it with usedGpuMemory = what the stand-in driver has charged on that device
// (capacity - cuMemGetInfo free) + STANDIN_NVML_CONTEXT_BYTES (default 314572800: the context,
// modules and other memory a real driver charges but no allocation call shows). It asks the
// driver through its public API (primary context retained and made current for the query, then
// the thread's context restored). A process that charged nothing is not listed.
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <unistd.h>

#include "../visible_devices.h"

#define NVML_API extern "C" __attribute__((visibility("default")))

namespace {
struct ProcessInfo {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
int g_init = 0;

unsigned long long context_bytes() {
  const char* v = std::getenv("STANDIN_NVML_CONTEXT_BYTES");
  return v != nullptr ? std::strtoull(v, nullptr, 10) : 314572800ull;
}

template <class F> F fn(const char* name) {
  static void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return h != nullptr ? reinterpret_cast<F>(dlsym(h, name)) : nullptr;
}

bool driver_used(int dev, unsigned long long* used) {
  auto retain = fn<CUresult (*)(CUcontext*, CUdevice)>("cuDevicePrimaryCtxRetain");
  auto release = fn<CUresult (*)(CUdevice)>("cuDevicePrimaryCtxRelease_v2");
  auto get = fn<CUresult (*)(CUcontext*)>("cuCtxGetCurrent");
  auto set = fn<CUresult (*)(CUcontext)>("cuCtxSetCurrent");
  auto info = fn<CUresult (*)(size_t*, size_t*)>("cuMemGetInfo_v2");
  if (!retain || !release || !get || !set || !info) return false;
  CUcontext old = nullptr, ctx = nullptr;
  if (get(&old) != CUDA_SUCCESS || retain(&ctx, dev) != CUDA_SUCCESS) return false;
  set(ctx);
  size_t free_bytes = 0, total = 0;
  const bool ok = info(&free_bytes, &total) == CUDA_SUCCESS;
  set(old);
  release(dev);
  *used = total - free_bytes;
  return ok;
}
}  // namespace

NVML_API int nvmlInit_v2() {
  ++g_init;
  return 0;
}

NVML_API int nvmlShutdown() {
  if (g_init == 0) return 1;  // NVML_ERROR_UNINITIALIZED
  --g_init;
  return 0;
}

NVML_API int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** device) {
  if (g_init == 0) return 1;
  unsigned domain = 0, bus = 0, slot = 0, func = 0;
  if (bus_id == nullptr || device == nullptr || std::sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &slot, &func) != 4 ||
      bus < 0x10 || bus >= 0x10 + 64) {
    return 2;  // NVML_ERROR_INVALID_ARGUMENT
  }
  *device = reinterpret_cast<void*>(static_cast<unsigned long>(bus - 0x10 + 1));
  return 0;
}

NVML_API int nvmlDeviceGetComputeRunningProcesses_v3(void* device, unsigned int* count, ProcessInfo* infos) {
  if (g_init == 0) return 1;
  if (count == nullptr) return 2;
  const int physical = static_cast<int>(reinterpret_cast<unsigned long>(device)) - 1;
  int order[64];
  const int visible = standin::visible_devices(64, order, 64);
  int dev = -1;
  for (int i = 0; i < visible; ++i)
    if (order[i] == physical) dev = i;
  unsigned long long used = 0;
  const unsigned n = dev >= 0 && driver_used(dev, &used) && used > 0 ? 1 : 0;
  if (*count < n) {
    *count = n;
    return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  }
  *count = n;
  if (n == 1) {
    if (infos == nullptr) return 2;
    infos[0] = ProcessInfo{static_cast<unsigned>(getpid()), used + context_bytes(), ~0u, ~0u};
  }
  return 0;
}
