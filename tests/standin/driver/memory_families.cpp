// The stand-in driver's other allocation families: pitched allocations, stream-ordered memory
// pools, host memory registration, IPC handles and cuMemGetAddressRange. CUDA 13.0 ABIs from the
// real cuda.h; like entry_points.cpp, no function here calls another exported entry point.
#include <sys/mman.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>

#include "cupti_hooks.h"
#include "driver_internal.h"

namespace sd = standin_driver;

namespace standin_driver {
namespace {

// ---- pitched ----

constexpr std::size_t kPitchAlignment = 512;

// pitch = WidthInBytes rounded up to 512 bytes; the allocation holds pitch * Height bytes.
CUresult pitch_alloc(MemKind kind, std::uintptr_t* address, std::size_t* pitch, std::size_t width,
                     std::size_t height, unsigned int element_size) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (element_size != 4 && element_size != 8 && element_size != 16) return CUDA_ERROR_INVALID_VALUE;
  if (width == 0 || height == 0) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx = current_context();
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  std::size_t p = 0;
  if (!round_up(width, kPitchAlignment, &p) || height > SIZE_MAX / p) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult r = allocate(kind, ctx->device, p * height, address);
  if (r == CUDA_SUCCESS) *pitch = p;
  return r;
}

// ---- pools ----

CUresult pool_alloc(CUdeviceptr* dptr, std::size_t bytes, CUmemoryPool handle, CUstream stream) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (dptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  int stream_dev = -1;  // the stream only orders the call; the memory is the pool's device's
  if (CUresult r = stream_device(stream, &stream_dev); r != CUDA_SUCCESS) return r;
  if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::uintptr_t address = 0;
  if (Graph* g = capturing_graph(stream)) {  // captured: a graph memory node on the pool's device
    int device = -1;
    {
      State& st = state();
      std::lock_guard<std::mutex> lock(st.mu);
      const Pool* pool = pool_from_handle(st, handle);
      if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
      device = pool->device;
    }
    CUresult r = graph_alloc(g, device, bytes, &address);
    if (r == CUDA_SUCCESS) *dptr = static_cast<CUdeviceptr>(address);
    return r;
  }
  CUresult r = allocate(MemKind::device_async, -1, bytes, &address, reinterpret_cast<Pool*>(handle));
  if (r == CUDA_SUCCESS) *dptr = static_cast<CUdeviceptr>(address);
  return r;
}

bool valid_location(const CUmemLocation& loc) {
  return loc.type == CU_MEM_LOCATION_TYPE_DEVICE;
}

constexpr unsigned kKnownHandleTypes =
    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC;

// ---- host registration ----

constexpr unsigned kKnownRegisterFlags = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                                         CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;

CUresult host_register(void* p, std::size_t bytes, unsigned int flags) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (p == nullptr || bytes == 0 || (flags & ~kKnownRegisterFlags) != 0) return CUDA_ERROR_INVALID_VALUE;
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  if (bytes > UINTPTR_MAX - address) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx = current_context();
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  if (auto it = find_overlap(st, address, bytes); it != st.allocations.end()) {
    const MemKind k = it->second.kind;
    return k == MemKind::host_registered || k == MemKind::host_pinned ? CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
                                                                      : CUDA_ERROR_INVALID_VALUE;
  }
  Allocation a{bytes, ctx->device, MemKind::host_registered};
  a.serial = st.next_serial++;
  a.context = ctx;
  st.allocations[address] = a;  // counts against no device: the caller owns the memory
  return CUDA_SUCCESS;
}

// ---- IPC ----

// The 64 bytes of a CUipcMemHandle as this driver writes them.
struct IpcPayload {
  char magic[8];  // "vtIPCmem"
  std::uint32_t pid;
  std::int32_t device;
  std::uint64_t address;
  std::uint64_t size;
  std::uint64_t serial;
  unsigned char zero[24];
};
static_assert(sizeof(IpcPayload) == CU_IPC_HANDLE_SIZE, "IPC payload must fill the handle");
constexpr char kIpcMagic[8] = {'v', 't', 'I', 'P', 'C', 'm', 'e', 'm'};

// cuIpcGetMemHandle exports cuMemAlloc-style device memory only (kExportableKinds): pool
// allocations would need cuMemPoolExportPointer, managed memory cannot be shared.

