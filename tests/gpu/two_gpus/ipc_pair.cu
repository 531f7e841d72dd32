// IPC between two processes, possibly on two GPUs: `ipc_pair export DEV DIR` allocates 64 MiB on DEV,
// writes its IPC handle to DIR/handle and waits for DIR/done; `ipc_pair import DEV DIR` opens the
// handle with DEV current, takes a snapshot (vramtrace_dump, when loaded) while the import is open,
// closes it and writes DIR/done. Oracle lines: "exported <bytes> on <dev>", "imported <bytes> on <dev>".
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#define CK(x)                                                                                    \
    do {                                                                                         \
        cudaError_t e_ = (x);                                                                    \
        if (e_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_));    \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    std::string mode = argv[1], dir = argv[3];
    int dev = atoi(argv[2]);
    CK(cudaSetDevice(dev));
    const size_t bytes = size_t{64} << 20;
    if (mode == "export") {
        void *p = nullptr;
        CK(cudaMalloc(&p, bytes));
        cudaIpcMemHandle_t h;
        CK(cudaIpcGetMemHandle(&h, p));
        FILE *f = fopen((dir + "/handle.tmp").c_str(), "wb");
        fwrite(&h, sizeof h, 1, f);
        fclose(f);
        rename((dir + "/handle.tmp").c_str(), (dir + "/handle").c_str());
        printf("exported %zu on %d\n", bytes, dev);
        for (int i = 0; i < 600 && access((dir + "/done").c_str(), F_OK) != 0; ++i) usleep(100000);
        return 0; // the allocation is left live: the exporter's snapshot lists it
    }
    for (int i = 0; i < 600 && access((dir + "/handle").c_str(), F_OK) != 0; ++i) usleep(100000);
    cudaIpcMemHandle_t h;
    FILE *f = fopen((dir + "/handle").c_str(), "rb");
    if (f == nullptr || fread(&h, sizeof h, 1, f) != 1) return 3;
    fclose(f);
    void *p = nullptr;
    CK(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
    printf("imported %zu on %d\n", bytes, dev);
    using Dump = int (*)(const char *);
    if (auto dump = reinterpret_cast<Dump>(dlsym(RTLD_DEFAULT, "vramtrace_dump")))
        dump((dir + "/importer-open.json").c_str());
    CK(cudaIpcCloseMemHandle(p));
    FILE *d = fopen((dir + "/done").c_str(), "w");
    if (d) fclose(d);
    return 0;
}
