// Uses the public C API through include/vramtrace/vramtrace.h. Runs with or without the library:
// without it every call returns VRAMTRACE_ERROR_NOT_LOADED and the program still succeeds.
// Prints the tracked current bytes of device 0 at a check point where it knows it holds exactly
// 5 MiB + 4096 bytes, and writes a snapshot there (to argv[1]).
#include <cstdio>
#include <cuda_runtime_api.h>
#include <vramtrace/vramtrace.h>

int main(int argc, char **argv) {
    const char *dump_path = argc > 1 ? argv[1] : "checkpoint.json";
    void *a = nullptr, *b = nullptr, *c = nullptr;
    if (cudaMalloc(&a, 4u << 20) != cudaSuccess || cudaMalloc(&b, (1u << 20) + 4096) != cudaSuccess ||
        cudaMalloc(&c, 777) != cudaSuccess)
        return 1;
    cudaFree(c);
    vramtrace_device_stats stats[8];
    int n = vramtrace_stats(stats, 8);
    if (n == VRAMTRACE_ERROR_NOT_LOADED) {
        printf("vramtrace not loaded\n");
    } else {
        printf("devices seen: %d\n", n);
        for (int i = 0; i < n && i < 8; ++i)
            printf("device %d current %llu peak %llu allocations %llu frees %llu\n", stats[i].device,
                   (unsigned long long)stats[i].current_bytes, (unsigned long long)stats[i].peak_bytes,
                   (unsigned long long)stats[i].allocation_count, (unsigned long long)stats[i].free_count);
        printf("dump: %d\n", vramtrace_dump(dump_path));
    }
    cudaFree(a);
    cudaFree(b);
    return 0;
}
