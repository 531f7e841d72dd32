// The two driver questions the triggers ask, with the driver's own functions (never recorded, never
// under a lock of ours). Both answer false when the driver or the function is not there.
#pragma once

#include <cstdint>

namespace vramtrace {

// cuMemGetInfo_v2: free and total bytes of the calling thread's current context's device.
bool current_device_memory_info(uint64_t *free_bytes, uint64_t *total_bytes);

// cuDeviceGet + cuDeviceTotalMem_v2: the capacity of a device ordinal (no context needed).
bool device_total_memory(int ordinal, uint64_t *total_bytes);

} // namespace vramtrace
