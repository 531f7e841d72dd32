// The runtime entry points of the stand-in cudart. Each one reaches the driver only through the
// table filled by cudart::driver() (pointers from cuGetProcAddress), never by calling a cu* symbol.
#include "cudart_internal.h"

#include <cstdint>
#include <cstring>
#include <mutex>

namespace cudart {
namespace {

constexpr int kMaxDevices = 64;

thread_local int tl_device = -1;
std::mutex g_primary_mu;
CUcontext g_primary[kMaxDevices] = {};  // retained primary contexts, one per device

}  // namespace

int thread_device() { return tl_device; }
void set_thread_device(int dev) { tl_device = dev; }

cudaError_t primary_context(const DriverTable* t, int dev, CUcontext* ctx) {
  if (dev < 0 || dev >= kMaxDevices) return cudaErrorInvalidDevice;
  std::lock_guard<std::mutex> lock(g_primary_mu);
  if (g_primary[dev] == nullptr) {
    CUcontext c = nullptr;
    CUresult r = t->primaryCtxRetain(&c, dev);
    if (r != CUDA_SUCCESS) return map_error(r);
    g_primary[dev] = c;
  }
  *ctx = g_primary[dev];
  return cudaSuccess;
}

int primary_device_of(CUcontext ctx) {
  if (ctx == nullptr) return -1;
  std::lock_guard<std::mutex> lock(g_primary_mu);
  for (int dev = 0; dev < kMaxDevices; ++dev) {
    if (g_primary[dev] == ctx) return dev;
  }
  return -1;
}

void release_primary_contexts_at_exit() {
  const DriverTable* t = nullptr;
  if (driver(&t) != cudaSuccess || t->primaryCtxRelease == nullptr) return;
  std::lock_guard<std::mutex> lock(g_primary_mu);
  for (int dev = 0; dev < kMaxDevices; ++dev) {
    if (g_primary[dev] == nullptr) continue;
    g_primary[dev] = nullptr;
    const CUresult r = t->primaryCtxRelease(dev);
    trace("exit: cuDevicePrimaryCtxRelease_v2(%d) -> %d", dev, static_cast<int>(r));
  }
}

cudaError_t ensure_context(const DriverTable** table) {
  const DriverTable* t = nullptr;
  if (cudaError_t err = driver(&t); err != cudaSuccess) return err;
  CUcontext current = nullptr;
  if (CUresult r = t->ctxGetCurrent(&current); r != CUDA_SUCCESS) return map_error(r);
  if (current == nullptr) {
    const int dev = tl_device < 0 ? 0 : tl_device;
    CUcontext ctx = nullptr;
    if (cudaError_t err = primary_context(t, dev, &ctx); err != cudaSuccess) return err;
    if (CUresult r = t->ctxSetCurrent(ctx); r != CUDA_SUCCESS) return map_error(r);
  }
  *table = t;
  return cudaSuccess;
}

}  // namespace cudart

// Shorthands for the bodies below (all of them end in cudart::set_last_error).
#define CUDART_FAIL(err) return cudart::set_last_error(err)
#define CUDART_TRY(expr)                                   \
  do {                                                     \
    if (cudaError_t e_ = (expr); e_ != cudaSuccess) CUDART_FAIL(e_); \
  } while (0)
#define CUDART_DRIVER(slot, ...)                                            \
  do {                                                                      \
    if (t->slot == nullptr) CUDART_FAIL(cudaErrorCallRequiresNewerDriver);  \
    if (CUresult r_ = t->slot(__VA_ARGS__); r_ != CUDA_SUCCESS) CUDART_FAIL(cudart::map_error(r_)); \
  } while (0)