CUresult ipc_get(CUipcMemHandle* handle, CUdeviceptr dptr) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (current_context() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.allocations.find(static_cast<std::uintptr_t>(dptr));
  if (it == st.allocations.end() || (kExportableKinds & kind_bit(it->second.kind)) == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  IpcPayload payload{};
  std::memcpy(payload.magic, kIpcMagic, sizeof kIpcMagic);
  payload.pid = static_cast<std::uint32_t>(getpid());
  payload.device = it->second.device;
  payload.address = it->first;
  payload.size = it->second.size;
  payload.serial = it->second.serial;
  std::memcpy(handle->reserved, &payload, sizeof payload);
  return CUDA_SUCCESS;
}

// In the exporting process, an import is a new address: for an
// allocation of kSharedMappingMinBytes or more (and legacy ones), a second mapping of the
// exporter's pages (mremap with old_size 0) that aliases the same bytes; for a smaller one, a heap
// copy of the bytes as they were at the first open. Opening a handle again from the same context
// returns the same pointer and counts one more reference, as the real driver does.
CUresult ipc_open(CUdeviceptr* pdptr, const CUipcMemHandle& handle, unsigned int flags) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (pdptr == nullptr || (flags & ~static_cast<unsigned>(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Context* ctx = current_context();
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  IpcPayload payload{};
  std::memcpy(&payload, handle.reserved, sizeof payload);
  if (std::memcmp(payload.magic, kIpcMagic, sizeof kIpcMagic) != 0) return CUDA_ERROR_INVALID_HANDLE;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  if (payload.pid != static_cast<std::uint32_t>(getpid())) {
    // Another process's memory: this driver models where it lives and how big it is (the
    // exporter's device, cuMemGetAddressRange's size), not its bytes, so the import is fresh
    // zeroed memory. Opening the same handle again from this context shares it, as in one process.
    if (payload.device < 0 || payload.device >= config().device_count || payload.size == 0) {
      return CUDA_ERROR_INVALID_HANDLE;
    }
    for (auto& [address, a] : st.allocations) {
      if (a.kind == MemKind::ipc_import && a.source == payload.address && a.source_serial == payload.serial &&
          a.context == ctx) {
        ++a.import_refs;
        *pdptr = static_cast<CUdeviceptr>(address);
        return CUDA_SUCCESS;
      }
    }
    std::size_t bytes = 0;
    void* view = round_up(payload.size, kAlignment, &bytes) ? std::aligned_alloc(kAlignment, bytes) : nullptr;
    if (view == nullptr) return CUDA_ERROR_MAP_FAILED;
    std::memset(view, 0, bytes);
    Allocation a{static_cast<std::size_t>(payload.size), payload.device, MemKind::ipc_import};
    a.serial = st.next_serial++;
    a.source = static_cast<std::uintptr_t>(payload.address);
    a.source_serial = payload.serial;
    a.context = ctx;
    a.import_refs = 1;
    st.allocations[reinterpret_cast<std::uintptr_t>(view)] = a;
    *pdptr = static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(view));
    return CUDA_SUCCESS;
  }
  auto src = st.allocations.find(static_cast<std::uintptr_t>(payload.address));
  if (src == st.allocations.end() || src->second.serial != payload.serial || src->second.size != payload.size ||
      (kExportableKinds & kind_bit(src->second.kind)) == 0) {
    return CUDA_ERROR_INVALID_HANDLE;  // freed since, or never exported by us
  }
  for (auto& [address, a] : st.allocations) {
    if (a.kind == MemKind::ipc_import && a.source_serial == payload.serial && a.context == ctx) {
      ++a.import_refs;
      *pdptr = static_cast<CUdeviceptr>(address);
      return CUDA_SUCCESS;
    }
  }
  const bool aliases = shared_mapping(src->second.kind, src->second.size);
  void* view = nullptr;
  if (aliases) {
    std::size_t bytes = 0;
    if (!round_up(src->second.size, page_size(), &bytes)) return CUDA_ERROR_MAP_FAILED;
    view = mremap(reinterpret_cast<void*>(src->first), 0, bytes, MREMAP_MAYMOVE);
    if (view == MAP_FAILED) return CUDA_ERROR_MAP_FAILED;
  } else {
    std::size_t bytes = 0;
    if (round_up(src->second.size, kAlignment, &bytes)) view = std::aligned_alloc(kAlignment, bytes);
    if (view == nullptr) return CUDA_ERROR_MAP_FAILED;
    std::memcpy(view, reinterpret_cast<const void*>(src->first), src->second.size);
  }
  Allocation a{src->second.size, src->second.device, MemKind::ipc_import};
  a.import_aliases = aliases;
  a.serial = st.next_serial++;
  a.source = src->first;
  a.source_serial = payload.serial;
  a.context = ctx;
  a.import_refs = 1;
  const auto address = reinterpret_cast<std::uintptr_t>(view);
  st.allocations[address] = a;  // the exporter's memory: counts against nothing more
  *pdptr = static_cast<CUdeviceptr>(address);
  return CUDA_SUCCESS;
}

CUresult ipc_close(CUdeviceptr dptr) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.allocations.find(static_cast<std::uintptr_t>(dptr));
  if (it == st.allocations.end() || it->second.kind != MemKind::ipc_import) return CUDA_ERROR_INVALID_VALUE;
  if (--it->second.import_refs > 0) return CUDA_SUCCESS;
  const std::uintptr_t address = it->first;
  const Allocation a = it->second;
  st.allocations.erase(it);
  unmap_import(address, a);
  return CUDA_SUCCESS;
}

}  // namespace

