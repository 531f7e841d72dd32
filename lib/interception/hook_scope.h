// What every allocation and free hook does, in one place:
//   guard -> capture stack -> (free: take the record out of the table) -> real call ->
//   (alloc success: insert / failed free: put the record back) -> return the real result untouched.
// An allocation that fails with out-of-memory is handed to the OOM trigger (lib/triggers/) before
// the hook returns; a successful one may cross the VRAMTRACE_WARN_BYTES threshold (docs/triggers.md).
// errno is what the real call left. Nothing here holds a lock while the real function runs.
#pragma once

#include <cerrno>

#include "core/clock.h"
#include "core/config.h"
#include "core/hot_flags.h"
#include "core/recording_backend.h"
#include "core/tracker.h"
#include "core/thread_state.h"
#include "device/current_context.h"
#include "device/device_choice.h"
#include "device/real_functions.h"
#include "interception/call_stack.h"
#include "interception/hook_table.h"
#include "triggers/hook_triggers.h"
#include "triggers/oom_request_size.h"

namespace vramtrace {

// tracker_for's own checks, for when the hooks' word does not say the layer records.
inline Tracker *tracker_for_slow(Reach reach) {
    if (!preload_hooks_record()) return nullptr; // the CUPTI backend records (core/recording_backend.h)
    if (reach == Reach::Export && !config().hook_exports) return nullptr;
    Tracker *t = tracker();
    if (t != nullptr) refresh_recording_bits();
    return t;
}

// Whether a hook reached this way should record: the layer's switch is on, tracking is ready, and
// this thread is not already inside another intercepted call (the outermost API is the one recorded).
// Once all three hold, the hooks' word says so (core/hot_flags.h).
inline Tracker *tracker_for(Reach reach) {
    if (ReentrancyGuard::inside()) return nullptr;
    const uint64_t bit = reach == Reach::Export ? hot::kRecordExport : hot::kRecordHandout;
    if ((hot::word() & bit) != 0) return ready_tracker();
    return tracker_for_slow(reach);
}

struct AllocRequest {
    ApiId api;
    MemoryKind kind;
    uint64_t stream;
    // The bytes asked for when the call fails (triggers/oom_request_size.h); kRequestFromSize: the
    // row's size expression, which then reads only arguments.
    uint64_t failed_request = triggers::kRequestFromSize;
};

// The driver's answer (cuStreamGetCaptureInfo_v3, else _v2, else cuStreamIsCapturing) to whether
// `stream` is being captured now; *graph = the capture's graph (0 when only cuStreamIsCapturing
// answered). Stream 0 is the per-thread stream when per_thread, else the legacy stream (never
// captured). errno is left as it was. Callers ask only while a capture may be active: it costs a
// driver call.
bool driver_stream_capturing(uint64_t stream, bool per_thread, uint64_t *graph);

// Whether `api` allocates from a stream-ordered pool: such memory outlives a context teardown.
bool allocates_from_pool(ApiId api);

// Stores a new record; nothing is stored for a zero address. Memory that a context teardown frees
// (ended_by_context_teardown, not from a pool) is owned by the calling thread's current context.
// Returns what record_allocation returns (the device's tracked bytes after it, 0: not counted).
uint64_t record_new(Tracker &t, const AllocRequest &req, uint64_t address, uint64_t size, int device,
                uint32_t stack);

// One allocation hook's work around the real call, in order: the constructor enters (the guard,
// the caller's stack, errno as the caller left it), after_call() keeps what the real call left,
// finish() hands the one record (or the out-of-memory request) to the tracker and gives errno back.
// A hook fills the record's fields itself between after_call() and finish(), so nothing here
// reaches back into the hook.
class AllocScope {
public:
    explicit AllocScope(Tracker &t) : t_(noted(t)), errno_(&errno) {
        int saved_errno = *errno_;
        stack_ = capture_and_intern_stack(t_, this_frame());
        *errno_ = saved_errno;
    }
    AllocScope(const AllocScope &) = delete;
    AllocScope &operator=(const AllocScope &) = delete;

