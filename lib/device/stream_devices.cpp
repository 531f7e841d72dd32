#include "device/stream_devices.h"

#include <atomic>

#include "core/config.h"
#include "core/recording_backend.h"
#include "device/real_functions.h"
#include "tracking/allocation_record.h"
#include "tracking/thread_lanes.h"

namespace vramtrace {
namespace {

// Starts at 1 so that a thread's zeroed memory (generation 0) is never current.
std::atomic<uint64_t> g_generation{1};

// A few streams per thread lane (tracking/thread_lanes.h): a thread usually allocates on one or
// two. In .bss and indexed by lane, not thread_local: static TLS is scarce when the library is
// dlopen'ed as an injection (CUDA_INJECTION64_PATH), and a stream's device is the same for every
// thread, so a lane that passes to another thread hands on only right answers. The shared lane's
// threads ask the driver every time.
constexpr unsigned kRemembered = 4;
struct alignas(64) Remembered {
    uint64_t generation;
    uint64_t stream[kRemembered];
    int32_t device[kRemembered];
    uint32_t next;
};
Remembered g_remembered[lanes::kLanes];

} // namespace

void streams_changed() { g_generation.fetch_add(1, std::memory_order_acq_rel); }

bool stream_answers_reusable() {
    if (!preload_hooks_record()) return false; // CUPTI records: the stream hooks may not be in the path
    const Config &c = config();
    return c.hook_exports && c.hook_dlsym && c.hook_procaddress;
}

int remembered_stream_device(uint64_t stream) {
    if (!stream_answers_reusable()) return stream_device_ordinal(stream);
    const unsigned lane = lanes::this_thread_lane();
    if (lane >= lanes::kLanes) return stream_device_ordinal(stream);
    Remembered &r = g_remembered[lane];
    const uint64_t now = g_generation.load(std::memory_order_acquire);
    if (r.generation == now) {
        for (unsigned i = 0; i < kRemembered; ++i)
            if (r.stream[i] == stream) return r.device[i];
    } else {
        r = Remembered{};
        r.generation = now;
    }
    const int device = stream_device_ordinal(stream);
    if (device != kUnknownDevice && stream != 0) {
        // Kept only if no stream came or went while the driver answered.
        if (g_generation.load(std::memory_order_acquire) == now) {
            const unsigned slot = r.next++ % kRemembered;
            r.stream[slot] = stream;
            r.device[slot] = device;
        }
    }
    return device;
}

} // namespace vramtrace
