// Test program for `vramtrace diff` (tests/cli/cli_test.sh, case preload_diff_one_site): run as
// `vt_diff_prog base` and `vt_diff_prog new` on the stand-in CUDA runtime. Both runs allocate at
// the same five call sites and leave allocations live at four of them; "new" makes exactly one
// site, grow_site, allocate one more block. Each run prints, from its own bookkeeping, one line per
// site that holds memory at exit:
//     site <function> <file>:<line> <live bytes> <live allocations>
// on stdout, or into the file named by a second argument (`vt_diff_prog base SITES`), which leaves
// stdout to the snapshot of `vramtrace run --output -` (case preload_run_output_stdout).
// The functions are extern "C" so that their names are the symbol names, and each records the line
// of its allocating call on that very line.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define NOINLINE __attribute__((noinline))

namespace {

struct Site {
    const char *function;
    int line;
    unsigned long long bytes;
    unsigned long long count;
};
Site sites[8];
int site_count = 0;

Site &site(const char *function, int line) {
    for (int i = 0; i < site_count; ++i)
        if (std::strcmp(sites[i].function, function) == 0) return sites[i];
    sites[site_count] = Site{function, line, 0, 0};
    return sites[site_count++];
}

void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "vt_diff_prog: %s failed: %d\n", what, int(e));
        std::exit(1);
    }
}

const char *base_name(const char *path) {
    const char *slash = std::strrchr(path, '/');
    return slash ? slash + 1 : path;
}

} // namespace

extern "C" {

NOINLINE void *weights_site(size_t n) {
    void *p = nullptr;
    int line = __LINE__; check(cudaMalloc(&p, n), "cudaMalloc");
    Site &s = site(__func__, line);
    s.bytes += n, s.count += 1;
    return p;
}

NOINLINE void *grow_site(size_t n) {
    void *p = nullptr;
    int line = __LINE__; check(cudaMalloc(&p, n), "cudaMalloc");
    Site &s = site(__func__, line);
    s.bytes += n, s.count += 1;
    return p;
}

NOINLINE void *managed_site(size_t n) {
    void *p = nullptr;
    int line = __LINE__; check(cudaMallocManaged(&p, n, cudaMemAttachGlobal), "cudaMallocManaged");
    Site &s = site(__func__, line);
    s.bytes += n, s.count += 1;
    return p;
}

NOINLINE void *pinned_site(size_t n) {
    void *p = nullptr;
    int line = __LINE__; check(cudaMallocHost(&p, n), "cudaMallocHost");
    Site &s = site(__func__, line);
    s.bytes += n, s.count += 1;
    return p;
}

// Allocates and frees: never live at exit, so in a diff only by what it held at the device's peak.
NOINLINE void scratch_site(size_t n) {
    void *p = nullptr;
    check(cudaMalloc(&p, n), "cudaMalloc");
    check(cudaFree(p), "cudaFree");
}

} // extern "C"

int main(int argc, char **argv) {
    bool grow = argc >= 2 && std::strcmp(argv[1], "new") == 0;
    if (argc < 2 || argc > 3 || (!grow && std::strcmp(argv[1], "base") != 0)) {
        std::fprintf(stderr, "usage: vt_diff_prog base|new [SITES_FILE]\n");
        return 2;
    }
    FILE *report = argc == 3 ? std::fopen(argv[2], "w") : stdout;
    if (report == nullptr) {
        std::fprintf(stderr, "vt_diff_prog: cannot write %s\n", argv[2]);
        return 2;
    }
    weights_site(4u << 20);
    weights_site(1000);
    grow_site(3u << 20);
    if (grow) grow_site(1234567);
    managed_site(512u << 10);
    pinned_site(64u << 10);
    for (int i = 0; i < 3; ++i) scratch_site(size_t(i + 1) << 20);
    for (int i = 0; i < site_count; ++i)
        std::fprintf(report, "site %s %s:%d %llu %llu\n", sites[i].function, base_name(__FILE__), sites[i].line,
                     sites[i].bytes, sites[i].count);
    if (report != stdout && std::fclose(report) != 0) return 2;
    return 0; // everything above is left live: the snapshot at exit lists it
}
