// libFuzzer target over the snapshot reader (lib/snapshot/reader/): every input either parses
// or fails with one line of error text; nothing crashes, hangs or trips ASan/UBSan. Built and run
// by fuzz/run_fuzz.sh. Kept free of <ranges> (clang-14 cannot compile libstdc++ 12's).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "snapshot/reader/snapshot_reader.h"

namespace {

// Counts what arrives, and touches every string so ASan sees any bad one.
class CountingSink : public vramtrace::snapshot::SnapshotSink {
public:
    size_t parts = 0, bytes = 0;
    void on_schema_version(int) override { ++parts; }
    void on_process(vramtrace::snapshot::ProcessInfo &&p) override {
        ++parts;
        bytes += p.host.size() + p.executable.size() + p.reason.size();
        for (const std::string &a : p.command_line) bytes += a.size();
    }
    void on_device(vramtrace::snapshot::DeviceTotals &&) override { ++parts; }
    void on_dropped(uint64_t, uint64_t) override { ++parts; }
    void on_module(vramtrace::snapshot::Module &&m) override { ++parts, bytes += m.path.size() + m.build_id.size(); }
    void on_frame(vramtrace::snapshot::Frame &&f) override {
        ++parts, bytes += f.function.size() + f.file.size();
        for (const auto &i : f.inlined) bytes += i.function.size() + i.file.size();
    }
    void on_stack(vramtrace::snapshot::Stack &&s) override { ++parts, bytes += s.frames.size(); }
    void on_allocation(vramtrace::snapshot::Allocation &&) override { ++parts; }
    void on_dropped_peak_sites(uint64_t) override { ++parts; }
    void on_oom_count(uint64_t) override { ++parts; }
    void on_peak(vramtrace::snapshot::DevicePeak &&p) override { ++parts, bytes += p.sites.size(); }
    void on_oom(vramtrace::snapshot::OomEvent &&o) override { ++parts, bytes += o.api.size(); }
    void on_pool(vramtrace::snapshot::Pool &&) override { ++parts; }
    void on_event_history(vramtrace::snapshot::EventHistory &&) override { ++parts; }
    void on_event(vramtrace::snapshot::Event &&e) override {
        ++parts, bytes += e.type.size() + e.kind.size() + e.api.size() + e.label.size();
    }
    void on_merged_process(vramtrace::snapshot::MergedProcess &&p) override { ++parts, bytes += p.file.size(); }
    void on_merged_device(vramtrace::snapshot::MergedDevice &&d) override { ++parts, bytes += d.uuid.size(); }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::istringstream in(std::string(reinterpret_cast<const char *>(data), size));
    CountingSink sink;
    std::string error;
    bool ok = vramtrace::snapshot::read_snapshot_stream(in, "input", sink, &error);
    // The contract of the reader: a failure is one non-empty line naming the input.
    if (!ok && (error.empty() || error.find('\n') != std::string::npos || error.rfind("input", 0) != 0)) abort();
    return 0;
}
