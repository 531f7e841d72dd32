// Declarations generated from hooks.def: the API ids, the typed real-function pointers, and the
// per-row hook bodies (defined in hook_bodies.cpp for plain rows; custom_hooks.cpp, vmm_hooks.cpp,
// context_hooks.cpp, graph_hooks.cpp and procaddress_hook.cpp for the rest).
#pragma once

#include <atomic>
#include <cstdint>

#include "cuda_abi.h"

#define VT_EXPAND(...) __VA_ARGS__

namespace vramtrace {

enum class ApiId : uint8_t {
    None = 0,
#define VT_RUNTIME_HOOK(name, params, args) name,
#define VT_DRIVER_HOOK(name, params, args) name,
#include "hooks.def"
    Count
};
inline constexpr int kApiCount = static_cast<int>(ApiId::Count);

enum class HookFamily : uint8_t { Runtime, Driver };

// How a call reached a hook: through our exported symbol, or through a pointer we handed out from
// dlsym / cuGetProcAddress. Each has its own off switch (lib/core/config.h).
enum class Reach : uint8_t { Export, Handout };

struct HookInfo {
    const char *name;   // exact symbol name, e.g. "cuMemAlloc_v2"
    HookFamily family;
    void *handout;      // entry point handed out by dlsym / cuGetProcAddress (driver rows only)
    void *exported;     // our exported definition of the symbol
};

const HookInfo &hook_info(ApiId id);
const char *api_name(uint8_t id); // "unknown" for ids outside the table
ApiId find_driver_hook(const char *name); // ApiId::None when the name is not a wrapped driver symbol

// Typed function-pointer aliases: fn::cudaMalloc is `cudaError_t (*)(void **, size_t)`.
namespace fn {
#define VT_RUNTIME_HOOK(name, params, args) using name = cudaError_t(*) params;
#define VT_DRIVER_HOOK(name, params, args) using name = CUresult(*) params;
#include "hooks.def"
} // namespace fn

// The hook bodies, one per row, taking how they were reached first.
namespace hooks {
#define VT_RUNTIME_HOOK(name, params, args) cudaError_t name(Reach reach, VT_EXPAND params);
#define VT_DRIVER_HOOK(name, params, args) CUresult name(Reach reach, VT_EXPAND params);
#include "hooks.def"
} // namespace hooks

} // namespace vramtrace
