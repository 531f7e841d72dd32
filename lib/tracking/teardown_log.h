// What was still live when the driver tore a context down (a reset, a destroy, the last release
// of a primary context): the allocations that teardown ended, by call site, as compute-sanitizer
// reports leaks at context teardown. Bounded: the first kMaxTeardowns teardowns are kept, each
// with its kMaxSites heaviest call sites (the rest summed); later ones are only counted.
#pragma once

#include <cstdint>
#include <mutex>

namespace vramtrace {

enum class TeardownCause : uint8_t {
    None = 0,          // not a teardown: the program's own free
    Reset = 1,         // cuDevicePrimaryCtxReset(_v2), which cudaDeviceReset calls
    Destroy = 2,       // cuCtxDestroy(_v2) of a created context
    LastRelease = 3,   // the cuDevicePrimaryCtxRelease(_v2) that left the primary context inactive
};
inline constexpr const char *teardown_cause_name(TeardownCause c) {
    switch (c) {
    case TeardownCause::None: return "";
    case TeardownCause::Reset: return "context_reset";
    case TeardownCause::Destroy: return "context_destroy";
    case TeardownCause::LastRelease: return "context_release";
    }
    return "";
}

struct TeardownRecord {
    static constexpr int kMaxSites = 16;
    struct Site {
        uint32_t stack = 0;   // StackDepot id
        uint64_t bytes = 0;   // counted bytes (counts_toward_device), device and host alike
        uint64_t count = 0;   // allocations, counted or not
    };
    uint64_t time_ns = 0;     // CLOCK_MONOTONIC of the teardown call's return
    uint8_t api = 0;          // ApiId of the teardown call
    TeardownCause cause = TeardownCause::None;
    int16_t device = -2;
    uint16_t context = 0;     // ContextRegistry id (the first, when the handle had several)
    uint64_t handle = 0;      // the CUcontext
    uint64_t ended_count = 0; // allocations ended
    uint64_t ended_bytes = 0; // of them, bytes that counted toward the teardown's device
    uint64_t ended_host_bytes = 0; // and pinned or registered host memory of the context (host)
    uint32_t site_count = 0;  // sites[0, site_count): bytes descending, then count, then stack
    Site sites[kMaxSites];
    uint64_t other_bytes = 0, other_count = 0; // the sites past kMaxSites, summed
};

class TeardownLog {
public:
    static constexpr int kMaxTeardowns = 64;
    void add(const TeardownRecord &r) {
        std::lock_guard<std::mutex> lock(mu_);
        if (count_ < kMaxTeardowns) records_[count_] = r;
        ++count_;
    }
    // Calls fn(const TeardownRecord&) for each kept teardown, oldest first; returns how many
    // teardowns there were in all.
    template <class Fn> uint64_t for_each(Fn &&fn) const {
        std::lock_guard<std::mutex> lock(mu_);
        for (uint64_t i = 0; i < count_ && i < kMaxTeardowns; ++i) fn(records_[i]);
        return count_;
    }

private:
    mutable std::mutex mu_;
    uint64_t count_ = 0;
    TeardownRecord records_[kMaxTeardowns];
};

} // namespace vramtrace
