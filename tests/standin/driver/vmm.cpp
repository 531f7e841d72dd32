// Virtual memory management of the stand-in driver: cuMemCreate / cuMemRelease (physical
// allocations, counted against the device named in prop->location whatever the calling thread's
// context), cuMemAddressReserve / cuMemAddressFree (PROT_NONE reservations of host address space),
// cuMemMap / cuMemUnmap (the physical pages mapped again into a reservation), cuMemSetAccess,
// cuMemGetAllocationGranularity (2 MiB) and cuMemGetAllocationPropertiesFromHandle.
//
// A physical allocation is a MAP_SHARED anonymous mapping (its "backing", never handed out);
// cuMemMap maps the same pages at the reserved address with mremap(old_size 0, MREMAP_FIXED), so
// two mappings of one handle alias each other. cuMemUnmap puts a PROT_NONE mapping back, keeping
// the reservation. None of these entry points needs a current context.
#include "driver_internal.h"
#include "cupti_hooks.h"

#include <sys/mman.h>

#include <cstring>
#include <iterator>

namespace sd = standin_driver;

namespace standin_driver {
namespace {

bool aligned(std::uintptr_t v, std::size_t a) { return v % a == 0; }

// prop as cuMemCreate / cuMemGetAllocationGranularity accept it: pinned device memory.
CUresult check_prop(const CUmemAllocationProp* prop) {
  if (prop == nullptr || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
      prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  constexpr unsigned kKnownHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC;
  if ((static_cast<unsigned>(prop->requestedHandleTypes) & ~kKnownHandleTypes) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(prop->location.id)) return CUDA_ERROR_INVALID_DEVICE;
  return CUDA_SUCCESS;
}

// Under State::mu: the reservation containing [ptr, ptr + size), or end().
std::map<std::uintptr_t, Reservation>::iterator reservation_of(State& st, std::uintptr_t ptr, std::size_t size) {
  auto it = st.reservations.upper_bound(ptr);
  if (it == st.reservations.begin()) return st.reservations.end();
  --it;
  const std::uintptr_t offset = ptr - it->first;
  if (offset >= it->second.size || size > it->second.size - offset) return st.reservations.end();
  return it;
}

// Under State::mu: gives a physical allocation's memory back to its device once it is released
// and no longer mapped.
void drop_if_unused(State& st, std::map<CUmemGenericAllocationHandle, PhysicalAllocation>::iterator it) {
  PhysicalAllocation& p = it->second;
  if (!p.released || p.mappings != 0) return;
  st.used[static_cast<std::size_t>(p.device)] -= p.size;
  st.physical.erase(it);
}

void* protect_none(std::uintptr_t address, std::size_t size, int extra_flags) {
  return mmap(reinterpret_cast<void*>(address), size, PROT_NONE,
              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | extra_flags, -1, 0);
}

CUresult reserve(CUdeviceptr* ptr, std::size_t size, std::size_t alignment, CUdeviceptr addr,
                 unsigned long long flags) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (ptr == nullptr || size == 0 || flags != 0 || !aligned(size, page_size()) ||
      (alignment & (alignment - 1)) != 0 || !aligned(static_cast<std::uintptr_t>(addr), page_size())) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Aligned at least to the granularity, so that a reservation can be mapped from its start.
  const std::size_t align = alignment > kVmmGranularity ? alignment : kVmmGranularity;
  std::uintptr_t base = 0;
  if (addr != 0 && aligned(static_cast<std::uintptr_t>(addr), align)) {  // the hint, if that range is free
    void* at = protect_none(static_cast<std::uintptr_t>(addr), size, MAP_FIXED_NOREPLACE);
    if (at != MAP_FAILED && reinterpret_cast<std::uintptr_t>(at) == addr) {
      base = static_cast<std::uintptr_t>(addr);
    } else if (at != MAP_FAILED) {
      munmap(at, size);  // an old kernel took it as a plain hint
    }
  }
  if (base == 0) {
    if (size > SIZE_MAX - align) return CUDA_ERROR_OUT_OF_MEMORY;
    void* raw = protect_none(0, size + align, 0);
    if (raw == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    const auto start = reinterpret_cast<std::uintptr_t>(raw);
    base = (start + align - 1) / align * align;
    if (base > start) munmap(raw, base - start);
    const std::uintptr_t end = start + size + align;
    if (end > base + size) munmap(reinterpret_cast<void*>(base + size), end - (base + size));
  }
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  st.reservations[base] = Reservation{size};
  *ptr = static_cast<CUdeviceptr>(base);
  return CUDA_SUCCESS;
}

// Stricter than the real driver: a reservation with mappings left in it is not freed.
CUresult address_free(CUdeviceptr ptr, std::size_t size) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  const auto base = static_cast<std::uintptr_t>(ptr);
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.reservations.find(base);
  if (it == st.reservations.end() || it->second.size != size) return CUDA_ERROR_INVALID_VALUE;
  if (find_overlap(st, base, size) != st.allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  munmap(reinterpret_cast<void*>(base), size);
  st.reservations.erase(it);
  return CUDA_SUCCESS;
}

CUresult create(CUmemGenericAllocationHandle* handle, std::size_t size, const CUmemAllocationProp* prop,
                unsigned long long flags) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (handle == nullptr || flags != 0 || size == 0 || !aligned(size, kVmmGranularity)) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = check_prop(prop); r != CUDA_SUCCESS) return r;
  const int device = prop->location.id;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  if (!fits(st, device, size)) return CUDA_ERROR_OUT_OF_MEMORY;
  void* backing = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (backing == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  st.next_handle += 0x100;
  const CUmemGenericAllocationHandle h = st.next_handle;
  st.physical[h] = PhysicalAllocation{size, device, *prop, backing, false, 0};
  st.used[static_cast<std::size_t>(device)] += size;
  *handle = h;
  return CUDA_SUCCESS;
}

// The handle is gone at once; the memory stays (and counts) until its last mapping is unmapped.
CUresult release_handle(CUmemGenericAllocationHandle handle) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.physical.find(handle);
  if (it == st.physical.end() || it->second.released) return CUDA_ERROR_INVALID_VALUE;
  it->second.released = true;
  munmap(it->second.backing, it->second.size);  // the pages live on in any mapping
  it->second.backing = nullptr;
  drop_if_unused(st, it);
  return CUDA_SUCCESS;
}

CUresult map(CUdeviceptr ptr, std::size_t size, std::size_t offset, CUmemGenericAllocationHandle handle,
             unsigned long long flags) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  const auto va = static_cast<std::uintptr_t>(ptr);
  if (flags != 0 || size == 0 || !aligned(va, kVmmGranularity) || !aligned(size, kVmmGranularity) ||
      !aligned(offset, kVmmGranularity)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto phys = st.physical.find(handle);
  if (phys == st.physical.end() || phys->second.released) return CUDA_ERROR_INVALID_VALUE;
  PhysicalAllocation& p = phys->second;
  if (offset > p.size || size > p.size - offset) return CUDA_ERROR_INVALID_VALUE;
  if (reservation_of(st, va, size) == st.reservations.end()) return CUDA_ERROR_INVALID_VALUE;
  if (find_overlap(st, va, size) != st.allocations.end()) return CUDA_ERROR_INVALID_VALUE;  // mapped already
  void* at = mremap(static_cast<char*>(p.backing) + offset, 0, size, MREMAP_MAYMOVE | MREMAP_FIXED,
                    reinterpret_cast<void*>(va));
  if (at == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  Allocation a{size, p.device, MemKind::vmm_mapping};
  a.serial = st.next_serial++;
  a.handle = handle;
  a.offset = offset;
  st.allocations[va] = a;  // holds no memory of its own: the handle's is already counted
  ++p.mappings;
  return CUDA_SUCCESS;
}

// [ptr, ptr + size) must be exactly whole mappings, back to back.
CUresult unmap(CUdeviceptr ptr, std::size_t size) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  const auto va = static_cast<std::uintptr_t>(ptr);
  if (size == 0 || va > UINTPTR_MAX - size) return CUDA_ERROR_INVALID_VALUE;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto first = st.allocations.find(va);
  if (first == st.allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  auto last = first;
  std::uintptr_t covered = va;
  for (; last != st.allocations.end() && covered < va + size; ++last) {
    if (last->first != covered || last->second.kind != MemKind::vmm_mapping) return CUDA_ERROR_INVALID_VALUE;
    covered += last->second.size;
  }
  if (covered != va + size) return CUDA_ERROR_INVALID_VALUE;
  for (auto it = first; it != last;) {
    protect_none(it->first, it->second.size, MAP_FIXED);  // back to a plain reservation
    auto phys = st.physical.find(it->second.handle);
    it = st.allocations.erase(it);
    if (phys != st.physical.end()) {
      --phys->second.mappings;
      drop_if_unused(st, phys);
    }
  }
  return CUDA_SUCCESS;
}

// The stand-in's mappings are readable and writable from cuMemMap on; this checks the arguments.
CUresult set_access(CUdeviceptr ptr, std::size_t size, const CUmemAccessDesc* desc, std::size_t count) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (desc == nullptr || count == 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
  for (std::size_t i = 0; i < count; ++i) {
    if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(desc[i].location.id)) return CUDA_ERROR_INVALID_DEVICE;
    const CUmemAccess_flags f = desc[i].flags;
    if (f != CU_MEM_ACCESS_FLAGS_PROT_NONE && f != CU_MEM_ACCESS_FLAGS_PROT_READ &&
        f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  // The whole range must be mapped.
  const auto va = static_cast<std::uintptr_t>(ptr);
  if (va > UINTPTR_MAX - size) return CUDA_ERROR_INVALID_VALUE;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  std::uintptr_t at = va;
  while (at < va + size) {
    auto it = find_overlap(st, at, 1);
    if (it == st.allocations.end() || it->second.kind != MemKind::vmm_mapping) return CUDA_ERROR_INVALID_VALUE;
    at = it->first + it->second.size;
  }
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace standin_driver

using sd::traced;

STANDIN_CU_API CUresult CUDAAPI cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                                              CUmemAllocationGranularity_flags option) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (granularity == nullptr || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
                                        option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (r = sd::check_prop(prop); r == CUDA_SUCCESS) {
    *granularity = sd::kVmmGranularity;
  }
  return traced(r, "cuMemGetAllocationGranularity(option=%d) granularity=%zu", static_cast<int>(option),
                r == CUDA_SUCCESS ? *granularity : 0);
}

STANDIN_CU_API CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                                            const CUmemAllocationProp* prop, unsigned long long flags) {
  STANDIN_API_CALL(cuMemCreate, handle, size, prop, flags);
  CUresult r = sd::create(handle, size, prop, flags);
  return standin_api_call_.done(traced(r, "cuMemCreate(size=%zu, dev=%d, flags=%llu) handle=%#llx", size,
                                       prop != nullptr ? prop->location.id : -1, flags,
                                       r == CUDA_SUCCESS ? *handle : 0ULL));
}

STANDIN_CU_API CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle) {
  STANDIN_API_CALL(cuMemRelease, handle);
  return standin_api_call_.done(traced(sd::release_handle(handle), "cuMemRelease(%#llx)", handle));
}

STANDIN_CU_API CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                                    unsigned long long flags) {
  CUresult r = sd::reserve(ptr, size, alignment, addr, flags);
  return traced(r, "cuMemAddressReserve(size=%zu, alignment=%zu, addr=%#llx, flags=%llu) ptr=%#llx", size, alignment,
                addr, flags, r == CUDA_SUCCESS ? *ptr : 0ULL);
}

