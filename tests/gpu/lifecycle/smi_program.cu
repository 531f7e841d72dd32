// The nvidia-smi reconciliation, checked: the driver's per-process figure (NVML, in the snapshot's
// devices[].process_used_bytes) minus what vramtrace explains (tracked bytes, the device's graph
// memory, the pools' reserved-but-unused bytes) must come to the same remainder (context and loaded
// modules) while the program holds memory (checkpoint A) as after it freed everything but its
// context and modules (checkpoint B). A: 1 GiB cudaMalloc, 256 MiB from the default pool, a graph
// whose memory node of 512 MiB was launched, a kernel's module loaded. B: all of it freed, the
// pool and the graph memory trimmed.
// Prints "checkpoint A|B FILE". Build: nvcc -cudart shared smi_program.cu -ldl -o smi_program
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                         \
    do {                                                                              \
        cudaError_t e_ = (x);                                                         \
        if (e_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_)); \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

__global__ void touch(char *p, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = 1;
}

static void checkpoint(const char *name) {
    using Dump = int (*)(const char *);
    auto dump = reinterpret_cast<Dump>(dlsym(RTLD_DEFAULT, "vramtrace_dump"));
    char path[64];
    snprintf(path, sizeof path, "smi-%s.json", name);
    if (dump != nullptr && dump(path) != 0) fprintf(stderr, "vramtrace_dump failed\n");
    printf("checkpoint %s %s\n", name, path);
}

int main() {
    CK(cudaSetDevice(0));
    char *a = nullptr, *b = nullptr;
    CK(cudaMalloc(&a, size_t{1} << 30));
    touch<<<1024, 256>>>(a, 1 << 18);
    CK(cudaMallocAsync(&b, size_t{256} << 20, nullptr));
    cudaGraph_t graph;
    CK(cudaGraphCreate(&graph, 0));
    cudaMemAllocNodeParams np{};
    np.poolProps.allocType = cudaMemAllocationTypePinned;
    np.poolProps.location.type = cudaMemLocationTypeDevice;
    np.poolProps.location.id = 0;
    np.bytesize = size_t{512} << 20;
    cudaGraphNode_t node;
    CK(cudaGraphAddMemAllocNode(&node, graph, nullptr, 0, &np));
    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, graph, 0));
    CK(cudaGraphLaunch(exec, nullptr));
    CK(cudaDeviceSynchronize());
    checkpoint("A");
    CK(cudaFree(a));
    CK(cudaFreeAsync(b, nullptr));
    CK(cudaFree(np.dptr));
    CK(cudaDeviceSynchronize());
    cudaMemPool_t pool;
    CK(cudaDeviceGetDefaultMemPool(&pool, 0));
    CK(cudaMemPoolTrimTo(pool, 0));
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    CK(cudaDeviceGraphMemTrim(0));
    CK(cudaDeviceSynchronize());
    checkpoint("B");
    return 0;
}
