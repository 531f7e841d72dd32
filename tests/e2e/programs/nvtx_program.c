/* NVTX ranges on two threads and two domains around allocations on the stand-in runtime, built
 * with the CUDA toolkit's NVTX3 headers (which load NVTX_INJECTION64_PATH at the first NVTX call).
 * The threads run one after the other, so the peak is exact:
 *   main    [step] [ml:forward]          A = 1 MiB, live
 *   main    [step]                       B = 2 MiB, live
 *   worker  [loader] [aten::mm, seq..]   C = 8 MiB, freed after D
 *   worker  [loader]                     D = 16 MiB, live          -> peak 27 MiB
 *   main    (no range)                   E = 4 MiB, live
 *   main    (no range)                   S = 3 MiB, live: a pool's segment, registered as an NVTX
 *           heap; regions R1 = 512 KiB [optimizer] and R3 = 128 KiB live in it, R2 = 256 KiB
 *           unregistered (twice: the second is unknown); two bad regions (one outside every
 *           allocation, one across the segment's end)
 * Start/end ranges: "load phase" starts and ends on main around the worker; "handoff" starts on
 * main and is ended by the worker; "ml:epoch" starts on main and is still open at the dump.
 * Categories: ml:forward has category 7 of domain ml, named "phase" there (category 7 of the default
 * domain stays unnamed); "load phase" has category 2 of the default domain, named "io"; "ml:epoch"
 * has category 9, which has no name.
 * It prints the levels NVTX returned and "dump: RC" for the snapshot it asks for at the end. */
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>
#include <pthread.h>
#include <stdint.h>
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

#define KiB ((size_t)1 << 10)

static void register_region(nvtxDomainHandle_t d, nvtxMemHeapHandle_t heap, const void *ptr, size_t size) {
    nvtxMemVirtualRangeDesc_t region = {size, ptr};
    nvtxMemRegionsRegisterBatch_t b = {0};
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    b.heap = heap;
    b.regionCount = 1;
    b.regionDescElementSize = sizeof region;
    b.regionDescElements = &region;
    nvtxMemRegionsRegister(d, &b);
}

static void unregister_region(nvtxDomainHandle_t d, const void *ptr) {
    nvtxMemRegionRef_t ref;
    ref.pointer = ptr;
    nvtxMemRegionsUnregisterBatch_t u = {0};
    u.extCompatID = NVTX_EXT_COMPATID_MEM;
    u.structSize = sizeof u;
    u.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    u.refCount = 1;
    u.refElementSize = sizeof ref;
    u.refElements = &ref;
    nvtxMemRegionsUnregister(d, &u);
}

static void pool(nvtxDomainHandle_t d) {
    char *segment = must_alloc(3 * MiB);
    nvtxMemVirtualRangeDesc_t range = {3 * MiB, segment};
    nvtxMemHeapDesc_t desc = {0};
    desc.extCompatID = NVTX_EXT_COMPATID_MEM;
    desc.structSize = sizeof desc;
    desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    desc.typeSpecificDescSize = sizeof range;
    desc.typeSpecificDesc = &range;
    nvtxMemHeapHandle_t heap = nvtxMemHeapRegister(d, &desc);
    nvtxRangePushA("optimizer");
    register_region(d, heap, segment, 512 * KiB);
    register_region(d, heap, segment + 512 * KiB, 256 * KiB);
    nvtxRangePop();
    register_region(d, heap, segment + 1 * MiB, 128 * KiB);
    unregister_region(d, segment + 512 * KiB);
    unregister_region(d, segment + 512 * KiB);
    register_region(d, NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE, (const void *)(uintptr_t)16, 64);
    register_region(d, heap, segment + 3 * MiB - 64, 128);
}

static void *worker(void *arg) {
    nvtxRangeId_t handoff = *(nvtxRangeId_t *)arg;
    int l0 = nvtxRangePushA("loader");
    int l1 = nvtxRangePushA("aten::mm, seq = 12, op_id = 40, sizes = [[2, 3], [3, 4]]");
    void *c = must_alloc(8 * MiB);
    int p1 = nvtxRangePop();
    void *d = must_alloc(16 * MiB);
    cudaFree(c);
    (void)d;
    int p0 = nvtxRangePop();
    nvtxRangeEnd(handoff);
    printf("worker levels: %d %d %d %d\n", l0, l1, p1, p0);
    return NULL;
}

int main(int argc, char **argv) {
    nvtxDomainHandle_t ml = nvtxDomainCreateA("ml");
    nvtxStringHandle_t forward = nvtxDomainRegisterStringA(ml, "forward");
    nvtxDomainNameCategoryA(ml, 7, "phase");
    nvtxNameCategoryA(2, "io");
    nvtxEventAttributes_t attr = {0};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.category = 7;
    attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attr.message.registered = forward;
    nvtxEventAttributes_t io = {0};
    io.version = NVTX_VERSION;
    io.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    io.category = 2;
    io.messageType = NVTX_MESSAGE_TYPE_ASCII;
    io.message.ascii = "load phase";

    int s0 = nvtxRangePushA("step");
    int s1 = nvtxDomainRangePushEx(ml, &attr);
    must_alloc(1 * MiB);
    int q1 = nvtxDomainRangePop(ml);
    must_alloc(2 * MiB);
    nvtxMarkA("checkpoint");
    nvtxRangeId_t interval = nvtxRangeStartEx(&io);
    nvtxRangeId_t handoff = nvtxRangeStartA("handoff");
    pthread_t t;
    pthread_create(&t, NULL, worker, &handoff);
    pthread_join(t, NULL);
    nvtxRangeEnd(interval);
    int q0 = nvtxRangePop();
    must_alloc(4 * MiB);
    int extra = nvtxRangePop(); /* nothing open: -1 */
    pool(ml);
    nvtxEventAttributes_t epoch = {0};
    epoch.version = NVTX_VERSION;
    epoch.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    epoch.category = 9;
    epoch.messageType = NVTX_MESSAGE_TYPE_ASCII;
    epoch.message.ascii = "epoch";
    nvtxDomainRangeStartEx(ml, &epoch);
    printf("main levels: %d %d %d %d %d\n", s0, s1, q1, q0, extra);
    if (argc > 1) printf("dump: %d\n", vramtrace_dump(argv[1]));
    return 0;
}
