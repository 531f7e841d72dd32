/* Built twice, as libvt_next_first.so and libvt_next_second.so (VT_LIB_NAME differs). Both define
 * vt_next_probe; the first one asks dlsym(RTLD_NEXT, ...) for the next definition, which glibc
 * resolves relative to the caller: it must be the second library's, and malloc must be libc's. */
#define _GNU_SOURCE
#include <dlfcn.h>

const char *vt_next_probe(void) { return VT_LIB_NAME; }

const char *vt_next_of_probe(void) {
    const char *(*next)(void) = (const char *(*)(void))dlsym(RTLD_NEXT, "vt_next_probe");
    return next ? next() : "(none)";
}

void *vt_next_malloc(void) { return dlsym(RTLD_NEXT, "malloc"); }
