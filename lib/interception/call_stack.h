// The call stack a hook records: the native frames above the hook, with the Python frames of a
// thread that holds the GIL in place of the interpreter's own, interned in the tracker's depot.
#pragma once

#include <cstdint>

#include "core/tracker.h"
#include "tracking/stack_capture.h"

namespace vramtrace {

// The id of the calling thread's stack in t.depot (0: no stack, or none could be stored), walked
// from `start` (a live frame of the hook: this_frame()), or from the caller of this function.
uint32_t capture_and_intern_stack(Tracker &t, const StartFrame &start);
uint32_t capture_and_intern_stack(Tracker &t);

} // namespace vramtrace
