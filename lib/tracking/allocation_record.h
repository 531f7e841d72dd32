// One live allocation as the tracker stores it: a flat, trivially copyable record so that the
// live table can keep it inline in its slots and copy it without locks.
#pragma once

#include <cstdint>

namespace vramtrace {

// What kind of memory an allocation is. Host-pinned memory is counted on the host pseudo-device.
enum class MemoryKind : uint8_t {
    Device = 0,     // cudaMalloc, cuMemAlloc_v2, cudaMallocAsync, ...
    Managed = 1,    // cudaMallocManaged, cuMemAllocManaged
    HostPinned = 2, // cudaMallocHost, cudaHostAlloc, cuMemAllocHost_v2, cuMemHostAlloc
};

inline constexpr int16_t kHostDevice = -1;   // device ordinal used for host-pinned memory
inline constexpr int16_t kUnknownDevice = -2; // the driver could not tell (no current context)

struct AllocationRecord {
    uint64_t address = 0;  // device pointer (or host pointer for pinned memory); never 0 when live
    uint64_t size = 0;     // bytes requested by the caller
    uint64_t stream = 0;   // CUstream / cudaStream_t handle for stream-ordered calls, else 0
    uint64_t time_ns = 0;  // CLOCK_MONOTONIC time of the allocation
    uint32_t stack_id = 0; // id in the StackDepot; 0 = no stack captured
    uint32_t thread_id = 0; // kernel thread id (gettid) of the allocating thread
    int16_t device = kUnknownDevice; // CUDA device ordinal, kHostDevice for pinned host memory
    MemoryKind kind = MemoryKind::Device;
    uint8_t api = 0;       // ApiId (lib/interception/hook_table.h) of the outermost intercepted call
};

static_assert(sizeof(AllocationRecord) == 48, "keep the record compact: it is copied per alloc");

} // namespace vramtrace
