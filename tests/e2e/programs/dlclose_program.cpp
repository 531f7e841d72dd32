// For test_dlclose.cpp: dlopens the plugin named in argv[1], lets it cudaMalloc (the buffer stays
// live), dlcloses it, checks that it is really gone (RTLD_NOLOAD) and exits; the exit snapshot is
// written after the plugin was unloaded. Prints the plugin's load base (l_addr) for the test.
// Linked with the runtime itself, so that unloading the plugin does not unload the runtime.
// With a second argument "abort", ends by abort() after the plugin was unloaded instead (the crash
// snapshot must still name the plugin's frames). With "hold READY GO" (test_debug_files.cpp),
// keeps the plugin loaded and its buffer live, writes READY once it holds it and waits until GO
// exists (checked every 20 ms) before going on as without.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) return 3; // the runtime is up before the plugin
    void *handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 4;
    }
    auto allocate = reinterpret_cast<int (*)()>(dlsym(handle, "plugin_allocate"));
    link_map *map = nullptr;
    if (!allocate || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map) return 5;
    printf("plugin-base 0x%llx\n", static_cast<unsigned long long>(map->l_addr));
    if (allocate() != 0) return 6;
    if (argc > 4 && std::strcmp(argv[2], "hold") == 0) {
        fflush(stdout);
        FILE *ready = fopen(argv[3], "w");
        if (!ready) return 8;
        fclose(ready);
        while (access(argv[4], F_OK) != 0) usleep(20000);
    }
    if (dlclose(handle) != 0) return 7;
    printf("unloaded %d\n", dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD) == nullptr ? 1 : 0);
    if (argc > 2 && std::strcmp(argv[2], "abort") == 0) {
        fflush(stdout);
        std::abort();
    }
    return 0;
}
