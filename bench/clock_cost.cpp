// What a clock reading costs on this machine, for the choice in lib/core/clock.h: ns per read of
// rdtsc, rdtscp and clock_gettime(CLOCK_MONOTONIC), best of 5 runs of 2,000,000 reads each.
//   g++ -O2 bench/clock_cost.cpp -o clock_cost && ./clock_cost
// Prints: RESULT bench=clock rdtsc_ns=... rdtscp_ns=... clock_gettime_ns=...
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <x86intrin.h>

namespace {

uint64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

template <class Read> double best_ns(Read read) {
    constexpr int kReads = 2000000;
    double best = 1e30;
    volatile uint64_t sink = 0;
    for (int run = 0; run < 5; ++run) {
        const uint64_t start = now_ns();
        for (int i = 0; i < kReads; ++i) sink = sink + read();
        const double ns = static_cast<double>(now_ns() - start) / kReads;
        if (ns < best) best = ns;
    }
    return best;
}

} // namespace

int main() {
    unsigned aux = 0;
    const double tsc = best_ns([] { return __rdtsc(); });
    const double tscp = best_ns([&] { return __rdtscp(&aux); });
    const double vdso = best_ns([] { return now_ns(); });
    std::printf("RESULT bench=clock rdtsc_ns=%.1f rdtscp_ns=%.1f clock_gettime_ns=%.1f\n", tsc, tscp, vdso);
    return 0;
}
