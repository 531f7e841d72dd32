// The bytes a failing allocation asked for. For most rows of hooks.def the size expression reads
// only arguments and is exact after a failure too; the rows below compute their size from
// out-parameters that a failed call never wrote (the pitch, the pitched pointer, the imported
// range), so their request is taken from the arguments before the call instead:
//   cudaMallocPitch / cuMemAllocPitch(_v2): width x height (before the driver pads rows to its pitch)
//   cudaMalloc3D: width x height x depth (depth 0 counts as 1), likewise unpadded
//   cudaIpcOpenMemHandle / cuIpcOpenMemHandle(_v2): 0 (the size is the exporter's, not asked)
#pragma once

#include <cstdint>
#include <tuple>

#include "device/driver_api.h"

namespace vramtrace::triggers {

inline constexpr uint64_t kRequestFromSize = UINT64_MAX; // use the row's size expression

template <ApiId Id, class... Args> uint64_t request_before_call(const Args &...args) {
    if constexpr (Id == ApiId::cudaMallocPitch || Id == ApiId::cuMemAllocPitch_v2 || Id == ApiId::cuMemAllocPitch) {
        auto t = std::tie(args...);
        return static_cast<uint64_t>(std::get<2>(t)) * static_cast<uint64_t>(std::get<3>(t));
    } else if constexpr (Id == ApiId::cudaMalloc3D) {
        const cudaExtent &e = std::get<1>(std::tie(args...));
        return static_cast<uint64_t>(e.width) * e.height * (e.depth ? e.depth : 1);
    } else if constexpr (Id == ApiId::cudaIpcOpenMemHandle || Id == ApiId::cuIpcOpenMemHandle_v2 ||
                         Id == ApiId::cuIpcOpenMemHandle) {
        return 0;
    } else {
        return kRequestFromSize;
    }
}

} // namespace vramtrace::triggers
