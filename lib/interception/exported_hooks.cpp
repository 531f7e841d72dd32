// Generated from hooks.def: the exported definitions that symbol interposition reaches, and the
// entry points handed out through dlsym and cuGetProcAddress. Both forward to the same hook body,
// telling it how it was reached so that each layer can be switched off on its own.
#include "hook_table.h"

#define VT_EXPORT __attribute__((visibility("default")))

using namespace vramtrace;

extern "C" {
#define VT_RUNTIME_HOOK(name, params, args) \
    VT_EXPORT cudaError_t name params { return hooks::name(Reach::Export, VT_EXPAND args); }
#define VT_DRIVER_HOOK(name, params, args) \
    VT_EXPORT CUresult name params { return hooks::name(Reach::Export, VT_EXPAND args); }
#include "hooks.def"
}

namespace {
#define VT_DRIVER_HOOK(name, params, args) \
    CUresult handout_##name params { return hooks::name(Reach::Handout, VT_EXPAND args); }
#include "hooks.def"

const HookInfo kHooks[] = {
    {"none", HookFamily::Runtime, nullptr, nullptr},
#define VT_RUNTIME_HOOK(name, params, args) \
    {#name, HookFamily::Runtime, nullptr, reinterpret_cast<void *>(&::name)},
#define VT_DRIVER_HOOK(name, params, args) \
    {#name, HookFamily::Driver, reinterpret_cast<void *>(&handout_##name), reinterpret_cast<void *>(&::name)},
#include "hooks.def"
};
static_assert(sizeof(kHooks) / sizeof(kHooks[0]) == kApiCount);
} // namespace

namespace vramtrace {

const HookInfo &hook_info(ApiId id) { return kHooks[static_cast<int>(id)]; }

const char *api_name(uint8_t id) { return id < kApiCount ? kHooks[id].name : "unknown"; }

ApiId find_driver_hook(const char *name) {
    // The table is small (a few dozen rows) and this runs only on dlsym of names starting "cu".
    for (int i = 1; i < kApiCount; ++i) {
        const HookInfo &h = kHooks[i];
        if (h.family != HookFamily::Driver) continue;
        const char *a = h.name, *b = name;
        while (*a && *a == *b) ++a, ++b;
        if (*a == 0 && *b == 0) return static_cast<ApiId>(i);
    }
    return ApiId::None;
}

} // namespace vramtrace
