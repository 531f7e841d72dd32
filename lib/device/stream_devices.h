// The device of a user stream, remembered per thread lane so that a stream-ordered allocation does not
// ask the driver (cuStreamGetDevice) every time: a stream's device is fixed when the stream is
// created, so the answer can only change when a handle is reused for a new stream.
//
// Every stream creation and destruction that goes through the hooks (cuStreamCreate*,
// cuStreamDestroy*, and cudart's stream calls, which reach those through cuGetProcAddress) calls
// streams_changed(), which moves a process-wide generation on; a lane's remembered answers are
// of one generation and are dropped when it has moved. A new stream's first stream-ordered
// allocation comes after its creation returned, so it never meets an answer about an earlier
// stream at the same handle.
#pragma once

#include <cstdint>

namespace vramtrace {

// The device ordinal of `stream` (not the NULL, legacy or per-thread stream): the thread's
// remembered answer of this generation, else cuStreamGetDevice's (remembered when it succeeds);
// kUnknownDevice when the driver does not know the stream or lacks the call.
int remembered_stream_device(uint64_t stream);

// A stream was created or destroyed: answers remembered before are not used again. One atomic
// increment; callable from any thread, never inside a signal handler's fast path.
void streams_changed();

// Whether every stream creation is seen: not while the CUPTI backend records (the preload hooks
// may not be in the call path) nor when an interposition layer is switched off
// (VRAMTRACE_HOOK_*=0): then a stream can be created without streams_changed(), and every
// allocation asks the driver.
bool stream_answers_reusable();

} // namespace vramtrace