// ---- device memory ----

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMalloc(void** devPtr, size_t size) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (devPtr == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  if (size == 0) {
    *devPtr = nullptr;
    return cudaSuccess;
  }
  CUdeviceptr d = 0;
  CUDART_DRIVER(memAlloc, &d, size);
  *devPtr = reinterpret_cast<void*>(d);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaFree(void* devPtr) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (devPtr == nullptr) return cudaSuccess;
  CUDART_DRIVER(memFree, reinterpret_cast<CUdeviceptr>(devPtr));
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (devPtr == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  if (size == 0) {
    *devPtr = nullptr;
    return cudaSuccess;
  }
  CUdeviceptr d = 0;
  CUDART_DRIVER(memAllocAsync, &d, size, hStream);
  *devPtr = reinterpret_cast<void*>(d);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMallocAsync_ptsz(void** devPtr, size_t size, cudaStream_t hStream) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (devPtr == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  if (size == 0) {
    *devPtr = nullptr;
    return cudaSuccess;
  }
  CUdeviceptr d = 0;
  CUDART_DRIVER(memAllocAsync_ptsz, &d, size, hStream);
  *devPtr = reinterpret_cast<void*>(d);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(memFreeAsync, reinterpret_cast<CUdeviceptr>(devPtr), hStream);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaFreeAsync_ptsz(void* devPtr, cudaStream_t hStream) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(memFreeAsync_ptsz, reinterpret_cast<CUdeviceptr>(devPtr), hStream);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (devPtr == nullptr || size == 0) CUDART_FAIL(cudaErrorInvalidValue);
  CUdeviceptr d = 0;
  CUDART_DRIVER(memAllocManaged, &d, size, flags);
  *devPtr = reinterpret_cast<void*>(d);
  return cudaSuccess;
}

// ---- pitched device memory (cuMemAllocPitch_v2: pitch = width rounded up to 512 bytes) ----

namespace cudart {
// The element size cudart hands cuMemAllocPitch_v2 (the stand-in's pitch does not depend on it).
constexpr unsigned int kPitchElementBytes = 4;
}  // namespace cudart

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (devPtr == nullptr || pitch == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  if (width == 0 || height == 0) {  // like cudaMalloc(0): nothing allocated
    *devPtr = nullptr;
    *pitch = 0;
    return cudaSuccess;
  }
  CUdeviceptr d = 0;
  size_t p = 0;
  CUDART_DRIVER(memAllocPitch, &d, &p, width, height, cudart::kPitchElementBytes);
  *devPtr = reinterpret_cast<void*>(d);
  *pitch = p;
  return cudaSuccess;
}

// One pitched allocation of height * depth rows: pitch * height * depth bytes.
STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMalloc3D(struct cudaPitchedPtr* pitchedDevPtr, struct cudaExtent extent) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (pitchedDevPtr == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  if (extent.width == 0 || extent.height == 0 || extent.depth == 0) {
    *pitchedDevPtr = cudaPitchedPtr{nullptr, 0, extent.width, extent.height};
    return cudaSuccess;
  }
  if (extent.height > SIZE_MAX / extent.depth) CUDART_FAIL(cudaErrorMemoryAllocation);
  CUdeviceptr d = 0;
  size_t p = 0;
  CUDART_DRIVER(memAllocPitch, &d, &p, extent.width, extent.height * extent.depth, cudart::kPitchElementBytes);
  *pitchedDevPtr = cudaPitchedPtr{reinterpret_cast<void*>(d), p, extent.width, extent.height};
  return cudaSuccess;
}

// ---- stream-ordered memory pools ----

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t memPool,
                                                                 cudaStream_t stream) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (ptr == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  if (size == 0) {
    *ptr = nullptr;
    return cudaSuccess;
  }
  CUdeviceptr d = 0;
  CUDART_DRIVER(memAllocFromPoolAsync, &d, size, memPool, stream);
  *ptr = reinterpret_cast<void*>(d);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMallocFromPoolAsync_ptsz(void** ptr, size_t size, cudaMemPool_t memPool,
                                                                      cudaStream_t stream) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (ptr == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  if (size == 0) {
    *ptr = nullptr;
    return cudaSuccess;
  }
  CUdeviceptr d = 0;
  CUDART_DRIVER(memAllocFromPoolAsync_ptsz, &d, size, memPool, stream);
  *ptr = reinterpret_cast<void*>(d);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaDeviceGetDefaultMemPool(cudaMemPool_t* memPool, int device) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (memPool == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  int count = 0;
  CUDART_DRIVER(deviceGetCount, &count);
  if (device < 0 || device >= count) CUDART_FAIL(cudaErrorInvalidDevice);
  CUDART_DRIVER(deviceGetDefaultMemPool, memPool, device);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMemPoolCreate(cudaMemPool_t* memPool, const struct cudaMemPoolProps* poolProps) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (memPool == nullptr || poolProps == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  CUmemPoolProps props{};
  props.allocType = static_cast<CUmemAllocationType>(poolProps->allocType);
  props.handleTypes = static_cast<CUmemAllocationHandleType>(poolProps->handleTypes);
  props.location.type = static_cast<CUmemLocationType>(poolProps->location.type);
  props.location.id = poolProps->location.id;
  props.win32SecurityAttributes = poolProps->win32SecurityAttributes;
  props.maxSize = poolProps->maxSize;
  props.usage = poolProps->usage;
  CUDART_DRIVER(memPoolCreate, memPool, &props);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMemPoolDestroy(cudaMemPool_t memPool) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(memPoolDestroy, memPool);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(memPoolTrimTo, memPool, minBytesToKeep);
  return cudaSuccess;
}

// cudaMemPoolAttr and CUmemPool_attribute share their values (1 .. 8).
STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr,
                                                                 void* value) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(memPoolGetAttribute, memPool, static_cast<CUmemPool_attribute>(attr), value);
  return cudaSuccess;
}

// ---- host memory registration (cudaHostRegister* flags equal CU_MEMHOSTREGISTER_*) ----

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(memHostRegister, ptr, size, flags);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaHostUnregister(void* ptr) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(memHostUnregister, ptr);
  return cudaSuccess;
}

// ---- IPC (cudaIpcMemHandle_t and CUipcMemHandle are the same 64 bytes) ----

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaIpcGetMemHandle(cudaIpcMemHandle_t* handle, void* devPtr) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (handle == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  CUipcMemHandle h{};
  CUDART_DRIVER(ipcGetMemHandle, &h, reinterpret_cast<CUdeviceptr>(devPtr));
  static_assert(sizeof h.reserved == sizeof handle->reserved, "IPC handles differ in size");
  std::memcpy(handle->reserved, h.reserved, sizeof h.reserved);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaIpcOpenMemHandle(void** devPtr, cudaIpcMemHandle_t handle,
                                                              unsigned int flags) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (devPtr == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  CUipcMemHandle h{};
  std::memcpy(h.reserved, handle.reserved, sizeof h.reserved);
  CUdeviceptr d = 0;
  CUDART_DRIVER(ipcOpenMemHandle, &d, h, flags);
  *devPtr = reinterpret_cast<void*>(d);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaIpcCloseMemHandle(void* devPtr) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(ipcCloseMemHandle, reinterpret_cast<CUdeviceptr>(devPtr));
  return cudaSuccess;
}

// ---- page-locked host memory ----

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMallocHost(void** ptr, size_t size) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (ptr == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  if (size == 0) {
    *ptr = nullptr;
    return cudaSuccess;
  }
  void* p = nullptr;
  CUDART_DRIVER(memAllocHost, &p, size);
  *ptr = p;
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (pHost == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  if (size == 0) {
    *pHost = nullptr;
    return cudaSuccess;
  }
  void* p = nullptr;
  CUDART_DRIVER(memHostAlloc, &p, size, flags);
  *pHost = p;
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaFreeHost(void* ptr) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (ptr == nullptr) return cudaSuccess;
  CUDART_DRIVER(memFreeHost, ptr);
  return cudaSuccess;
}

// ---- devices ----

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGetDeviceCount(int* count) {
  if (count == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  const cudart::DriverTable* t = nullptr;
  if (cudaError_t err = cudart::driver(&t); err != cudaSuccess) {
    *count = 0;
    CUDART_FAIL(err);
  }
  CUDART_DRIVER(deviceGetCount, count);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaSetDevice(int device) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::driver(&t));
  int count = 0;
  CUDART_DRIVER(deviceGetCount, &count);
  if (device < 0 || device >= count) CUDART_FAIL(cudaErrorInvalidDevice);
  CUcontext ctx = nullptr;
  CUDART_TRY(cudart::primary_context(t, device, &ctx));
  CUDART_DRIVER(ctxSetCurrent, ctx);
  cudart::set_thread_device(device);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGetDevice(int* device) {
  if (device == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::driver(&t));
  CUcontext current = nullptr;
  CUDART_DRIVER(ctxGetCurrent, &current);
  if (current != nullptr) {
    CUdevice d = 0;
    CUDART_DRIVER(ctxGetDevice, &d);
    *device = d;
  } else {
    *device = cudart::thread_device() < 0 ? 0 : cudart::thread_device();
  }
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaDeviceSynchronize(void) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(ctxSynchronize);
  return cudaSuccess;
}

// As NVIDIA's cudart: cuCtxGetCurrent, cuCtxGetApiVersion (with a current context), then
// cuDevicePrimaryCtxReset_v2 of the current device. The reset keeps the retain, so the context the
// runtime uses stays valid and the next call goes on with it.
STANDIN_CUDART_API cudaError_t CUDARTAPI cudaDeviceReset(void) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::driver(&t));
  int dev = cudart::thread_device() < 0 ? 0 : cudart::thread_device();
  CUcontext current = nullptr;
  CUDART_DRIVER(ctxGetCurrent, &current);
  if (current != nullptr) {
    unsigned int version = 0;
    CUDART_DRIVER(ctxGetApiVersion, current, &version);
    if (int d = cudart::primary_device_of(current); d >= 0) dev = d;
  }
  CUDART_DRIVER(primaryCtxReset, dev);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMemGetInfo(size_t* free, size_t* total) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(memGetInfo, free, total);
  return cudaSuccess;
}

// ---- copies and sets (unified addressing: one driver call whatever the direction) ----

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) CUDART_FAIL(cudaErrorInvalidMemcpyDirection);
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(memcpy, reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), count);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMemcpy_ptds(void* dst, const void* src, size_t count,
                                                         enum cudaMemcpyKind kind) {
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) CUDART_FAIL(cudaErrorInvalidMemcpyDirection);
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(memcpy_ptds, reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), count);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMemset(void* devPtr, int value, size_t count) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(memsetD8, reinterpret_cast<CUdeviceptr>(devPtr), static_cast<unsigned char>(value), count);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMemset_ptds(void* devPtr, int value, size_t count) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(memsetD8_ptds, reinterpret_cast<CUdeviceptr>(devPtr), static_cast<unsigned char>(value), count);
  return cudaSuccess;
}

