#include "device/device_choice.h"

#include "device/real_functions.h"

namespace vramtrace {

// cuPointerGetAttribute takes a process-wide lock in NVIDIA's driver: on the H200 it costs 59 ns
// from one thread, 590 ns each from 4 threads at once and 2.7 us from 16, while cuCtxGetDevice and
// cuStreamGetDevice stay at 18 to 32 ns (bench/gpu/driver_calls.cu, docs/design.md). So the
// pointer is asked only where nothing cheaper gives the right answer.
int device_holding(MemoryKind kind, uint64_t address) {
    if (kind == MemoryKind::HostPinned || kind == MemoryKind::HostRegistered) return kHostDevice;
    if (kind == MemoryKind::VaReservation) return kUnknownDevice; // address space has no device
    if (kind == MemoryKind::VmmImported) return handle_device_ordinal(address); // the exporter's device
    if (kind == MemoryKind::Array) return current_device_ordinal(); // a handle, not a pointer
    if (kind == MemoryKind::Device) {
        // cuMemAlloc and its pitch variants allocate in the calling thread's current context; the
        // runtime has made its device's context current by the time cudaMalloc returns.
        int device = current_device_ordinal();
        if (device != kUnknownDevice) return device;
    }
    // Managed and IPC-imported memory (the exporting device), or no current context.
    return pointer_device_or_current(address);
}

int pointer_device_or_current(uint64_t address) {
    int device = pointer_device_ordinal(address);
    return device != kUnknownDevice ? device : current_device_ordinal();
}

int stream_alloc_device(uint64_t stream, uint64_t address) {
    // Without a pool argument, a stream-ordered allocation comes from the current pool of the
    // stream's device; the NULL, legacy and per-thread streams are the current context's. With one
    // visible device every stream is on it, so the driver is not asked (a per-stream cache would
    // not do: a stream handle freed and created again may name another device's stream).
    if (visible_device_count() == 1) return 0;
    bool context_stream = stream == 0 || stream == cuda::kStreamLegacy || stream == cuda::kStreamPerThread;
    int device = context_stream ? current_device_ordinal() : stream_device_ordinal(stream);
    return device != kUnknownDevice ? device : pointer_device_or_current(address);
}

int stream_ordered_device(uint64_t stream, bool by_pointer, uint64_t address) {
    return by_pointer ? pointer_device_or_current(address) : stream_alloc_device(stream, address);
}

int pool_location_device(const cuda::CUmemPoolPropsPrefix *props) {
    return props && props->location.type == cuda::kMemLocationTypeDevice ? props->location.id : kUnknownDevice;
}

} // namespace vramtrace
