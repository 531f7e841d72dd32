// diff and merge on PyTorch-like snapshots: call-site keys carry the via of the frame rules
// (docs/attribution.md), diff compares live bytes per memory category, and a merged snapshot keeps
// each stack's via and category. BASE is written as a file of before the rules (its call sites are
// PyTorch's allocator, no via, no category), NEW as the library writes one now: both read the same.
#include <catch2/catch.hpp>

#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include "analysis/call_sites.h"
#include "analysis/diff_core.h"
#include "analysis/merge_core.h"
#include "input/offline_symbolize.h"
#include "report/summary_format.h"
#include "merge_test_io.h"
#include "report_test_data.h"
#include "snapshot/reader/snapshot_reader.h"
#include "snapshot/snapshot_writer.h"
#include "symbolize/call_site.h"

using namespace vramtrace::report;
using namespace vramtrace::snapshot;
using namespace vramtrace::cli;

namespace {

constexpr uint64_t kMiB = 1 << 20;
const std::string kSite = "/venv/lib/python3.12/site-packages/";

// One run of a PyTorch program: the modules at run-specific bases (ASLR), frames made on first use.
class TorchRun {
public:
    enum : int { kPython = 0, kVramtrace, kCudart, kC10Cuda, kTorchCuda, kTorchCpu, kStdcxx, kLibc };

    TorchRun(int64_t pid, uint64_t aslr) {
        s.process.pid = pid;
        s.process.host = "node" + std::to_string(pid);
        s.process.command_line = {"python3", "train.py"};
        s.process.reason = "exit";
        s.process.vramtrace_version = "0.1.0";
        s.process.python = "3.12.3";
        const char *paths[] = {"/usr/bin/python3.12", "/opt/vramtrace/lib/libvramtrace.so",
                               "nvidia/cuda_runtime/lib/libcudart.so.13", "torch/lib/libc10_cuda.so",
                               "torch/lib/libtorch_cuda.so", "torch/lib/libtorch_cpu.so",
                               "/lib/x86_64-linux-gnu/libstdc++.so.6", "/lib/x86_64-linux-gnu/libc.so.6"};
        for (int i = 0; i < 8; ++i)
            s.modules.push_back({paths[i][0] == '/' ? paths[i] : kSite + paths[i], aslr + (uint64_t(i + 1) << 32), ""});
    }

    // A native function at a fixed offset of its module (the same in every run).
    uint32_t native(int module, const std::string &function, uint64_t offset) {
        return frame("n" + function, [&] {
            Frame f;
            f.module = module;
            f.module_offset = offset;
            f.address = s.modules[size_t(module)].base + offset;
            f.function = function;
            return f;
        });
    }
    uint32_t py(const std::string &function, const std::string &file, uint32_t line) {
        return frame("p" + function + file + std::to_string(line), [&] {
            Frame f;
            f.address = 0x5059000000000000ull | s.frames.size();
            f.function = function;
            f.file = file;
            f.line = line;
            f.python = true;
            return f;
        });
    }
    uint32_t torch_py(const std::string &function, const std::string &file, uint32_t line) {
        return py(function, kSite + "torch/" + file, line);
    }

