// Virtual memory management of the stand-in driver: cuMemCreate / cuMemRelease (physical
// allocations, counted against the device named in prop->location whatever the calling thread's
// context), cuMemAddressReserve / cuMemAddressFree (PROT_NONE reservations of host address space),
// cuMemMap / cuMemUnmap (the physical pages mapped again into a reservation), cuMemSetAccess,
// cuMemGetAllocationGranularity (2 MiB) and cuMemGetAllocationPropertiesFromHandle.
//
// Physical memory is a memfd named "standin-vmm-d<device>-t<requestedHandleTypes>"; cuMemMap maps
// it MAP_SHARED at the reserved address, so two mappings of one handle alias each other, and the
// fd is the POSIX shareable handle (cuMemExportToShareableHandle hands out a dup): an importer in
// this process gets a new handle value to the same memory (counted once), one in another process
// (fork, or an fd passed over a socket) maps the same pages and reads the device from the name.
// References: each handle value counts cuMemCreate / cuMemImportFromShareableHandle (1) plus
// cuMemRetainAllocationHandle (1 each), minus cuMemRelease; the memory lives while any handle value
// has references or mappings. cuMemUnmap puts a PROT_NONE mapping back, keeping the reservation.
// None of these entry points needs a current context.
#include "driver_internal.h"
#include "cupti_hooks.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

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

using HandleIt = std::map<CUmemGenericAllocationHandle, PhysicalAllocation>::iterator;

// Under State::mu: a handle value the API accepts (it has references), or end().
HandleIt live_handle(State& st, CUmemGenericAllocationHandle h) {
  auto it = st.physical.find(h);
  return it != st.physical.end() && it->second.refs > 0 ? it : st.physical.end();
}

// Under State::mu: forgets a handle value without references or mappings, and its memory (given
// back to its device) once no handle value refers to it.
void drop_if_unused(State& st, HandleIt it) {
  PhysicalAllocation& p = it->second;
  if (p.refs > 0 || p.mappings != 0) return;
  PhysicalMemory* m = p.memory;
  st.physical.erase(it);
  if (--m->handles > 0) return;
  if (m->charged) st.used[static_cast<std::size_t>(m->device)] -= m->size;
  close(m->fd);
  delete m;
}

// Under State::mu: a new handle value with one reference to m.
CUmemGenericAllocationHandle new_handle(State& st, PhysicalMemory* m) {
  st.next_handle += 0x100;
  st.physical[st.next_handle] = PhysicalAllocation{m, 1, 0};
  ++m->handles;
  return st.next_handle;
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
  if (size > config().device_bytes) return CUDA_ERROR_OUT_OF_MEMORY;
  char name[64];
  std::snprintf(name, sizeof name, "standin-vmm-d%d-t%u", device, static_cast<unsigned>(prop->requestedHandleTypes));
  const int fd = memfd_create(name, MFD_CLOEXEC);
  struct stat sb {};
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0 || fstat(fd, &sb) != 0) {
    close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  if (!fits(st, device, size)) {
    close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  auto* m = new PhysicalMemory{size, device, *prop, fd, sb.st_dev, sb.st_ino, true, 0};
  st.used[static_cast<std::size_t>(device)] += size;
  *handle = new_handle(st, m);
  return CUDA_SUCCESS;
}

// Drops one reference; the memory stays (and counts) while other references or mappings remain.
CUresult release_handle(CUmemGenericAllocationHandle handle) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = live_handle(st, handle);
  if (it == st.physical.end()) return CUDA_ERROR_INVALID_VALUE;
  --it->second.refs;
  drop_if_unused(st, it);
  return CUDA_SUCCESS;
}

// The handle mapped at addr (any address inside a mapping), with one more reference.
CUresult retain(CUmemGenericAllocationHandle* handle, void* addr) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = find_overlap(st, reinterpret_cast<std::uintptr_t>(addr), 1);
  if (it == st.allocations.end() || it->second.kind != MemKind::vmm_mapping) return CUDA_ERROR_INVALID_VALUE;
  auto phys = st.physical.find(it->second.handle);
  if (phys == st.physical.end()) return CUDA_ERROR_INVALID_VALUE;  // cannot happen: a mapping keeps it
  ++phys->second.refs;
  *handle = it->second.handle;
  return CUDA_SUCCESS;
}

