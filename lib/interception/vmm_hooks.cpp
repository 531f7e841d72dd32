// Virtual memory management. A physical allocation (cuMemCreate) is recorded under its handle, on
// the device its properties name, and counted until the driver frees it: when the handle, every
// reference retained from it (cuMemRetainAllocationHandle) and every mapping of it (cuMemMap) are
// gone, in any order (tracking/vmm_ledger.h). The call that ends it takes the handle's record out
// before it runs, as a free does. A handle imported from a shareable handle is the exporter's
// memory: listed (vmm_imported), never counted. A mapping links an address range to a handle and
// takes its device from that handle's record; it is listed, not counted again.
#include <vector>

#include "interception/vmm_lifetime.h"
#include "interception/hook_scope.h"

namespace vramtrace {
namespace {

// The device a VMM allocation's properties name (CU_MEM_LOCATION_TYPE_DEVICE), else the host.
int vmm_device(const CUmemAllocationProp *prop) {
    if (prop == nullptr) return kUnknownDevice;
    auto *prefix = reinterpret_cast<const cuda::CUmemAllocationPropPrefix *>(prop);
    return prefix->location.type == cuda::kMemLocationTypeDevice ? prefix->location.id : kHostDevice;
}

AllocationRecord recorded(uint64_t key) {
    AllocationRecord r;
    r.kind = MemoryKind::Device;
    r.device = kUnknownDevice;
    Tracker *t = tracker();
    if (t == nullptr || !t->table.find(key, &r)) r.address = 0;
    return r;
}

} // namespace

namespace hooks {

CUresult cuMemCreate(Reach reach, CUmemGenericAllocationHandle *handle, size_t size,
                     const CUmemAllocationProp *prop, unsigned long long flags) {
    auto real = VT_REAL(cuMemCreate);
    if (real == nullptr) return cuda::kDriverUnknown;
    return tracked_alloc(
        reach, {ApiId::cuMemCreate, MemoryKind::VmmPhysical, 0},
        [&] { return real(handle, size, prop, flags); },
        [&] { return handle ? uint64_t{*handle} : 0; },
        [&] { return size; }, [&](uint64_t) { return vmm_device(prop); });
}

CUresult cuMemImportFromShareableHandle(Reach reach, CUmemGenericAllocationHandle *handle, void *osHandle,
                                        CUmemAllocationHandleType shHandleType) {
    auto real = VT_REAL(cuMemImportFromShareableHandle);
    if (real == nullptr) return cuda::kDriverUnknown;
    // The size is the exporter's; it is known here only once the handle is mapped (cuMemMap).
    return tracked_alloc(
        reach, {ApiId::cuMemImportFromShareableHandle, MemoryKind::VmmImported, 0},
        [&] { return real(handle, osHandle, shHandleType); },
        [&] { return handle ? uint64_t{*handle} : 0; },
        [&] { return uint64_t{0}; }, [&](uint64_t h) { return device_holding(MemoryKind::VmmImported, h); });
}

CUresult cuMemRetainAllocationHandle(Reach reach, CUmemGenericAllocationHandle *handle, void *addr) {
    auto real = VT_REAL(cuMemRetainAllocationHandle);
    if (real == nullptr) return cuda::kDriverUnknown;
    CUresult rc = real(handle, addr);
    if (rc == cuda::kSuccess && handle != nullptr)
        if (Tracker *t = tracker_for(reach)) t->vmm.retained(*handle);
    return rc;
}

CUresult cuMemRelease(Reach reach, CUmemGenericAllocationHandle handle) {
    auto real = VT_REAL(cuMemRelease);
    if (real == nullptr) return cuda::kDriverUnknown;
    Tracker *t = tracker_for(reach);
    if (t == nullptr || handle == 0) return real(handle);
    note_cuda_seen();
    ReentrancyGuard guard;
    int saved_errno = errno;
    std::vector<AllocationRecord> taken = vmm_before_release(*t, handle);
    errno = saved_errno;
    CUresult rc = real(handle);
    int call_errno = errno;
    vmm_after_release(*t, handle, taken, rc == cuda::kSuccess);
    errno = call_errno;
    return rc;
}

CUresult cuMemMap(Reach reach, CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags) {
    auto real = VT_REAL(cuMemMap);
    if (real == nullptr) return cuda::kDriverUnknown;
    return tracked_alloc(
        reach, {ApiId::cuMemMap, MemoryKind::VmmMapping, handle},
        [&] { return real(ptr, size, offset, handle, flags); },
        [&] {
            if (Tracker *t = tracker()) vmm_after_map(*t, handle, size);
            return ptr;
        },
        [&] { return size; }, [&](uint64_t) { return recorded(handle).device; });
}

CUresult cuMemUnmap(Reach reach, CUdeviceptr ptr, size_t size) {
    auto real = VT_REAL(cuMemUnmap);
    if (real == nullptr) return cuda::kDriverUnknown;
    Tracker *t = tracker_for(reach);
    if (t == nullptr || ptr == 0) return real(ptr, size);
    note_cuda_seen();
    ReentrancyGuard guard;
    int saved_errno = errno;
    std::vector<AllocationRecord> taken = vmm_before_unmap(*t, ptr, size);
    errno = saved_errno;
    CUresult rc = real(ptr, size);
    int call_errno = errno;
    vmm_after_unmap(*t, taken, rc == cuda::kSuccess);
    errno = call_errno;
    return rc;
}

} // namespace hooks
} // namespace vramtrace
