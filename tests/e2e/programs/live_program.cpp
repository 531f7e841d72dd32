// The program of the live-view tests (tests/e2e/live_test.sh): holds known allocations from named
// call sites while a viewer reads it, then frees them and exits.
//   live_program READY_FILE GO_FILE [MODE]
// MODE "sites" (default): two 3 MiB blocks from hold_weights, one 5 MiB from hold_buffer, one
// 1 MiB from hold_buffer freed again, marks "loaded" and "ready"; "many": 10000 blocks of 4 KiB from
// hold_many (the per-reading cost measurement); "nocuda": no CUDA call at all; "fork": the
// "sites" allocations, then a child (fork) that holds 2 MiB from hold_buffer, writes
// READY_FILE.child with its pid, waits for GO_FILE.child and exits before the parent goes on;
// "oom": the "sites" allocations and one of 4 GiB that fails (the stand-in device has 1 GiB);
// "oddname": 2 MiB from a function whose symbol name needs escaping (hold_odd), never freed;
// "closefds": the "sites" allocations, then every descriptor above 2 closed (as a daemon does) and
// READY_FILE kept open, so that its descriptor has a number the library's socket had;
// "grow": the "sites" allocations, then 256 KiB more from hold_growing every 500 ms while it waits
// (a site that grows while the others stay).
// It writes READY_FILE once it holds them, then waits until GO_FILE exists (checked every 20 ms).
#include <cstdio>
#include <cuda_runtime_api.h>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#include <vramtrace/vramtrace.h>

// The lines of the calls that allocate, which main prints ("site FUNCTION LINE") for the tests.
int g_weights_line = 0, g_buffer_line = 0;

__attribute__((noinline)) void *hold_weights() {
    void *p = nullptr;
    g_weights_line = __LINE__ + 1;
    return cudaMalloc(&p, 3u << 20) == cudaSuccess ? p : nullptr;
}
__attribute__((noinline)) void *hold_buffer(size_t bytes) {
    void *p = nullptr;
    g_buffer_line = __LINE__ + 1;
    return cudaMalloc(&p, bytes) == cudaSuccess ? p : nullptr;
}
// A call site whose symbol name holds a C1 control (U+0085), a right-to-left override (U+202E)
// and a byte that is not UTF-8 (0xff); frames are named from the ELF symbol table.
__attribute__((noinline)) void *hold_odd() __asm__("hold_odd_\xc2\x85_\xe2\x80\xae_\xff");
__attribute__((noinline)) void *hold_odd() {
    void *p = nullptr;
    return cudaMalloc(&p, 2u << 20) == cudaSuccess ? p : nullptr;
}
__attribute__((noinline)) void *hold_growing() {
    void *p = nullptr;
    return cudaMalloc(&p, 256u << 10) == cudaSuccess ? p : nullptr;
}
__attribute__((noinline)) void *hold_many() {
    void *p = nullptr;
    return cudaMalloc(&p, 4096) == cudaSuccess ? p : nullptr;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    const char *mode = argc > 3 ? argv[3] : "sites";
    std::vector<void *> held;
    bool closefds = strcmp(mode, "closefds") == 0, grow = strcmp(mode, "grow") == 0;
    if (grow || strcmp(mode, "sites") == 0 || strcmp(mode, "fork") == 0 || strcmp(mode, "oom") == 0 || closefds) {
        held.push_back(hold_weights());
        held.push_back(hold_weights());
        vramtrace_mark("loaded");
        void *freed = hold_buffer(1u << 20);
        cudaFree(freed);
        held.push_back(hold_buffer(5u << 20));
        vramtrace_mark("ready");
        if (strcmp(mode, "oom") == 0 && hold_buffer(size_t(4) << 30) != nullptr) return 1;
        printf("site hold_weights() %d\nsite hold_buffer(unsigned long) %d\n", g_weights_line, g_buffer_line);
        fflush(stdout);
    } else if (strcmp(mode, "oddname") == 0) {
        // Left allocated at exit, so that the exit summary names the call site too.
        if (hold_odd() == nullptr) return 1;
    } else if (strcmp(mode, "many") == 0) {
        for (int i = 0; i < 10000; ++i) held.push_back(hold_many());
    }
    for (void *p : held)
        if (p == nullptr) return 1;
    if (strcmp(mode, "fork") == 0) {
        std::string ready = std::string(argv[1]) + ".child", go = std::string(argv[2]) + ".child";
        pid_t child = fork();
        if (child == 0) {
            void *mine = hold_buffer(2u << 20);
            FILE *f = fopen(ready.c_str(), "w");
            if (mine == nullptr || f == nullptr) _exit(1);
            fprintf(f, "%d\n", int(getpid()));
            fclose(f);
            while (access(go.c_str(), F_OK) != 0) usleep(20000);
            cudaFree(mine);
            exit(0);
        }
        int status = 0;
        if (child < 0 || waitpid(child, &status, 0) != child || status != 0) return 1;
    }
    if (closefds) {
        usleep(200000); // the reporter is serving by now
        for (int fd = 3; fd < 1024; ++fd) close(fd);
    }
    FILE *ready = fopen(argv[1], "w");
    if (ready == nullptr) return 1;
    printf("live_program: holding %zu allocations\n", held.size());
    fflush(stdout);
    fprintf(ready, "%d\n", int(getpid()));
    fclose(ready);
    if (closefds && open(argv[1], O_RDONLY) < 0) return 1;
    for (int tick = 1; access(argv[2], F_OK) != 0; ++tick) {
        usleep(20000);
        if (grow && tick % 25 == 0) {
            void *p = hold_growing();
            if (p == nullptr) return 1;
            held.push_back(p);
        }
    }
    for (void *p : held) cudaFree(p);
    return 0;
}
