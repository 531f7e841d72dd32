// One reading of the live state (docs/live.md, "A reading"), written as JSON to a descriptor.
// Runs on the reporter thread: reads the live table, the counters and (with history) the event
// ring without taking any lock a hook takes, asks the device layer for NVML's figure and the
// pools as a dump does, and sends raw frame addresses with the modules they fall in (the viewer
// names them). Work per reading: one walk of the live table, a sort of the distinct (stack,
// device) pairs, at most live::kReadingSites stacks copied; with history, one walk of the ring.
#pragma once

#include <cstdint>

#include "core/tracker.h"

namespace vramtrace::serve {

struct ReadingOptions {
    bool history = false;          // add "history": per-second bytes per device and recent marks
    uint64_t live_snapshots = 0;   // X.live-N.json written so far (the last N)
};

// Writes one reading to `fd` (a memfd: it never fills). False when a write failed.
bool write_reading(Tracker &tracker, int fd, const ReadingOptions &options);

} // namespace vramtrace::serve
