// The stand-in driver's entry points, with the CUDA 13.0 ABI taken from the real cuda.h.
// Each exported function checks its arguments, does the work on host memory, traces itself
// (STANDIN_CUDA_TRACE=1) and returns; none calls another exported entry point.
#include "driver_internal.h"
#include "cupti_hooks.h"

#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace sd = standin_driver;

namespace standin_driver {
namespace {

// What cuMemFree* gives back; cuMemFreeAsync* takes the same minus managed memory.
constexpr unsigned kDeviceKinds = kind_bit(MemKind::device) | kind_bit(MemKind::device_async) |
                                  kind_bit(MemKind::managed) | kind_bit(MemKind::device_low32) |
                                  kind_bit(MemKind::pitched);
constexpr unsigned kAsyncFreeKinds = kDeviceKinds & ~kind_bit(MemKind::managed);
// Where cuMemsetD8* may write: device memory however it was obtained.
constexpr unsigned kMemsetKinds = kDeviceKinds | kind_bit(MemKind::ipc_import) | kind_bit(MemKind::vmm_mapping);

// cuMemFree* / cuMemFreeAsync*: an allocation of `allowed`, or a graph node's address allocated now.
CUresult free_device(std::uintptr_t address, unsigned allowed) {
  CUresult r = release(address, allowed);
  return r == CUDA_SUCCESS ? r : free_graph_node(address);
}

CUresult device_alloc(MemKind kind, CUdeviceptr* dptr, std::size_t bytes) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (dptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx = current_context();
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  std::uintptr_t address = 0;
  CUresult r = allocate(kind, ctx->device, bytes, &address);
  if (r == CUDA_SUCCESS) *dptr = static_cast<CUdeviceptr>(address);
  return r;
}

CUresult async_alloc(CUdeviceptr* dptr, std::size_t bytes, CUstream stream) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (dptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  int device = -1;
  CUresult r = stream_device(stream, &device);
  if (r != CUDA_SUCCESS) return r;
  if (Graph* g = capturing_graph(stream)) {  // captured: a graph memory node, not memory
    std::uintptr_t address = 0;
    r = graph_alloc(g, device, bytes, &address);
    if (r == CUDA_SUCCESS) *dptr = static_cast<CUdeviceptr>(address);
    return r;
  }
  // From the device's default pool.
  std::uintptr_t address = 0;
  r = allocate(MemKind::device_async, device, bytes, &address,
               state().default_pools[static_cast<std::size_t>(device)]);
  if (r == CUDA_SUCCESS) *dptr = static_cast<CUdeviceptr>(address);
  return r;
}

CUresult async_free(CUdeviceptr dptr, CUstream stream) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!valid_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (dptr == 0) return CUDA_SUCCESS;
  if (Graph* g = capturing_graph(stream)) return graph_free(g, static_cast<std::uintptr_t>(dptr));  // a free node
  return free_device(static_cast<std::uintptr_t>(dptr), kAsyncFreeKinds);
}

CUresult host_alloc(void** pp, std::size_t bytes) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (pp == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx = current_context();
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  std::uintptr_t address = 0;
  CUresult r = allocate(MemKind::host_pinned, ctx->device, bytes, &address);
  if (r == CUDA_SUCCESS) *pp = reinterpret_cast<void*>(address);
  return r;
}

CUresult mem_info(std::size_t* free_bytes, std::size_t* total_bytes) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (free_bytes == nullptr || total_bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx = current_context();
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  *total_bytes = config().device_bytes;
  *free_bytes = config().device_bytes - st.used[static_cast<std::size_t>(ctx->device)];
  return CUDA_SUCCESS;
}

CUresult memcpy_any(CUdeviceptr dst, CUdeviceptr src, std::size_t n) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (current_context() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (n == 0) return CUDA_SUCCESS;
  if (dst == 0 || src == 0) return CUDA_ERROR_INVALID_VALUE;
  // Memory is unified host memory here; a pointer inside a known allocation must not run past it.
  for (CUdeviceptr p : {dst, src}) {
    std::uintptr_t start = 0;
    Allocation a{};
    if (find_range(static_cast<std::uintptr_t>(p), 0, &start, &a) &&
        !find_range(static_cast<std::uintptr_t>(p), n, &start, &a)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
  return CUDA_SUCCESS;
}

CUresult memset_d8(CUdeviceptr dst, unsigned char value, std::size_t n) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (current_context() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  std::uintptr_t start = 0;
  Allocation a{};
  if (!find_range(static_cast<std::uintptr_t>(dst), n, &start, &a) || (kMemsetKinds & kind_bit(a.kind)) == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (n != 0) std::memset(reinterpret_cast<void*>(dst), value, n);
  return CUDA_SUCCESS;
}

CUresult stream_sync(CUstream s) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) {
    return current_context() == nullptr ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
  }
  return valid_stream(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult stream_destroy(CUstream s) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  auto* stream = reinterpret_cast<Stream*>(s);
  State& st = state();
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (s == nullptr || st.streams.erase(stream) == 0) return CUDA_ERROR_INVALID_HANDLE;
  }
  forget_capture(s);
  stream->magic = 0;
  delete stream;
  return CUDA_SUCCESS;
}

CUresult device_uuid(CUuuid* uuid, CUdevice dev) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  // Fake but stable per ordinal: "vtstandin" + 6 fixed bytes + the ordinal.
  static const unsigned char base[16] = {'v', 't', 's', 't', 'a', 'n', 'd', 'i',
                                         'n', 0x13, 0x00, 0x5a, 0xa5, 0x0f, 0xf0, 0x00};
  std::memcpy(uuid->bytes, base, sizeof base);
  uuid->bytes[15] = static_cast<char>(physical_of(dev));
  return CUDA_SUCCESS;
}

CUresult ctx_device(CUdevice* device, CUcontext ctx) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Context* c = ctx == nullptr ? current_context() : context_from_handle(ctx);
  if (c == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  *device = c->device;
  return CUDA_SUCCESS;
}

CUresult ctx_sync(CUcontext ctx) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  Context* c = ctx == nullptr ? current_context() : context_from_handle(ctx);
  return c == nullptr ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}

}  // namespace
}  // namespace standin_driver

