// Ending what a context teardown frees. The driver frees a context's allocations of the kinds
// ended_by_context_teardown names (measured on the H200: docs/coverage.md, "What a context
// teardown ends") without a free call per allocation, so the hooks of the teardown calls take
// those records out of the table themselves: before a reset or a destroy (so that an address the
// driver hands out again right after is never taken for the old allocation), after the release
// that turned out to be a primary context's last one. Each ended record leaves as a free
// (counters, totals and the peak composition stay exact) whose event carries the cause, and the
// teardown is logged with what was live then, by call site (tracking/teardown_log.h).
#pragma once

#include <cstdint>
#include <vector>

#include "core/tracker.h"

namespace vramtrace {

// The context generations whose records a teardown would end: those of the context `handle`
// (ContextRegistry::for_each_live_id), those of `device`'s primary context (for_each_live_primary).
std::vector<uint16_t> live_context_ids(const Tracker &t, uint64_t handle);
std::vector<uint16_t> live_primary_ids(const Tracker &t, int device);

// Takes every record of the context generations `ids` out of the table.
std::vector<AllocationRecord> take_context_records(Tracker &t, const std::vector<uint16_t> &ids);
// The teardown call failed: puts them back.
void restore_context_records(Tracker &t, const std::vector<AllocationRecord> &records);
// The teardown call succeeded: accounts each record as freed by it, logs the teardown and retires
// the ids (their handle gets a new id at its next use).
void end_context_records(Tracker &t, const std::vector<AllocationRecord> &records,
                         const std::vector<uint16_t> &ids, TeardownCause cause, uint8_t api, int device);

} // namespace vramtrace
