// The executable segments of the objects loaded with the process (startup_code.h).
#include "tracking/startup_code.h"

#include <algorithm>
#include <atomic>
#include <link.h>

namespace vramtrace::startup_code {

namespace {

struct Range {
    uint64_t start, end; // [start, end)
};
Range g_ranges[kMaxRanges]; // sorted by start once noted
std::atomic<unsigned> g_count{0};

struct Collect {
    Range *ranges;
    unsigned n;
};

int collect(struct dl_phdr_info *info, size_t, void *data) {
    auto *c = static_cast<Collect *>(data);
    for (unsigned i = 0; i < info->dlpi_phnum && c->n < kMaxRanges; ++i) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0 || ph.p_memsz == 0) continue;
        const uint64_t start = info->dlpi_addr + ph.p_vaddr;
        c->ranges[c->n++] = Range{start, start + ph.p_memsz};
    }
    return 0;
}

} // namespace

void note_loaded_objects() {
    if (g_count.load(std::memory_order_relaxed) != 0) return;
    Collect c{g_ranges, 0};
    dl_iterate_phdr(&collect, &c);
    std::sort(g_ranges, g_ranges + c.n, [](const Range &a, const Range &b) { return a.start < b.start; });
    g_count.store(c.n, std::memory_order_release);
}

bool holds(uint64_t ip) {
    const uint64_t at = (ip - 1) & ~uint64_t{7}; // the code word a walk reads (stack_words.h)
    const unsigned n = g_count.load(std::memory_order_acquire);
    unsigned lo = 0, hi = n; // the first range that starts above `at` is at hi
    while (lo < hi) {
        const unsigned mid = (lo + hi) / 2;
        if (g_ranges[mid].start <= at) lo = mid + 1;
        else hi = mid;
    }
    return hi > 0 && at < g_ranges[hi - 1].end;
}

void forget_for_testing() { g_count.store(0, std::memory_order_release); }

} // namespace vramtrace::startup_code
