// A fixed-size map from another library's handles (CUPTI's NVTX domain, string and range handles:
// nvtx_calls.h) to our ids. Inserts and look-ups take no lock; a handle is inserted once, when CUPTI
// reports it, before any call can name it. Full: the insert is refused (the handle then counts as
// unknown). Storage is static and never freed, as for every NVTX table.
#pragma once

#include <atomic>
#include <cstdint>

namespace vramtrace::nvtx {

template <uint32_t Slots> class HandleMap {
public:
    // Maps `key` (never 0) to `value` (never 0); a key already present gets the new value.
    bool put(uint64_t key, uint64_t value) {
        if (key == 0 || value == 0) return false;
        for (uint32_t n = 0, i = slot(key); n < Slots; ++n, i = (i + 1) % Slots) {
            uint64_t k = keys_[i].load(std::memory_order_acquire);
            if (k == 0 && keys_[i].compare_exchange_strong(k, key, std::memory_order_acq_rel)) k = key;
            if (k == key) {
                values_[i].store(value, std::memory_order_release);
                return true;
            }
        }
        return false;
    }
    // The value of `key`, 0 when it is not in the map.
    uint64_t get(uint64_t key) const {
        if (key == 0) return 0;
        for (uint32_t n = 0, i = slot(key); n < Slots; ++n, i = (i + 1) % Slots) {
            uint64_t k = keys_[i].load(std::memory_order_acquire);
            if (k == 0) return 0;
            if (k == key) return values_[i].load(std::memory_order_acquire);
        }
        return 0;
    }

private:
    static uint32_t slot(uint64_t key) {
        key *= 0x9e3779b97f4a7c15ull;
        return static_cast<uint32_t>(key >> 32) % Slots;
    }
    std::atomic<uint64_t> keys_[Slots] = {};
    std::atomic<uint64_t> values_[Slots] = {};
};

} // namespace vramtrace::nvtx
