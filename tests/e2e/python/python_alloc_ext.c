/* A tiny extension for the Python frame tests (test_python_frames.cpp): plain C, loaded by the
 * script with ctypes (no Python headers needed), calling the stand-in CUDA runtime. Loaded with
 * ctypes.PyDLL its functions run with the GIL held; with ctypes.CDLL, without. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stddef.h>

__attribute__((noinline, visibility("default"))) int vt_py_alloc(size_t bytes, void **out) {
    return (int)cudaMalloc(out, bytes);
}

__attribute__((noinline, visibility("default"))) int vt_py_free(void *p) { return (int)cudaFree(p); }

/* Calls back into Python (a ctypes callback): C between two runs of the evaluation loop. */
__attribute__((noinline, visibility("default"))) int vt_py_call(int (*callback)(void)) { return callback(); }

/* Allocates from a thread of its own that never runs Python (as NCCL's or a framework's worker
 * threads do), while the calling thread waits for it. */
struct native_request {
    size_t bytes;
    void **out;
    int rc;
};

static void *native_thread_main(void *arg) {
    struct native_request *r = (struct native_request *)arg;
    r->rc = vt_py_alloc(r->bytes, r->out);
    return NULL;
}

__attribute__((noinline, visibility("default"))) int vt_py_alloc_native_thread(size_t bytes, void **out) {
    struct native_request r = {bytes, out, -1};
    pthread_t t;
    if (pthread_create(&t, NULL, native_thread_main, &r) != 0) return -1;
    pthread_join(t, NULL);
    return r.rc;
}

/* Allocates n times (bytes + 4096 * i) from one thread of its own that never runs Python: the same
 * native stack each time, so its later captures replay a walk that carries the stack's id. */
struct native_series {
    size_t bytes;
    int n;
    void **out;
    int rc;
};

static void *native_series_main(void *arg) {
    struct native_series *r = (struct native_series *)arg;
    for (int i = 0; i < r->n && r->rc == 0; ++i) r->rc = vt_py_alloc(r->bytes + 4096 * (size_t)i, &r->out[i]);
    return NULL;
}

__attribute__((noinline, visibility("default"))) int vt_py_alloc_native_series(size_t bytes, int n, void **out) {
    struct native_series r = {bytes, n, out, 0};
    pthread_t t;
    if (pthread_create(&t, NULL, native_series_main, &r) != 0) return -1;
    pthread_join(t, NULL);
    return r.rc;
}
