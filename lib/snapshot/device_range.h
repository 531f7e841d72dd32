// The device ordinals a snapshot may carry (docs/snapshot-format.md): CUDA ordinals 0 to
// kMaxDeviceOrdinal, -1 for host-pinned memory, -2 where the driver could not tell. The reader
// refuses any other value, so no exporter sizes anything by an ordinal from a hostile file.
#pragma once

#include <cstdint>

namespace vramtrace::snapshot {

inline constexpr int kMinDeviceOrdinal = -2;
inline constexpr int kMaxDeviceOrdinal = 1023;

inline constexpr bool device_ordinal_valid(int64_t device) {
    return device >= kMinDeviceOrdinal && device <= kMaxDeviceOrdinal;
}

} // namespace vramtrace::snapshot
