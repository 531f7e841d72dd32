// Writes the snapshots of an N-rank job, as N processes of one program would dump them, for the
// merge tests and the merge benchmark (bench/merge_ranks.sh). Not a test by itself.
//
//   vt_gen_ranks OUT_DIR --ranks N [--seed S] [--allocations A] [--stacks K] [--depth D]
//                [--events E] [--ranks-per-node P] [--jitter BYTES]
//                [--outlier RANK --extra-bytes BYTES]
//
// Every rank writes OUT_DIR/rankR.json through the library's own writer (write_snapshot_json), so
// the files are what libvramtrace.so writes. Each rank is one process with one GPU: host
// "nodeR/P", ordinal R%P, a UUID and PCI bus id made from the seed, host and ordinal, process.rank
// "R". Its modules are one executable and libcudart.so.13, loaded at a base of its own (so frames
// match across ranks by module + offset only); K stacks of D frames (cudaMalloc in libcudart, then
// the call site alloc_site_k(unsigned long) at src/model/site_k.cpp, then callers drawn from a pool
// of 3*K functions by the seed), A live allocations (allocation i on stack i%K, its size fixed by
// the seed and the stack), and E events: alloc/free pairs of a transient buffer on the workspace
// stack (the last one). The peak of a rank is its live set plus one workspace buffer of W bytes;
// peaks[] lists exactly that composition.
//
// Ranks differ by --jitter (default 16 MiB): the allocations of stack 1 (the first) of rank R are
// larger by a multiple of 512 bytes below the jitter, drawn from the seed and R; 0 makes the ranks
// identical in every byte count. --outlier R plants one more call site on rank R,
// cache_activations(int) at src/model/checkpoint.cpp:77 (stack K+1), holding --extra-bytes in one
// allocation that is live at the dump and at the peak.
//
// Prints one line per rank, "rank R current C peak P", and nothing else.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot/snapshot_model.h"
#include "snapshot/snapshot_writer.h"

namespace {

using namespace vramtrace;

struct Options {
    std::string out_dir;
    uint64_t ranks = 0;
    uint64_t seed = 1;
    uint64_t allocations = 2000;
    uint64_t stacks = 500;
    uint64_t depth = 32;
    uint64_t events = 65536;
    uint64_t ranks_per_node = 8;
    uint64_t jitter = 16ull << 20;
    int64_t outlier = -1;
    uint64_t extra_bytes = 1ull << 30;
};

// splitmix64: the same numbers on every machine for one seed.
uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
uint64_t draw(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
    return mix(mix(mix(seed ^ 0x5eedull) ^ a) ^ (b * 0x100000001b3ull)) ^ mix(c + 0x1234567ull);
}

bool parse_u64(const char *text, uint64_t *out) {
    std::string_view s(text);
    auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
    return r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty();
}

int usage(const char *why) {
    std::fprintf(stderr, "vt_gen_ranks: %s\nusage: vt_gen_ranks OUT_DIR --ranks N [--seed S] [--allocations A] "
                         "[--stacks K] [--depth D] [--events E] [--ranks-per-node P] [--jitter BYTES] "
                         "[--outlier RANK --extra-bytes BYTES]\n", why);
    return 2;
}

std::string hex_digits(uint64_t v, int width) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%0*llx", width, static_cast<unsigned long long>(v));
    std::string s(buf);
    return s.substr(s.size() - size_t(width));
}

// Size of each allocation of stack k (0-based): 512 B to 2 MiB, multiples of 512.
uint64_t stack_size(const Options &o, uint64_t k) { return 512 * (1 + draw(o.seed, 1, k) % 4096); }
// What rank r adds to each allocation of the first stack.
uint64_t rank_jitter(const Options &o, uint64_t r) {
    uint64_t steps = o.jitter / 512;
    return steps == 0 ? 0 : 512 * (draw(o.seed, 2, r) % steps);
}
constexpr uint64_t kWorkspaceBytes = 256ull << 20;

