/* A plugin for test_dlclose.cpp: dlopen'ed, asked to allocate, then dlclose'd by dlclose_program.
 * Written in C so that nothing in it (no C++ unique symbols) keeps it loaded after dlclose. */
#include <cuda_runtime_api.h>
#include <stdio.h>

/* 6 MiB from a named function; prints the expect-live line the snapshot must match. */
__attribute__((noinline, visibility("default"))) int plugin_allocate(void) {
    void *p = NULL;
    int line = __LINE__ + 1;
    if (cudaMalloc(&p, 6u << 20) != cudaSuccess) return 1;
    printf("expect-live %u cudaMalloc 0 plugin_allocate dlclose_plugin.c:%d\n", 6u << 20, line);
    return 0;
}
