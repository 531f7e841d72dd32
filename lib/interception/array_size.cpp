#include "interception/array_size.h"

namespace vramtrace {

uint64_t array_element_bytes(int format, unsigned channels) {
    switch (format) {
    case 0x01: case 0x08: return channels;          // (UN)SIGNED_INT8
    case 0x02: case 0x09: case 0x10: return 2ull * channels; // (UN)SIGNED_INT16, HALF
    case 0x03: case 0x0a: case 0x20: return 4ull * channels; // (UN)SIGNED_INT32, FLOAT
    case 0xc0: case 0xc1: case 0xc2: case 0xc6: case 0xc7: case 0xc8: return channels; // [US]NORM_INT8Xn
    case 0xc3: case 0xc4: case 0xc5: case 0xc9: case 0xca: case 0xcb: return 2ull * channels; // ..INT16Xn
    case 0x50: return 4;                            // UNORM_INT_101010_2
    default: return channels;
    }
}

uint64_t channel_element_bytes(const cudaChannelFormatDesc *desc) {
    if (desc == nullptr) return 0;
    int bits = desc->x + desc->y + desc->z + desc->w;
    return bits > 0 ? (static_cast<uint64_t>(bits) + 7) / 8 : 0;
}

uint64_t array_elements(uint64_t width, uint64_t height, uint64_t depth, unsigned levels, unsigned flags) {
    bool layers = (flags & (cuda::kArray3DLayered | cuda::kArray3DCubemap)) != 0;
    uint64_t w = width, h = height ? height : 1, d = depth ? depth : 1;
    if (levels == 0) levels = 1;
    uint64_t total = 0;
    for (unsigned level = 0; level < levels; ++level) {
        total += w * h * d;
        // The last level is 1 x 1 x 1 (layers aside): more levels than that do not exist.
        if (w == 1 && h == 1 && (layers || d == 1)) break;
        w = w > 1 ? w / 2 : 1;
        h = h > 1 ? h / 2 : 1;
        if (!layers) d = d > 1 ? d / 2 : 1;
    }
    return total;
}

uint64_t array2d_bytes(const CUDA_ARRAY_DESCRIPTOR *desc) {
    if (desc == nullptr) return 0;
    return array_elements(desc->Width, desc->Height, 0, 1, 0) *
           array_element_bytes(desc->Format, desc->NumChannels);
}

uint64_t array3d_bytes(const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned levels) {
    if (desc == nullptr) return 0;
    return array_elements(desc->Width, desc->Height, desc->Depth, levels, desc->Flags) *
           array_element_bytes(desc->Format, desc->NumChannels);
}

uint64_t channel_array_bytes(const cudaChannelFormatDesc *desc, uint64_t width, uint64_t height,
                             uint64_t depth, unsigned levels, unsigned flags) {
    return array_elements(width, height, depth, levels, flags) * channel_element_bytes(desc);
}

} // namespace vramtrace
