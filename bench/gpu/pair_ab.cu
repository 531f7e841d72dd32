// What the preloaded library adds to one stream-ordered allocation + free, measured inside one
// process: the same driver entry points reached two ways, in alternated blocks of pairs.
//   linked: cuMemAllocAsync / cuMemFreeAsync as this program links them (the library's hooks when
//           it is preloaded);
//   direct: libcuda's own code, at the addresses its .dynsym gives (no interposition sees them).
// Processes on the H200 differ from each other by 30% in an untraced pair (600-1,000 ns), which
// hides a 100 ns effect between processes; within one process the two ways share the driver's state,
// the heap and the cores. Blocks run in the order linked, direct, direct, linked, ... so that a drift
// cancels; a difference is taken within each adjacent (linked, direct) couple of blocks.
//
//   nvcc -O2 -std=c++17 pair_ab.cu -o pair_ab -lcuda
//   pair_ab [PAIRS_PER_BLOCK [BLOCKS [FRAMES [BYTES]]]]     (defaults 20000 40 32 1048576)
// Prints one line:
//   RESULT bench=pair_ab frames=32 pairs_per_block=... blocks=... linked_ns=... direct_ns=...
//          diff_ns=... diff_min_ns=... diff_max_ns=... recorded=... expected_recorded=...
// *_ns are medians over blocks of ns per pair; diff_* over the couples. recorded: allocations the
// library counted (vramtrace_stats), -1 without it; with it, expected_recorded is what the linked
// blocks and the warm-up made: the direct blocks must not be counted.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include <cuda.h>

#include "../descend.h"
#include "../../include/vramtrace/vramtrace.h"

namespace {

using AllocFn = CUresult (*)(CUdeviceptr *, size_t, CUstream);
using FreeFn = CUresult (*)(CUdeviceptr, CUstream);

struct Module {
    std::string path;
    uintptr_t base = 0;
};

int find_libcuda(dl_phdr_info *info, size_t, void *data) {
    if (info->dlpi_name != nullptr && std::strstr(info->dlpi_name, "/libcuda.so") != nullptr) {
        auto *m = static_cast<Module *>(data);
        m->path = info->dlpi_name;
        m->base = info->dlpi_addr;
        return 1;
    }
    return 0;
}

// The address of a function defined by the module, from the .dynsym of its file.
void *defined_symbol(const Module &m, const char *name) {
    int fd = open(m.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return nullptr;
    struct stat st {};
    fstat(fd, &st);
    void *map = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return nullptr;
    const auto *bytes = static_cast<const unsigned char *>(map);
    const auto *eh = reinterpret_cast<const Elf64_Ehdr *>(bytes);
    const auto *sh = reinterpret_cast<const Elf64_Shdr *>(bytes + eh->e_shoff);
    void *found = nullptr;
    for (int i = 0; i < eh->e_shnum && found == nullptr; ++i) {
        if (sh[i].sh_type != SHT_DYNSYM) continue;
        const auto *syms = reinterpret_cast<const Elf64_Sym *>(bytes + sh[i].sh_offset);
        const char *strings = reinterpret_cast<const char *>(bytes + sh[sh[i].sh_link].sh_offset);
        for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); ++k)
            if (syms[k].st_shndx != SHN_UNDEF && syms[k].st_value != 0 && std::strcmp(strings + syms[k].st_name, name) == 0) {
                found = reinterpret_cast<void *>(m.base + syms[k].st_value);
                break;
            }
    }
    munmap(map, static_cast<size_t>(st.st_size));
    return found;
}

using vtbench::descend;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

long recorded_allocations() {
    vramtrace_device_stats s[16];
    const int n = vramtrace_stats(s, 16);
    if (n < 0) return -1; // the library is not loaded
    long total = 0;
    for (int i = 0; i < n && i < 16; ++i)
        if (s[i].device >= 0) total += static_cast<long>(s[i].allocation_count);
    return total;
}

} // namespace

int main(int argc, char **argv) {
    const long per_block = argc > 1 ? std::atol(argv[1]) : 20000;
    const int blocks = argc > 2 ? std::atoi(argv[2]) : 40;
    const int frames = argc > 3 ? std::atoi(argv[3]) : 32;
    const size_t bytes = argc > 4 ? static_cast<size_t>(std::atol(argv[4])) : (1 << 20);
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
        cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        std::fprintf(stderr, "no CUDA device\n");
        return 1;
    }
    Module m;
    dl_iterate_phdr(find_libcuda, &m);
    auto direct_alloc = reinterpret_cast<AllocFn>(defined_symbol(m, "cuMemAllocAsync"));
    auto direct_free = reinterpret_cast<FreeFn>(defined_symbol(m, "cuMemFreeAsync"));
    if (direct_alloc == nullptr || direct_free == nullptr) {
        std::fprintf(stderr, "cuMemAllocAsync / cuMemFreeAsync not found in %s\n", m.path.c_str());
        return 1;
    }
    AllocFn linked_alloc = &cuMemAllocAsync;
    FreeFn linked_free = &cuMemFreeAsync;
    bool failed = false;
    auto block = [&](AllocFn a, FreeFn f, long count) {
        auto loop = [&] {
            for (long i = 0; i < count; ++i) {
                CUdeviceptr p = 0;
                if (a(&p, bytes, stream) != CUDA_SUCCESS || f(p, stream) != CUDA_SUCCESS) failed = true;
            }
        };
        auto t0 = std::chrono::steady_clock::now();
        descend(frames, loop);
        return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / count;
    };
    // Warm-up: the pool grows to its working size, both ways are called once, and the library's
    // clock line is fitted (its reporter starts at the first allocation).
    block(linked_alloc, linked_free, per_block / 4 + 1);
    block(direct_alloc, direct_free, per_block / 4 + 1);
    const long warm_recorded = recorded_allocations();
    std::vector<double> linked, direct, diff;
    for (int b = 0; b + 1 < blocks; b += 2) {
        const bool linked_first = (b / 2) % 2 == 0;
        double x, y;
        if (linked_first) {
            x = block(linked_alloc, linked_free, per_block);
            y = block(direct_alloc, direct_free, per_block);
        } else {
            y = block(direct_alloc, direct_free, per_block);
            x = block(linked_alloc, linked_free, per_block);
        }
        linked.push_back(x);
        direct.push_back(y);
        diff.push_back(x - y);
    }
    cuStreamSynchronize(stream);
    if (failed) {
        std::fprintf(stderr, "an allocation or free failed\n");
        return 1;
    }
    const long recorded = recorded_allocations();
    const long expected = warm_recorded < 0 ? -1 : warm_recorded + static_cast<long>(linked.size()) * per_block;
    std::printf("RESULT bench=pair_ab frames=%d pairs_per_block=%ld blocks=%zu linked_ns=%.1f direct_ns=%.1f "
                "diff_ns=%.1f diff_min_ns=%.1f diff_max_ns=%.1f recorded=%ld expected_recorded=%ld\n",
                frames, per_block, linked.size() * 2, median(linked), median(direct), median(diff),
                *std::min_element(diff.begin(), diff.end()), *std::max_element(diff.begin(), diff.end()),
                recorded, expected);
    return 0;
}
