// The Sink of the library: the tracker's table, depot, counters and triggers, used exactly as the
// preload hooks use them (interception/hook_scope.h).
#pragma once

namespace vramtrace::cupti {

class Sink;
Sink *tracker_sink(); // static storage, never destroyed

} // namespace vramtrace::cupti
