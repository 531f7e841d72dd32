// Declarations generated from hooks.def (device/driver_api.h has the ids, names and types): this
// library's entry points of each row and the per-row hook bodies (defined in hook_bodies.cpp for
// plain rows, custom_hooks.cpp for the stream-ordered, capture, graph memory node and pool rows;
// vmm_hooks.cpp, context_hooks.cpp, graph_hooks.cpp and procaddress_hook.cpp for the rest).
#pragma once

#include <cstdint>

#include "device/driver_api.h"

namespace vramtrace {

// How a call reached a hook: through our exported symbol, or through a pointer we handed out from
// dlsym / cuGetProcAddress. Each has its own off switch (lib/core/config.h).
enum class Reach : uint8_t { Export, Handout };

// This library's own entry points of a row: the exported definition that interposition reaches and,
// for driver rows, the one handed out by dlsym / cuGetProcAddress.
struct HookInfo {
    void *handout;      // nullptr for runtime rows
    void *exported;
};

const HookInfo &hook_info(ApiId id);

// The hook bodies, one per row, taking how they were reached first.
namespace hooks {
#define VT_RUNTIME_HOOK(name, params, args) cudaError_t name(Reach reach, VT_EXPAND params);
#define VT_DRIVER_HOOK(name, params, args) CUresult name(Reach reach, VT_EXPAND params);
#include "device/hooks.def"
} // namespace hooks

} // namespace vramtrace
