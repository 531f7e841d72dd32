#include "device/driver_api.h"

namespace vramtrace {
namespace {

const ApiInfo kApis[] = {
    {"none", HookFamily::Runtime},
#define VT_RUNTIME_HOOK(name, params, args) {#name, HookFamily::Runtime},
#define VT_DRIVER_HOOK(name, params, args) {#name, HookFamily::Driver},
#include "device/hooks.def"
};
static_assert(sizeof(kApis) / sizeof(kApis[0]) == kApiCount);

} // namespace

const ApiInfo &api_info(ApiId id) { return kApis[static_cast<int>(id)]; }

const char *api_name(uint8_t id) { return id < kApiCount ? kApis[id].name : "unknown"; }

ApiId find_driver_hook(const char *name) {
    // The table is small (a few dozen rows) and this runs only on dlsym of names starting "cu".
    for (int i = 1; i < kApiCount; ++i) {
        const ApiInfo &a = kApis[i];
        if (a.family != HookFamily::Driver) continue;
        const char *x = a.name, *y = name;
        while (*x && *x == *y) ++x, ++y;
        if (*x == 0 && *y == 0) return static_cast<ApiId>(i);
    }
    return ApiId::None;
}

} // namespace vramtrace
