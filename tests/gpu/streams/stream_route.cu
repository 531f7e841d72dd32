// Whether the runtime's cudaStreamDestroy reaches vramtrace's cuStreamDestroy hook on the real
// driver (device/stream_devices.h forgets the devices it remembered per stream only when it sees
// the destroy). The runtime takes every driver function from cuGetProcAddress: the entry point it
// holds for "cuStreamDestroy" is the one cudaGetDriverEntryPointByVersion hands out, and dladdr
// names the object that defines it. Then a stream is used, destroyed and a new one allocated on,
// so that the snapshot can be checked for the leaked allocation.
//   nvcc [-cudart shared] stream_route.cu -o stream_route -ldl
// Prints "entry cuStreamDestroy OBJECT", "same-handle 0|1" and "leaked 1048576".
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

#define CHECK(x)                                                                   \
    do {                                                                           \
        cudaError_t e_ = (x);                                                      \
        if (e_ != cudaSuccess) {                                                   \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));          \
            return 1;                                                              \
        }                                                                          \
    } while (0)

int main() {
    CHECK(cudaFree(nullptr));
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult status{};
    CHECK(cudaGetDriverEntryPointByVersion("cuStreamDestroy", &fn, 12000, cudaEnableDefault, &status));
    Dl_info info{};
    const char *object = fn != nullptr && dladdr(fn, &info) != 0 && info.dli_fname ? info.dli_fname : "?";
    const char *slash = std::strrchr(object, '/');
    std::printf("entry cuStreamDestroy %s\n", slash ? slash + 1 : object);
    cudaStream_t first = nullptr, second = nullptr;
    CHECK(cudaStreamCreate(&first));
    for (int i = 0; i < 3; ++i) {
        void *p = nullptr;
        CHECK(cudaMallocAsync(&p, 64 << 10, first));
        CHECK(cudaFreeAsync(p, first));
    }
    CHECK(cudaStreamSynchronize(first));
    CHECK(cudaStreamDestroy(first));
    CHECK(cudaStreamCreate(&second));
    std::printf("same-handle %d\n", second == first ? 1 : 0);
    void *q = nullptr;
    CHECK(cudaMallocAsync(&q, 1 << 20, second));
    CHECK(cudaStreamSynchronize(second));
    std::printf("leaked %d\n", 1 << 20);
    return 0;
}
