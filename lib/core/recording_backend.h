// Which backend records allocations: the preload hooks (the default) or CUPTI's driver-API callbacks
// (docs/cupti.md). Never both: while CUPTI records, the preload hooks (if the library is also
// preloaded) forward every call untouched; they take over again only when CUPTI cannot be used.
// The CUPTI backend (cupti/backend.h) sets the switch; every preload hook reads it.
#pragma once

#include <atomic>

namespace vramtrace {

extern std::atomic<bool> g_preload_hooks_record;

// Read by every preload hook (interception/hook_scope.h's tracker_for): one relaxed load.
inline bool preload_hooks_record() { return g_preload_hooks_record.load(std::memory_order_relaxed); }
// Also brings the hooks' word up to date (core/hot_flags.h).
void set_preload_hooks_record(bool on);

} // namespace vramtrace