using sd::traced;

// ---- initialisation and version ----

STANDIN_CU_API CUresult CUDAAPI cuInit(unsigned int Flags) {
  CUresult r = CUDA_SUCCESS;
  if (Flags != 0) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (sd::config().device_count == 0) {
    r = CUDA_ERROR_NO_DEVICE;
  } else {
    sd::state();
    sd::mark_initialized();
    sd::load_injection();
  }
  return traced(r, "cuInit(%u)", Flags);
}

STANDIN_CU_API CUresult CUDAAPI cuDriverGetVersion(int* driverVersion) {
  CUresult r = CUDA_SUCCESS;
  if (driverVersion == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    *driverVersion = sd::kDriverVersion;
  }
  return traced(r, "cuDriverGetVersion()");
}

// ---- devices ----

STANDIN_CU_API CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (device == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (!sd::valid_device(ordinal)) {
    r = CUDA_ERROR_INVALID_DEVICE;
  } else {
    *device = ordinal;
  }
  return traced(r, "cuDeviceGet(ordinal=%d)", ordinal);
}

STANDIN_CU_API CUresult CUDAAPI cuDeviceGetCount(int* count) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (count == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    *count = sd::config().device_count;
  }
  return traced(r, "cuDeviceGetCount() count=%d", r == CUDA_SUCCESS ? *count : -1);
}

STANDIN_CU_API CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice dev) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (name == nullptr || len <= 0) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (!sd::valid_device(dev)) {
    r = CUDA_ERROR_INVALID_DEVICE;
  } else {
    std::snprintf(name, static_cast<std::size_t>(len), "vramtrace stand-in GPU %d", sd::physical_of(dev));
  }
  return traced(r, "cuDeviceGetName(dev=%d)", dev);
}

STANDIN_CU_API CUresult CUDAAPI cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (bytes == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (!sd::valid_device(dev)) {
    r = CUDA_ERROR_INVALID_DEVICE;
  } else {
    *bytes = sd::config().device_bytes;
  }
  return traced(r, "cuDeviceTotalMem_v2(dev=%d)", dev);
}

