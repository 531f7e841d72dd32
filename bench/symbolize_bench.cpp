// Symbolization of many unique frames: N distinct addresses spread evenly over the executable
// segments of an ELF file (placed at an arbitrary base, as the CLI would see a module of another
// process), symbolized by lib/symbolize's Symbolizer the way a dump does (function names from the
// symbol tables, file:line through libdw when it loads).
//
//   bench_symbolize ELF_FILE [N]        (default N = 100000)
//
// Prints the time and how many frames got a function name and a file:line.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "symbolize/module_map.h"
#include "snapshot/snapshot_model.h"
#include "symbolize/symbolizer.h"

using namespace vramtrace;

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s ELF_FILE [N]\n", argv[0]);
        return 2;
    }
    std::string path = argv[1];
    long n = argc > 2 ? std::atol(argv[2]) : 100000;
    const uint64_t base = 0x7f0000000000ull;
    symbolize::LoadedModule module;
    module.path = path;
    module.base = base;
    if (!symbolize::segments_from_file(path, base, module.segments)) {
        std::fprintf(stderr, "cannot read %s\n", path.c_str());
        return 1;
    }
    uint64_t code_bytes = 0;
    for (const auto &s : module.segments)
        if (s.executable) code_bytes += s.end - s.begin;
    if (code_bytes < static_cast<uint64_t>(n)) {
        std::fprintf(stderr, "%s has only %llu bytes of code\n", path.c_str(), (unsigned long long)code_bytes);
        return 1;
    }
    // Evenly spaced, distinct addresses; +1 because return addresses are looked up at address - 1.
    std::vector<snapshot::Frame> frames;
    frames.reserve(static_cast<size_t>(n));
    const double step = static_cast<double>(code_bytes) / static_cast<double>(n);
    long placed = 0;
    uint64_t before = 0;
    for (const auto &s : module.segments) {
        if (!s.executable) continue;
        uint64_t size = s.end - s.begin;
        for (; placed < n; ++placed) {
            uint64_t offset = static_cast<uint64_t>(static_cast<double>(placed) * step) - before;
            if (offset >= size) break;
            snapshot::Frame f;
            f.address = s.begin + offset + 1;
            frames.push_back(f);
        }
        before += size;
    }
    std::vector<snapshot::Module> modules;
    auto t0 = std::chrono::steady_clock::now();
    symbolize::Symbolizer symbolizer(std::vector<symbolize::LoadedModule>{module}, symbolize::SymbolizerOptions{});
    symbolizer.symbolize(frames, modules);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    long named = 0, with_line = 0;
    for (const auto &f : frames) {
        if (!f.function.empty()) ++named;
        if (f.line != 0) ++with_line;
    }
    const char *libdw = "?";
    switch (symbolizer.libdw_state()) {
    case symbolize::LibdwState::Loaded: libdw = "loaded"; break;
    case symbolize::LibdwState::NotFound: libdw = "not found"; break;
    case symbolize::LibdwState::Disabled: libdw = "disabled"; break;
    case symbolize::LibdwState::Unusable: libdw = "unusable"; break;
    case symbolize::LibdwState::NotCompiled: libdw = "not compiled"; break;
    case symbolize::LibdwState::NotTried: libdw = "not tried"; break;
    }
    std::printf("file=%s code_bytes=%llu frames=%zu symbolize_s=%.3f named=%ld with_file_line=%ld libdw=%s\n",
                path.c_str(), (unsigned long long)code_bytes, frames.size(), seconds, named, with_line, libdw);
    return 0;
}
