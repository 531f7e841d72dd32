// A snapshot folded for the summary while it is read. See summary_input.h.
#include "input/summary_input.h"

#include <istream>
#include <new>
#include <utility>

#include "input/offline_symbolize.h"
#include "snapshot/reader/snapshot_reader.h"

namespace vramtrace::cli {

namespace {

// Keeps the small members in `head`, folds allocations and events into `body`, and remembers the
// stacks those two name for the reference check.
class SummarySink final : public SnapshotSink {
public:
    explicit SummarySink(SummaryInput &out) : s_(out.head), body_(out.body) {}

    void on_schema_version(int v) override { s_.schema_version = v; }
    void on_process(report::ProcessInfo &&p) override { s_.process = std::move(p); }
    void on_device(report::DeviceTotals &&d) override { s_.devices.push_back(std::move(d)); }
    void on_dropped(uint64_t a, uint64_t st) override { s_.dropped_allocations = a, s_.dropped_stacks = st; }
    void on_module(report::Module &&m) override { s_.modules.push_back(std::move(m)); }
    void on_frame(report::Frame &&f) override { s_.frames.push_back(std::move(f)); }
    void on_stack(report::Stack &&st) override { s_.stacks.push_back(std::move(st)); }
    void on_allocation(report::Allocation &&a) override {
        if (a.stack != 0) allocation_stacks.try_emplace(a.stack, allocations_);
        ++allocations_;
        body_.add_allocation(a);
    }
    void on_dropped_peak_sites(uint64_t n) override { s_.dropped_peak_sites = n; }
    void on_oom_count(uint64_t n) override { s_.oom_count = n; }
    void on_peak(report::DevicePeak &&p) override { s_.peaks.push_back(std::move(p)); }
    void on_oom(report::OomEvent &&o) override { s_.ooms.push_back(std::move(o)); }
    void on_pool(report::Pool &&p) override { s_.pools.push_back(std::move(p)); }
    void on_event_history(report::EventHistory &&h) override {
        h.events.clear();
        s_.events = std::move(h);
    }
    void on_event(report::Event &&e) override {
        if (e.stack != 0) event_stacks.try_emplace(e.stack, events_);
        ++events_;
        body_.add_event(e);
    }

    void on_teardown_count(uint64_t n) override { s_.teardown_count = n; }
    void on_teardown(report::Teardown &&td) override { s_.teardowns.push_back(std::move(td)); }
    void on_imbalance(report::ImbalanceRole &&r) override { s_.imbalance.push_back(std::move(r)); }
    void on_imbalance_outlier(report::ImbalanceOutlier &&o) override { s_.imbalance_outliers.push_back(std::move(o)); }
    void on_range_stack(report::RangeStack &&r) override { s_.range_stacks.push_back(std::move(r)); }
    void on_dropped_nvtx(uint64_t stacks, uint64_t names) override {
        s_.dropped_range_stacks = stacks, s_.dropped_range_names = names;
    }
    void on_nvtx_region(report::NvtxRegion &&r) override { s_.nvtx_regions.push_back(std::move(r)); }
    void on_dropped_nvtx_regions(uint64_t dropped, uint64_t outside, uint64_t unknown) override {
        s_.dropped_nvtx_regions = dropped, s_.nvtx_regions_outside = outside, s_.nvtx_unregisters_unknown = unknown;
    }
    void on_nvtx_interval(report::NvtxInterval &&v) override { s_.nvtx_intervals.push_back(std::move(v)); }
    void on_dropped_nvtx_intervals(uint64_t count) override { s_.dropped_nvtx_intervals = count; }

    StackReferences allocation_stacks, event_stacks;

private:
    report::Snapshot &s_;
    report::SummaryBody &body_;
    size_t allocations_ = 0, events_ = 0;
};

template <class Read>
bool read_with(const std::string &name, SummaryInput *out, std::string *error, Read &&read) {
    auto fail = [&] {
        *out = SummaryInput{};
        return false;
    };
    try {
        *out = SummaryInput{};
        SummarySink sink(*out);
        if (!read(sink)) return fail();
        if (std::string problem = check_snapshot_references(out->head, &sink.allocation_stacks, &sink.event_stacks);
            !problem.empty()) {
            if (error) *error = name + ": " + problem;
            return fail();
        }
        // A crash snapshot: name its frames from the files on disk (every frame is at hand here,
        // whatever the order of the members).
        symbolize_offline(out->head, name);
        report::adopt_graph_memory_pools(out->head);
        return true;
    } catch (const std::bad_alloc &) {
        if (error) *error = name + ": out of memory while reading";
    }
    return fail();
}

} // namespace

bool read_summary_input(std::istream &in, const std::string &name, SummaryInput *out, std::string *error) {
    return read_with(name, out, error,
                     [&](SnapshotSink &sink) { return read_snapshot_stream(in, name, sink, error); });
}

bool read_summary_input_file(const std::string &path, Progress *progress, SummaryInput *out, std::string *error) {
    return read_with(path, out, error, [&](SnapshotSink &sink) {
        return stream_snapshot_file(path, sink, progress, error, /*name_frames=*/false);
    });
}

} // namespace vramtrace::cli
