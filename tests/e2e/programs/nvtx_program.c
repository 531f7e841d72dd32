/* NVTX ranges on two threads and two domains around allocations on the stand-in runtime, built
 * with the CUDA toolkit's NVTX3 headers (which load NVTX_INJECTION64_PATH at the first NVTX call).
 * The threads run one after the other, so the peak is exact:
 *   main    [step] [ml:forward]          A = 1 MiB, live
 *   main    [step]                       B = 2 MiB, live
 *   worker  [loader] [aten::mm, seq..]   C = 8 MiB, freed after D
 *   worker  [loader]                     D = 16 MiB, live          -> peak 27 MiB
 *   main    (no range)                   E = 4 MiB, live
 * It prints the levels NVTX returned and "dump: RC" for the snapshot it asks for at the end. */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "vramtrace/vramtrace.h"

typedef int cudaError_t;
extern cudaError_t cudaMalloc(void **ptr, size_t size);
extern cudaError_t cudaFree(void *ptr);

#define MiB ((size_t)1 << 20)

static void *must_alloc(size_t bytes) {
    void *p = NULL;
    if (cudaMalloc(&p, bytes) != 0) {
        fprintf(stderr, "cudaMalloc(%zu) failed\n", bytes);
        exit(2);
    }
    return p;
}

static void *worker(void *arg) {
    (void)arg;
    int l0 = nvtxRangePushA("loader");
    int l1 = nvtxRangePushA("aten::mm, seq = 12, op_id = 40, sizes = [[2, 3], [3, 4]]");
    void *c = must_alloc(8 * MiB);
    int p1 = nvtxRangePop();
    void *d = must_alloc(16 * MiB);
    cudaFree(c);
    (void)d;
    int p0 = nvtxRangePop();
    printf("worker levels: %d %d %d %d\n", l0, l1, p1, p0);
    return NULL;
}

int main(int argc, char **argv) {
    nvtxDomainHandle_t ml = nvtxDomainCreateA("ml");
    nvtxStringHandle_t forward = nvtxDomainRegisterStringA(ml, "forward");
    nvtxEventAttributes_t attr = {0};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attr.message.registered = forward;

    int s0 = nvtxRangePushA("step");
    int s1 = nvtxDomainRangePushEx(ml, &attr);
    must_alloc(1 * MiB);
    int q1 = nvtxDomainRangePop(ml);
    must_alloc(2 * MiB);
    nvtxMarkA("checkpoint");
    nvtxRangeId_t interval = nvtxRangeStartA("load phase");
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    nvtxRangeEnd(interval);
    int q0 = nvtxRangePop();
    must_alloc(4 * MiB);
    int extra = nvtxRangePop(); /* nothing open: -1 */
    printf("main levels: %d %d %d %d %d\n", s0, s1, q1, q0, extra);
    if (argc > 1) printf("dump: %d\n", vramtrace_dump(argv[1]));
    return 0;
}
