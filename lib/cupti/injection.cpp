// The injection entry point and the choice of backend.
//
// The driver loads the library named by CUDA_INJECTION64_PATH during cuInit (with its own dlopen,
// so the library's exports interpose nothing) and calls InitializeInjection once. Who records:
//   VRAMTRACE_BACKEND=cupti          CUPTI; the preload hooks, if preloaded too, stay passive and
//                                    take over only if CUPTI cannot be subscribed (fallback);
//   VRAMTRACE_BACKEND=preload        the preload hooks; InitializeInjection subscribes nothing;
//   unset                            the preload hooks when the library is preloaded, else CUPTI
//                                    (the library was only injected: nothing else could record).
#include "cupti/backend.h"
#include "core/recording_backend.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

#include "core/config.h"
#include "core/log.h"
#include "core/tracker.h"
#include "cupti/subscriber.h"
#include "device/real_functions.h"

extern "C" void vt_dlsym_entry();        // our exported dlsym@@GLIBC_2.34 (interception/dlsym_hook.S)
extern "C" void vt_dlsym_entry_compat(); // and dlsym@GLIBC_2.2.5

namespace vramtrace {

namespace cupti {
namespace {

bool injection_path_set() {
    const char *p = getenv("CUDA_INJECTION64_PATH");
    return p != nullptr && *p != 0;
}

std::atomic<bool> g_initialized{false};

} // namespace

bool preload_interposed() {
    // A preloaded library precedes libc in the global scope, so the process's dlsym is ours; a
    // library the driver dlopen'ed (RTLD_LOCAL or RTLD_GLOBAL alike) comes after libc.
    void *global = dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.34");
    if (global == nullptr) global = dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.2.5");
    return global != nullptr && (global == reinterpret_cast<void *>(&vt_dlsym_entry) ||
                                 global == reinterpret_cast<void *>(&vt_dlsym_entry_compat));
}

bool loaded_by_injection_only() { return injection_path_set() && !preload_interposed(); }

void select_backend_at_start() {
    const Config &c = config();
    if (c.disabled || c.backend != 2) return;
    if (!injection_path_set()) {
        log_warning("VRAMTRACE_BACKEND=cupti needs CUDA_INJECTION64_PATH=<path of libvramtrace.so> (or `vramtrace "
                    "run --backend=cupti`); using the preload hooks");
        return;
    }
    set_preload_hooks_record(false);
}

int initialize_injection() {
    if (g_initialized.exchange(true)) return 1;
    const Config &c = config();
    if (c.disabled) return 1;
    bool interposed = preload_interposed();
    bool want_cupti = c.backend == 2 || (c.backend == 0 && !interposed);
    if (!want_cupti) {
        log_debug("loaded through CUDA_INJECTION64_PATH, but the preload hooks record (VRAMTRACE_BACKEND=%s): "
                  "CUPTI is not used", c.backend == 1 ? "preload" : "unset");
        return 1;
    }
    set_preload_hooks_record(false);
    // Found now, outside any callback: the queries the callbacks make need the driver's handle.
    driver_handle();
    SubscribeResult r = subscribe();
    if (r.ok) {
        log_debug("CUPTI backend: subscribed to %zu driver callbacks and %zu NVTX callbacks through %s", r.callbacks,
                  r.nvtx_callbacks, r.library);
        // None enabled: NVTX's calls go to the library's own slots (nvtx_route.cpp); some: those
        // CUPTI refused are missing from what it reports.
        if (r.nvtx_why[0] != 0 && r.nvtx_callbacks > 0) log_warning("%s; those NVTX calls are not followed", r.nvtx_why);
    } else {
        if (interposed) {
            set_preload_hooks_record(true);
            log_warning("%s; using the preload hooks instead", r.why);
        } else {
            log_warning("%s; this process is not tracked (`vramtrace run --backend=cupti` also preloads the "
                        "library, to fall back on its hooks)", r.why);
        }
    }
    // VRAMTRACE_FOLLOW=0: programs this one starts are not traced (the loader's LD_PRELOAD entry is
    // removed by the tracker; the driver read this variable already).
    if (!c.follow) unsetenv("CUDA_INJECTION64_PATH");
    return 1;
}

} // namespace cupti
} // namespace vramtrace

// Called by the CUDA driver when CUDA_INJECTION64_PATH names this library.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
    return vramtrace::cupti::initialize_injection();
}
