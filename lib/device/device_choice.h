// Which device an allocation is recorded on: the rules every hook and the CUPTI backend apply,
// from the cheapest driver answer that is right for the kind of memory.
#pragma once

#include <cstdint>

#include "device/cuda_abi.h"
#include "tracking/allocation_record.h"

namespace vramtrace {

// The device that holds memory of `kind` at `address`: the host for host kinds; the calling
// thread's current device for device memory and arrays (where the driver allocated it); else the
// driver's answer for the pointer (managed, IPC-imported), else the current device.
int device_holding(MemoryKind kind, uint64_t address);
// The device of a stream-ordered allocation on `stream` made without a pool argument (the current
// pool of the stream's device), also when it was captured into a graph: device 0 without a driver
// query when one device is visible, else the stream's (or the current context's) device.
int stream_alloc_device(uint64_t stream, uint64_t address);
// The driver's answer for the pointer (cuPointerGetAttribute: a lock in the driver, avoid on hot
// paths), else the calling thread's current device.
int pointer_device_or_current(uint64_t address);
// The device of a stream-ordered allocation: the pointer's answer when `by_pointer` (a pool argument
// may name another device's pool; while a capture may be active cuStreamGetDevice is unsafe), else
// stream_alloc_device.
int stream_ordered_device(uint64_t stream, bool by_pointer, uint64_t address);
// The device a pool's properties place it on (graph memory nodes, cuMemPoolCreate), kUnknownDevice
// for a pool located elsewhere (host, host NUMA node) or without properties.
int pool_location_device(const cuda::CUmemPoolPropsPrefix *props);

} // namespace vramtrace
