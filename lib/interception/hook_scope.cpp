#include "interception/hook_scope.h"

#include "reporting/device_info.h"

namespace vramtrace {

int device_holding(MemoryKind kind, uint64_t address) {
    if (kind == MemoryKind::HostPinned || kind == MemoryKind::HostRegistered) return kHostDevice;
    if (kind == MemoryKind::Array) return current_device_ordinal(); // a handle, not a pointer
    int device = pointer_device_ordinal(address);
    return device != kUnknownDevice ? device : current_device_ordinal();
}

void record_new(Tracker &t, const AllocRequest &req, uint64_t address, uint64_t size, int device,
                uint32_t stack) {
    if (address == 0) return;
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
    record_allocation(t, r);
    note_device_seen(device); // identity for the report, asked of the driver once per device
}

} // namespace vramtrace
