// Test program for the summary's headline (tests/cli/cli_test.sh, cases preload_summary_*), run
// under the real library on the stand-in CUDA runtime:
//   vt_answer_prog steps   "parameters" allocated before the first mark and kept; then 6 steps,
//                          each after vramtrace_mark("step K"): a 1 MiB activation allocated and
//                          freed, and a 256 KiB cache block kept (the cache grows every step)
//   vt_answer_prog oom     1 MiB kept, mark "warm", then a cudaMalloc of 64 GiB, which the stand-in's 1 GiB
//                          device refuses (cudaErrorMemoryAllocation)
//   vt_answer_prog helper  after mark "start", one helper, alloc_block, called from two callers (2 and 3 blocks of
//                          64 KiB), all kept: one call site, two callers (summary --frames 2)
// The functions are extern "C" so that their names are the symbol names.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "vramtrace/vramtrace.h"

#define NOINLINE __attribute__((noinline))

namespace {

void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "vt_answer_prog: %s failed: %d\n", what, int(e));
        std::exit(1);
    }
}

} // namespace

extern "C" {

NOINLINE void *load_parameters(size_t n) {
    void *p = nullptr;
    check(cudaMalloc(&p, n), "cudaMalloc");
    return p;
}

NOINLINE void *cache_block(size_t n) {
    void *p = nullptr;
    check(cudaMalloc(&p, n), "cudaMalloc");
    return p;
}

NOINLINE void activation(size_t n) {
    void *p = nullptr;
    check(cudaMalloc(&p, n), "cudaMalloc");
    check(cudaFree(p), "cudaFree");
}

NOINLINE void *alloc_block(size_t n) {
    void *p = nullptr;
    check(cudaMalloc(&p, n), "cudaMalloc");
    return p;
}

NOINLINE void load_inputs() {
    for (int i = 0; i < 2; ++i) alloc_block(64 << 10);
}

NOINLINE void load_labels() {
    for (int i = 0; i < 3; ++i) alloc_block(64 << 10);
}

} // extern "C"

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (std::strcmp(mode, "steps") == 0) {
        load_parameters(4 << 20);
        load_parameters(2 << 20);
        for (int k = 0; k < 6; ++k) {
            char label[32];
            std::snprintf(label, sizeof label, "step %d", k);
            vramtrace_mark(label);
            activation(1 << 20);
            cache_block(256 << 10);
        }
        return 0;
    }
    if (std::strcmp(mode, "oom") == 0) {
        load_parameters(1 << 20);
        vramtrace_mark("warm");
        void *p = nullptr;
        cudaError_t e = cudaMalloc(&p, size_t(64) << 30);
        std::printf("oom result %d\n", int(e));
        return e == cudaErrorMemoryAllocation ? 0 : 1;
    }
    if (std::strcmp(mode, "helper") == 0) {
        vramtrace_mark("start");
        load_inputs();
        load_labels();
        return 0;
    }
    std::fprintf(stderr, "usage: vt_answer_prog steps|oom|helper\n");
    return 2;
}
