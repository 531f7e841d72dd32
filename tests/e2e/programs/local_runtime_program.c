/* For test_dlclose.cpp's RTLD_LOCAL case: the program itself does not link the CUDA runtime; it
 * dlopens the plugin named in argv[1] with RTLD_LOCAL, so the runtime the plugin needs is loaded
 * in the plugin's local scope only (what Python does with every extension module). The plugin's
 * cudaMalloc still reaches the preloaded library's hook, which must find that runtime although
 * dlsym(RTLD_NEXT) cannot see it. Exit status: 0 when the plugin's allocation succeeded. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    void *handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 4;
    }
    int (*allocate)(void) = (int (*)(void))dlsym(handle, "plugin_allocate");
    if (!allocate) return 5;
    return allocate() == 0 ? 0 : 6;
}