    // cudaMalloc through PyTorch's caching allocator, then `callers`. The stack's call site is the
    // allocator's first frame, as a file of before the frame rules says.
    uint32_t stack(std::vector<uint32_t> callers) {
        Stack st;
        st.id = uint32_t(s.stacks.size() + 1);
        st.frames = {native(kVramtrace, "vramtrace::hooks::cudaMalloc(vramtrace::Reach, void**, unsigned long)", 0x1100),
                     native(kCudart, "cudaMalloc", 0x2200),
                     native(kC10Cuda, "c10::cuda::CUDACachingAllocator::Native::(anonymous namespace)::cudaMallocMaybeCapturing(void**, unsigned long)", 0x3300),
                     native(kC10Cuda, "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)", 0x4400),
                     native(kTorchCuda, "at::native::empty_cuda(c10::ArrayRef<long>, std::optional<c10::ScalarType>, std::optional<c10::Layout>, std::optional<c10::Device>, std::optional<bool>, std::optional<c10::MemoryFormat>)", 0x5500)};
        st.frames.insert(st.frames.end(), callers.begin(), callers.end());
        st.call_site = 2;
        s.stacks.push_back(st);
        return st.id;
    }
    void alloc(uint32_t stack, uint64_t size, int device = 0) {
        Allocation a;
        a.address = 0x7e0000000000 + s.allocations.size() * 0x10000000;
        a.size = size;
        a.kind = device < 0 ? "host_pinned" : "device";
        a.device = device;
        a.api = device < 0 ? "cudaHostAlloc" : "cudaMalloc";
        a.stack = stack;
        s.allocations.push_back(a);
        auto d = std::find_if(s.devices.begin(), s.devices.end(), [&](const DeviceTotals &t) { return t.device == device; });
        if (d == s.devices.end()) {
            s.devices.push_back({});
            d = s.devices.end() - 1;
            d->device = device;
        }
        d->current_bytes += size;
        d->peak_bytes += size;
        d->allocation_count += 1;
        d->total_allocated_bytes += size;
        std::sort(s.devices.begin(), s.devices.end(), [](auto &x, auto &y) { return x.device < y.device; });
    }
    // Nothing is freed: each device's peak is what is live at the dump.
    Snapshot done() {
        s.peaks.clear();
        for (const DeviceTotals &d : s.devices) {
            DevicePeak p{d.device, d.peak_bytes, 1000, {}};
            std::map<uint32_t, PeakSite> by_stack;
            for (const Allocation &a : s.allocations)
                if (a.device == d.device) {
                    PeakSite &site = by_stack[a.stack];
                    site.stack = a.stack;
                    site.bytes += a.size;
                    site.count += 1;
                }
            for (auto &[id, site] : by_stack) p.sites.push_back(site);
            std::stable_sort(p.sites.begin(), p.sites.end(), [](auto &x, auto &y) { return x.bytes > y.bytes; });
            s.peaks.push_back(p);
        }
        return s;
    }

    // The stacks of the program (docs/attribution.md: what each is).
    uint32_t parameters() { // model.cuda() at train.py:30
        return stack({torch_py("Module.cuda.<locals>.<lambda>", "nn/modules/module.py", 1050),
                      torch_py("Module._apply", "nn/modules/module.py", 930),
                      torch_py("Module.cuda", "nn/modules/module.py", 1050), py("main", "/home/me/train.py", 30)});
    }
    uint32_t optimizer() { // opt.step() at train.py:50
        return stack({torch_py("_single_tensor_adam", "optim/adam.py", 345), torch_py("adam", "optim/adam.py", 900),
                      torch_py("Adam.step", "optim/adam.py", 220), py("main", "/home/me/train.py", 50)});
    }
    uint32_t forward() { // model(x), on the same line as the step
        return stack({torch_py("Linear.forward", "nn/modules/linear.py", 125),
                      torch_py("Module._call_impl", "nn/modules/module.py", 1784), py("main", "/home/me/train.py", 50)});
    }
    uint32_t backward() { // the autograd engine's thread: no Python frames
        return stack({native(kTorchCuda, "at::native::(anonymous namespace)::addmm_out_cuda_impl(at::Tensor&, at::Tensor const&, at::Tensor const&, at::Tensor const&, c10::Scalar const&, c10::Scalar const&, bool)", 0x6600),
                      native(kTorchCpu, "at::_ops::mm::call(at::Tensor const&, at::Tensor const&)", 0x7700),
                      native(kTorchCpu, "torch::autograd::generated::AddmmBackward0::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)", 0x8800),
                      native(kTorchCpu, "torch::autograd::Node::operator()(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)", 0x9900),
                      native(kTorchCpu, "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)", 0xaa00),
                      native(kStdcxx, "execute_native_thread_routine", 0xbb00), native(kLibc, "start_thread", 0xcc00)});
    }

