// How the stand-in runtime reaches the driver: the way NVIDIA's cudart does it.
//
//   1. dlopen("libcuda.so.1", RTLD_NOW)
//   2. dlsym(handle, "cuGetProcAddress_v2")       -- the only dlsym it ever does
//   3. probe:  cuGetProcAddress_v2("", ...)        -- CUDA_ERROR_STUB_LIBRARY means a stub driver
//   4. cuGetProcAddress_v2("cuInit", 2000, 0), then cuInit(0)
//   5. cuGetProcAddress_v2("cuGetProcAddress", 11030, 0) and ("cuGetProcAddress", 12000, 0),
//      both through the dlsym'ed pointer; the 12000 answer is kept and every later look-up goes
//      through it (never through the dlsym'ed pointer, never by calling a cu* symbol directly)
//   6. one look-up per entry point, with an explicit version and flags (table below).
#include "cudart_internal.h"

#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cudart {
namespace {

bool trace_enabled() {
  static const bool on = [] {
    const char* env = std::getenv("STANDIN_CUDA_TRACE");
    return env != nullptr && std::strcmp(env, "1") == 0;
  }();
  return on;
}

struct Bootstrap {
  cudaError_t error = cudaSuccess;
  DriverTable table{};
};

// Looks one entry point up through `gpa`; null when the driver lacks it. (Not a template, so
// that its demangled name starts with "cudart::" like every other frame of this library.)
void* look_up(PFN_cuGetProcAddress_v12000 gpa, const char* symbol, int version, cuuint64_t flags) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult r = gpa(symbol, &fn, version, flags, &status);
  if (r != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS) fn = nullptr;
  return fn;
}

#define CUDART_LOOK_UP(gpa, slot, symbol, version, flags) \
  (slot) = reinterpret_cast<decltype(slot)>(look_up((gpa), (symbol), (version), (flags)))