snapshot::Snapshot make_rank(const Options &o, uint64_t r) {
    snapshot::Snapshot s;
    const uint64_t node = r / o.ranks_per_node;
    const int ordinal = int(r % o.ranks_per_node);
    const bool outlier = o.outlier >= 0 && uint64_t(o.outlier) == r;

    snapshot::ProcessInfo &p = s.process;
    p.pid = int64_t(20000 + r);
    p.ppid = int64_t(19000 + node);
    p.command_line = {"python3", "train.py", "--config", "big.yaml"};
    p.executable = "/opt/train/bin/train";
    p.host = "node" + std::to_string(node);
    p.start_time_ns = 1764466245000000000ull + r * 1000;
    p.dump_time_ns = p.start_time_ns + 3600ull * 1000000000ull;
    p.driver_version = 13000;
    p.reason = "api";
    p.vramtrace_version = "0.1.0";
    p.stack_depth = uint32_t(o.depth);
    p.dump_monotonic_ns = 4000000000000ull;
    p.rank = std::to_string(r);

    // Modules at a base of this rank's own.
    const uint64_t exe_base = 0x555500000000ull + (draw(o.seed, 3, r) % 0x10000) * 0x100000;
    const uint64_t rt_base = 0x7f0000000000ull + (draw(o.seed, 4, r) % 0x10000) * 0x100000;
    s.modules.push_back({"/opt/train/bin/train", exe_base, "3b1f5c2a9d0e4f6a8b7c6d5e4f3a2b1c0d9e8f7a"});
    s.modules.push_back({"/usr/lib/x86_64-linux-gnu/libcudart.so.13", rt_base, ""});

    // Frames: cudaMalloc, K call sites (+1 for the planted one), 3*K callers, in that order.
    const uint64_t callers = 3 * o.stacks;
    auto frame = [&](int module, uint64_t offset, std::string function, std::string file, uint32_t line) {
        snapshot::Frame f;
        f.module = module;
        f.module_offset = offset;
        f.address = (module == 0 ? exe_base : rt_base) + offset;
        f.function = std::move(function);
        f.file = std::move(file);
        f.line = line;
        s.frames.push_back(std::move(f));
        return uint32_t(s.frames.size() - 1);
    };
    const uint32_t malloc_frame = frame(1, 0x45a10, "cudaMalloc", "", 0);
    std::vector<uint32_t> site_frames, caller_frames;
    for (uint64_t k = 0; k < o.stacks; ++k)
        site_frames.push_back(frame(0, 0x10000 + k * 0x40, "alloc_site_" + std::to_string(k) + "(unsigned long)",
                                    "src/model/site_" + std::to_string(k) + ".cpp", uint32_t(10 + k % 90)));
    uint32_t planted_frame = 0;
    if (outlier) planted_frame = frame(0, 0xf000, "cache_activations(int)", "src/model/checkpoint.cpp", 77);
    for (uint64_t c = 0; c < callers; ++c)
        caller_frames.push_back(frame(0, 0x100000 + c * 0x80, "step_" + std::to_string(c) + "(Batch&)",
                                      "src/train/step_" + std::to_string(c % 40) + ".cpp", uint32_t(100 + c % 300)));

    // Stacks 1..K, then the planted one.
    auto stack = [&](uint32_t id, uint32_t site_frame, uint64_t salt) {
        snapshot::Stack st;
        st.id = id;
        st.frames.push_back(malloc_frame);
        st.frames.push_back(site_frame);
        for (uint64_t d = 2; d < o.depth; ++d) st.frames.push_back(caller_frames[draw(o.seed, 5, salt, d) % callers]);
        st.call_site = 1;
        s.stacks.push_back(std::move(st));
    };
    for (uint64_t k = 0; k < o.stacks; ++k) stack(uint32_t(k + 1), site_frames[k], k);
    const uint32_t planted_stack = uint32_t(o.stacks + 1);
    if (outlier) stack(planted_stack, planted_frame, o.stacks);

    // Live allocations.
    std::vector<snapshot::PeakSite> sites(o.stacks + 1);
    uint64_t current = 0, count = 0, address = 0x7e0000000000ull + r * 0x100000000ull;
    auto live = [&](uint32_t stack_id, uint64_t size, uint64_t time_ns) {
        snapshot::Allocation a;
        a.address = address;
        address += (size + 0xfffff) & ~0xfffffull;
        a.size = size;
        a.kind = "device";
        a.device = ordinal;
        a.api = "cudaMalloc";
        a.thread_id = uint32_t(20000 + r);
        a.time_ns = time_ns;
        a.stack = stack_id;
        s.allocations.push_back(std::move(a));
        snapshot::PeakSite &site = sites[stack_id - 1];
        site.stack = stack_id;
        site.bytes += size;
        site.count += 1;
        current += size;
        ++count;
    };
    const uint64_t jitter = rank_jitter(o, r);
    for (uint64_t i = 0; i < o.allocations; ++i) {
        uint64_t k = i % o.stacks;
        live(uint32_t(k + 1), stack_size(o, k) + (k == 0 ? jitter : 0), 1000000000ull + i * 1000);
    }
    if (outlier) {
        sites.push_back({});
        live(planted_stack, o.extra_bytes, 1000000000ull + o.allocations * 1000);
    }

    // Events: alloc/free pairs of workspace buffers (up to W bytes) on the last stack; the one of
    // W bytes, the first, is the peak.
    const uint32_t workspace_stack = uint32_t(o.stacks);
    uint64_t pairs = o.events / 2, transient_bytes = 0;
    s.events.capacity = 65536;
    s.events.recorded = 3 * o.events;
    s.events.wrapped = s.events.recorded > s.events.capacity;
    const uint64_t t0 = 2000000000ull;
    s.events.complete_from_ns = t0;
    s.events.events.reserve(o.events);
    for (uint64_t j = 0; j < pairs; ++j) {
        uint64_t size = j == 0 ? kWorkspaceBytes : 512 * (1 + draw(o.seed, 6, r, j) % (kWorkspaceBytes / 512));
        transient_bytes += size;
        snapshot::Event e;
        e.type = "alloc";
        e.time_ns = t0 + j * 2000;
        e.device = ordinal;
        e.address = 0x7d0000000000ull + r * 0x100000000ull;
        e.kind = "device";
        e.size = size;
        e.api = "cudaMalloc";
        e.stack = workspace_stack;
        e.thread_id = uint32_t(20000 + r);
        s.events.events.push_back(e);
        e.type = "free";
        e.time_ns += 1000;
        e.api = "cudaFree";
        s.events.events.push_back(std::move(e));
    }

    snapshot::DeviceTotals d;
    d.device = ordinal;
    d.current_bytes = current;
    d.peak_bytes = current + kWorkspaceBytes;
    d.allocation_count = count + pairs;
    d.free_count = pairs;
    d.total_allocated_bytes = current + transient_bytes;
    d.total_freed_bytes = transient_bytes;
    uint64_t u = draw(o.seed, 7, node, uint64_t(ordinal));
    d.uuid = "GPU-" + hex_digits(u >> 32, 8) + "-" + hex_digits(u >> 16, 4) + "-" + hex_digits(u, 4) + "-" +
             hex_digits(draw(o.seed, 8, node, uint64_t(ordinal)) >> 48, 4) + "-" +
             hex_digits(draw(o.seed, 9, node, uint64_t(ordinal)), 12);
    d.pci_bus_id = "0000:" + hex_digits(0x18 + uint64_t(ordinal) * 0x10, 2) + ":00.0";
    d.total_memory_bytes = 150754820096ull;
    s.devices.push_back(d);

    // The peak: the live set and the first workspace buffer.
    snapshot::DevicePeak peak;
    peak.device = ordinal;
    peak.peak_bytes = d.peak_bytes;
    peak.time_ns = t0;
    sites[workspace_stack - 1].stack = workspace_stack;
    sites[workspace_stack - 1].bytes += kWorkspaceBytes;
    sites[workspace_stack - 1].count += 1;
    for (const snapshot::PeakSite &site : sites)
        if (site.count > 0) peak.sites.push_back(site);
    std::stable_sort(peak.sites.begin(), peak.sites.end(), [](const snapshot::PeakSite &a, const snapshot::PeakSite &b) {
        return a.bytes != b.bytes ? a.bytes > b.bytes : a.stack < b.stack;
    });
    s.peaks.push_back(std::move(peak));
    return s;
}

} // namespace

