// The human-readable summary printed by the library on stderr (at exit or on request) and by
// `vramtrace summary`. Linked into the preload library: no third-party dependencies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "snapshot/snapshot_model.h"

namespace vramtrace::report {

// Every line of the summary starts with this, so it never mixes with the program's own output.
inline constexpr std::string_view kSummaryLinePrefix = "vramtrace: ";

struct SummaryOptions {
    size_t top_n = 10;                   // call sites listed per table (top, peak, OOM, each class); 0 = all
    size_t max_sizes_per_call_site = 5;  // distinct allocation sizes listed per call site; 0 = all
};

// The summary as lines ending in '\n', each starting with kSummaryLinePrefix, laid out for 80-100
// columns (a call site's text can be longer: it gets a line of its own). Sections, in order:
//   - the title line (pid, host, rank when set);
//   - the headline (report/summary_headline.h): each GPU's peak and when (the mark before it, the
//     NVTX range, the allocation that reached it) with the top holders, the live allocations by
//     exit-time class (report/live_classes.h: held since start, grew, the rest), OOMs by the
//     error's name, the PyTorch caching-allocator hint; then "---- details ----";
//   - header: command line, why the snapshot was taken, running time,
//     and for a process with Python frames (ProcessInfo::python) what the call sites mean then;
//   - per device (cuda:N, then host, then unknown), after torch.cuda.memory_summary, rows against
//     Cur Usage | Peak Usage | Tot Alloc | Tot Freed, "-" where the snapshot does not tell:
//       tracked memory / allocations: DeviceTotals (current_bytes, peak_bytes, total_*_bytes;
//         allocation_count - free_count, allocation_count, free_count); the peak allocation
//         count only from the event history (below);
//       by kind (device memory, managed memory, host pinned, ...) and by size class (small
//         < 1 MiB, large >= 1 MiB, PyTorch's pools; bytes, and allocations): Cur from the live
//         allocations that count as held (counts_as_held); Peak and Tot from replaying
//         Snapshot::events, only when the history is complete (not wrapped, every recorded event
//         kept) AND its replayed totals and counts for the device equal DeviceTotals exactly;
//       then the device's identity (uuid, PCI bus id, capacity) when known, and, when
//       DeviceTotals::process_used_bytes is there, "nvidia-smi: U = T tracked + X untracked"
//       (the driver's count of this process minus the tracked bytes: context, modules, memory
//       allocated outside intercepted calls);
//   - for a snapshot not taken at exit, the top call sites by live bytes
//     (group_live_by_call_site): bytes, share, count, API, device, and the call site
//     (describe_frame: inlined calls included) on the next line;
//   - per device with Snapshot::peaks: what was held at the peak, by call site, and when (time
//     since start when process.dump_monotonic_ns places monotonic times on the wall clock);
//   - out-of-memory failures (Snapshot::oom_count, ooms): request, API, device, free/total from
//     cuMemGetInfo and tracked bytes at that moment, and the calling site; for a snapshot taken
//     at an OOM (reason "oom") the call sites holding the last failure's device (its live
//     allocations there);
//   - memory pools (Snapshot::pools): reserved vs used, unused, their high-water marks;
//   - at exit, the allocations still live ("leaked at exit") by class, per call site with their
//     sizes; for another snapshot only their count, the table above listing them;
//   - a warning when records or stacks were dropped.
// Sections whose data is absent (older snapshots) are left out. The output depends on nothing but
// the snapshot and the options (ties break on a stable key), and control characters from the
// snapshot are escaped so that a line never breaks. It does not say where the snapshot was
// written: the caller adds that. Returns "" only if memory ran out; never throws.
std::string format_summary(const snapshot::Snapshot &snapshot, const SummaryOptions &options = {});

// What the summary takes from a snapshot's two long arrays, folded as the records come, so that
// `vramtrace summary` streams a file of any size:
//   - the live allocations that count as held (counts_as_held; the summary ignores the others),
//     those with equal (stack, device, kind, api, size) as one entry with a count;
//   - the event history replayed into per-device figures (by kind and size class) on the fly.
//   - the time each live allocation was made (for the exit-time classes), and the history's marks
//     and allocations (time, stack, size, range) for the headline.
// Its memory is about 80 bytes per distinct (stack, device, kind, api, size) of the live
// allocations, 8 bytes per live allocation, a few hundred bytes per device and kind, and about 32
// bytes per event of the history (bounded by its capacity, VRAMTRACE_EVENTS).
class SummaryBody {
public:
    SummaryBody();
    ~SummaryBody();
    SummaryBody(SummaryBody &&) noexcept;
    SummaryBody &operator=(SummaryBody &&) noexcept;

    // One record of Snapshot::allocations (any order).
    void add_allocation(const snapshot::Allocation &allocation);
    // One record of Snapshot::events.events, in their order (oldest first).
    void add_event(const snapshot::Event &event);

    // Folded entries of live allocations so far (distinct stack, device, kind, api, size).
    size_t live_entries() const;

    struct State;
    const State &state() const { return *state_; }

private:
    std::unique_ptr<State> state_;
};

// The summary of `head` (a snapshot whose `allocations` and `events.events` are ignored: `body`
// stands for them; `head.events` still gives the history's capacity, recorded count and wrapped
// flag). format_summary(snapshot) is this with a body built from the snapshot's own arrays, so both
// print the same text. Returns "" only if memory ran out; never throws.
std::string format_summary(const snapshot::Snapshot &head, const SummaryBody &body, const SummaryOptions &options = {});

} // namespace vramtrace::report
