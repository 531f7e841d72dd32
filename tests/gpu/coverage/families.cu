// Every allocation family that the coverage issue added, through the runtime and through the driver
// API, on a real GPU. Prints the oracle for tests/gpu/check_snapshot.py from its own bookkeeping:
//   expect-live <bytes> <api> <device> <function> <file>:<line>    counted allocations left live
//   expect-graph <bytes>                                            graph memory (listed, not counted)
//   pool-used <bytes>                                               what the created pool holds
// Build: nvcc -g -O1 families.cu -lcuda [-cudart shared]
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define NOINLINE __attribute__((noinline))
#define CHECK_RT(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); std::exit(2); } } while (0)
#define CHECK_DRV(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { std::fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)r_); std::exit(2); } } while (0)

static const char *base(const char *p) { const char *s = std::strrchr(p, '/'); return s ? s + 1 : p; }
static void expect(size_t bytes, const char *api, int device, const char *fn, int line) {
    std::printf("expect-live %zu %s %d %s %s:%d\n", bytes, api, device, fn, base(__FILE__), line);
}

NOINLINE void pitched() {
    void *p; size_t pitch;
    CHECK_RT(cudaMallocPitch(&p, &pitch, 1000, 300)); expect(pitch * 300, "cudaMallocPitch", 0, "pitched", __LINE__);
}

NOINLINE void arrays() {
    cudaChannelFormatDesc f4 = cudaCreateChannelDesc<float4>();
    cudaArray_t a; CHECK_RT(cudaMallocArray(&a, &f4, 1000, 100)); expect(1000 * 100 * 16, "cudaMallocArray", 0, "arrays", __LINE__);
    cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>();
    cudaArray_t b; CHECK_RT(cudaMalloc3DArray(&b, &f1, make_cudaExtent(64, 64, 64))); expect(64 * 64 * 64 * 4, "cudaMalloc3DArray", 0, "arrays", __LINE__);
    cudaMipmappedArray_t m; CHECK_RT(cudaMallocMipmappedArray(&m, &f1, make_cudaExtent(256, 256, 0), 4)); expect((65536 + 16384 + 4096 + 1024) * 4, "cudaMallocMipmappedArray", 0, "arrays", __LINE__);
    cudaArray_t gone; CHECK_RT(cudaMallocArray(&gone, &f1, 512, 512)); CHECK_RT(cudaFreeArray(gone));
}

NOINLINE cudaMemPool_t pool_allocations(cudaStream_t s) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool; CHECK_RT(cudaMemPoolCreate(&pool, &props));
    void *p; CHECK_RT(cudaMallocFromPoolAsync(&p, 1 << 20, pool, s)); expect(1 << 20, "cudaMallocFromPoolAsync", 0, "pool_allocations", __LINE__);
    void *q; CHECK_RT(cudaMallocFromPoolAsync(&q, 3 << 20, pool, s));
    CHECK_RT(cudaFree(q)); // a pool allocation freed with plain cudaFree
    CHECK_RT(cudaStreamSynchronize(s));
    return pool;
}

NOINLINE void graph_memory(cudaStream_t s) {
    cudaGraph_t g; CHECK_RT(cudaGraphCreate(&g, 0));
    cudaMemAllocNodeParams params = {};
    params.poolProps.allocType = cudaMemAllocationTypePinned;
    params.poolProps.location.type = cudaMemLocationTypeDevice;
    params.poolProps.location.id = 0;
    params.bytesize = 2 << 20;
    cudaGraphNode_t node; CHECK_RT(cudaGraphAddMemAllocNode(&node, g, nullptr, 0, &params));
    std::printf("expect-graph %d\n", 2 << 20);
    cudaGraphExec_t exec; CHECK_RT(cudaGraphInstantiate(&exec, g, 0));
    CHECK_RT(cudaGraphLaunch(exec, s));
    CHECK_RT(cudaStreamSynchronize(s));
    // Stream capture: these become graph memory nodes of the captured graph, not memory now.
    cudaGraph_t captured;
    CHECK_RT(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    void *c; CHECK_RT(cudaMallocAsync(&c, 3 << 20, s));
    std::printf("expect-graph %d\n", 3 << 20);
    CHECK_RT(cudaStreamEndCapture(s, &captured));
}

NOINLINE void host_registered() {
    void *h = std::aligned_alloc(4096, 1 << 20);
    CHECK_RT(cudaHostRegister(h, 1 << 20, cudaHostRegisterDefault)); expect(1 << 20, "cudaHostRegister", -1, "host_registered", __LINE__);
}

NOINLINE void driver_families(CUstream s) {
    CUDA_ARRAY_DESCRIPTOR d2 = {}; d2.Width = 300; d2.Height = 200; d2.Format = CU_AD_FORMAT_UNSIGNED_INT16; d2.NumChannels = 2;
    CUarray a; CHECK_DRV(cuArrayCreate(&a, &d2)); expect(300 * 200 * 4, "cuArrayCreate_v2", 0, "driver_families", __LINE__);
    CUDA_ARRAY3D_DESCRIPTOR d3 = {}; d3.Width = 32; d3.Height = 32; d3.Depth = 32; d3.Format = CU_AD_FORMAT_FLOAT; d3.NumChannels = 1;
    CUarray b; CHECK_DRV(cuArray3DCreate(&b, &d3)); expect(32 * 32 * 32 * 4, "cuArray3DCreate_v2", 0, "driver_families", __LINE__);
    CUDA_ARRAY3D_DESCRIPTOR dm = {}; dm.Width = 128; dm.Height = 128; dm.Format = CU_AD_FORMAT_UNSIGNED_INT8; dm.NumChannels = 4;
    CUmipmappedArray m; CHECK_DRV(cuMipmappedArrayCreate(&m, &dm, 3)); expect((16384 + 4096 + 1024) * 4, "cuMipmappedArrayCreate", 0, "driver_families", __LINE__);
    CUdeviceptr p; size_t pitch; CHECK_DRV(cuMemAllocPitch(&p, &pitch, 700, 90, 4)); expect(pitch * 90, "cuMemAllocPitch_v2", 0, "driver_families", __LINE__);
    CUmemoryPool dpool; CHECK_DRV(cuDeviceGetDefaultMemPool(&dpool, 0));
    CUdeviceptr q; CHECK_DRV(cuMemAllocFromPoolAsync(&q, 5 << 20, dpool, s)); expect(5 << 20, "cuMemAllocFromPoolAsync", 0, "driver_families", __LINE__);
    CHECK_DRV(cuStreamSynchronize(s));
}

int main() {
    CHECK_RT(cudaSetDevice(0));
    cudaStream_t s; CHECK_RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    pitched();
    arrays();
    cudaMemPool_t pool = pool_allocations(s);
    graph_memory(s);
    host_registered();
    driver_families(reinterpret_cast<CUstream>(s));
    CHECK_RT(cudaDeviceSynchronize());
    // The oracle for what vramtrace reads from the pool at exit: the pool's own attribute, asked
    // by the program last (the driver keeps a freed pool block "used" by its own rules).
    unsigned long long used = 0;
    CHECK_RT(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    std::printf("pool-used %llu\n", used);
    std::printf("done\n");
    return 0;
}
