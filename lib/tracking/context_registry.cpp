#include "tracking/context_registry.h"

namespace vramtrace {
namespace {
// Registries made in this process so far (a forked child starts a new one): each starts its epoch in
// its own range, so a per-thread cache filled from an earlier registry never matches a later one.
std::atomic<uint64_t> g_registries{0};
} // namespace

ContextRegistry::ContextRegistry()
    : epoch_((g_registries.fetch_add(1, std::memory_order_relaxed) + 1) << 40) {}

uint16_t ContextRegistry::add(uint64_t handle, int device, bool created) {
    // Claimed only below the capacity: a full registry stays full without its counter moving on.
    uint32_t i = used_.load(std::memory_order_relaxed);
    do {
        if (i >= kCapacity) return 0;
    } while (!used_.compare_exchange_weak(i, i + 1, std::memory_order_acq_rel, std::memory_order_relaxed));
    Entry &e = entries_[i];
    e.handle.store(handle, std::memory_order_relaxed);
    e.device.store(static_cast<int16_t>(device), std::memory_order_relaxed);
    e.created.store(created ? 1 : 0, std::memory_order_relaxed);
    e.state.store(kCurrent, std::memory_order_release);
    return uint16_t(i + 1);
}

uint16_t ContextRegistry::id_for(uint64_t handle, int device, bool created) {
    if (handle == 0) return 0;
    if (!created) {
        uint32_t n = used();
        for (uint32_t i = 0; i < n; ++i)
            if (state(i) == kCurrent && entries_[i].handle.load(std::memory_order_relaxed) == handle)
                return uint16_t(i + 1);
    }
    return add(handle, device, created);
}

void ContextRegistry::supersede(const uint16_t *ids, uint32_t count) {
    for (uint32_t k = 0; k < count; ++k) {
        uint16_t id = ids[k];
        if (id == 0 || id > used()) continue;
        Entry &e = entries_[id - 1];
        uint8_t expected = kCurrent;
        if (!e.state.compare_exchange_strong(expected, kSuperseded, std::memory_order_acq_rel)) continue;
        add(e.handle.load(std::memory_order_relaxed), e.device.load(std::memory_order_relaxed),
            e.created.load(std::memory_order_relaxed) != 0);
    }
    epoch_.fetch_add(1, std::memory_order_acq_rel);
}

void ContextRegistry::retire(uint16_t id) {
    if (id == 0 || id > used()) return;
    entries_[id - 1].state.store(kRetired, std::memory_order_release);
    epoch_.fetch_add(1, std::memory_order_acq_rel);
}

int ContextRegistry::device_of(uint16_t id) const {
    if (id == 0 || id > used()) return -2;
    return entries_[id - 1].device.load(std::memory_order_relaxed);
}

uint64_t ContextRegistry::handle_of(uint16_t id) const {
    if (id == 0 || id > used()) return 0;
    return entries_[id - 1].handle.load(std::memory_order_relaxed);
}

bool ContextRegistry::is_created(uint16_t id) const {
    if (id == 0 || id > used()) return false;
    return entries_[id - 1].created.load(std::memory_order_relaxed) != 0;
}

} // namespace vramtrace
