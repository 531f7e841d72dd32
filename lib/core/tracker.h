// The process-wide tracker: the live table, the stack depot and the per-device counters, built in
// static storage that is never destroyed (CUDA's own exit handlers still free memory after static
// destructors have run), plus the operations the hooks perform on them.
#pragma once

#include <cstdint>

#include "core/hot_flags.h"

#include "tracking/allocation_record.h"
#include "tracking/context_registry.h"
#include "tracking/device_counters.h"
#include "tracking/event_ring.h"
#include "tracking/live_table.h"
#include "tracking/module_registry.h"
#include "tracking/stack_depot.h"
#include "tracking/teardown_log.h"
#include "tracking/vmm_ledger.h"

namespace vramtrace {

struct Tracker {
    LiveTable table;
    StackDepot depot;
    DeviceCounters counters;   // current/peak/totals and the peak composition per device
    EventRing events;          // alloc/free/mark/oom history (VRAMTRACE_EVENTS)
    ModuleRegistry modules;    // every object loaded while a new stack was interned (dlclose'd ones too)
    // Python frames (file, function, line) interned by content; stacks refer to them as tagged
    // pseudo-frames (python/python_frame_table.h). Small: one entry per distinct frame and line.
    StackDepot python_frames{12};
    ContextRegistry contexts;  // context generations that own records (AllocationRecord::context)
    VmmLedger vmm;             // references and mappings of VMM handles
    TeardownLog teardowns;     // what each context teardown ended, by call site
    uint64_t start_wall_ns = 0;
    uint64_t start_monotonic_ns = 0;
};

// The tracker, or nullptr while it is not ready (before init, or after an internal failure turned
// tracking off). Initialises on first use from any thread without blocking: a thread that finds
// another one initialising gets nullptr and forwards its call untracked.
Tracker *tracker();
// Where the tracker lives; what tracker() returns once it is ready (hot::kRecord* say so).
extern unsigned char g_tracker_storage[];
inline Tracker *ready_tracker() { return reinterpret_cast<Tracker *>(g_tracker_storage); }
// Sets hot::kRecordExport and kRecordHandout from their sources (the tracker's state, the recording
// backend, VRAMTRACE_HOOK_EXPORTS); whoever changes a source calls it after.
void refresh_recording_bits();
void initialize();   // idempotent; the library constructor calls it
void disable_tracking(const char *why); // says why once on stderr; calls are forwarded from then on

// Whether this process made an intercepted allocation or free. A process that never does (a shell,
// a launcher or data-loader worker that only imports a framework) writes no report and prints
// nothing. The first call also makes the event history's slots resident (EventRing::make_resident:
// 6 MiB by default, about a millisecond, once per process that uses CUDA).
void note_cuda_seen_slow();
inline void note_cuda_seen() {
    if ((hot::word() & hot::kCudaSeen) == 0) note_cuda_seen_slow();
}
bool cuda_seen();

// The key of a record in the device counters' peak composition: its stack id while no NVTX range is
// open, else the id of a one-frame pseudo-stack in the depot that holds (stack, range), so that the
// composition at the peak is exact per call site and per range stack at once. The snapshot builder
// splits such a key back (split_peak_key) before it writes the peak's sites.
constexpr uint64_t kRangeKeyTag = 0x4e56000000000000ull; // "NV" in the top bytes
uint32_t peak_key(Tracker &t, uint32_t stack, uint16_t range);
// Whether `key` is such a pseudo-stack: then *stack and *range are its parts.
bool split_peak_key(const Tracker &t, uint32_t key, uint32_t *stack, uint16_t *range);

// Hot-path operations used by the hooks (lib/interception/hook_scope.h).
// record_allocation returns the device's tracked bytes just after the record was counted, 0 when
// it does not count toward a device or could not be stored.
uint64_t record_allocation(Tracker &t, const AllocationRecord &record);
bool take_allocation(Tracker &t, uint64_t address, AllocationRecord *out); // erase before the free
void restore_allocation(Tracker &t, const AllocationRecord &record);     // the real free failed
void account_free(Tracker &t, const AllocationRecord &record,             // the real free succeeded
                  TeardownCause cause = TeardownCause::None);              // or a teardown ended it

// Whether the process is exiting: set by an atexit handler registered at the first recorded
// allocation, which runs before cudart's own exit handlers (registered earlier, at cudart's start).
// A context torn down from then on ends nothing: the exit report lists what the program left live.
bool process_exiting();
// A CUDA runtime started (its cuGetProcAddress bootstrap was seen): the exit handler above is
// registered again at the next recorded allocation, so that it still runs before that runtime's
// own exit handlers (registered during its start) when the first allocation came before it.
void note_runtime_bootstrap();

// Events that are not allocations or frees (both never block, never call malloc).
// An allocation that failed for lack of memory: device ordinal, the bytes requested, the ApiId of
// the outermost intercepted call and the StackDepot id of the failing call (0: none).
void record_oom_event(Tracker &t, int device, uint64_t size, uint8_t api, uint32_t stack);
// A "mark" with the caller's label (copied, cut to EventRecord::kLabelMax bytes; NULL = ""), for
// vramtrace_mark. Returns VRAMTRACE_OK, or VRAMTRACE_ERROR_DISABLED when tracking is off.
int record_mark(const char *label);

} // namespace vramtrace
