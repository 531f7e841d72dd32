// libcupti is found at run time (the library links nothing but libc), only once the CUPTI backend
// was chosen. Where it is looked for, in order (docs/cupti.md):
//   1. VRAMTRACE_CUPTI_LIBRARY, a path: that one or none;
//   1b. NVTX_INJECTION64_PATH when it names a libcupti: NVTX reports its calls only to the CUPTI
//      that is its injection library, so the subscriber must be in that same copy;
//   2. a libcupti already loaded in the process (a framework's profiler loaded it);
//   3. beside a loaded libcudart, and in ../extras/CUPTI/lib64 from there (the framework's wheel
//      ships it there, e.g. site-packages/nvidia/cu13/lib; a toolkit's lib64);
//   4. the loader's search path (LD_LIBRARY_PATH, ldconfig);
//   5. $CUDA_HOME, $CUDA_PATH, /usr/local/cuda: extras/CUPTI/lib64, lib64, lib.
// Each place is tried with libcupti.so.13, .so.12, then libcupti.so.
// Besides the driver callbacks, the NVTX callbacks of nvtx_callbacks.h are enabled; a CUPTI that
// refuses them still records allocations (the reason is in SubscribeResult::nvtx_why).
// This file includes CUPTI's headers for types and ids only; every function comes from dlsym.
#include "cupti/subscriber.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>

#include <cupti_callbacks.h>

#include "core/config.h"
#include "cupti/callback_translate.h"
#include "cupti/cupti_callback.h"
#include "cupti/nvtx_callbacks.h"
#include "cupti/tracker_sink.h"

namespace vramtrace::cupti {
namespace {

const char *const kNames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};

char g_library[512];

void *open_as(const char *path, int extra_flags = 0) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | extra_flags);
    if (h != nullptr) snprintf(g_library, sizeof g_library, "%s", path);
    return h;
}

void *open_in(const char *dir, const char *sub) {
    char path[1024];
    for (const char *name : kNames) {
        int n = snprintf(path, sizeof path, "%s%s/%s", dir, sub, name);
        if (n <= 0 || static_cast<size_t>(n) >= sizeof path) continue;
        if (void *h = open_as(path)) return h;
    }
    return nullptr;
}

// Directories of the loaded libcudart copies (a framework's, or the toolkit's), collected inside
// dl_iterate_phdr and opened after it returns: the callback runs under the loader's write lock, and
// dlopen there would take the loader's other lock in the opposite order to a concurrent dlopen.
struct CudartDirs {
    static constexpr int kMax = 4;
    char dir[kMax][1024];
    int count = 0;
};

int collect_cudart_dir(struct dl_phdr_info *info, size_t, void *data) {
    auto *dirs = static_cast<CudartDirs *>(data);
    const char *path = info->dlpi_name;
    if (path == nullptr || *path == 0 || dirs->count == CudartDirs::kMax) return 0;
    const char *slash = strrchr(path, '/');
    if (slash == nullptr || strncmp(slash + 1, "libcudart.so", 12) != 0) return 0;
    size_t len = static_cast<size_t>(slash - path);
    if (len >= sizeof dirs->dir[0]) return 0;
    memcpy(dirs->dir[dirs->count], path, len);
    dirs->dir[dirs->count++][len] = 0;
    return 0;
}

void *beside_cudart() {
    CudartDirs dirs;
    dl_iterate_phdr(&collect_cudart_dir, &dirs);
    for (int i = 0; i < dirs.count; ++i) {
        if (void *h = open_in(dirs.dir[i], "")) return h;
        if (void *h = open_in(dirs.dir[i], "/../extras/CUPTI/lib64")) return h;
    }
    return nullptr;
}

// NVTX_INJECTION64_PATH when its file name starts with "libcupti", else nullptr.
const char *nvtx_cupti() {
    const char *p = getenv("NVTX_INJECTION64_PATH");
    if (p == nullptr || *p == 0) return nullptr;
    const char *slash = strrchr(p, '/');
    return strncmp(slash != nullptr ? slash + 1 : p, "libcupti", 8) == 0 ? p : nullptr;
}

