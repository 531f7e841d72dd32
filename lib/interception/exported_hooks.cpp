// Generated from hooks.def: the exported definitions that symbol interposition reaches, and the
// entry points handed out through dlsym and cuGetProcAddress. Both forward to the same hook body,
// telling it how it was reached so that each layer can be switched off on its own.
#include "interception/hook_table.h"

#define VT_EXPORT __attribute__((visibility("default")))

using namespace vramtrace;

extern "C" {
#define VT_RUNTIME_HOOK(name, params, args) \
    VT_EXPORT cudaError_t name params { return hooks::name(Reach::Export, VT_EXPAND args); }
#define VT_DRIVER_HOOK(name, params, args) \
    VT_EXPORT CUresult name params { return hooks::name(Reach::Export, VT_EXPAND args); }
#include "device/hooks.def"
}

namespace {
#define VT_DRIVER_HOOK(name, params, args) \
    CUresult handout_##name params { return hooks::name(Reach::Handout, VT_EXPAND args); }
#include "device/hooks.def"

const HookInfo kHooks[] = {
    {nullptr, nullptr},
#define VT_RUNTIME_HOOK(name, params, args) {nullptr, reinterpret_cast<void *>(&::name)},
#define VT_DRIVER_HOOK(name, params, args) \
    {reinterpret_cast<void *>(&handout_##name), reinterpret_cast<void *>(&::name)},
#include "device/hooks.def"
};
static_assert(sizeof(kHooks) / sizeof(kHooks[0]) == kApiCount);
} // namespace

namespace vramtrace {

const HookInfo &hook_info(ApiId id) { return kHooks[static_cast<int>(id)]; }

} // namespace vramtrace