// ---- streams ----

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t* pStream) {
  if (pStream == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(streamCreate, pStream, 0u);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t stream) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(streamDestroy, stream);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(streamSynchronize, stream);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaStreamSynchronize_ptsz(cudaStream_t stream) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(streamSynchronize_ptsz, stream);
  return cudaSuccess;
}

// ---- errors and versions ----

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGetLastError(void) { return cudart::take_last_error(); }

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaPeekAtLastError(void) { return cudart::peek_last_error(); }

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaRuntimeGetVersion(int* runtimeVersion) {
  if (runtimeVersion == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  *runtimeVersion = CUDART_VERSION;
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  const cudart::DriverTable* t = nullptr;
  if (cudaError_t err = cudart::driver(&t); err != cudaSuccess) {
    // No usable driver: version 0, as cudart reports it.
    if (err == cudaErrorInsufficientDriver || err == cudaErrorStubLibrary) {
      *driverVersion = 0;
      return cudaSuccess;
    }
    CUDART_FAIL(err);
  }
  CUDART_DRIVER(driverGetVersion, driverVersion);
  return cudaSuccess;
}

// ---- driver entry points: through the stored cuGetProcAddress pointer, like cudart ----

namespace cudart {

cudaError_t driver_entry_point(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                               unsigned long long flags, cudaDriverEntryPointQueryResult* driverStatus) {
  if (symbol == nullptr || funcPtr == nullptr) return cudaErrorInvalidValue;
  const DriverTable* t = nullptr;
  if (cudaError_t err = driver(&t); err != cudaSuccess) return err;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult r = t->getProcAddress(symbol, funcPtr, static_cast<int>(cudaVersion), flags, &status);
  if (driverStatus != nullptr) {
    switch (status) {
      case CU_GET_PROC_ADDRESS_SUCCESS: *driverStatus = cudaDriverEntryPointSuccess; break;
      case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: *driverStatus = cudaDriverEntryPointVersionNotSufficent; break;
      default: *driverStatus = cudaDriverEntryPointSymbolNotFound; break;
    }
  }
  return map_error(r);
}

}  // namespace cudart

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion(
    const char* symbol, void** funcPtr, unsigned int cudaVersion, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult* driverStatus) {
  return cudart::set_last_error(cudart::driver_entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus));
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion_ptsz(
    const char* symbol, void** funcPtr, unsigned int cudaVersion, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult* driverStatus) {
  if (flags == cudaEnableDefault) flags = cudaEnablePerThreadDefaultStream;
  return cudart::set_last_error(cudart::driver_entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus));
}