void unmap_import(std::uintptr_t address, const Allocation& a) {
  if (a.import_aliases) {
    std::size_t bytes = 0;
    round_up(a.size, page_size(), &bytes);  // succeeded when it was opened
    munmap(reinterpret_cast<void*>(address), bytes);
  } else {
    std::free(reinterpret_cast<void*>(address));
  }
}

namespace {

// ---- address ranges ----

CUresult address_range(std::uintptr_t* base, std::size_t* size, std::uintptr_t ptr) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (current_context() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  Allocation a{};
  if (!find_range(ptr, 0, base, &a)) return CUDA_ERROR_NOT_FOUND;
  *size = a.size;
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace standin_driver

using sd::traced;

// ---- pitched allocations ----

STANDIN_CU_API CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes,
                                                   size_t Height, unsigned int ElementSizeBytes) {
  STANDIN_API_CALL(cuMemAllocPitch_v2, dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
  CUresult r = CUDA_SUCCESS;
  std::uintptr_t address = 0;
  std::size_t pitch = 0;
  if (sd::initialized() && (dptr == nullptr || pPitch == nullptr)) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    r = sd::pitch_alloc(sd::MemKind::pitched, &address, &pitch, WidthInBytes, Height, ElementSizeBytes);
  }
  if (r == CUDA_SUCCESS) {
    *dptr = static_cast<CUdeviceptr>(address);
    *pPitch = pitch;
  }
  return standin_api_call_.done(traced(r, "cuMemAllocPitch_v2(width=%zu, height=%zu, elem=%u) ptr=%#llx pitch=%zu",
                                       WidthInBytes, Height, ElementSizeBytes, r == CUDA_SUCCESS ? *dptr : 0ULL,
                                       pitch));
}

// Legacy (CUDA 2.0) ABI: 32-bit pointer, pitch and sizes; memory mapped below 2 GiB.
STANDIN_CU_API CUresult CUDAAPI cuMemAllocPitch(CUdeviceptr_v1* dptr, unsigned int* pPitch, unsigned int WidthInBytes,
                                                unsigned int Height, unsigned int ElementSizeBytes) {
  STANDIN_API_CALL(cuMemAllocPitch, dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
  CUresult r = CUDA_SUCCESS;
  std::uintptr_t address = 0;
  std::size_t pitch = 0;
  if (sd::initialized() && (dptr == nullptr || pPitch == nullptr)) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    r = sd::pitch_alloc(sd::MemKind::device_low32, &address, &pitch, WidthInBytes, Height, ElementSizeBytes);
  }
  if (r == CUDA_SUCCESS && (address > UINT_MAX || pitch * Height > UINT_MAX)) {
    sd::release(address, sd::kind_bit(sd::MemKind::device_low32));  // does not fit the 32-bit ABI
    r = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (r == CUDA_SUCCESS) {
    *dptr = static_cast<CUdeviceptr_v1>(address);
    *pPitch = static_cast<unsigned int>(pitch);
  }
  return standin_api_call_.done(traced(r, "cuMemAllocPitch(width=%u, height=%u, elem=%u) ptr=%#x pitch=%zu",
                                       WidthInBytes, Height, ElementSizeBytes, r == CUDA_SUCCESS ? *dptr : 0U, pitch));
}

// ---- stream-ordered memory pools ----

STANDIN_CU_API CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (pool_out == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (!sd::valid_device(dev)) {
    r = CUDA_ERROR_INVALID_DEVICE;
  } else {
    *pool_out = reinterpret_cast<CUmemoryPool>(sd::state().default_pools[static_cast<std::size_t>(dev)]);
  }
  return traced(r, "cuDeviceGetDefaultMemPool(dev=%d) pool=%p", dev,
                r == CUDA_SUCCESS ? static_cast<void*>(*pool_out) : nullptr);
}

STANDIN_CU_API CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* poolProps) {
  STANDIN_API_CALL(cuMemPoolCreate, pool, poolProps);
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (pool == nullptr || poolProps == nullptr || poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
             !sd::valid_location(poolProps->location) ||
             (static_cast<unsigned>(poolProps->handleTypes) & ~sd::kKnownHandleTypes) != 0) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (!sd::valid_device(poolProps->location.id)) {
    r = CUDA_ERROR_INVALID_DEVICE;
  } else {
    auto* p = new sd::Pool{};
    p->magic = sd::kPoolMagic;
    p->device = poolProps->location.id;
    p->max_size = poolProps->maxSize;
    p->props = *poolProps;
    sd::State& st = sd::state();
    std::lock_guard<std::mutex> lock(st.mu);
    st.pools.insert(p);
    *pool = reinterpret_cast<CUmemoryPool>(p);
  }
  return standin_api_call_.done(traced(r, "cuMemPoolCreate(dev=%d) pool=%p",
                                       poolProps != nullptr ? poolProps->location.id : -1,
                                       r == CUDA_SUCCESS ? static_cast<void*>(*pool) : nullptr));
}

// A pool with live allocations is destroyed at once as a handle; its allocations stay valid and
// it is deleted when the last one is freed (the real driver's documented behaviour).
STANDIN_CU_API CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool) {
  STANDIN_API_CALL(cuMemPoolDestroy, pool);
  CUresult r = CUDA_SUCCESS;
  sd::Pool* dead = nullptr;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else {
    sd::State& st = sd::state();
    std::lock_guard<std::mutex> lock(st.mu);
    sd::Pool* p = sd::pool_from_handle(st, pool);
    if (p == nullptr || p->is_default) {
      r = CUDA_ERROR_INVALID_VALUE;
    } else {
      st.pools.erase(p);
      p->destroyed = true;
      if (p->live == 0) dead = p;
    }
  }
  if (dead != nullptr) {
    dead->magic = 0;
    delete dead;
  }
  return standin_api_call_.done(traced(r, "cuMemPoolDestroy(%p)", static_cast<void*>(pool)));
}

