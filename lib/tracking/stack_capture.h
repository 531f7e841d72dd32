// Captures the calling thread's stack as raw return addresses, innermost first, leaving out the
// frames inside libvramtrace.so itself. Uses LLVM's libunwind (linked statically, all symbols local)
// so it unwinds through code without frame pointers (Debian binaries, framework wheels, libcuda)
// from .eh_frame. Symbolization happens only when a report is written.
#pragma once

#include <cstdint>

namespace vramtrace {

// Writes at most max_depth addresses to out; returns how many.
uint32_t capture_stack(uintptr_t *out, uint32_t max_depth);

// True when address lies inside this library's own image.
bool address_in_self(uintptr_t address);

} // namespace vramtrace
