// Peak composition and marks, end to end: allocates A (3 MiB) and B (5 MiB) from two call sites,
// which is the peak (8 MiB), frees B, allocates C (1 MiB, smaller) from a third site, and writes a
// snapshot to argv[1]. Marks "start", "peak" and "end" go between the steps. The snapshot's peak
// for device 0 must name exactly alloc_a and alloc_b with 3 MiB and 5 MiB.
#include <cstdio>
#include <cuda_runtime_api.h>
#include <vramtrace/vramtrace.h>

__attribute__((noinline)) void *alloc_a() {
    void *p = nullptr;
    return cudaMalloc(&p, 3u << 20) == cudaSuccess ? p : nullptr;
}
__attribute__((noinline)) void *alloc_b() {
    void *p = nullptr;
    return cudaMalloc(&p, 5u << 20) == cudaSuccess ? p : nullptr;
}
__attribute__((noinline)) void *alloc_c() {
    void *p = nullptr;
    return cudaMalloc(&p, 1u << 20) == cudaSuccess ? p : nullptr;
}

int main(int argc, char **argv) {
    int rc = vramtrace_mark("start");
    void *a = alloc_a();
    void *b = alloc_b();
    vramtrace_mark("peak");
    if (!a || !b || cudaFree(b) != cudaSuccess) return 1;
    void *c = alloc_c();
    if (!c) return 1;
    vramtrace_mark("end");
    printf("mark: %d\n", rc);
    printf("dump: %d\n", vramtrace_dump(argc > 1 ? argv[1] : "peak.json"));
    printf("null label: %d\n", vramtrace_mark(nullptr));
    cudaFree(a);
    cudaFree(c);
    return 0;
}