// Legacy (CUDA 2.0) ABI: 32-bit byte count, clamped.
STANDIN_CU_API CUresult CUDAAPI cuDeviceTotalMem(unsigned int* bytes, CUdevice dev) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (bytes == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (!sd::valid_device(dev)) {
    r = CUDA_ERROR_INVALID_DEVICE;
  } else {
    const std::size_t total = sd::config().device_bytes;
    *bytes = total > UINT_MAX ? UINT_MAX : static_cast<unsigned int>(total);
  }
  return traced(r, "cuDeviceTotalMem(dev=%d)", dev);
}

STANDIN_CU_API CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  return traced(sd::device_uuid(uuid, dev), "cuDeviceGetUuid_v2(dev=%d)", dev);
}

STANDIN_CU_API CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  return traced(sd::device_uuid(uuid, dev), "cuDeviceGetUuid(dev=%d)", dev);
}

STANDIN_CU_API CUresult CUDAAPI cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (pciBusId == nullptr || len <= 0) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (!sd::valid_device(dev)) {
    r = CUDA_ERROR_INVALID_DEVICE;
  } else {
    std::snprintf(pciBusId, static_cast<std::size_t>(len), "0000:%02x:00.0", 0x10 + sd::physical_of(dev));
  }
  return traced(r, "cuDeviceGetPCIBusId(dev=%d)", dev);
}

STANDIN_CU_API CUresult CUDAAPI cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (pi == nullptr || attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (!sd::valid_device(dev)) {
    r = CUDA_ERROR_INVALID_DEVICE;
  } else {
    int value = 0;
    switch (attrib) {
      case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: value = 1024; break;
      case CU_DEVICE_ATTRIBUTE_WARP_SIZE: value = 32; break;
      case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: value = 132; break;
      case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: value = 9; break;
      case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: value = 0; break;
      case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: value = 0x10 + sd::physical_of(dev); break;
      case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: value = 0; break;
      case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: value = 0; break;
      case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: value = 1; break;
      case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: value = 1; break;
      case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: value = 1; break;
      case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: value = 1; break;
      case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: value = 1; break;
      default: value = 0; break;
    }
    *pi = value;
  }
  return traced(r, "cuDeviceGetAttribute(attrib=%d, dev=%d)", static_cast<int>(attrib), dev);
}

// ---- contexts ----

STANDIN_CU_API CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (pctx == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (!sd::valid_device(dev)) {
    r = CUDA_ERROR_INVALID_DEVICE;
  } else {
    sd::State& st = sd::state();
    std::lock_guard<std::mutex> lock(st.mu);
    sd::Context& c = st.contexts[static_cast<std::size_t>(dev)];
    ++c.retain_count;
    *pctx = reinterpret_cast<CUcontext>(&c);
  }
  return traced(r, "cuDevicePrimaryCtxRetain(dev=%d) ctx=%p", dev,
                r == CUDA_SUCCESS ? static_cast<void*>(*pctx) : nullptr);
}

STANDIN_CU_API CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (ctx == nullptr) {
    sd::set_current_context(nullptr);
  } else if (sd::Context* c = sd::context_from_handle(ctx); c == nullptr) {
    r = CUDA_ERROR_INVALID_CONTEXT;
  } else {
    sd::set_current_context(c);
  }
  return traced(r, "cuCtxSetCurrent(%p)", static_cast<void*>(ctx));
}

STANDIN_CU_API CUresult CUDAAPI cuCtxGetCurrent(CUcontext* pctx) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (pctx == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    *pctx = reinterpret_cast<CUcontext>(sd::current_context());
  }
  return traced(r, "cuCtxGetCurrent() ctx=%p", r == CUDA_SUCCESS ? static_cast<void*>(*pctx) : nullptr);
}

STANDIN_CU_API CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
  CUresult r = sd::ctx_device(device, nullptr);
  return traced(r, "cuCtxGetDevice() device=%d", r == CUDA_SUCCESS ? *device : -1);
}

STANDIN_CU_API CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
  CUresult r = sd::ctx_device(device, ctx);
  return traced(r, "cuCtxGetDevice_v2(ctx=%p) device=%d", static_cast<void*>(ctx),
                r == CUDA_SUCCESS ? *device : -1);
}

STANDIN_CU_API CUresult CUDAAPI cuCtxSynchronize(void) {
  return traced(sd::ctx_sync(nullptr), "cuCtxSynchronize()");
}

STANDIN_CU_API CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx) {
  return traced(sd::ctx_sync(ctx), "cuCtxSynchronize_v2(ctx=%p)", static_cast<void*>(ctx));
}