STANDIN_CU_API CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  return traced(sd::address_free(ptr, size), "cuMemAddressFree(%#llx, %zu)", ptr, size);
}

STANDIN_CU_API CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                                         unsigned long long flags) {
  STANDIN_API_CALL(cuMemMap, ptr, size, offset, handle, flags);
  return standin_api_call_.done(traced(sd::map(ptr, size, offset, handle, flags),
                                       "cuMemMap(%#llx, %zu, offset=%zu, handle=%#llx, flags=%llu)", ptr, size, offset,
                                       handle, flags));
}

STANDIN_CU_API CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size) {
  STANDIN_API_CALL(cuMemUnmap, ptr, size);
  return standin_api_call_.done(traced(sd::unmap(ptr, size), "cuMemUnmap(%#llx, %zu)", ptr, size));
}

STANDIN_CU_API CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
  return traced(sd::set_access(ptr, size, desc, count), "cuMemSetAccess(%#llx, %zu, count=%zu)", ptr, size, count);
}

STANDIN_CU_API CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop,
                                                                       CUmemGenericAllocationHandle handle) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (prop == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    sd::State& st = sd::state();
    std::lock_guard<std::mutex> lock(st.mu);
    auto it = st.physical.find(handle);
    if (it == st.physical.end() || it->second.released) {
      r = CUDA_ERROR_INVALID_VALUE;
    } else {
      *prop = it->second.prop;
    }
  }
  return traced(r, "cuMemGetAllocationPropertiesFromHandle(%#llx)", handle);
}
