#include "interception/hook_scope.h"

#include "device/device_info.h"
#include "nvtx/thread_ranges.h"

namespace vramtrace {

bool allocates_from_pool(ApiId api) {
    switch (api) {
    case ApiId::cudaMallocAsync:
    case ApiId::cudaMallocAsync_ptsz:
    case ApiId::cudaMallocFromPoolAsync:
    case ApiId::cudaMallocFromPoolAsync_ptsz:
    case ApiId::cuMemAllocAsync:
    case ApiId::cuMemAllocAsync_ptsz:
    case ApiId::cuMemAllocFromPoolAsync:
    case ApiId::cuMemAllocFromPoolAsync_ptsz: return true;
    default: return false;
    }
}

uint64_t record_new(Tracker &t, const AllocRequest &req, uint64_t address, uint64_t size, int device,
                    uint32_t stack) {
    if (address == 0) return 0;
    AllocationRecord r;
    r.address = address;
    r.size = size;
    r.stream = req.stream;
    r.time_ns = monotonic_ns();
    r.stack_id = stack;
    r.thread_id = current_tid();
    r.kind = req.kind;
    r.api = static_cast<uint8_t>(req.api);
    r.device = static_cast<int16_t>(device);
    r.range = nvtx::current_range_stack();
    if (!allocates_from_pool(req.api) && ended_by_context_teardown(req.kind)) r.context = current_context().id;
    if (req.kind == MemoryKind::VmmPhysical || req.kind == MemoryKind::VmmImported) t.vmm.created(address);
    uint64_t live_after = record_allocation(t, r);
    note_device_seen(device); // identity for the report, asked of the driver once per device
    return live_after;
}

} // namespace vramtrace
