#include "interception/self_test.h"

#include <atomic>
#include <dlfcn.h>

#include "core/config.h"
#include "core/log.h"
#include "interception/hook_table.h"
#include "device/real_functions.h"

namespace vramtrace {
namespace {

std::atomic<bool> g_driver_checked{false};

} // namespace

void self_test_at_start() {
    const Config &c = config();
    if (c.disabled) return;
    DlsymFn dl = real_dlsym();
    if (dl == nullptr) {
        log_warning("glibc's dlsym was not found: no layer can be installed");
        return;
    }
    // The program's own look-ups of these names must land on our definitions.
    const HookInfo &runtime = hook_info(ApiId::cudaMalloc);
    const HookInfo &driver = hook_info(ApiId::cuMemAlloc_v2);
    bool exports = dl(RTLD_DEFAULT, api_info(ApiId::cudaMalloc).name) == runtime.exported &&
                   dl(RTLD_DEFAULT, api_info(ApiId::cuMemAlloc_v2).name) == driver.exported;
    void *global_dlsym = dl(RTLD_DEFAULT, "dlsym");
    bool dlsym_hook = global_dlsym != nullptr && global_dlsym != reinterpret_cast<void *>(dl);
    if (c.hook_exports && !exports)
        log_warning("exported CUDA entry points are not interposed (is libvramtrace.so in LD_PRELOAD?); "
                    "programs that link libcudart.so dynamically will be seen only at the driver");
    if ((c.hook_dlsym || c.hook_procaddress) && !dlsym_hook)
        log_warning("the dlsym hook is not installed; driver look-ups will not be intercepted");
    log_debug("layer exports: %s", !c.hook_exports ? "off" : exports ? "installed" : "NOT installed");
    log_debug("layer dlsym: %s", !c.hook_dlsym ? "off" : dlsym_hook ? "installed" : "NOT installed");
}

void self_test_with_driver() {
    const Config &c = config();
    if (c.disabled || g_driver_checked.exchange(true)) return;
    void *handle = driver_handle();
    if (handle == nullptr) return;
    driver_version(); // cached from here on
    DlsymFn dl = real_dlsym();
    const HookInfo &alloc = hook_info(ApiId::cuMemAlloc_v2);
    if (c.hook_dlsym) {
        // Through the dlsym the program sees (ours, when preloaded).
        auto global_dlsym = reinterpret_cast<DlsymFn>(dl(RTLD_DEFAULT, "dlsym"));
        bool ok = global_dlsym != nullptr && global_dlsym(handle, api_info(ApiId::cuMemAlloc_v2).name) == alloc.handout;
        if (!ok) log_warning("dlsym(libcuda, \"cuMemAlloc_v2\") does not return our wrapper: "
                             "programs that dlsym the driver directly are not tracked");
        log_debug("layer dlsym against the driver: %s", ok ? "working" : "NOT working");
    }
    if (c.hook_procaddress) {
        void *pfn = nullptr;
        auto gpa = reinterpret_cast<void *>(hook_info(ApiId::cuGetProcAddress_v2).handout);
        bool ok = false;
        if (find_real(ApiId::cuGetProcAddress_v2) != nullptr) {
            auto call = reinterpret_cast<CUresult (*)(const char *, void **, int, cuuint64_t, int *)>(gpa);
            ok = call("cuMemAlloc", &pfn, 3020, 0, nullptr) == 0 && pfn == alloc.handout;
        }
        if (!ok) log_warning("cuGetProcAddress(\"cuMemAlloc\") does not return our wrapper: "
                             "statically linked cudart programs are not tracked");
        log_debug("layer cuGetProcAddress against the driver: %s", ok ? "working" : "NOT working");
    }
}

} // namespace vramtrace