void *find_cupti(char *why, size_t why_size) {
    if (const char *explicit_path = config().cupti_library) {
        void *h = open_as(explicit_path);
        if (h == nullptr) snprintf(why, why_size, "cannot load VRAMTRACE_CUPTI_LIBRARY=%s: %s", explicit_path, dlerror());
        return h;
    }
    if (const char *nvtx = nvtx_cupti()) {
        void *h = open_as(nvtx);
        if (h == nullptr) snprintf(why, why_size, "cannot load NVTX_INJECTION64_PATH=%s: %s", nvtx, dlerror());
        return h;
    }
    for (const char *name : kNames)
        if (void *h = open_as(name, RTLD_NOLOAD)) return h;
    if (void *found = beside_cudart()) return found;
    for (const char *name : kNames)
        if (void *h = open_as(name)) return h;
    const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
    for (const char *root : roots) {
        if (root == nullptr || *root == 0) continue;
        for (const char *sub : {"/extras/CUPTI/lib64", "/lib64", "/lib"})
            if (void *h = open_in(root, sub)) return h;
    }
    snprintf(why, why_size, "libcupti was not found (set VRAMTRACE_CUPTI_LIBRARY to its path; see docs/cupti.md)");
    return nullptr;
}

using SubscribeV2Fn = CUptiResult (*)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *, CUpti_SubscriberParams *);
using SubscribeFn = CUptiResult (*)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
using EnableFn = CUptiResult (*)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
using UnsubscribeFn = CUptiResult (*)(CUpti_SubscriberHandle);
using ResultStringFn = CUptiResult (*)(CUptiResult, const char **);

const char *result_text(ResultStringFn fn, CUptiResult r) {
    const char *s = nullptr;
    if (fn != nullptr && fn(r, &s) == CUPTI_SUCCESS && s != nullptr) return s;
    return "unknown CUPTI error";
}

// One subscription per process, shared by the driver's InitializeInjection and NVTX's
// InitializeInjectionNvtx2, whichever comes first (NVTX's first call may precede cuInit): the first
// finds libcupti and subscribes, each enables its own callbacks. Under g_lock: both are called once
// per process, possibly from two threads at once.
struct State {
    bool tried = false;      // subscription attempted (succeeded or not: not retried)
    bool driver_done = false;
    void *lib = nullptr;
    CUpti_SubscriberHandle handle = nullptr;
    EnableFn enable = nullptr;
    UnsubscribeFn unsubscribe = nullptr;
    ResultStringFn result_string = nullptr;
    SubscribeResult result;
};
State g_state;
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

