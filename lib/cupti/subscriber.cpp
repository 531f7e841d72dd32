// libcupti is found at run time (the library links nothing but libc), only once the CUPTI backend
// was chosen. Where it is looked for, in order (docs/cupti.md):
//   1. VRAMTRACE_CUPTI_LIBRARY, a path: that one or none;
//   2. a libcupti already loaded in the process (a framework's profiler loaded it);
//   3. beside a loaded libcudart, and in ../extras/CUPTI/lib64 from there (the framework's wheel
//      ships it there, e.g. site-packages/nvidia/cu13/lib; a toolkit's lib64);
//   4. the loader's search path (LD_LIBRARY_PATH, ldconfig);
//   5. $CUDA_HOME, $CUDA_PATH, /usr/local/cuda: extras/CUPTI/lib64, lib64, lib.
// Each place is tried with libcupti.so.13, .so.12, then libcupti.so.
// This file includes CUPTI's headers for types and ids only; every function comes from dlsym.
#include "cupti/subscriber.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <dlfcn.h>
#include <link.h>

#include <cupti_callbacks.h>

#include "core/config.h"
#include "cupti/callback_translate.h"
#include "cupti/cupti_callback.h"
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

void *find_cupti(char *why, size_t why_size) {
    if (const char *explicit_path = config().cupti_library) {
        void *h = open_as(explicit_path);
        if (h == nullptr) snprintf(why, why_size, "cannot load VRAMTRACE_CUPTI_LIBRARY=%s: %s", explicit_path, dlerror());
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

} // namespace

SubscribeResult subscribe() {
    SubscribeResult out;
    void *lib = find_cupti(out.why, sizeof out.why);
    if (lib == nullptr) return out;
    out.library = g_library;
    auto subscribe_v2 = reinterpret_cast<SubscribeV2Fn>(dlsym(lib, "cuptiSubscribe_v2"));
    auto subscribe_v1 = reinterpret_cast<SubscribeFn>(dlsym(lib, "cuptiSubscribe"));
    auto enable = reinterpret_cast<EnableFn>(dlsym(lib, "cuptiEnableCallback"));
    auto unsubscribe = reinterpret_cast<UnsubscribeFn>(dlsym(lib, "cuptiUnsubscribe"));
    auto result_string = reinterpret_cast<ResultStringFn>(dlsym(lib, "cuptiGetResultString"));
    if ((subscribe_v2 == nullptr && subscribe_v1 == nullptr) || enable == nullptr) {
        snprintf(out.why, sizeof out.why, "%s has no cuptiSubscribe/cuptiEnableCallback", g_library);
        return out;
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
        return out;
    }
    if (r != CUPTI_SUCCESS) {
        snprintf(out.why, sizeof out.why, "cuptiSubscribe failed: %s (%d)", result_text(result_string, r),
                 static_cast<int>(r));
        return out;
    }

    uint32_t ids[256];
    size_t n = subscribed_callbacks(ids, sizeof ids / sizeof ids[0]);
    if (n > sizeof ids / sizeof ids[0]) n = sizeof ids / sizeof ids[0];
    CUptiResult first_error = CUPTI_SUCCESS;
    for (size_t i = 0; i < n; ++i) {
        CUptiResult e = enable(1, handle, CUPTI_CB_DOMAIN_DRIVER_API, ids[i]);
        if (e == CUPTI_SUCCESS) ++out.callbacks;
        else if (first_error == CUPTI_SUCCESS) first_error = e;
    }
    if (out.callbacks != n) {
        if (unsubscribe != nullptr) unsubscribe(handle);
        snprintf(out.why, sizeof out.why, "cuptiEnableCallback failed for %zu of %zu callbacks: %s", n - out.callbacks, n,
                 result_text(result_string, first_error));
        out.callbacks = 0;
        return out;
    }
    out.ok = true;
    return out;
}

} // namespace vramtrace::cupti
