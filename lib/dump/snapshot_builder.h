// Builds the snapshot model from the live tracker, in two steps (so that a trigger can capture inside
// a hook, on the allocating thread, and leave the slow part to another thread):
//   capture_snapshot   copies the live table, the counters, each device's peak composition, the
//                      event history and every stack they reference, with raw addresses only. No
//                      symbolization, no file I/O beyond /proc reads, no CUDA call. It allocates
//                      with the host's malloc (never call it inside a signal handler).
//   symbolize_snapshot fills modules and frame names and call sites (may be slow: ELF and DWARF
//                      reads), and sets process.symbolized.
// build_snapshot does both.
#pragma once

#include <string>

#include "core/tracker.h"
#include "snapshot/snapshot_model.h"

namespace vramtrace {

snapshot::Snapshot capture_snapshot(Tracker &tracker, const char *reason);
// Walks the event history again into a captured (not yet symbolized) snapshot, with the stacks
// its new events reference. The live table and the history are copied one after the other, so an
// allocation or free in flight between the two copies can be in the table copy and not yet in the
// history; a later walk holds its event (the threshold warning's rebuild, lib/triggers/
// crossing_live_set.h, needs every event whose table change the copy saw).
void recapture_events(const Tracker &tracker, snapshot::Snapshot &snapshot);
void symbolize_snapshot(snapshot::Snapshot &snapshot);
snapshot::Snapshot build_snapshot(Tracker &tracker, const char *reason);

} // namespace vramtrace