    void after_call() {
        call_errno_ = *errno_;
        forget_context_read();
    }
    // rc: the real call's result. On success, the record of (address, bytes, device) when address
    // is not 0. On out of memory, bytes is the request and device where it failed: the state is
    // captured here, inside the failing call, before the program sees the result. Returns rc.
    int finish(const AllocRequest &req, int rc, uint64_t address, uint64_t bytes, int device) {
        if (rc == cuda::kSuccess) {
            if (address != 0) {
                uint64_t live_after = record_new(t_, req, address, bytes, device, stack_);
                triggers::after_recorded_alloc(t_, device, bytes, live_after);
            }
        } else if (rc == cuda::kDriverOutOfMemory) {
            static_assert(cuda::kDriverOutOfMemory == cuda::kRuntimeOutOfMemory);
            triggers::OomRequest oom;
            oom.api = static_cast<uint8_t>(req.api);
            oom.requested_bytes = bytes;
            oom.stream = req.stream;
            oom.device = device;
            oom.stack = stack_;
            oom.result = rc;
            triggers::on_allocation_oom(t_, oom);
        }
        *errno_ = call_errno_;
        return rc;
    }

private:
    static Tracker &noted(Tracker &t) {
        note_cuda_seen();
        return t;
    }
    Tracker &t_;
    int *errno_; // this thread's errno, found once
    ReentrancyGuard guard_;
    uint32_t stack_ = 0;
    int call_errno_ = 0;
};

// call: () -> int, the real function with the caller's arguments.
// address, size: () -> uint64_t, evaluated after a successful call (they may read out-parameters).
// device: (uint64_t address) -> int. Out of memory (the same code in both families): nothing was
// allocated, so device(0) falls back to the current context's device (or the VMM properties' /
// host); its result, errno and out-parameters are left as the real call left them.
template <class Call, class Address, class Size, class Device>
int tracked_alloc(Reach reach, const AllocRequest &req, Call &&call, Address &&address, Size &&size,
                  Device &&device) {
    Tracker *t = tracker_for(reach);
    if (t == nullptr) return call();
    AllocScope scope(*t);
    int rc = call();
    scope.after_call();
    uint64_t ptr = 0, bytes = 0;
    int dev = kUnknownDevice;
    if (rc == cuda::kSuccess) {
        ptr = address();
        if (ptr != 0) {
            dev = device(ptr);
            bytes = size();
        }
    } else if (rc == cuda::kDriverOutOfMemory) {
        bytes = req.failed_request != triggers::kRequestFromSize ? req.failed_request : size();
        dev = device(0);
    }
    return scope.finish(req, rc, ptr, bytes, dev);
}

template <class Call, class Address, class Size>
int tracked_alloc(Reach reach, const AllocRequest &req, Call &&call, Address &&address, Size &&size) {
    return tracked_alloc(reach, req, call, address, size,
                         [&](uint64_t ptr) { return device_holding(req.kind, ptr); });
}

// The record is taken out before the real free so that another thread that gets the same address
// back from the driver right after can insert it; it is put back if the real free fails. A pointer
// we never saw (or 0) goes to the driver untouched, and its result comes back untouched.
// tracked_free once the hook knows it records (t) and address is not 0.
template <class Call> int tracked_free_in(Tracker &t, uint64_t address, Call &&call) {
    note_cuda_seen();
    ReentrancyGuard guard;
    AllocationRecord record;
    bool known = take_allocation(t, address, &record);
    int rc = call();
    if (known) {
        int *e = &errno;
        int call_errno = *e;
        if (rc == cuda::kSuccess) account_free(t, record);
        else restore_allocation(t, record);
        *e = call_errno;
    }
    return rc;
}

template <class Call> int tracked_free(Reach reach, uint64_t address, Call &&call) {
    Tracker *t = address != 0 ? tracker_for(reach) : nullptr;
    if (t == nullptr) return call();
    return tracked_free_in(*t, address, call);
}

} // namespace vramtrace