    Snapshot s;

private:
    template <class Make> uint32_t frame(const std::string &key, Make make) {
        auto [it, inserted] = index_.try_emplace(key, uint32_t(s.frames.size()));
        if (inserted) s.frames.push_back(make());
        return it->second;
    }
    std::map<std::string, uint32_t> index_;
};

// BASE: parameters 4 MiB, optimizer state 8 MiB, activations 2 MiB, 4 B of pinned memory without a
// stack; written before the rules (no via, no category, the allocator as call site).
Snapshot base_run() {
    TorchRun r(100, 0x7f0000000000);
    r.alloc(r.parameters(), 4 * kMiB);
    r.alloc(r.optimizer(), 8 * kMiB);
    r.alloc(r.forward(), 2 * kMiB);
    r.alloc(0, 4, -1);
    return r.done();
}

// NEW: the optimizer state doubled, one more activation, and a backward pass's 3 MiB; written as the
// library writes now (the rules applied at dump time), loaded elsewhere.
Snapshot new_run() {
    TorchRun r(200, 0x7e8000000000);
    r.alloc(r.parameters(), 4 * kMiB);
    uint32_t optimizer = r.optimizer();
    r.alloc(optimizer, 8 * kMiB);
    r.alloc(optimizer, 8 * kMiB);
    uint32_t forward = r.forward();
    r.alloc(forward, 2 * kMiB);
    r.alloc(forward, 1 * kMiB);
    r.alloc(r.backward(), 3 * kMiB);
    r.alloc(0, 4, -1);
    vramtrace::assign_call_sites(r.s);
    return r.done();
}

SnapshotSites sites_of(const std::string &json, const std::string &name, SiteKeyOptions options = {}) {
    std::istringstream in(json);
    SnapshotSites out;
    std::string error;
    INFO(error);
    REQUIRE(collect_sites(in, name, options, &out, &error));
    return out;
}

using Rows = std::vector<std::tuple<std::string, uint64_t, uint64_t>>;
Rows rows(const SnapshotSites &s) {
    Rows out;
    for (const SiteTotals &t : s.sites) out.emplace_back(t.key, t.live_bytes, t.live_count);
    return out;
}
using CategoryRows = std::vector<std::tuple<int, std::string, uint64_t, uint64_t>>;
CategoryRows categories(const SnapshotSites &s) {
    CategoryRows out;
    for (const CategoryTotals &c : s.categories) out.emplace_back(c.device, c.category, c.live_bytes, c.live_count);
    return out;
}

const std::string kParameters = "main at train.py:30 via torch.nn.modules.module.Module.cuda";
const std::string kOptimizer = "main at train.py:50 via torch.optim.adam.Adam.step";
const std::string kForward = "main at train.py:50 via torch.nn.modules.linear.Linear.forward";
const std::string kBackward = "torch::autograd::generated::AddmmBackward0::apply(std::vector<at::Tensor, "
                              "std::allocator<at::Tensor> >&&) (libtorch_cpu.so+0x8800)";

} // namespace

TEST_CASE("diff: keys carry the via, a file of before the rules reads like a new one", "[diff][attribution]") {
    SnapshotSites base = sites_of(vt_test::snapshot_json(base_run()), "base.json");
    CHECK(rows(base) == Rows{{"(no stack captured)", 4, 1},
                             {kParameters, 4 * kMiB, 1},
                             {kForward, 2 * kMiB, 1},
                             {kOptimizer, 8 * kMiB, 1}});
    CHECK(categories(base) == CategoryRows{{0, "parameter", 4 * kMiB, 1},
                                           {0, "optimizer_state", 8 * kMiB, 1},
                                           {0, "activation", 2 * kMiB, 1},
                                           {-1, "other", 4, 1}});
    SnapshotSites now = sites_of(vt_test::snapshot_json(new_run()), "new.json");
    CHECK(rows(now) == Rows{{"(no stack captured)", 4, 1},
                            {kParameters, 4 * kMiB, 1},
                            {kForward, 3 * kMiB, 2},
                            {kOptimizer, 16 * kMiB, 2},
                            {kBackward, 3 * kMiB, 1}});
    // With a caller: the via stays with the call site, the callers follow.
    SnapshotSites two = sites_of(vt_test::snapshot_json(new_run()), "new.json", SiteKeyOptions{2, true});
    CHECK(std::get<0>(rows(two)[1]) == kParameters); // main is the outermost frame
    CHECK(std::get<0>(rows(two)[4]) ==
          kBackward + " <- torch::autograd::Node::operator()(std::vector<at::Tensor, std::allocator<at::Tensor> >&&) "
                      "(libtorch_cpu.so+0x9900)");
    // stack_key on the model gives the same key.
    Snapshot model = new_run();
    CHECK(stack_key(model, model.stacks[0], {}) == kParameters);
}

