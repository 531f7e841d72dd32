// One word that every allocation and free hook reads to learn that none of its rare steps is due:
// tracking ready and this layer recording, no stream capture possible, no threshold armed, the
// first CUDA call and the triggers' start behind us, the exit handler registered for the latest
// runtime start, the device's identity asked and its default pool noted. One acquire load (a plain
// load on x86-64) answers what the hooks would otherwise ask in five places.
//
// A set bit says its rare step is not due; a clear bit sends the hook down the step's own path,
// which checks the step's own state (the source of truth) and sets the bit when it finds
// the step done. Whoever makes a step due again changes the step's state first and clears its bit
// after; whoever finds a step done sets the bit first and checks the state after (clearing the bit
// when the step turns out due after all). With read-modify-writes on this one word in between,
// either order of the two leaves the bit clear whenever the step is due.
#pragma once

#include <atomic>
#include <cstdint>

namespace vramtrace::hot {

enum : uint64_t {
    kRecordExport = 1u << 0,     // tracker ready, the preload hooks record, the exports layer is on
    kRecordHandout = 1u << 1,    // tracker ready, the preload hooks record (dlsym, cuGetProcAddress)
    kLayersOn = 1u << 2,         // every interposition layer is on: no capture can begin unseen
    kNoThreshold = 1u << 3,      // VRAMTRACE_WARN_BYTES is off
    kCudaSeen = 1u << 4,         // note_cuda_seen() has run
    kTriggersStarted = 1u << 5,  // the reporter thread and signals are set up
    kExitHandlerCurrent = 1u << 6, // the exit handler is registered after the latest runtime start
    kCaptureShift = 16,          // bits 16..31: stream captures begun and not ended (saturating)
    kCaptureOne = uint64_t{1} << kCaptureShift,
    kCaptureMask = uint64_t{0xffff} << kCaptureShift,
    kDeviceShift = 32,           // bit 32 + d: device d's identity asked (d < 16)
    kPoolShift = 48,             // bit 48 + d: device d's default pool noted (d < 16)
};
constexpr int kDeviceBits = 16;

extern std::atomic<uint64_t> g_word;

inline uint64_t word() { return g_word.load(std::memory_order_acquire); }
inline void set(uint64_t bits) { g_word.fetch_or(bits, std::memory_order_acq_rel); }
inline void clear(uint64_t bits) { g_word.fetch_and(~bits, std::memory_order_acq_rel); }

// Whether a stream capture may be active: one has begun and not ended, or a layer is off (a
// capture may begin through a path the hooks do not see).
inline bool capture_possible(uint64_t w) { return (w & kCaptureMask) != 0 || (w & kLayersOn) == 0; }
inline uint64_t device_bit(int device) {
    return device >= 0 && device < kDeviceBits ? uint64_t{1} << (kDeviceShift + device) : 0;
}
inline uint64_t pool_bit(int device) {
    return device >= 0 && device < kDeviceBits ? uint64_t{1} << (kPoolShift + device) : 0;
}

// A capture began; one ended (never below zero; once saturated the count stays: only slower).
void capture_begun();
void capture_ended();

} // namespace vramtrace::hot
