/* A minimal lock-free "driver" for the fork stress test: cuMemAlloc_v2 hands out addresses from an
 * atomic counter (no memory behind them), cuMemFree_v2 accepts any non-zero address, cuCtxGetDevice
 * says device 0. Unlike the stand-in driver it holds no lock, so a fork() may land at any moment in
 * any thread without leaving the child a lock it can never take. Built as libcuda.so.1 in a
 * directory of its own, so that the tracer finds it as the driver. */
#include <stdatomic.h>
#include <stddef.h>

typedef unsigned long long CUdeviceptr;
static _Atomic unsigned long long next_address = 0x7f0000000000ull;

int cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes) {
    if (dptr == NULL || bytes == 0) return 1;
    *dptr = atomic_fetch_add(&next_address, (bytes + 255) & ~(size_t)255);
    return 0;
}

int cuMemFree_v2(CUdeviceptr dptr) { return dptr == 0 ? 1 : 0; }

int cuPointerGetAttribute(void *data, int attribute, CUdeviceptr ptr) {
    (void)attribute;
    if (data == NULL || ptr == 0) return 1;
    *(int *)data = 0;
    return 0;
}

int cuCtxGetDevice(int *device) {
    if (device == NULL) return 1;
    *device = 0;
    return 0;
}