// Deprecated in 13.0: the version is this runtime's own (CUDART_VERSION).
STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGetDriverEntryPoint(const char* symbol, void** funcPtr,
                                                                 unsigned long long flags,
                                                                 enum cudaDriverEntryPointQueryResult* driverStatus) {
  return cudart::set_last_error(cudart::driver_entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus));
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr,
                                                                      unsigned long long flags,
                                                                      enum cudaDriverEntryPointQueryResult* driverStatus) {
  if (flags == cudaEnableDefault) flags = cudaEnablePerThreadDefaultStream;
  return cudart::set_last_error(cudart::driver_entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus));
}

// ---- registration hooks nvcc emits into every .cu translation unit ----
// Accepted and ignored (the stand-in runs no kernels), so that a host-only program built with
// `nvcc -cudart shared` also runs on this runtime (LD_LIBRARY_PATH=<build>/standin).

namespace cudart {
namespace {
void* g_fatbin_handle = nullptr;
}  // namespace
}  // namespace cudart

STANDIN_CUDART_API void** CUDARTAPI __cudaRegisterFatBinary(void* fatCubin) {
  (void)fatCubin;
  return &cudart::g_fatbin_handle;
}

STANDIN_CUDART_API void CUDARTAPI __cudaRegisterFatBinaryEnd(void** fatCubinHandle) { (void)fatCubinHandle; }

