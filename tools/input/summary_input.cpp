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
class SummarySink final : public snapshot::SnapshotFiller {
public:
    explicit SummarySink(SummaryInput &out) : snapshot::SnapshotFiller(out.head), body_(out.body) {}

    void on_allocation(snapshot::Allocation &&a) override {
        if (a.stack != 0) allocation_stacks.try_emplace(a.stack, allocations_);
        ++allocations_;
        body_.add_allocation(a);
    }
    void on_event_history(snapshot::EventHistory &&h) override {
        h.events.clear();
        s_.events = std::move(h);
    }
    void on_event(snapshot::Event &&e) override {
        if (e.stack != 0) event_stacks.try_emplace(e.stack, events_);
        ++events_;
        body_.add_event(e);
    }

    snapshot::StackReferences allocation_stacks, event_stacks;

private:
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
        if (std::string problem = snapshot::check_snapshot_references(out->head, &sink.allocation_stacks, &sink.event_stacks);
            !problem.empty()) {
            if (error) *error = name + ": " + problem;
            return fail();
        }
        // A crash snapshot: name its frames from the files on disk (every frame is at hand here,
        // whatever the order of the members).
        symbolize_offline(out->head, name);
        snapshot::adopt_graph_memory_pools(out->head);
        return true;
    } catch (const std::bad_alloc &) {
        if (error) *error = name + ": out of memory while reading";
    }
    return fail();
}

} // namespace

bool read_summary_input(std::istream &in, const std::string &name, SummaryInput *out, std::string *error) {
    return read_with(name, out, error,
                     [&](snapshot::SnapshotSink &sink) { return snapshot::read_snapshot_stream(in, name, sink, error); });
}

bool read_summary_input_file(const std::string &path, Progress *progress, SummaryInput *out, std::string *error) {
    return read_with(path, out, error, [&](snapshot::SnapshotSink &sink) {
        return stream_snapshot_file(path, sink, progress, error, /*name_frames=*/false);
    });
}

} // namespace vramtrace::cli
