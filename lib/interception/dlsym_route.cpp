// The C++ half of the dlsym hook (dlsym_hook.S): decides which names are ours and, for those,
// hands out our driver wrappers in place of the driver's own functions.
//
// Only exact names from hooks.def are wrapped (a prefix match once recursed into cudnn* look-ups in
// another interposer). The caller's handle is kept: we never turn a handle look-up into a global one.
#include <dlfcn.h>

#include "core/config.h"
#include "core/tracker.h"
#include "interception/hook_table.h"
#include "device/real_functions.h"

using namespace vramtrace;

extern "C" {

__attribute__((visibility("hidden"))) void *vt_real_dlsym_slot = nullptr;

// Returns 0 when the stub must forward to glibc (vt_real_dlsym_slot is then set), 1 when
// vt_dlsym_wrapped must answer.
__attribute__((visibility("hidden"))) int vt_dlsym_route(const char *name) {
    if (vt_real_dlsym_slot == nullptr) {
        __atomic_store_n(&vt_real_dlsym_slot, reinterpret_cast<void *>(real_dlsym()), __ATOMIC_RELEASE);
        if (vt_real_dlsym_slot == nullptr) return 1; // cannot forward: let the wrapped path fail softly
    }
    if (name == nullptr || name[0] != 'c' || name[1] != 'u') return 0;
    ApiId id = find_driver_hook(name);
    if (id == ApiId::None) return 0;
    const Config &c = config();
    if (c.disabled) return 0;
    bool procaddress = id == ApiId::cuGetProcAddress || id == ApiId::cuGetProcAddress_v2;
    return (procaddress ? c.hook_procaddress : c.hook_dlsym) ? 1 : 0;
}

__attribute__((visibility("hidden"))) void *vt_dlsym_wrapped(void *handle, const char *name) {
    DlsymFn dl = real_dlsym();
    if (dl == nullptr) return nullptr;
    void *found = dl(handle, name);
    ApiId id = find_driver_hook(name);
    if (found == nullptr || id == ApiId::None) return found;
    const HookInfo &info = hook_info(id);
    if (found == info.exported || found == info.handout) return found; // the look-up found us
    note_driver_handle(handle);
    // Substitute only the driver's own function: another library's same-named symbol passes through.
    if (found != find_real(id)) return found;
    return info.handout;
}

} // extern "C"