STANDIN_CUDART_API void CUDARTAPI __cudaUnregisterFatBinary(void** fatCubinHandle) { (void)fatCubinHandle; }

// ---- CUDA arrays (cudart creates every one with cuArray3DCreate_v2 / cuMipmappedArrayCreate) ----

namespace cudart {
// A runtime channel descriptor as the driver's (format, channels): 1, 2 or 4 components of one
// size; false for anything else (cudaErrorInvalidChannelDescriptor).
bool driver_format(const cudaChannelFormatDesc* d, CUarray_format* format, unsigned* channels) {
  if (d == nullptr) return false;
  const int bits[4] = {d->x, d->y, d->z, d->w};
  unsigned n = 0;
  while (n < 4 && bits[n] != 0) ++n;
  for (unsigned i = n; i < 4; ++i)
    if (bits[i] != 0) return false;
  if (n != 1 && n != 2 && n != 4) return false;
  for (unsigned i = 1; i < n; ++i)
    if (bits[i] != bits[0]) return false;
  switch (d->f) {
    case cudaChannelFormatKindSigned:
      *format = bits[0] == 8 ? CU_AD_FORMAT_SIGNED_INT8 : bits[0] == 16 ? CU_AD_FORMAT_SIGNED_INT16
              : bits[0] == 32 ? CU_AD_FORMAT_SIGNED_INT32 : CUarray_format{};
      break;
    case cudaChannelFormatKindUnsigned:
      *format = bits[0] == 8 ? CU_AD_FORMAT_UNSIGNED_INT8 : bits[0] == 16 ? CU_AD_FORMAT_UNSIGNED_INT16
              : bits[0] == 32 ? CU_AD_FORMAT_UNSIGNED_INT32 : CUarray_format{};
      break;
    case cudaChannelFormatKindFloat:
      *format = bits[0] == 16 ? CU_AD_FORMAT_HALF : bits[0] == 32 ? CU_AD_FORMAT_FLOAT : CUarray_format{};
      break;
    default: return false;
  }
  *channels = n;
  return *format != CUarray_format{};
}
}  // namespace cudart

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMalloc3DArray(cudaArray_t* array, const struct cudaChannelFormatDesc* desc,
                                                         struct cudaExtent extent, unsigned int flags) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (array == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  CUDA_ARRAY3D_DESCRIPTOR d{};
  if (!cudart::driver_format(desc, &d.Format, &d.NumChannels)) CUDART_FAIL(cudaErrorInvalidChannelDescriptor);
  d.Width = extent.width;
  d.Height = extent.height;
  d.Depth = extent.depth;
  d.Flags = flags;
  CUarray handle = nullptr;
  CUDART_DRIVER(array3DCreate, &handle, &d);
  *array = reinterpret_cast<cudaArray_t>(handle);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMallocArray(cudaArray_t* array, const struct cudaChannelFormatDesc* desc,
                                                       size_t width, size_t height, unsigned int flags) {
  cudaExtent extent{width, height, 0};
  return cudaMalloc3DArray(array, desc, extent, flags);
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaMallocMipmappedArray(cudaMipmappedArray_t* mipmappedArray,
                                                                const struct cudaChannelFormatDesc* desc,
                                                                struct cudaExtent extent, unsigned int numLevels,
                                                                unsigned int flags) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (mipmappedArray == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  CUDA_ARRAY3D_DESCRIPTOR d{};
  if (!cudart::driver_format(desc, &d.Format, &d.NumChannels)) CUDART_FAIL(cudaErrorInvalidChannelDescriptor);
  d.Width = extent.width;
  d.Height = extent.height;
  d.Depth = extent.depth;
  d.Flags = flags;
  CUmipmappedArray handle = nullptr;
  CUDART_DRIVER(mipmappedArrayCreate, &handle, &d, numLevels == 0 ? 1 : numLevels);
  *mipmappedArray = reinterpret_cast<cudaMipmappedArray_t>(handle);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaFreeArray(cudaArray_t array) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (array == nullptr) return cudaSuccess;
  CUDART_DRIVER(arrayDestroy, reinterpret_cast<CUarray>(array));
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaFreeMipmappedArray(cudaMipmappedArray_t mipmappedArray) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (mipmappedArray == nullptr) return cudaSuccess;
  CUDART_DRIVER(mipmappedArrayDestroy, reinterpret_cast<CUmipmappedArray>(mipmappedArray));
  return cudaSuccess;
}

// ---- graphs, graph memory nodes, stream capture ----

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGraphCreate(cudaGraph_t* pGraph, unsigned int flags) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(graphCreate, reinterpret_cast<CUgraph*>(pGraph), flags);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGraphDestroy(cudaGraph_t graph) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(graphDestroy, reinterpret_cast<CUgraph>(graph));
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGraphAddMemAllocNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                                                const cudaGraphNode_t* pDependencies,
                                                                size_t numDependencies,
                                                                struct cudaMemAllocNodeParams* nodeParams) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  if (nodeParams == nullptr) CUDART_FAIL(cudaErrorInvalidValue);
  CUDA_MEM_ALLOC_NODE_PARAMS p{};
  p.poolProps.allocType = static_cast<CUmemAllocationType>(nodeParams->poolProps.allocType);
  p.poolProps.handleTypes = static_cast<CUmemAllocationHandleType>(nodeParams->poolProps.handleTypes);
  p.poolProps.location.type = static_cast<CUmemLocationType>(nodeParams->poolProps.location.type);
  p.poolProps.location.id = nodeParams->poolProps.location.id;
  p.poolProps.maxSize = nodeParams->poolProps.maxSize;
  p.accessDescs = reinterpret_cast<const CUmemAccessDesc*>(nodeParams->accessDescs);
  p.accessDescCount = nodeParams->accessDescCount;
  p.bytesize = nodeParams->bytesize;
  CUDART_DRIVER(graphAddMemAllocNode, reinterpret_cast<CUgraphNode*>(pGraphNode), reinterpret_cast<CUgraph>(graph),
                reinterpret_cast<const CUgraphNode*>(pDependencies), numDependencies, &p);
  nodeParams->dptr = reinterpret_cast<void*>(p.dptr);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGraphAddMemFreeNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                                               const cudaGraphNode_t* pDependencies,
                                                               size_t numDependencies, void* dptr) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(graphAddMemFreeNode, reinterpret_cast<CUgraphNode*>(pGraphNode), reinterpret_cast<CUgraph>(graph),
                reinterpret_cast<const CUgraphNode*>(pDependencies), numDependencies,
                reinterpret_cast<CUdeviceptr>(dptr));
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaDeviceGraphMemTrim(int device) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(deviceGraphMemTrim, device);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr,
                                                                      void* value) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(deviceGetGraphMemAttribute, device, static_cast<CUgraphMem_attribute>(attr), value);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(streamBeginCapture, reinterpret_cast<CUstream>(stream), static_cast<CUstreamCaptureMode>(mode));
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(streamEndCapture, reinterpret_cast<CUstream>(stream), reinterpret_cast<CUgraph*>(pGraph));
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaStreamIsCapturing(cudaStream_t stream,
                                                             enum cudaStreamCaptureStatus* pCaptureStatus) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(streamIsCapturing, reinterpret_cast<CUstream>(stream),
                reinterpret_cast<CUstreamCaptureStatus*>(pCaptureStatus));
  return cudaSuccess;
}