Bootstrap* bootstrap() {
  auto* b = new Bootstrap();  // never freed: driver pointers must outlive static destructors
  void* handle = dlopen("libcuda.so.1", RTLD_NOW);
  trace("dlopen(\"libcuda.so.1\", RTLD_NOW) = %p", handle);
  if (handle == nullptr) {
    b->error = cudaErrorInsufficientDriver;
    return b;
  }
  auto dl_gpa = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(handle, "cuGetProcAddress_v2"));
  trace("dlsym(libcuda, \"cuGetProcAddress_v2\") = %p", reinterpret_cast<void*>(dl_gpa));
  if (dl_gpa == nullptr) {
    b->error = cudaErrorInsufficientDriver;
    return b;
  }

  // Probe: a stub driver (the toolkit's stubs/libcuda.so) answers CUDA_ERROR_STUB_LIBRARY.
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (dl_gpa("", &fn, CUDART_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) == CUDA_ERROR_STUB_LIBRARY) {
    b->error = cudaErrorStubLibrary;
    return b;
  }

  PFN_cuInit_v2000 init = nullptr;
  CUDART_LOOK_UP(dl_gpa, init, "cuInit", 2000, CU_GET_PROC_ADDRESS_DEFAULT);
  if (init == nullptr) {
    b->error = cudaErrorInsufficientDriver;
    return b;
  }
  if (CUresult r = init(0); r != CUDA_SUCCESS) {
    b->error = r == CUDA_ERROR_NOT_INITIALIZED ? cudaErrorInitializationError : map_error(r);
    return b;
  }

  // cudart asks for both ABIs of cuGetProcAddress; it keeps and uses the 12.0 one.
  PFN_cuGetProcAddress_v11030 legacy_gpa = nullptr;
  CUDART_LOOK_UP(dl_gpa, legacy_gpa, "cuGetProcAddress", 11030, CU_GET_PROC_ADDRESS_DEFAULT);
  (void)legacy_gpa;  // asked for, never used
  PFN_cuGetProcAddress_v12000 gpa = nullptr;
  CUDART_LOOK_UP(dl_gpa, gpa, "cuGetProcAddress", 12000, CU_GET_PROC_ADDRESS_DEFAULT);
  if (gpa == nullptr) {
    b->error = cudaErrorInsufficientDriver;
    return b;
  }

  DriverTable& t = b->table;
  t.getProcAddress = gpa;
  t.init = init;
  constexpr cuuint64_t kDefault = CU_GET_PROC_ADDRESS_DEFAULT;
  constexpr cuuint64_t kPerThread = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  CUDART_LOOK_UP(gpa, t.driverGetVersion, "cuDriverGetVersion", 2020, kDefault);
  CUDART_LOOK_UP(gpa, t.deviceGet, "cuDeviceGet", 2000, kDefault);
  CUDART_LOOK_UP(gpa, t.deviceGetCount, "cuDeviceGetCount", 2000, kDefault);
  CUDART_LOOK_UP(gpa, t.primaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000, kDefault);
  CUDART_LOOK_UP(gpa, t.primaryCtxRelease, "cuDevicePrimaryCtxRelease", 11000, kDefault);
  CUDART_LOOK_UP(gpa, t.primaryCtxReset, "cuDevicePrimaryCtxReset", 11000, kDefault);
  CUDART_LOOK_UP(gpa, t.ctxGetApiVersion, "cuCtxGetApiVersion", 3020, kDefault);
  CUDART_LOOK_UP(gpa, t.ctxSetCurrent, "cuCtxSetCurrent", 4000, kDefault);
  CUDART_LOOK_UP(gpa, t.ctxGetCurrent, "cuCtxGetCurrent", 4000, kDefault);
  CUDART_LOOK_UP(gpa, t.ctxGetDevice, "cuCtxGetDevice", 2000, kDefault);
  CUDART_LOOK_UP(gpa, t.ctxSynchronize, "cuCtxSynchronize", 2000, kDefault);
  CUDART_LOOK_UP(gpa, t.memAlloc, "cuMemAlloc", 3020, kDefault);
  CUDART_LOOK_UP(gpa, t.memFree, "cuMemFree", 3020, kDefault);
  CUDART_LOOK_UP(gpa, t.memAllocAsync, "cuMemAllocAsync", 11020, kDefault);
  CUDART_LOOK_UP(gpa, t.memAllocAsync_ptsz, "cuMemAllocAsync", 11020, kPerThread);
  CUDART_LOOK_UP(gpa, t.memFreeAsync, "cuMemFreeAsync", 11020, kDefault);
  CUDART_LOOK_UP(gpa, t.memFreeAsync_ptsz, "cuMemFreeAsync", 11020, kPerThread);
  CUDART_LOOK_UP(gpa, t.memAllocManaged, "cuMemAllocManaged", 6000, kDefault);
  CUDART_LOOK_UP(gpa, t.memAllocHost, "cuMemAllocHost", 3020, kDefault);
  CUDART_LOOK_UP(gpa, t.memHostAlloc, "cuMemHostAlloc", 2020, kDefault);
  CUDART_LOOK_UP(gpa, t.memFreeHost, "cuMemFreeHost", 2000, kDefault);
  CUDART_LOOK_UP(gpa, t.memGetInfo, "cuMemGetInfo", 3020, kDefault);
  CUDART_LOOK_UP(gpa, t.memcpy, "cuMemcpy", 4000, kDefault);
  CUDART_LOOK_UP(gpa, t.memcpy_ptds, "cuMemcpy", 7000, kPerThread);
  CUDART_LOOK_UP(gpa, t.memsetD8, "cuMemsetD8", 3020, kDefault);
  CUDART_LOOK_UP(gpa, t.memsetD8_ptds, "cuMemsetD8", 7000, kPerThread);
  CUDART_LOOK_UP(gpa, t.streamCreate, "cuStreamCreate", 2000, kDefault);
  CUDART_LOOK_UP(gpa, t.streamDestroy, "cuStreamDestroy", 4000, kDefault);
  CUDART_LOOK_UP(gpa, t.streamSynchronize, "cuStreamSynchronize", 2000, kDefault);
  CUDART_LOOK_UP(gpa, t.streamSynchronize_ptsz, "cuStreamSynchronize", 7000, kPerThread);
  CUDART_LOOK_UP(gpa, t.memAllocPitch, "cuMemAllocPitch", 3020, kDefault);
  CUDART_LOOK_UP(gpa, t.deviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", 11020, kDefault);
  CUDART_LOOK_UP(gpa, t.memPoolCreate, "cuMemPoolCreate", 11020, kDefault);
  CUDART_LOOK_UP(gpa, t.memPoolDestroy, "cuMemPoolDestroy", 11020, kDefault);
  CUDART_LOOK_UP(gpa, t.memPoolTrimTo, "cuMemPoolTrimTo", 11020, kDefault);
  CUDART_LOOK_UP(gpa, t.memPoolGetAttribute, "cuMemPoolGetAttribute", 11020, kDefault);
  CUDART_LOOK_UP(gpa, t.memAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 11020, kDefault);
  CUDART_LOOK_UP(gpa, t.memAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", 11020, kPerThread);
  CUDART_LOOK_UP(gpa, t.memHostRegister, "cuMemHostRegister", 6050, kDefault);
  CUDART_LOOK_UP(gpa, t.memHostUnregister, "cuMemHostUnregister", 4000, kDefault);
  CUDART_LOOK_UP(gpa, t.ipcGetMemHandle, "cuIpcGetMemHandle", 4010, kDefault);
  CUDART_LOOK_UP(gpa, t.ipcOpenMemHandle, "cuIpcOpenMemHandle", 11000, kDefault);
  CUDART_LOOK_UP(gpa, t.ipcCloseMemHandle, "cuIpcCloseMemHandle", 4010, kDefault);
  CUDART_LOOK_UP(gpa, t.array3DCreate, "cuArray3DCreate", 3020, kDefault);
  CUDART_LOOK_UP(gpa, t.arrayDestroy, "cuArrayDestroy", 2000, kDefault);
  CUDART_LOOK_UP(gpa, t.mipmappedArrayCreate, "cuMipmappedArrayCreate", 5000, kDefault);
  CUDART_LOOK_UP(gpa, t.mipmappedArrayDestroy, "cuMipmappedArrayDestroy", 5000, kDefault);
  CUDART_LOOK_UP(gpa, t.graphCreate, "cuGraphCreate", 10000, kDefault);
  CUDART_LOOK_UP(gpa, t.graphDestroy, "cuGraphDestroy", 10000, kDefault);
  CUDART_LOOK_UP(gpa, t.graphAddMemAllocNode, "cuGraphAddMemAllocNode", 11040, kDefault);
  CUDART_LOOK_UP(gpa, t.graphAddMemFreeNode, "cuGraphAddMemFreeNode", 11040, kDefault);
  CUDART_LOOK_UP(gpa, t.deviceGraphMemTrim, "cuDeviceGraphMemTrim", 11040, kDefault);
  CUDART_LOOK_UP(gpa, t.deviceGetGraphMemAttribute, "cuDeviceGetGraphMemAttribute", 11040, kDefault);
  CUDART_LOOK_UP(gpa, t.streamBeginCapture, "cuStreamBeginCapture", 10010, kDefault);
  CUDART_LOOK_UP(gpa, t.streamEndCapture, "cuStreamEndCapture", 10000, kDefault);
  CUDART_LOOK_UP(gpa, t.streamIsCapturing, "cuStreamIsCapturing", 10000, kDefault);
  CUDART_LOOK_UP(gpa, t.graphInstantiateWithFlags, "cuGraphInstantiateWithFlags", 11040, kDefault);
  CUDART_LOOK_UP(gpa, t.graphInstantiateWithParams, "cuGraphInstantiateWithParams", 12000, kDefault);
  CUDART_LOOK_UP(gpa, t.graphInstantiateWithParams_ptsz, "cuGraphInstantiateWithParams", 12000, kPerThread);
  CUDART_LOOK_UP(gpa, t.graphUpload, "cuGraphUpload", 11010, kDefault);
  CUDART_LOOK_UP(gpa, t.graphUpload_ptsz, "cuGraphUpload", 11010, kPerThread);
  CUDART_LOOK_UP(gpa, t.graphLaunch, "cuGraphLaunch", 10000, kDefault);
  CUDART_LOOK_UP(gpa, t.graphLaunch_ptsz, "cuGraphLaunch", 10000, kPerThread);
  CUDART_LOOK_UP(gpa, t.graphExecDestroy, "cuGraphExecDestroy", 10000, kDefault);
  CUDART_LOOK_UP(gpa, t.deviceSetGraphMemAttribute, "cuDeviceSetGraphMemAttribute", 11040, kDefault);
  if (t.deviceGetCount == nullptr || t.primaryCtxRetain == nullptr || t.ctxSetCurrent == nullptr ||
      t.ctxGetCurrent == nullptr || t.ctxGetDevice == nullptr) {
    b->error = cudaErrorInsufficientDriver;
    return b;
  }
  // STANDIN_CUDART_RELEASE_AT_EXIT=1: the process's exit releases the primary contexts this
  // runtime retained, the last release that tears them down (as a context ends at a real exit).
  if (const char* env = std::getenv("STANDIN_CUDART_RELEASE_AT_EXIT"); env != nullptr && std::strcmp(env, "1") == 0) {
    std::atexit(release_primary_contexts_at_exit);
    trace("atexit: release the retained primary contexts");
  }
  trace("bootstrap complete");
  return b;
}

}  // namespace

void trace(const char* fmt, ...) {
  if (!trace_enabled()) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "[standin-cudart] %s\n", line);
}

cudaError_t driver(const DriverTable** table) {
  static const Bootstrap* b = bootstrap();  // thread-safe lazy initialisation
  if (b->error == cudaSuccess) *table = &b->table;
  return b->error;
}

}  // namespace cudart
