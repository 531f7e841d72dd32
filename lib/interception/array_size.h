// The bytes a CUDA array holds, computed from its descriptor: width x height x depth x element
// bytes, summed over mip levels. An estimate: the driver pads and tiles arrays in ways it does not
// tell (the report marks array sizes so). Pure arithmetic, no CUDA call.
#pragma once

#include <cstdint>

#include "device/cuda_abi.h"

namespace vramtrace {

// Bytes of one element of a CUarray_format with `channels` channels. Block-compressed and video
// formats are counted as one byte per channel (they have no per-element size).
uint64_t array_element_bytes(int format, unsigned channels);
// Element bytes of a runtime channel descriptor: (x + y + z + w) bits rounded up to bytes.
uint64_t channel_element_bytes(const cudaChannelFormatDesc *desc);

// Elements of an array of `levels` mip levels (at least 1; more than the extent allows is clamped,
// as cudaMallocMipmappedArray documents). height/depth 0 mean a 1D/2D array. With `flags`
// CUDA_ARRAY3D_LAYERED or _CUBEMAP the depth counts layers/faces, which mip levels do not halve.
uint64_t array_elements(uint64_t width, uint64_t height, uint64_t depth, unsigned levels, unsigned flags);

// The row expressions of hooks.def; 0 for a null descriptor.
uint64_t array2d_bytes(const CUDA_ARRAY_DESCRIPTOR *desc);
uint64_t array3d_bytes(const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned levels);
uint64_t channel_array_bytes(const cudaChannelFormatDesc *desc, uint64_t width, uint64_t height,
                             uint64_t depth, unsigned levels, unsigned flags);

} // namespace vramtrace