// ---- device memory ----

STANDIN_CU_API CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  STANDIN_API_CALL(cuMemAlloc_v2, dptr, bytesize);
  CUresult r = sd::device_alloc(sd::MemKind::device, dptr, bytesize);
  return standin_api_call_.done(
      traced(r, "cuMemAlloc_v2(bytesize=%zu) ptr=%#llx", bytesize, r == CUDA_SUCCESS ? *dptr : 0ULL));
}

// Legacy (CUDA 2.0) ABI: 32-bit CUdeviceptr_v1 and size; served from memory mapped below 2 GiB.
STANDIN_CU_API CUresult CUDAAPI cuMemAlloc(CUdeviceptr_v1* dptr, unsigned int bytesize) {
  STANDIN_API_CALL(cuMemAlloc, dptr, bytesize);
  CUdeviceptr wide = 0;
  CUresult r = sd::device_alloc(sd::MemKind::device_low32, dptr == nullptr ? nullptr : &wide, bytesize);
  if (r == CUDA_SUCCESS) {
    if (wide > UINT_MAX) {  // cannot happen with MAP_32BIT; refuse rather than truncate
      sd::release(static_cast<std::uintptr_t>(wide), sd::kind_bit(sd::MemKind::device_low32));
      r = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      *dptr = static_cast<CUdeviceptr_v1>(wide);
    }
  }
  return standin_api_call_.done(traced(r, "cuMemAlloc(bytesize=%u) ptr=%#x", bytesize, r == CUDA_SUCCESS ? *dptr : 0U));
}

STANDIN_CU_API CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr) {
  STANDIN_API_CALL(cuMemFree_v2, dptr);
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (dptr != 0) {
    r = sd::free_device(static_cast<std::uintptr_t>(dptr), sd::kDeviceKinds);
  }
  return standin_api_call_.done(traced(r, "cuMemFree_v2(%#llx)", dptr));
}

STANDIN_CU_API CUresult CUDAAPI cuMemFree(CUdeviceptr_v1 dptr) {
  STANDIN_API_CALL(cuMemFree, dptr);
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (dptr != 0) {
    r = sd::release(static_cast<std::uintptr_t>(dptr), sd::kDeviceKinds);
  }
  return standin_api_call_.done(traced(r, "cuMemFree(%#x)", dptr));
}

STANDIN_CU_API CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
  STANDIN_API_CALL(cuMemAllocAsync, dptr, bytesize, hStream);
  CUresult r = sd::async_alloc(dptr, bytesize, hStream);
  return standin_api_call_.done(traced(r, "cuMemAllocAsync(bytesize=%zu, stream=%p) ptr=%#llx", bytesize,
                                       static_cast<void*>(hStream), r == CUDA_SUCCESS ? *dptr : 0ULL));
}

STANDIN_CU_API CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
  STANDIN_API_CALL(cuMemAllocAsync_ptsz, dptr, bytesize, hStream);
  CUresult r = sd::async_alloc(dptr, bytesize, hStream);
  return standin_api_call_.done(traced(r, "cuMemAllocAsync_ptsz(bytesize=%zu, stream=%p) ptr=%#llx", bytesize,
                                       static_cast<void*>(hStream), r == CUDA_SUCCESS ? *dptr : 0ULL));
}

STANDIN_CU_API CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
  STANDIN_API_CALL(cuMemFreeAsync, dptr, hStream);
  return standin_api_call_.done(
      traced(sd::async_free(dptr, hStream), "cuMemFreeAsync(%#llx, stream=%p)", dptr, static_cast<void*>(hStream)));
}

STANDIN_CU_API CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) {
  STANDIN_API_CALL(cuMemFreeAsync_ptsz, dptr, hStream);
  return standin_api_call_.done(traced(sd::async_free(dptr, hStream), "cuMemFreeAsync_ptsz(%#llx, stream=%p)", dptr,
                                       static_cast<void*>(hStream)));
}

STANDIN_CU_API CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
  STANDIN_API_CALL(cuMemAllocManaged, dptr, bytesize, flags);
  CUresult r = CUDA_SUCCESS;
  if (sd::initialized() && flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    r = sd::device_alloc(sd::MemKind::managed, dptr, bytesize);
  }
  return standin_api_call_.done(traced(r, "cuMemAllocManaged(bytesize=%zu, flags=%u) ptr=%#llx", bytesize, flags,
                                       r == CUDA_SUCCESS ? *dptr : 0ULL));
}

