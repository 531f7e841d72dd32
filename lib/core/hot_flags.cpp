// The hooks' word of rare steps not due (hot_flags.h).
#include "core/hot_flags.h"

namespace vramtrace::hot {

constinit std::atomic<uint64_t> g_word{0};

void capture_begun() {
    uint64_t w = g_word.load(std::memory_order_relaxed);
    while ((w & kCaptureMask) != kCaptureMask &&
           !g_word.compare_exchange_weak(w, w + kCaptureOne, std::memory_order_acq_rel)) {
    }
}

void capture_ended() {
    uint64_t w = g_word.load(std::memory_order_relaxed);
    while ((w & kCaptureMask) != 0 && (w & kCaptureMask) != kCaptureMask &&
           !g_word.compare_exchange_weak(w, w - kCaptureOne, std::memory_order_acq_rel)) {
    }
}

} // namespace vramtrace::hot
