// The summary of a snapshot written on the H200 by PyTorch's default caching allocator
// (tests/gpu/run_attribution.sh, torch_default checkpoint), read as the CLI reads it: the frame
// rules applied again, then the call sites with their via and the categories of docs/attribution.md.
#include <catch2/catch.hpp>

#include <string>

#include "input/offline_symbolize.h"
#include "report/summary_format.h"
#include "snapshot/reader/snapshot_reader.h"

using vramtrace::snapshot::read_snapshot_file;
namespace report = vramtrace::report;
namespace snapshot = vramtrace::snapshot;

namespace {

std::string summary_of_recorded() {
    snapshot::Snapshot s;
    std::string error;
    const std::string path = std::string(VT_TEST_DATA_DIR) + "/torch_default_checkpoint.json";
    REQUIRE(read_snapshot_file(path, &s, &error));
    vramtrace::cli::symbolize_offline(s, path); // named already: applies the frame rules
    report::SummaryOptions options;
    options.top_n = 8;
    return report::format_summary(s, options);
}

} // namespace

TEST_CASE("summary: memory by category of a PyTorch checkpoint", "[summary][attribution]") {
    std::string text = summary_of_recorded();
    INFO(text);
    CHECK(text.find("vramtrace: memory by category (stacks read by the frame rules, docs/attribution.md):\n"
                    "vramtrace:   cuda:0                     live     at peak\n"
                    "vramtrace:     parameter           18.00 MiB   18.00 MiB\n"
                    "vramtrace:     optimizer_state     32.00 MiB   32.00 MiB\n"
                    "vramtrace:     activation          20.00 MiB   20.00 MiB\n"
                    "vramtrace:     backward            18.00 MiB   18.00 MiB\n"
                    "vramtrace:     library_workspace  192.30 MiB  192.30 MiB\n"
                    "vramtrace:   host                 live  at peak\n"
                    "vramtrace:     library_workspace   8 B      8 B\n"
                    "vramtrace:     other               4 B      4 B\n"
                    "vramtrace:   (PyTorch's caching allocator: a segment has the category of the request that created it)\n") !=
          std::string::npos);
}

TEST_CASE("summary: call sites past PyTorch's internals, with the entry they went through", "[summary][attribution]") {
    std::string text = summary_of_recorded();
    INFO(text);
    const char *expected[] = {
        "vramtrace:      main at /work/main/tests/gpu/attribution/torch_categories.py:47 (python) via at::cuda::getCUDABlasLtWorkspace\n",
        "vramtrace:      cublasCreate_v2 (libcublas.so.13) [no Python frames]\n",
        "vramtrace:      main at /work/main/tests/gpu/attribution/torch_categories.py:49 (python) via torch.optim.adam.Adam.step\n",
        "vramtrace:      main at /work/main/tests/gpu/attribution/torch_categories.py:41 (python) via torch.nn.modules.module.Module.cuda\n",
        "vramtrace:      AddmmBackward0 (libtorch_cpu.so) [no Python frames]\n",
        "vramtrace:      ReluBackward0 (libtorch_cpu.so) [no Python frames]\n",
    };
    for (const char *line : expected) {
        INFO(line);
        CHECK(text.find(line) != std::string::npos);
    }
    // No call site is a frame of PyTorch's allocator or dispatcher.
    CHECK(text.find("CUDACachingAllocator") == std::string::npos);
    CHECK(text.find("at::_ops::") == std::string::npos);
}
