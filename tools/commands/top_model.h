// A reading of a live process (docs/live.md) as the viewer shows it: the reading's JSON parsed,
// its frames named here from the module files on disk (the process only sends addresses), the
// frame rules applied to its stacks, and its stacks grouped by call site as the summary groups a
// snapshot's live allocations (report::group_by_call_site), so that `vramtrace top` and the
// snapshot of the same moment name the same sites with the same bytes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "snapshot/snapshot_model.h"

namespace vramtrace::cli {

struct LiveDevice {
    snapshot::DeviceTotals totals;                 // counters, identity, NVML's figure when known
    std::vector<int64_t> history;                // bytes at the end of each recent second, oldest
                                                 // first; -1: not known (empty without history)
};

// Every string of a view is escaped for a terminal (report::escape_control_characters, as
// `vramtrace summary` escapes its output): names come from the process and from files on disk.
struct LiveSite {
    std::string location;        // describe_frame of the call site, or a parenthesised note
    std::string function, file;  // the call-site frame's ("" when there is none)
    uint32_t line = 0;
    uint64_t bytes = 0, count = 0;
    std::string category;        // the frame rules' category of its heaviest stack
    std::vector<int> devices;    // ascending
    // The heaviest stack's frames, leaf first: indices into LiveView::frames, so that a frame is
    // described once however many stacks hold it.
    std::vector<uint32_t> stack;
    // Every stack the site merges, heaviest first: one call site can gather stacks that reach it
    // on different paths (a library's own allocation and one through a framework's pool).
    struct MergedStack {
        uint64_t bytes = 0, count = 0;
        int device = 0;
        std::vector<uint32_t> frames; // leaf first, indices into LiveView::frames
    };
    std::vector<MergedStack> stacks;
};

struct LiveMark {
    uint64_t time_ns = 0;
    std::string label;
};

struct LiveView {
    int64_t pid = 0;
    std::vector<std::string> command_line;
    std::string rank, host, executable, exit_snapshot;
    uint64_t monotonic_ns = 0;
    uint64_t live_snapshots = 0;
    std::vector<LiveDevice> devices;  // ascending ordinal
    uint64_t live_allocations = 0, live_bytes = 0;
    std::vector<LiveSite> sites;      // bytes descending (report::group_by_call_site's order)
    std::vector<std::string> frames;  // describe_frame of the reading's frames that sites use
                                      // (the others stay empty)
    uint64_t left_out_sites = 0, left_out_bytes = 0, left_out_count = 0;
    std::vector<snapshot::Pool> pools;
    std::vector<snapshot::OomEvent> ooms;
    uint64_t oom_count = 0;
    bool has_history = false;
    std::vector<LiveMark> marks;
    uint64_t serve_cpu_ns = 0;        // the process's CPU time for building this reading
};

// Names frames across readings of one process: one symbolizer per set of modules, its look-ups
// cached, so that a viewer refreshing every second reads each module's symbols once.
class LiveNamer {
public:
    LiveNamer();
    ~LiveNamer();
    LiveNamer(const LiveNamer &) = delete;
    LiveNamer &operator=(const LiveNamer &) = delete;
    // Names the non-Python frames of `snapshot` (frames hold module and offset) from its modules.
    void name(snapshot::Snapshot &snapshot);

private:
    struct State;
    std::unique_ptr<State> state_;
};

// Parses one reading; `device` >= -2 keeps only that device's sites (-3: all devices). Without
// `with_sites` the frames are neither named nor grouped (the process list needs only the
// devices) and `sites` stays empty. False with *error (one line) when the text is not a reading,
// or holds more than a server sends (live/protocol.h: sites, stacks, frames per stack, frames,
// names, OOMs, marks, seconds of history).
bool parse_live_reading(const std::string &text, LiveNamer &namer, int device, LiveView *out, std::string *error,
                        bool with_sites = true);

// The answer to a snapshot request: the path written, or false with *error.
bool parse_snapshot_answer(const std::string &text, std::string *path, std::string *error);

// The JSON of `vramtrace top --once --json` for one reading (docs/live.md, "top --once --json").
std::string live_view_json(const LiveView &view, size_t top);

} // namespace vramtrace::cli
