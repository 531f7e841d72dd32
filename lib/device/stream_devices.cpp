#include "device/stream_devices.h"

#include <atomic>

#include "core/config.h"
#include "core/recording_backend.h"
#include "tracking/allocation_record.h"
#include "tracking/thread_lanes.h"

namespace vramtrace {
namespace {

// Low 16 bits: stream-destroying calls in flight. Above: how many have begun or ended. A lane's
// answer carries the whole word as it was read before asking, when nothing was in flight; any
// destruction since then has moved the word, so the answer no longer matches.
constexpr uint64_t kInFlight = 0xffff;
constexpr uint64_t kGeneration = kInFlight + 1;
std::atomic<uint64_t> g_streams_word{kGeneration};

struct Answer {
    uint64_t stream; // 0: empty
    uint64_t word;
    int device;
};
constexpr unsigned kPerLane = 4; // streams a thread allocates on in turn, by handle
Answer g_answers[lanes::kLanes][kPerLane];

bool destructions_all_seen() {
    if (!preload_hooks_record()) return false; // CUPTI records: its process may not run our hooks
    const Config &c = config();
    return c.hook_exports && c.hook_dlsym && c.hook_procaddress;
}

unsigned slot_of(uint64_t stream) { return static_cast<unsigned>((stream >> 4) * 0x9e3779b97f4a7c15ull >> 62); }

} // namespace

int remembered_stream_device(uint64_t stream, StreamDeviceQuery ask) {
    const uint64_t word = g_streams_word.load(std::memory_order_acquire);
    const unsigned lane = lanes::this_thread_lane();
    if ((word & kInFlight) != 0 || lane >= lanes::kLanes || !destructions_all_seen()) return ask(stream);
    Answer &a = g_answers[lane][slot_of(stream)];
    if (a.stream == stream && a.word == word) return a.device;
    const int device = ask(stream);
    if (device != kUnknownDevice) a = {stream, word, device};
    return device;
}

StreamsEnding::StreamsEnding() { g_streams_word.fetch_add(kGeneration + 1, std::memory_order_seq_cst); }
StreamsEnding::~StreamsEnding() { g_streams_word.fetch_add(kGeneration - 1, std::memory_order_seq_cst); }

} // namespace vramtrace