// ---- page-locked host memory (does not count against any device) ----

STANDIN_CU_API CUresult CUDAAPI cuMemAllocHost_v2(void** pp, size_t bytesize) {
  STANDIN_API_CALL(cuMemAllocHost_v2, pp, bytesize);
  CUresult r = sd::host_alloc(pp, bytesize);
  return standin_api_call_.done(
      traced(r, "cuMemAllocHost_v2(bytesize=%zu) ptr=%p", bytesize, r == CUDA_SUCCESS ? *pp : nullptr));
}

STANDIN_CU_API CUresult CUDAAPI cuMemAllocHost(void** pp, unsigned int bytesize) {
  STANDIN_API_CALL(cuMemAllocHost, pp, bytesize);
  CUresult r = sd::host_alloc(pp, bytesize);
  return standin_api_call_.done(
      traced(r, "cuMemAllocHost(bytesize=%u) ptr=%p", bytesize, r == CUDA_SUCCESS ? *pp : nullptr));
}

STANDIN_CU_API CUresult CUDAAPI cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
  STANDIN_API_CALL(cuMemHostAlloc, pp, bytesize, Flags);
  constexpr unsigned kKnown = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
  CUresult r = CUDA_SUCCESS;
  if (sd::initialized() && (Flags & ~kKnown) != 0) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    r = sd::host_alloc(pp, bytesize);
  }
  return standin_api_call_.done(traced(r, "cuMemHostAlloc(bytesize=%zu, flags=%u) ptr=%p", bytesize, Flags,
                                       r == CUDA_SUCCESS ? *pp : nullptr));
}

STANDIN_CU_API CUresult CUDAAPI cuMemFreeHost(void* p) {
  STANDIN_API_CALL(cuMemFreeHost, p);
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (p != nullptr) {
    r = sd::release(reinterpret_cast<std::uintptr_t>(p), sd::kind_bit(sd::MemKind::host_pinned));
  }
  return standin_api_call_.done(traced(r, "cuMemFreeHost(%p)", p));
}

// ---- memory information, copies, pointer attributes ----

STANDIN_CU_API CUresult CUDAAPI cuMemGetInfo_v2(size_t* free, size_t* total) {
  CUresult r = sd::mem_info(free, total);
  return traced(r, "cuMemGetInfo_v2() free=%zu total=%zu", r == CUDA_SUCCESS ? *free : 0,
                r == CUDA_SUCCESS ? *total : 0);
}

STANDIN_CU_API CUresult CUDAAPI cuMemGetInfo(unsigned int* free, unsigned int* total) {
  std::size_t f = 0;
  std::size_t t = 0;
  CUresult r = sd::mem_info(free == nullptr ? nullptr : &f, total == nullptr ? nullptr : &t);
  if (r == CUDA_SUCCESS) {
    *free = f > UINT_MAX ? UINT_MAX : static_cast<unsigned int>(f);
    *total = t > UINT_MAX ? UINT_MAX : static_cast<unsigned int>(t);
  }
  return traced(r, "cuMemGetInfo()");
}

STANDIN_CU_API CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  return traced(sd::memcpy_any(dst, src, ByteCount), "cuMemcpy(%#llx, %#llx, %zu)", dst, src, ByteCount);
}

STANDIN_CU_API CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  return traced(sd::memcpy_any(dst, src, ByteCount), "cuMemcpy_ptds(%#llx, %#llx, %zu)", dst, src, ByteCount);
}

STANDIN_CU_API CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
  return traced(sd::memset_d8(dstDevice, uc, N), "cuMemsetD8_v2(%#llx, %u, %zu)", dstDevice, uc, N);
}

STANDIN_CU_API CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
  return traced(sd::memset_d8(dstDevice, uc, N), "cuMemsetD8_v2_ptds(%#llx, %u, %zu)", dstDevice, uc, N);
}

STANDIN_CU_API CUresult CUDAAPI cuMemsetD8(CUdeviceptr_v1 dstDevice, unsigned char uc, unsigned int N) {
  return traced(sd::memset_d8(dstDevice, uc, N), "cuMemsetD8(%#x, %u, %u)", dstDevice, uc, N);
}

