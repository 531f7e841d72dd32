// What a report says about devices and pools beyond the tracked allocations: each device's
// identity (UUID, PCI bus id, capacity), the stream-ordered pools and graph memory as the driver
// accounts them, and what NVML says the process uses on each device ("why nvidia-smi shows more").
//
// Identity is asked of the driver once per device, the first time an allocation is recorded on
// it (note_device_seen, from the hook, no lock held), and cached in static storage. Pool and graph
// memory attributes and NVML are asked at dump time with the driver's own functions (no tracker
// lock exists to hold; the dump mutex may be held), except for the exit report: our destructor
// runs after the driver's, so an atexit handler registered at the first recorded allocation
// samples them while CUDA is still up, and the exit report (and a crash report) uses that sample.
// Nothing here is required: a missing function or a failed query leaves the field absent.
#pragma once

#include <cstdint>

#include "core/hot_flags.h"

#include "snapshot/snapshot_model.h"

namespace vramtrace {

// From the hooks, after a successful call (the caller holds no lock). Once a device's identity is
// asked (and its default pool noted), the hooks' word says so (core/hot_flags.h): one load and a
// bit test, with no call.
void note_device_seen_slow(int device);
inline void note_device_seen(int device) {  // first time per device: identity; registers the exit sample
    if ((hot::word() & hot::device_bit(device)) == 0) note_device_seen_slow(device);
}
void note_pool_created(uint64_t pool, int device); // cuMemPoolCreate / cudaMemPoolCreate
void note_pool_destroyed(uint64_t pool);
void note_pool_used(uint64_t pool);         // a pool passed to cuMemAllocFromPoolAsync (maybe a default
                                            // pool, or one obtained some other way)
void note_default_pool_used_slow(int device);
inline void note_default_pool_used(int device) { // cuMemAllocAsync / cudaMallocAsync on that device
    if ((hot::word() & hot::pool_bit(device)) == 0) note_default_pool_used_slow(device);
}
void note_graph_memory_used(int device);    // a graph memory node on that device
bool graph_memory_in_use();                 // whether any device had a graph memory node

// On the reporter thread (a graph was instantiated, uploaded or destroyed, graph memory trimmed):
// reads the graph memory of every device that had graph memory nodes into the sample that
// sampled_graph_memory returns.
void sample_graph_memory();
// The last sample of a device's graph memory; false when there is none.
struct GraphMemoryFigures {
    uint64_t reserved_bytes = 0, used_bytes = 0, reserved_high_bytes = 0, used_high_bytes = 0;
};
bool sampled_graph_memory(int device, GraphMemoryFigures *out);

// Producers called by capture_snapshot (contract 3).
// Copies the cached identity of every device in snapshot.devices, and NVML's usedGpuMemory.
void fill_device_info(snapshot::Snapshot &snapshot);
// Appends one snapshot::Pool per pool seen, and sets the graph memory of each device that had graph
// memory nodes (DeviceTotals::graph_*, adding the device's row when it has none), from the
// driver's attributes.
void fill_pools(snapshot::Snapshot &snapshot);

// Formats a 16-byte CUuuid like nvidia-smi: "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
void format_gpu_uuid(const unsigned char bytes[16], char out[41]);

} // namespace vramtrace
