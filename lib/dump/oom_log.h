// The in-memory log of out-of-memory failures: every one is counted, the last kKept are kept (a
// ring in static storage: no malloc when recording, nothing destroyed at exit). The exit report
// and every later snapshot list them (Snapshot::ooms, oom_count) through fill_oom_events.
#pragma once

#include <cstdint>

#include "snapshot/snapshot_model.h"

namespace vramtrace {

inline constexpr unsigned kOomsKept = 16;

// One failure as the hook saw it (flat, copied under a short spinlock).
struct OomRecord {
    uint64_t time_ns = 0;        // CLOCK_MONOTONIC
    uint64_t requested_bytes = 0;
    uint64_t stream = 0;
    uint64_t tracked_bytes = 0;  // tracked bytes live on the device at the failure
    uint64_t free_bytes = 0;     // cuMemGetInfo, valid when has_memory_info
    uint64_t total_bytes = 0;
    uint32_t stack = 0;
    uint32_t thread_id = 0;
    int32_t result = 0;          // what the real call returned
    int16_t device = -2;
    uint8_t api = 0;             // ApiId
    bool has_memory_info = false;
};

// Counts the failure and keeps it (dropping the oldest beyond kOomsKept). Returns the count.
uint64_t record_oom(const OomRecord &record);
uint64_t oom_count();
// The failures on one device ordinal (0..kOomDevices-1; 0 for any other).
inline constexpr unsigned kOomDevices = 128;
uint64_t oom_count_on_device(int device);

// Fills snapshot.ooms (oldest first) and snapshot.oom_count (contract 3: one line in
// capture_snapshot, before its stacks are collected, so the failing calls' stacks are included).
void fill_oom_events(snapshot::Snapshot &snapshot);

// In a fork child: the child starts with no failures (as its tracker starts empty).
void reset_oom_log();

} // namespace vramtrace