bool subscribe_once(State &st) {
    if (st.tried) return st.handle != nullptr;
    st.tried = true;
    SubscribeResult &out = st.result;
    void *lib = find_cupti(out.why, sizeof out.why);
    if (lib == nullptr) return false;
    out.library = g_library;
    auto subscribe_v2 = reinterpret_cast<SubscribeV2Fn>(dlsym(lib, "cuptiSubscribe_v2"));
    auto subscribe_v1 = reinterpret_cast<SubscribeFn>(dlsym(lib, "cuptiSubscribe"));
    st.enable = reinterpret_cast<EnableFn>(dlsym(lib, "cuptiEnableCallback"));
    st.unsubscribe = reinterpret_cast<UnsubscribeFn>(dlsym(lib, "cuptiUnsubscribe"));
    st.result_string = reinterpret_cast<ResultStringFn>(dlsym(lib, "cuptiGetResultString"));
    if ((subscribe_v2 == nullptr && subscribe_v1 == nullptr) || st.enable == nullptr) {
        snprintf(out.why, sizeof out.why, "%s has no cuptiSubscribe/cuptiEnableCallback", g_library);
        return false;
    }

    auto callback = reinterpret_cast<CUpti_CallbackFunc>(callback_function());
    CUpti_SubscriberHandle handle = nullptr;
    char holder[2 * CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {};
    CUptiResult r;
    if (subscribe_v2 != nullptr) {
        CUpti_SubscriberParams params;
        memset(&params, 0, sizeof params);
        params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
        params.subscriberName = "vramtrace";
        params.oldSubscriberName = holder;
        params.oldSubscriberSize = sizeof holder;
        r = subscribe_v2(&handle, callback, tracker_sink(), &params);
    } else {
        r = subscribe_v1(&handle, callback, tracker_sink());
    }
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        holder[sizeof holder - 1] = 0;
        snprintf(out.why, sizeof out.why, "CUPTI is already held by %s (one subscriber per process)",
                 holder[0] ? holder : "another tool (it gave no name)");
        return false;
    }
    if (r != CUPTI_SUCCESS) {
        snprintf(out.why, sizeof out.why, "cuptiSubscribe failed: %s (%d)", result_text(st.result_string, r),
                 static_cast<int>(r));
        return false;
    }
    st.lib = lib;
    st.handle = handle;
    // NVTX: CUPTI passes the calls on only while it is NVTX's injection library (docs/nvtx.md); the
    // ids are enabled in any case, so that a program whose NVTX goes to this CUPTI is followed.
    uint32_t ids[64];
    size_t m = subscribed_nvtx_callbacks(ids, sizeof ids / sizeof ids[0]);
    if (m > sizeof ids / sizeof ids[0]) m = sizeof ids / sizeof ids[0];
    CUptiResult nvtx_error = CUPTI_SUCCESS;
    for (size_t i = 0; i < m; ++i) {
        CUptiResult e = st.enable(1, handle, CUPTI_CB_DOMAIN_NVTX, ids[i]);
        if (e == CUPTI_SUCCESS) ++out.nvtx_callbacks;
        else if (nvtx_error == CUPTI_SUCCESS) nvtx_error = e;
    }
    if (out.nvtx_callbacks != m)
        snprintf(out.nvtx_why, sizeof out.nvtx_why, "cuptiEnableCallback refused %zu of %zu NVTX callbacks: %s",
                 m - out.nvtx_callbacks, m, result_text(st.result_string, nvtx_error));
    return true;
}

// The driver-API callbacks; on a failure the subscription is given up (the preload hooks take over).
bool enable_driver(State &st) {
    SubscribeResult &out = st.result;
    uint32_t ids[256];
    size_t n = subscribed_callbacks(ids, sizeof ids / sizeof ids[0]);
    if (n > sizeof ids / sizeof ids[0]) n = sizeof ids / sizeof ids[0];
    CUptiResult first_error = CUPTI_SUCCESS;
    for (size_t i = 0; i < n; ++i) {
        CUptiResult e = st.enable(1, st.handle, CUPTI_CB_DOMAIN_DRIVER_API, ids[i]);
        if (e == CUPTI_SUCCESS) ++out.callbacks;
        else if (first_error == CUPTI_SUCCESS) first_error = e;
    }
    if (out.callbacks == n) return true;
    if (st.unsubscribe != nullptr) st.unsubscribe(st.handle);
    st.handle = nullptr;
    snprintf(out.why, sizeof out.why, "cuptiEnableCallback failed for %zu of %zu callbacks: %s", n - out.callbacks, n,
             result_text(st.result_string, first_error));
    out.callbacks = 0;
    out.nvtx_callbacks = 0;
    return false;
}

} // namespace

SubscribeResult subscribe() {
    pthread_mutex_lock(&g_lock);
    State &st = g_state;
    if (!st.driver_done) {
        st.driver_done = true;
        if (subscribe_once(st)) st.result.ok = enable_driver(st);
    }
    SubscribeResult out = st.result;
    pthread_mutex_unlock(&g_lock);
    return out;
}

NvtxInitFn subscribe_for_nvtx(SubscribeResult *result) {
    pthread_mutex_lock(&g_lock);
    State &st = g_state;
    NvtxInitFn init = nullptr;
    if (subscribe_once(st) && st.result.nvtx_callbacks > 0)
        init = reinterpret_cast<NvtxInitFn>(dlsym(st.lib, "InitializeInjectionNvtx2"));
    if (st.handle != nullptr && init == nullptr && st.result.nvtx_why[0] == 0)
        snprintf(st.result.nvtx_why, sizeof st.result.nvtx_why, "%s has no InitializeInjectionNvtx2", g_library);
    *result = st.result;
    pthread_mutex_unlock(&g_lock);
    return init;
}

} // namespace vramtrace::cupti
