// The device of a created stream, remembered per thread lane (tracking/thread_lanes.h), so that a
// stream-ordered allocation makes no driver call of vramtrace's own once its stream has been asked
// about (cuStreamGetDevice costs 18-35 ns on the H200, and at 16 threads that much work between a
// program's driver calls costs 4-7% of its pair; docs/performance.md).
//
// A stream stays on the device it was created on, but a destroyed stream's handle can come back
// for a stream of another device. So every call that can destroy streams (cuStreamDestroy*, the
// context destroys, resets and releases, cuGreenCtxDestroy) forgets every lane's answers, and while
// such a call is in flight nothing remembered is used: an answer is used only when no destruction
// began since it was asked. Answers are remembered only while the preload hooks record and every
// interposition layer is on (VRAMTRACE_HOOK_*); otherwise a destruction could pass unseen, and each
// allocation asks the driver as before.
#pragma once

#include <cstdint>

namespace vramtrace {

using StreamDeviceQuery = int (*)(uint64_t stream);

// The device ordinal of `stream` (a created stream: not 0, legacy or per-thread): this lane's
// remembered answer, else ask(stream), remembered unless it is kUnknownDevice. The shared lane
// remembers nothing.
int remembered_stream_device(uint64_t stream, StreamDeviceQuery ask);

// Brackets the real call of a hook that can destroy streams: from construction to destruction no
// remembered answer is used, and answers asked before it are never used again.
class StreamsEnding {
public:
    StreamsEnding();
    ~StreamsEnding();
    StreamsEnding(const StreamsEnding &) = delete;
    StreamsEnding &operator=(const StreamsEnding &) = delete;
};

} // namespace vramtrace
