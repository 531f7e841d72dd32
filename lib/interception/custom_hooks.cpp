// Hook bodies that need more than an address and a size: virtual memory management (a physical
// allocation is known by its handle and lives on the device its properties name; a mapping links
// an address range to a handle and takes its device from that handle's record).
#include "interception/hook_scope.h"

namespace vramtrace {
namespace {

// The device a VMM allocation's properties name (CU_MEM_LOCATION_TYPE_DEVICE), else the host.
int vmm_device(const CUmemAllocationProp *prop) {
    if (prop == nullptr) return kUnknownDevice;
    auto *prefix = reinterpret_cast<const cuda::CUmemAllocationPropPrefix *>(prop);
    return prefix->location.type == cuda::kMemLocationTypeDevice ? prefix->location.id : kHostDevice;
}

int recorded_device(uint64_t handle) {
    AllocationRecord r;
    Tracker *t = tracker();
    return t != nullptr && t->table.find(handle, &r) ? r.device : kUnknownDevice;
}

} // namespace

namespace hooks {

CUresult cuMemCreate(Reach reach, CUmemGenericAllocationHandle *handle, size_t size,
                     const CUmemAllocationProp *prop, unsigned long long flags) {
    auto real = VT_REAL(cuMemCreate);
    if (real == nullptr) return cuda::kDriverUnknown;
    return tracked_alloc(
        reach, {ApiId::cuMemCreate, MemoryKind::VmmPhysical, 0},
        [&] { return real(handle, size, prop, flags); }, [&] { return handle ? *handle : 0; },
        [&] { return size; }, [&](uint64_t) { return vmm_device(prop); });
}

CUresult cuMemMap(Reach reach, CUdeviceptr ptr, size_t size, size_t offset,
                  CUmemGenericAllocationHandle handle, unsigned long long flags) {
    auto real = VT_REAL(cuMemMap);
    if (real == nullptr) return cuda::kDriverUnknown;
    return tracked_alloc(
        reach, {ApiId::cuMemMap, MemoryKind::VmmMapping, handle},
        [&] { return real(ptr, size, offset, handle, flags); }, [&] { return ptr; },
        [&] { return size; }, [&](uint64_t) { return recorded_device(handle); });
}

} // namespace hooks
} // namespace vramtrace
