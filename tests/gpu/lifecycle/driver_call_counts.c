/* A CUPTI injection library (CUDA_INJECTION64_PATH) that counts every driver API call a program
 * makes, by name, and prints the counts of the context, graph and memory calls at exit
 * ("driver-calls NAME COUNT" on stderr). Used to learn which entry points a framework reaches
 * (which must be hooked) before hooking them.
 * Build: cc -shared -fPIC -I/usr/local/cuda/include driver_call_counts.c -ldl -o driver_call_counts.so */
#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CBID 4096
static unsigned long g_counts[MAX_CBID];
static CUptiResult (*g_name)(CUpti_CallbackDomain, uint32_t, const char **);

static void CUPTIAPI on_call(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data) {
    const CUpti_CallbackData *info = (const CUpti_CallbackData *)data;
    (void)u;
    (void)d;
    if (info->callbackSite == CUPTI_API_ENTER && id < MAX_CBID) __atomic_fetch_add(&g_counts[id], 1, __ATOMIC_RELAXED);
}

static void report(void) {
    for (unsigned i = 0; i < MAX_CBID; ++i) {
        const char *n = NULL;
        if (g_counts[i] == 0 || g_name == NULL || g_name(CUPTI_CB_DOMAIN_DRIVER_API, i, &n) != CUPTI_SUCCESS || !n) continue;
        if (strstr(n, "Ctx") || strstr(n, "Graph") || strstr(n, "Mem") || strstr(n, "Reset") || strstr(n, "Ipc"))
            fprintf(stderr, "driver-calls %s %lu\n", n, g_counts[i]);
    }
}

int InitializeInjection(void) {
    void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) h = dlopen("/usr/local/cuda/lib64/libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) return 0;
    CUptiResult (*sub)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *) = dlsym(h, "cuptiSubscribe");
    CUptiResult (*en)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain) = dlsym(h, "cuptiEnableDomain");
    g_name = dlsym(h, "cuptiGetCallbackName");
    CUpti_SubscriberHandle s;
    if (!sub || !en || sub(&s, on_call, NULL) != CUPTI_SUCCESS) return 0;
    en(1, s, CUPTI_CB_DOMAIN_DRIVER_API);
    atexit(report);
    return 1;
}