// Nothing is cached in a pool after a free (reserved follows used), so there is nothing to trim.
STANDIN_CU_API CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else {
    sd::State& st = sd::state();
    std::lock_guard<std::mutex> lock(st.mu);
    if (sd::pool_from_handle(st, pool) == nullptr) r = CUDA_ERROR_INVALID_VALUE;
  }
  return traced(r, "cuMemPoolTrimTo(%p, keep=%zu)", static_cast<void*>(pool), minBytesToKeep);
}

STANDIN_CU_API CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (value == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    sd::State& st = sd::state();
    std::lock_guard<std::mutex> lock(st.mu);
    const sd::Pool* p = sd::pool_from_handle(st, pool);
    if (p == nullptr) {
      r = CUDA_ERROR_INVALID_VALUE;
    } else {
      switch (attr) {
        case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
          *static_cast<int*>(value) = 1;
          break;
        case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *static_cast<cuuint64_t*>(value) = 0; break;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: *static_cast<cuuint64_t*>(value) = p->reserved; break;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: *static_cast<cuuint64_t*>(value) = p->reserved_high; break;
        case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *static_cast<cuuint64_t*>(value) = p->used; break;
        case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *static_cast<cuuint64_t*>(value) = p->used_high; break;
        default: r = CUDA_ERROR_INVALID_VALUE; break;
      }
    }
  }
  return traced(r, "cuMemPoolGetAttribute(%p, attr=%d)", static_cast<void*>(pool), static_cast<int>(attr));
}

STANDIN_CU_API CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                                        CUstream hStream) {
  STANDIN_API_CALL(cuMemAllocFromPoolAsync, dptr, bytesize, pool, hStream);
  CUresult r = sd::pool_alloc(dptr, bytesize, pool, hStream);
  return standin_api_call_.done(traced(r, "cuMemAllocFromPoolAsync(bytesize=%zu, pool=%p, stream=%p) ptr=%#llx",
                                       bytesize, static_cast<void*>(pool), static_cast<void*>(hStream),
                                       r == CUDA_SUCCESS ? *dptr : 0ULL));
}

STANDIN_CU_API CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                                             CUstream hStream) {
  STANDIN_API_CALL(cuMemAllocFromPoolAsync_ptsz, dptr, bytesize, pool, hStream);
  CUresult r = sd::pool_alloc(dptr, bytesize, pool, hStream);
  return standin_api_call_.done(traced(r, "cuMemAllocFromPoolAsync_ptsz(bytesize=%zu, pool=%p, stream=%p) ptr=%#llx",
                                       bytesize, static_cast<void*>(pool), static_cast<void*>(hStream),
                                       r == CUDA_SUCCESS ? *dptr : 0ULL));
}