STANDIN_CUDART_API struct cudaChannelFormatDesc CUDARTAPI cudaCreateChannelDesc(int x, int y, int z, int w,
                                                                              enum cudaChannelFormatKind f) {
  return cudaChannelFormatDesc{x, y, z, w, f};
}

// ---- executable graphs (cudaGraphInstantiateParams and CUDA_GRAPH_INSTANTIATE_PARAMS match) ----

namespace cudart {
cudaError_t instantiate_with_params(bool per_thread, cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                    cudaGraphInstantiateParams* params) {
  const DriverTable* t = nullptr;
  if (cudaError_t e = ensure_context(&t); e != cudaSuccess) return e;
  if (params == nullptr) return cudaErrorInvalidValue;
  auto fn = per_thread ? t->graphInstantiateWithParams_ptsz : t->graphInstantiateWithParams;
  if (fn == nullptr) return cudaErrorCallRequiresNewerDriver;
  CUDA_GRAPH_INSTANTIATE_PARAMS p{};
  p.flags = params->flags;
  p.hUploadStream = reinterpret_cast<CUstream>(params->uploadStream);
  CUresult r = fn(reinterpret_cast<CUgraphExec*>(pGraphExec), reinterpret_cast<CUgraph>(graph), &p);
  params->errNode_out = reinterpret_cast<cudaGraphNode_t>(p.hErrNode_out);
  params->result_out = static_cast<cudaGraphInstantiateResult>(p.result_out);
  return map_error(r);
}
}  // namespace cudart

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                                            unsigned long long flags) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(graphInstantiateWithFlags, reinterpret_cast<CUgraphExec*>(pGraphExec),
                reinterpret_cast<CUgraph>(graph), flags);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGraphInstantiateWithFlags(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                                                     unsigned long long flags) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(graphInstantiateWithFlags, reinterpret_cast<CUgraphExec*>(pGraphExec),
                reinterpret_cast<CUgraph>(graph), flags);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGraphInstantiateWithParams(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                                                      cudaGraphInstantiateParams* instantiateParams) {
  CUDART_TRY(cudart::instantiate_with_params(false, pGraphExec, graph, instantiateParams));
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGraphInstantiateWithParams_ptsz(
    cudaGraphExec_t* pGraphExec, cudaGraph_t graph, cudaGraphInstantiateParams* instantiateParams) {
  CUDART_TRY(cudart::instantiate_with_params(true, pGraphExec, graph, instantiateParams));
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(graphUpload, reinterpret_cast<CUgraphExec>(graphExec), stream);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(graphUpload_ptsz, reinterpret_cast<CUgraphExec>(graphExec), stream);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(graphLaunch, reinterpret_cast<CUgraphExec>(graphExec), stream);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(graphLaunch_ptsz, reinterpret_cast<CUgraphExec>(graphExec), stream);
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(graphExecDestroy, reinterpret_cast<CUgraphExec>(graphExec));
  return cudaSuccess;
}

STANDIN_CUDART_API cudaError_t CUDARTAPI cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr,
                                                                      void* value) {
  const cudart::DriverTable* t = nullptr;
  CUDART_TRY(cudart::ensure_context(&t));
  CUDART_DRIVER(deviceSetGraphMemAttribute, device, static_cast<CUgraphMem_attribute>(attr), value);
  return cudaSuccess;
}
