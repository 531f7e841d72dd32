// The live set of a VRAMTRACE_WARN_BYTES crossing, rebuilt by the reporter thread from a snapshot
// taken after it: the allocation hook records only the crossing's figures (threshold.cpp), so by
// the time the reporter reads the live table the program may have allocated and freed more.
//
// Why a rebuild and not "the sites as they are now": the warning names the call sites that held
// the memory when the threshold was crossed. The snapshot carries the event history (alloc and
// free events, each with address, size, device and the allocation's stack), so undoing, newest
// first, the device's events stamped after the crossing gives back the crossing's live set. The
// history may run past the live-table copy (it is walked after it): undoing an event the copy
// does not reflect yet changes nothing in the result (an allocation's undo removes an address the
// copy lacks, a free's undo puts back one it still holds), so a later walk is always safe to use.
//
// When the rebuild is exact. Event times and live-table changes are not one atomic step across
// threads (an allocation is stamped before its table insert, a free after its table erase), and
// the history may be off, wrapped past the crossing, or have dropped events. So the rebuild is
// accepted only when the history is on, complete from before the crossing, lost no event since
// the crossing, and the rebuilt set's counted bytes equal the crossing's live bytes exactly (the
// figure the device counters ordered). Otherwise the caller says plainly that the sites it lists
// are those of a later moment. A concurrent allocation and free of equal size, both misplaced
// relative to the crossing in the same snapshot, is the one case the byte check cannot see.
#pragma once

#include <cstdint>
#include <vector>

#include "snapshot/snapshot_model.h"

namespace vramtrace::triggers {

// What the hook records at an upward crossing.
struct Crossing {
    int device = -2;
    uint64_t live_bytes = 0;  // the device's tracked bytes just after the crossing allocation
    uint64_t threshold = 0;   // bytes
    uint64_t time_ns = 0;     // CLOCK_MONOTONIC, read after the crossing allocation was counted
    uint64_t events_lost = 0; // the event ring's lost() at the crossing
};


// The allocations live on c.device at the crossing, oldest first, rebuilt from `now` (captured
// after the crossing, raw or symbolized) as the header says. events_lost_now: the ring's lost()
// when `now` was captured. False (and *out empty) when the rebuild cannot be shown exact.
bool live_set_at_crossing(const snapshot::Snapshot &now, const Crossing &c, uint64_t events_lost_now,
                          std::vector<snapshot::Allocation> *out);

} // namespace vramtrace::triggers