CUresult export_handle(void* out, CUmemGenericAllocationHandle handle, CUmemAllocationHandleType type,
                       unsigned long long flags) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (out == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = live_handle(st, handle);
  if (it == st.physical.end()) return CUDA_ERROR_INVALID_VALUE;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
  const PhysicalMemory* m = it->second.memory;
  if ((static_cast<unsigned>(m->prop.requestedHandleTypes) & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == 0) {
    return CUDA_ERROR_INVALID_VALUE;  // not created shareable as a file descriptor
  }
  const int fd = dup(m->fd);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  *static_cast<int*>(out) = fd;
  return CUDA_SUCCESS;
}

// Reads device and requested handle types from a memfd of ours ("/memfd:standin-vmm-d<d>-t<t>").
bool describe_fd(int fd, int* device, unsigned* types) {
  char path[64];
  char target[256];
  std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(path, target, sizeof target - 1);
  if (n <= 0) return false;
  target[n] = '\0';
  return std::sscanf(target, "/memfd:standin-vmm-d%d-t%u", device, types) == 2;
}

CUresult import_handle(CUmemGenericAllocationHandle* handle, void* os_handle, CUmemAllocationHandleType type) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
  const int fd = static_cast<int>(reinterpret_cast<std::intptr_t>(os_handle));
  struct stat sb {};
  int device = -1;
  unsigned types = 0;
  if (fd < 0 || fstat(fd, &sb) != 0 || !describe_fd(fd, &device, &types)) return CUDA_ERROR_INVALID_VALUE;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  for (auto& [h, p] : st.physical) {  // exported by this process: the same memory, counted once
    PhysicalMemory* m = p.memory;
    if (m->file_dev == static_cast<std::uint64_t>(sb.st_dev) && m->file_ino == static_cast<std::uint64_t>(sb.st_ino)) {
      *handle = new_handle(st, m);
      return CUDA_SUCCESS;
    }
  }
  if (!valid_device(device)) return CUDA_ERROR_INVALID_DEVICE;
  const int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(types);
  // Another process's memory: it counts against that process's device, not again here.
  auto* m = new PhysicalMemory{static_cast<std::size_t>(sb.st_size), device, prop, own, sb.st_dev, sb.st_ino,
                               false, 0};
  *handle = new_handle(st, m);
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
  auto phys = live_handle(st, handle);
  if (phys == st.physical.end()) return CUDA_ERROR_INVALID_VALUE;
  PhysicalAllocation& p = phys->second;
  const PhysicalMemory* m = p.memory;
  if (offset > m->size || size > m->size - offset) return CUDA_ERROR_INVALID_VALUE;
  if (reservation_of(st, va, size) == st.reservations.end()) return CUDA_ERROR_INVALID_VALUE;
  if (find_overlap(st, va, size) != st.allocations.end()) return CUDA_ERROR_INVALID_VALUE;  // mapped already
  void* at = mmap(reinterpret_cast<void*>(va), size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, m->fd,
                  static_cast<off_t>(offset));
  if (at == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  Allocation a{size, m->device, MemKind::vmm_mapping};
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
  STANDIN_API_CALL(cuMemAddressReserve, ptr, size, alignment, addr, flags);
  CUresult r = sd::reserve(ptr, size, alignment, addr, flags);
  return standin_api_call_.done(traced(r, "cuMemAddressReserve(size=%zu, alignment=%zu, addr=%#llx, flags=%llu) ptr=%#llx",
                                       size, alignment, addr, flags, r == CUDA_SUCCESS ? *ptr : 0ULL));
}

STANDIN_CU_API CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  STANDIN_API_CALL(cuMemAddressFree, ptr, size);
  return standin_api_call_.done(traced(sd::address_free(ptr, size), "cuMemAddressFree(%#llx, %zu)", ptr, size));
}

STANDIN_CU_API CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
  STANDIN_API_CALL(cuMemRetainAllocationHandle, handle, addr);
  CUresult r = sd::retain(handle, addr);
  return standin_api_call_.done(traced(r, "cuMemRetainAllocationHandle(%p) handle=%#llx", addr,
                                       r == CUDA_SUCCESS ? *handle : 0ULL));
}

STANDIN_CU_API CUresult CUDAAPI cuMemExportToShareableHandle(void* shareableHandle, CUmemGenericAllocationHandle handle,
                                                             CUmemAllocationHandleType handleType,
                                                             unsigned long long flags) {
  STANDIN_API_CALL(cuMemExportToShareableHandle, shareableHandle, handle, handleType, flags);
  CUresult r = sd::export_handle(shareableHandle, handle, handleType, flags);
  return standin_api_call_.done(traced(r, "cuMemExportToShareableHandle(%#llx, type=%d) fd=%d", handle,
                                       static_cast<int>(handleType),
                                       r == CUDA_SUCCESS ? *static_cast<int*>(shareableHandle) : -1));
}

STANDIN_CU_API CUresult CUDAAPI cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* osHandle,
                                                               CUmemAllocationHandleType shHandleType) {
  STANDIN_API_CALL(cuMemImportFromShareableHandle, handle, osHandle, shHandleType);
  CUresult r = sd::import_handle(handle, osHandle, shHandleType);
  return standin_api_call_.done(traced(r, "cuMemImportFromShareableHandle(%p, type=%d) handle=%#llx", osHandle,
                                       static_cast<int>(shHandleType), r == CUDA_SUCCESS ? *handle : 0ULL));
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
    auto it = sd::live_handle(st, handle);
    if (it == st.physical.end()) {
      r = CUDA_ERROR_INVALID_VALUE;
    } else {
      *prop = it->second.memory->prop;
    }
  }
  return traced(r, "cuMemGetAllocationPropertiesFromHandle(%#llx)", handle);
}
