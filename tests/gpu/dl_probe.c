/* A throw-away probe for tests/gpu/run_foundation.sh (not part of vramtrace): preloaded AFTER
 * libvramtrace.so, it logs every dlvsym and dlmopen call a CUDA program makes (cudart imports both),
 * so we can see whether either could reach driver functions around vramtrace's dlsym hook.
 * Output lines go to stderr prefixed "dl_probe:". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

static void *(*real_dlvsym_fn)(void *, const char *, const char *);
static void *(*real_dlmopen_fn)(Lmid_t, const char *, int);

__attribute__((constructor)) static void probe_init(void) {
    /* glibc >= 2.34 and older both export these versions. */
    real_dlvsym_fn = (void *(*)(void *, const char *, const char *))dlvsym(RTLD_NEXT, "dlvsym", "GLIBC_2.34");
    if (!real_dlvsym_fn) real_dlvsym_fn = (void *(*)(void *, const char *, const char *))dlvsym(RTLD_NEXT, "dlvsym", "GLIBC_2.2.5");
    real_dlmopen_fn = (void *(*)(Lmid_t, const char *, int))real_dlvsym_fn(RTLD_NEXT, "dlmopen", "GLIBC_2.34");
    if (!real_dlmopen_fn) real_dlmopen_fn = (void *(*)(Lmid_t, const char *, int))real_dlvsym_fn(RTLD_NEXT, "dlmopen", "GLIBC_2.3.4");
}

void *dlvsym(void *handle, const char *name, const char *version) {
    fprintf(stderr, "dl_probe: dlvsym(%p, \"%s\", \"%s\")\n", handle, name ? name : "(null)", version ? version : "(null)");
    return real_dlvsym_fn(handle, name, version);
}

void *dlmopen(Lmid_t lmid, const char *file, int mode) {
    fprintf(stderr, "dl_probe: dlmopen(%ld, \"%s\", 0x%x)\n", (long)lmid, file ? file : "(null)", mode);
    return real_dlmopen_fn(lmid, file, mode);
}