TEST_CASE("diff: live bytes by category, per device, in text and JSON", "[diff][attribution]") {
    SnapshotSites base = sites_of(vt_test::snapshot_json(base_run()), "base.json");
    SnapshotSites now = sites_of(vt_test::snapshot_json(new_run()), "new.json");
    DiffResult diff = compute_diff(base, now, {});
    REQUIRE(diff.categories.size() == 5);
    auto row = [&](size_t i) {
        const CategoryDiff &c = diff.categories[i];
        return std::make_tuple(c.device, c.category, c.live_bytes.base, c.live_bytes.now, c.live_count.base, c.live_count.now);
    };
    CHECK(row(0) == std::make_tuple(0, std::string("parameter"), 4 * kMiB, 4 * kMiB, uint64_t(1), uint64_t(1)));
    CHECK(row(1) == std::make_tuple(0, std::string("optimizer_state"), 8 * kMiB, 16 * kMiB, uint64_t(1), uint64_t(2)));
    CHECK(row(2) == std::make_tuple(0, std::string("activation"), 2 * kMiB, 3 * kMiB, uint64_t(1), uint64_t(2)));
    CHECK(row(3) == std::make_tuple(0, std::string("backward"), uint64_t(0), 3 * kMiB, uint64_t(0), uint64_t(1)));
    CHECK(row(4) == std::make_tuple(-1, std::string("other"), uint64_t(4), uint64_t(4), uint64_t(1), uint64_t(1)));
    // The parameters are one site in both: unchanged, though BASE never named it.
    auto status = [&](const std::string &key) {
        for (const SiteDiff &d : diff.sites)
            if (d.key == key) return std::string(status_name(d.status));
        return std::string("missing");
    };
    CHECK(status(kParameters) == "same");
    CHECK(status(kOptimizer) == "grew");
    CHECK(status(kForward) == "grew");
    CHECK(status(kBackward) == "new");
    CHECK(diff.changed == 3);

    std::string text = format_diff_text(base, now, diff, {}, nullptr);
    INFO(text);
    CHECK(text.find("\nlive bytes by category (stacks read by the frame rules, docs/attribution.md)\n"
                    "                          base                  new                     change                  allocations\n"
                    "  cuda:0 parameter        4.00 MiB (4194304 B)  4.00 MiB (4194304 B)    0 B                     1 -> 1\n"
                    "  cuda:0 optimizer_state  8.00 MiB (8388608 B)  16.00 MiB (16777216 B)  +8.00 MiB (+8388608 B)  1 -> 2 (+1)\n"
                    "  cuda:0 activation       2.00 MiB (2097152 B)  3.00 MiB (3145728 B)    +1.00 MiB (+1048576 B)  1 -> 2 (+1)\n"
                    "  cuda:0 backward         0 B                   3.00 MiB (3145728 B)    +3.00 MiB (+3145728 B)  0 -> 1 (+1)\n"
                    "  host other              4 B                   4 B                     0 B                     1 -> 1\n"
                    "\ncall sites: 3 changed (2 grew, 0 shrank, 1 new, 0 gone), 2 unchanged") != std::string::npos);
    CHECK(text.find("\n  +8.00 MiB (+8388608 B)  8.00 MiB  16.00 MiB  1 -> 2 (+1)  +8.00 MiB (+8388608 B)  grew    " +
                    kOptimizer + "\n") != std::string::npos);

    nlohmann::ordered_json j = diff_json(base, now, diff, {}, nullptr, nullptr);
    REQUIRE(j["categories"].size() == 5);
    CHECK(j["categories"][1].dump() ==
          R"({"device":0,"category":"optimizer_state","live_bytes":{"base":8388608,"new":16777216,"change":8388608},)"
          R"("live_allocations":{"base":1,"new":2,"change":1}})");
    CHECK(j["categories"][3]["live_bytes"].dump() == R"({"base":0,"new":3145728,"change":3145728})");
    CHECK(j["sites"][0]["key"] == kOptimizer);
}

TEST_CASE("diff: no category table for a program no rule knows", "[diff][attribution]") {
    SnapshotSites plain = sites_of(vt_test::snapshot_json(vt_test::golden_snapshot()), "g.json");
    for (const CategoryTotals &c : plain.categories) CHECK(c.category == "other");
    DiffResult diff = compute_diff(plain, plain, {});
    CHECK(format_categories_text(diff).empty());
    CHECK(format_diff_text(plain, plain, diff, {}, nullptr).find("by category") == std::string::npos);
    CHECK(diff_json(plain, plain, diff, {}, nullptr, nullptr)["categories"].size() == plain.categories.size());
}

TEST_CASE("diff: a stack read before its frames keeps the call site and category of its file", "[diff][attribution]") {
    std::string json = vt_test::snapshot_json(new_run());
    // The stacks moved before the modules and frames.
    size_t stacks_at = json.find("  \"stacks\""), allocations_at = json.find("  \"allocations\"");
    std::string stacks = json.substr(stacks_at, allocations_at - stacks_at);
    json.erase(stacks_at, stacks.size());
    json.insert(json.find("  \"modules\""), stacks);
    SnapshotSites s = sites_of(json, "reordered.json");
    // The rules cannot run (they would take the unknown frames for the call site); without the
    // frames' names there is no via label either.
    CHECK(rows(s) == Rows{{"(no stack captured)", 4, 1},
                          {"main at train.py:30", 4 * kMiB, 1},
                          {"main at train.py:50", 19 * kMiB, 4},
                          {kBackward, 3 * kMiB, 1}});
    CHECK(categories(s) == CategoryRows{{0, "parameter", 4 * kMiB, 1},
                                        {0, "optimizer_state", 16 * kMiB, 2},
                                        {0, "activation", 3 * kMiB, 2},
                                        {0, "backward", 3 * kMiB, 1},
                                        {-1, "other", 4, 1}});
}