STANDIN_CU_API CUresult CUDAAPI cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  CUresult r = CUDA_SUCCESS;
  std::uintptr_t start = 0;
  sd::Allocation a{};
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (data == nullptr || !sd::find_range(static_cast<std::uintptr_t>(ptr), 0, &start, &a)) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    const bool host = a.kind == sd::MemKind::host_pinned || a.kind == sd::MemKind::host_registered;
    switch (attribute) {
      case CU_POINTER_ATTRIBUTE_CONTEXT:
        *static_cast<CUcontext*>(data) = reinterpret_cast<CUcontext>(
            a.context != nullptr ? a.context : &sd::state().contexts[static_cast<std::size_t>(a.device)]);
        break;
      case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *static_cast<unsigned int*>(data) = host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        break;
      case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *static_cast<CUdeviceptr*>(data) = ptr;
        break;
      case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (host || a.kind == sd::MemKind::managed) {
          *static_cast<void**>(data) = reinterpret_cast<void*>(ptr);
        } else {
          r = CUDA_ERROR_INVALID_VALUE;
        }
        break;
      case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *static_cast<int*>(data) = a.device;
        break;
      case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *static_cast<CUdeviceptr*>(data) = static_cast<CUdeviceptr>(start);
        break;
      case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *static_cast<size_t*>(data) = a.size;
        break;
      case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        *static_cast<CUmemoryPool*>(data) = reinterpret_cast<CUmemoryPool>(a.pool);
        break;
      default:
        r = CUDA_ERROR_INVALID_VALUE;
        break;
    }
  }
  return traced(r, "cuPointerGetAttribute(attribute=%d, ptr=%#llx)", static_cast<int>(attribute), ptr);
}

// ---- streams (fake handles) ----

STANDIN_CU_API CUresult CUDAAPI cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  CUresult r = CUDA_SUCCESS;
  sd::Context* ctx = sd::current_context();
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (phStream == nullptr || (Flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) != 0) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (ctx == nullptr) {
    r = CUDA_ERROR_INVALID_CONTEXT;
  } else {
    auto* s = new sd::Stream{sd::kStreamMagic, ctx->device, Flags};
    sd::State& st = sd::state();
    std::lock_guard<std::mutex> lock(st.mu);
    st.streams.insert(s);
    *phStream = reinterpret_cast<CUstream>(s);
  }
  return traced(r, "cuStreamCreate(flags=%u) stream=%p", Flags,
                r == CUDA_SUCCESS ? static_cast<void*>(*phStream) : nullptr);
}

STANDIN_CU_API CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream) {
  return traced(sd::stream_destroy(hStream), "cuStreamDestroy_v2(%p)", static_cast<void*>(hStream));
}

STANDIN_CU_API CUresult CUDAAPI cuStreamDestroy(CUstream hStream) {
  return traced(sd::stream_destroy(hStream), "cuStreamDestroy(%p)", static_cast<void*>(hStream));
}

STANDIN_CU_API CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) {
  return traced(sd::stream_sync(hStream), "cuStreamSynchronize(%p)", static_cast<void*>(hStream));
}

STANDIN_CU_API CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream) {
  return traced(sd::stream_sync(hStream), "cuStreamSynchronize_ptsz(%p)", static_cast<void*>(hStream));
}

// CUDA 12.8: the device a stream belongs to (the current context's for the NULL, legacy and
// per-thread streams). vramtrace asks it for the device of a stream-ordered allocation.
static CUresult stream_get_device(CUstream hStream, CUdevice* device) {
  if (!sd::initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  sd::unsafe_call_on(hStream);
  return sd::stream_device(hStream, device);
}

STANDIN_CU_API CUresult CUDAAPI cuStreamGetDevice(CUstream hStream, CUdevice* device) {
  CUresult r = stream_get_device(hStream, device);
  return traced(r, "cuStreamGetDevice(%p) device=%d", static_cast<void*>(hStream), r == CUDA_SUCCESS ? *device : -1);
}

STANDIN_CU_API CUresult CUDAAPI cuStreamGetDevice_ptsz(CUstream hStream, CUdevice* device) {
  CUresult r = stream_get_device(hStream, device);
  return traced(r, "cuStreamGetDevice_ptsz(%p) device=%d", static_cast<void*>(hStream),
                r == CUDA_SUCCESS ? *device : -1);
}
