// The CUDA entry points vramtrace knows, generated from hooks.def: their ids (recorded with every
// allocation as `api`), their names, which library defines them (cudart or the driver) and their
// C types. Every layer that names an entry point uses these; the hook bodies and the definitions
// that interpose them belong to interception/.
#pragma once

#include <cstdint>

#include "device/cuda_abi.h"

#define VT_EXPAND(...) __VA_ARGS__

namespace vramtrace {

enum class ApiId : uint8_t {
    None = 0,
#define VT_RUNTIME_HOOK(name, params, args) name,
#define VT_DRIVER_HOOK(name, params, args) name,
#include "device/hooks.def"
    Count
};
inline constexpr int kApiCount = static_cast<int>(ApiId::Count);

enum class HookFamily : uint8_t { Runtime, Driver };

struct ApiInfo {
    const char *name;   // exact symbol name, e.g. "cuMemAlloc_v2"
    HookFamily family;  // Runtime: defined by libcudart; Driver: by libcuda
};

const ApiInfo &api_info(ApiId id);
const char *api_name(uint8_t id); // "unknown" for ids outside the table
ApiId find_driver_hook(const char *name); // ApiId::None when the name is not a wrapped driver symbol

// Typed function-pointer aliases: fn::cudaMalloc is `cudaError_t (*)(void **, size_t)`.
namespace fn {
#define VT_RUNTIME_HOOK(name, params, args) using name = cudaError_t(*) params;
#define VT_DRIVER_HOOK(name, params, args) using name = CUresult(*) params;
#include "device/hooks.def"
} // namespace fn

} // namespace vramtrace