TEST_CASE("merge: stacks keep via and category, the summary of the merge sums categories", "[merge][attribution]") {
    vt_test::TempDir dir;
    std::FILE *spool = std::tmpfile();
    REQUIRE(spool);
    Merger merger(SiteKeyOptions{}, spool);
    std::string error;
    std::istringstream in_a(vt_test::snapshot_json(base_run())), in_b(vt_test::snapshot_json(new_run()));
    REQUIRE(merger.add_stream(in_a, "rank0.json", &error));
    REQUIRE(merger.add_stream(in_b, "rank1.json", &error));
    std::vector<std::tuple<std::string, uint64_t, uint64_t, size_t>> sites;
    for (const MergedSiteRow &r : merger.sites()) sites.emplace_back(r.key, r.live_bytes, r.live_count, r.files);
    CHECK(sites == std::vector<std::tuple<std::string, uint64_t, uint64_t, size_t>>{
                       {kOptimizer, 24 * kMiB, 3, 2},
                       {kParameters, 8 * kMiB, 2, 2},
                       {kForward, 5 * kMiB, 3, 2},
                       {kBackward, 3 * kMiB, 1, 1},
                       {"(no stack captured)", 8, 2, 2}});
    std::string text = format_merge_text(merger, 0, {});
    INFO(text);
    CHECK(text.find("  24.00 MiB (25165824 B)  3            2 of 2  " + kOptimizer + "\n") != std::string::npos);
    CHECK(text.find("  5.00 MiB (5242880 B)    3            2 of 2  " + kForward + "\n") != std::string::npos);

    // As written (the rules not applied again): each stack's via and category.
    std::string path = dir.file("merged.json");
    Snapshot merged = written_and_read(merger, path, {"vramtrace", "merge"});
    std::fclose(spool);
    REQUIRE(merged.stacks.size() == 4); // one per distinct frame sequence: the two runs' stacks agree
    std::multiset<std::string> written;
    for (const Stack &st : merged.stacks) {
        written.insert(st.category);
        if (st.category == "backward") CHECK(st.via == -1);
        else CHECK(st.via >= 0);
        if (st.category == "optimizer_state") {
            REQUIRE(size_t(st.via) < st.frames.size());
            CHECK(merged.frames[st.frames[size_t(st.via)]].function == "Adam.step");
        }
    }
    CHECK(written == std::multiset<std::string>{"activation", "backward", "optimizer_state", "parameter"});
    CHECK(vt_test::read_file(path).find("\"call_site\": 8, \"via\": 7, \"category\": \"optimizer_state\"}") !=
          std::string::npos);

    // summary merged.json: the categories of both ranks added up.
    vramtrace::cli::symbolize_offline(merged, path);
    SummaryOptions options;
    std::string summary = format_summary(merged, options);
    INFO(summary);
    CHECK(summary.find("vramtrace: memory by category (stacks read by the frame rules, docs/attribution.md):\n"
                       "vramtrace:   cuda:0                  live    at peak\n"
                       "vramtrace:     parameter         8.00 MiB   8.00 MiB\n"
                       "vramtrace:     optimizer_state  24.00 MiB  24.00 MiB\n"
                       "vramtrace:     activation        5.00 MiB   5.00 MiB\n"
                       "vramtrace:     backward          3.00 MiB   3.00 MiB\n"
                       "vramtrace:   host     live  at peak\n"
                       "vramtrace:     other   8 B      8 B\n") != std::string::npos);
    CHECK(summary.find(" main at /home/me/train.py:50 (python) via torch.optim.adam.Adam.step\n") != std::string::npos);

    // diff reads the merged file with the same keys and categories.
    SnapshotSites m = sites_of(vt_test::read_file(path), "merged.json");
    CHECK(std::get<0>(rows(m)[3]) == kOptimizer);
    CHECK(categories(m) == CategoryRows{{0, "parameter", 8 * kMiB, 2},
                                        {0, "optimizer_state", 24 * kMiB, 3},
                                        {0, "activation", 5 * kMiB, 3},
                                        {0, "backward", 3 * kMiB, 1},
                                        {-1, "other", 8, 2}});
}
