// One live allocation as the tracker stores it: a flat, trivially copyable record so that the
// live table can keep it inline in its slots and copy it without locks.
#pragma once

#include <cstdint>

namespace vramtrace {

// What kind of memory a record describes. Host-pinned and host-registered memory are counted on
// the host pseudo-device; IPC imports and VMM mappings are recorded but not counted (the memory
// belongs to another process, or is already counted as the physical allocation it maps).
enum class MemoryKind : uint8_t {
    Device = 0,         // cudaMalloc, cuMemAlloc_v2, cudaMallocAsync, pools, pitched, ...
    Managed = 1,        // cudaMallocManaged, cuMemAllocManaged
    HostPinned = 2,     // cudaMallocHost, cudaHostAlloc, cuMemAllocHost_v2, cuMemHostAlloc
    HostRegistered = 3, // cudaHostRegister, cuMemHostRegister_v2: the program's own memory, pinned
    IpcImported = 4,    // cudaIpcOpenMemHandle, cuIpcOpenMemHandle_v2: owned by another process
    VmmPhysical = 5,    // cuMemCreate: physical memory; `address` holds the allocation handle
    VmmMapping = 6,     // cuMemMap: `address` is the mapped VA, `stream` holds the physical handle
    Array = 7,          // CUDA arrays (cudaMallocArray, cuArrayCreate_v2, mipmapped, ...): `address`
                        // holds the array handle; `size` is computed (width x height x depth x
                        // element bytes, mip levels summed), so the report marks it an estimate
    GraphPool = 8,      // graph memory nodes (cuGraphAddMemAllocNode, or cuMemAllocAsync while the
                        // stream is being captured): `address` is the node's virtual address,
                        // `stream` holds the graph; not counted (the graph's pool backs it at
                        // launch: see the device's graph memory at dump time)
    VmmImported = 9,    // cuMemImportFromShareableHandle: `address` holds the imported handle; the
                        // memory is the exporter's, so it is listed, never counted
    VaReservation = 10, // cuMemAddressReserve: virtual address space, no memory and no device;
                        // keyed by reservation_key(va) so that a mapping at the same VA has its own
};

// The kind's name in snapshots ("kind" of allocations and events; docs/snapshot-format.md). One
// table for every writer: the dump-time snapshot builder and the crash handler's writer (a plain
// switch: async-signal-safe).
inline constexpr const char *memory_kind_name(MemoryKind kind) {
    switch (kind) {
    case MemoryKind::Device: return "device";
    case MemoryKind::Managed: return "managed";
    case MemoryKind::HostPinned: return "host_pinned";
    case MemoryKind::HostRegistered: return "host_registered";
    case MemoryKind::IpcImported: return "ipc_imported";
    case MemoryKind::VmmPhysical: return "vmm_physical";
    case MemoryKind::VmmMapping: return "vmm_mapping";
    case MemoryKind::Array: return "array";
    case MemoryKind::GraphPool: return "graph_pool";
    case MemoryKind::VmmImported: return "vmm_imported";
    case MemoryKind::VaReservation: return "va_reservation";
    }
    return "unknown";
}

// Whether a record's bytes count toward its device's current/peak/totals.
inline constexpr bool counts_toward_device(MemoryKind kind) {
    return kind != MemoryKind::IpcImported && kind != MemoryKind::VmmMapping &&
           kind != MemoryKind::GraphPool && kind != MemoryKind::VmmImported &&
           kind != MemoryKind::VaReservation;
}

// Whether a context's teardown (a reset, a destroy, the last release of a primary context) frees
// memory of this kind made in that context. Measured on an H200, driver 580, for each of the four
// teardowns (tests/gpu/run_lifecycle_probe.sh; docs/coverage.md, "What a context teardown ends"):
// device memory, managed, pinned and registered host memory, arrays and IPC imports are freed;
// stream-ordered pool allocations (kind Device, but from a pool: the hooks tell them apart), VMM
// handles, mappings and reservations, and graph memory are not.
inline constexpr bool ended_by_context_teardown(MemoryKind kind) {
    switch (kind) {
    case MemoryKind::Device:
    case MemoryKind::Managed:
    case MemoryKind::HostPinned:
    case MemoryKind::HostRegistered:
    case MemoryKind::Array:
    case MemoryKind::IpcImported: return true;
    default: return false;
    }
}

// The live-table key of a VA reservation: the reserved address with the top bit set, which no
// user-space pointer has, so that the reservation and a mapping at its first byte are two records.
inline constexpr uint64_t kReservationKeyTag = uint64_t{1} << 63;
inline constexpr uint64_t reservation_key(uint64_t va) { return va | kReservationKeyTag; }
inline constexpr uint64_t reservation_address(uint64_t key) { return key & ~kReservationKeyTag; }

inline constexpr int16_t kHostDevice = -1;   // device ordinal used for host-pinned memory
inline constexpr int16_t kUnknownDevice = -2; // the driver could not tell (no current context)

inline constexpr unsigned kRangeBits = 10;

struct AllocationRecord {
    uint64_t address = 0;  // device pointer (or host pointer for pinned memory); never 0 when live
    uint64_t size = 0;     // bytes requested by the caller
    uint64_t stream = 0;   // CUstream / cudaStream_t of stream-ordered calls; VmmMapping: the
                           // physical allocation handle mapped there; else 0
    uint64_t time_ns = 0;  // CLOCK_MONOTONIC time of the allocation
    uint32_t stack_id = 0; // id in the StackDepot; 0 = no stack captured
    uint32_t thread_id = 0; // kernel thread id (gettid) of the allocating thread
    int16_t device = kUnknownDevice; // CUDA device ordinal, kHostDevice for pinned host memory
    MemoryKind kind = MemoryKind::Device;
    uint8_t api = 0;       // ApiId (lib/device/driver_api.h) of the outermost intercepted call
    // The ContextRegistry id (tracking/context_registry.h, at most 4095) of the context whose
    // teardown ends this record; 0: no context ends it (stream-ordered, VMM, graph memory,
    // reservations) or unknown.
    uint16_t context = 0;
    // The allocating thread's open NVTX push/pop range stack (nvtx/range_table.h id; 0: none),
    // below 2^kRangeBits: the live table keeps it in the bits above the thread id.
    uint16_t range = 0;
};

static_assert(sizeof(AllocationRecord) == 48, "keep the record compact: it is copied per alloc");

} // namespace vramtrace