// ---- host memory registration ----

STANDIN_CU_API CUresult CUDAAPI cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int Flags) {
  STANDIN_API_CALL(cuMemHostRegister_v2, p, bytesize, Flags);
  return standin_api_call_.done(
      traced(sd::host_register(p, bytesize, Flags), "cuMemHostRegister_v2(%p, %zu, flags=%u)", p, bytesize, Flags));
}

// Legacy (CUDA 4.0) entry point: same ABI.
STANDIN_CU_API CUresult CUDAAPI cuMemHostRegister(void* p, size_t bytesize, unsigned int Flags) {
  STANDIN_API_CALL(cuMemHostRegister, p, bytesize, Flags);
  return standin_api_call_.done(
      traced(sd::host_register(p, bytesize, Flags), "cuMemHostRegister(%p, %zu, flags=%u)", p, bytesize, Flags));
}

STANDIN_CU_API CUresult CUDAAPI cuMemHostUnregister(void* p) {
  STANDIN_API_CALL(cuMemHostUnregister, p);
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (p == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    sd::State& st = sd::state();
    std::lock_guard<std::mutex> lock(st.mu);
    auto it = st.allocations.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == st.allocations.end() || it->second.kind != sd::MemKind::host_registered) {
      r = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    } else {
      st.allocations.erase(it);
    }
  }
  return standin_api_call_.done(traced(r, "cuMemHostUnregister(%p)", p));
}

// ---- IPC ----

STANDIN_CU_API CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle* pHandle, CUdeviceptr dptr) {
  return traced(sd::ipc_get(pHandle, dptr), "cuIpcGetMemHandle(%#llx)", dptr);
}

STANDIN_CU_API CUresult CUDAAPI cuIpcOpenMemHandle_v2(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags) {
  STANDIN_API_CALL(cuIpcOpenMemHandle_v2, pdptr, handle, Flags);
  CUresult r = sd::ipc_open(pdptr, handle, Flags);
  return standin_api_call_.done(
      traced(r, "cuIpcOpenMemHandle_v2(flags=%u) ptr=%#llx", Flags, r == CUDA_SUCCESS ? *pdptr : 0ULL));
}

// Legacy (CUDA 4.1) entry point: same ABI.
STANDIN_CU_API CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags) {
  STANDIN_API_CALL(cuIpcOpenMemHandle, pdptr, handle, Flags);
  CUresult r = sd::ipc_open(pdptr, handle, Flags);
  return standin_api_call_.done(
      traced(r, "cuIpcOpenMemHandle(flags=%u) ptr=%#llx", Flags, r == CUDA_SUCCESS ? *pdptr : 0ULL));
}

STANDIN_CU_API CUresult CUDAAPI cuIpcCloseMemHandle(CUdeviceptr dptr) {
  STANDIN_API_CALL(cuIpcCloseMemHandle, dptr);
  return standin_api_call_.done(traced(sd::ipc_close(dptr), "cuIpcCloseMemHandle(%#llx)", dptr));
}

// ---- address ranges ----

// Base and size of the allocation (or registration, import, VMM mapping) containing dptr; either
// out-parameter may be NULL. Unknown pointer: CUDA_ERROR_NOT_FOUND.
STANDIN_CU_API CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) {
  std::uintptr_t base = 0;
  std::size_t size = 0;
  CUresult r = sd::address_range(&base, &size, static_cast<std::uintptr_t>(dptr));
  if (r == CUDA_SUCCESS) {
    if (pbase != nullptr) *pbase = static_cast<CUdeviceptr>(base);
    if (psize != nullptr) *psize = size;
  }
  return traced(r, "cuMemGetAddressRange_v2(%#llx) base=%#llx size=%zu", dptr, static_cast<unsigned long long>(base),
                size);
}

// Legacy (CUDA 2.0) ABI: 32-bit base and size.
STANDIN_CU_API CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr_v1* pbase, unsigned int* psize, CUdeviceptr_v1 dptr) {
  std::uintptr_t base = 0;
  std::size_t size = 0;
  CUresult r = sd::address_range(&base, &size, static_cast<std::uintptr_t>(dptr));
  if (r == CUDA_SUCCESS && (base > UINT_MAX || size > UINT_MAX)) r = CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS) {
    if (pbase != nullptr) *pbase = static_cast<CUdeviceptr_v1>(base);
    if (psize != nullptr) *psize = static_cast<unsigned int>(size);
  }
  return traced(r, "cuMemGetAddressRange(%#x) base=%#llx size=%zu", dptr, static_cast<unsigned long long>(base), size);
}
