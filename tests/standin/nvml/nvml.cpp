// Stand-in libnvidia-ml.so.1 (tests only): just what vramtrace asks at dump time. A device is
// found by the stand-in driver's PCI bus id ("0000:1N:00.0" -> physical device N, which the driver
// numbers by its place in CUDA_VISIBLE_DEVICES, as NVML ignores that variable); the calling process is
// listed on it with usedGpuMemory = what the stand-in driver has charged on that device
// (capacity - cuMemGetInfo free) + STANDIN_NVML_CONTEXT_BYTES (default 314572800: the context,
// modules and other memory a real driver charges but no allocation call shows). It asks the
// driver through its public API (primary context retained and made current for the query, then
// the thread's context restored). A process that charged nothing is not listed.
// STANDIN_NVML_PROCESSES adds other processes (below), as a GPU shared with untraced programs.
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// ---- What `vramtrace top` asks (tools/input/nvml_processes.cpp): every GPU and the processes on
// it. NVML numbers GPUs by physical index whatever CUDA_VISIBLE_DEVICES says; a handle is the
// physical index + 1, as nvmlDeviceGetHandleByPciBusId_v2 makes it.

namespace {
int physical_count() {
  const char* v = std::getenv("STANDIN_CUDA_DEVICES");
  return v != nullptr ? static_cast<int>(std::strtol(v, nullptr, 10)) : 2;
}
unsigned long long device_bytes() {
  const char* v = std::getenv("STANDIN_CUDA_DEVICE_BYTES");
  return v != nullptr ? std::strtoull(v, nullptr, 10) : 1073741824ull;
}
// STANDIN_NVML_PROCESSES="PID:BYTES@PHYSICAL,...": processes NVML lists beside the calling one,
// so that a test can show a GPU process that vramtrace does not trace. Reads entry `i` of the list
// into pid/bytes/physical; false past its end or at an entry that does not parse.
bool listed_process(int i, unsigned* pid, unsigned long long* bytes, int* physical) {
  const char* p = std::getenv("STANDIN_NVML_PROCESSES");
  for (int k = 0; p != nullptr && *p != '\0'; ++k) {
    unsigned long a = 0, c = 0;
    unsigned long long b = 0;
    int used = 0;
    if (std::sscanf(p, "%lu:%llu@%lu%n", &a, &b, &c, &used) != 3) return false;
    if (k == i) {
      *pid = static_cast<unsigned>(a), *bytes = b, *physical = static_cast<int>(c);
      return true;
    }
    p += used;
    if (*p == ',') ++p;
  }
  return false;
}
}  // namespace

NVML_API int nvmlDeviceGetCount_v2(unsigned* count) {
  if (g_init == 0) return 1;
  if (count == nullptr) return 2;
  *count = static_cast<unsigned>(physical_count());
  return 0;
}

NVML_API int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (g_init == 0) return 1;
  if (device == nullptr || static_cast<int>(index) >= physical_count()) return 2;
  *device = reinterpret_cast<void*>(static_cast<unsigned long>(index + 1));
  return 0;
}

// The UUID the stand-in driver gives the same physical device (cuDeviceGetUuid), as NVML spells it.
NVML_API int nvmlDeviceGetUUID(void* device, char* uuid, unsigned length) {
  if (g_init == 0) return 1;
  const int physical = static_cast<int>(reinterpret_cast<unsigned long>(device)) - 1;
  if (uuid == nullptr || physical < 0 || physical >= physical_count()) return 2;
  if (length < 41) return 7;
  std::snprintf(uuid, length, "GPU-76747374-616e-6469-6e13-005aa50ff0%02x", physical);
  return 0;
}

struct Memory {
  unsigned long long total, free, used;
};

// Used: what the listed processes hold on it (the calling process is not counted: the CLI asks,
// and it holds nothing).
NVML_API int nvmlDeviceGetMemoryInfo(void* device, Memory* memory) {
  if (g_init == 0) return 1;
  const int physical = static_cast<int>(reinterpret_cast<unsigned long>(device)) - 1;
  if (memory == nullptr || physical < 0 || physical >= physical_count()) return 2;
  unsigned long long used = 0, bytes = 0;
  unsigned pid = 0;
  int where = 0;
  for (int i = 0; listed_process(i, &pid, &bytes, &where); ++i)
    if (where == physical) used += bytes;
  const unsigned long long total = device_bytes();
  *memory = Memory{total, used < total ? total - used : 0, used};
  return 0;
}

// As NVIDIA's: the process's name from the kernel (here /proc/PID/comm).
NVML_API int nvmlSystemGetProcessName(unsigned pid, char* name, unsigned length) {
  if (g_init == 0) return 1;
  if (name == nullptr || length == 0) return 2;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%u/comm", pid);
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return 6;  // NVML_ERROR_NOT_FOUND
  const bool ok = std::fgets(name, static_cast<int>(length), f) != nullptr;
  std::fclose(f);
  if (!ok) return 6;
  name[std::strcspn(name, "\n")] = '\0';
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
  const unsigned self = dev >= 0 && driver_used(dev, &used) && used > 0 ? 1 : 0;
  ProcessInfo listed[64];
  unsigned n_listed = 0;
  unsigned pid = 0;
  unsigned long long bytes = 0;
  int where = 0;
  for (int i = 0; n_listed < 64 && listed_process(i, &pid, &bytes, &where); ++i)
    if (where == physical) listed[n_listed++] = ProcessInfo{pid, bytes, ~0u, ~0u};
  const unsigned n = self + n_listed;
  if (*count < n) {
    *count = n;
    return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  }
  *count = n;
  if (n == 0) return 0;
  if (infos == nullptr) return 2;
  if (self == 1) infos[0] = ProcessInfo{static_cast<unsigned>(getpid()), used + context_bytes(), ~0u, ~0u};
  for (unsigned i = 0; i < n_listed; ++i) infos[self + i] = listed[i];
  return 0;
}