int main(int argc, char **argv) {
    Options o;
    bool have_extra = false;
    for (int i = 1; i < argc; ++i) {
        std::string_view a = argv[i];
        auto value = [&](uint64_t *out) {
            return i + 1 < argc && parse_u64(argv[++i], out);
        };
        uint64_t v = 0;
        if (a == "--ranks") { if (!value(&o.ranks) || o.ranks == 0) return usage("--ranks needs a number > 0"); }
        else if (a == "--seed") { if (!value(&o.seed)) return usage("--seed needs a number"); }
        else if (a == "--allocations") { if (!value(&o.allocations)) return usage("--allocations needs a number"); }
        else if (a == "--stacks") { if (!value(&o.stacks) || o.stacks == 0) return usage("--stacks needs a number > 0"); }
        else if (a == "--depth") { if (!value(&o.depth) || o.depth < 2) return usage("--depth needs a number >= 2"); }
        else if (a == "--events") { if (!value(&o.events)) return usage("--events needs a number"); }
        else if (a == "--ranks-per-node") { if (!value(&o.ranks_per_node) || o.ranks_per_node == 0) return usage("--ranks-per-node needs a number > 0"); }
        else if (a == "--jitter") { if (!value(&o.jitter)) return usage("--jitter needs a number of bytes"); }
        else if (a == "--outlier") { if (!value(&v)) return usage("--outlier needs a rank"); o.outlier = int64_t(v); }
        else if (a == "--extra-bytes") { if (!value(&o.extra_bytes) || o.extra_bytes == 0) return usage("--extra-bytes needs a number > 0"); have_extra = true; }
        else if (!a.empty() && a[0] != '-' && o.out_dir.empty()) o.out_dir = a;
        else return usage(("unknown argument " + std::string(a)).c_str());
    }
    if (o.out_dir.empty() || o.ranks == 0) return usage("OUT_DIR and --ranks are required");
    if (have_extra && o.outlier < 0) return usage("--extra-bytes needs --outlier");
    if (o.outlier >= 0 && uint64_t(o.outlier) >= o.ranks) return usage("--outlier must be below --ranks");
    if (::mkdir(o.out_dir.c_str(), 0755) != 0 && errno != EEXIST) {
        std::fprintf(stderr, "vt_gen_ranks: %s: %s\n", o.out_dir.c_str(), std::strerror(errno));
        return 1;
    }
    for (uint64_t r = 0; r < o.ranks; ++r) {
        snapshot::Snapshot s = make_rank(o, r);
        std::string path = o.out_dir + "/rank" + std::to_string(r) + ".json";
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        std::string error;
        if (fd < 0 || !snapshot::write_snapshot_json(s, fd, &error) || ::close(fd) != 0) {
            std::fprintf(stderr, "vt_gen_ranks: %s: %s\n", path.c_str(), fd < 0 ? std::strerror(errno) : error.c_str());
            return 1;
        }
        std::printf("rank %llu current %llu peak %llu\n", static_cast<unsigned long long>(r),
                    static_cast<unsigned long long>(s.devices[0].current_bytes),
                    static_cast<unsigned long long>(s.devices[0].peak_bytes));
    }
    return 0;
}
