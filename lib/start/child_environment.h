// What the programs this process starts inherit from it: with VRAMTRACE_FOLLOW=0 the library takes
// itself out of LD_PRELOAD and NVTX_INJECTION64_PATH, at start, so that the children run untraced.
#pragma once

namespace vramtrace {

// Called once by the library's constructor when config().follow is false.
void stop_following_children();

} // namespace vramtrace
