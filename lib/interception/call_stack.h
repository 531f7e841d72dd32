// The call stack a hook records: the native frames above the hook, with the Python frames of a
// thread that holds the GIL in place of the interpreter's own, interned in the tracker's depot.
#pragma once

#include <cstdint>

#include "core/tracker.h"

namespace vramtrace {

// The id of the calling thread's stack in t.depot (0: no stack, or none could be stored).
uint32_t capture_and_intern_stack(Tracker &t);

} // namespace vramtrace
