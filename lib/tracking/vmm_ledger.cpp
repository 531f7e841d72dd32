#include "tracking/vmm_ledger.h"

namespace vramtrace {

void VmmLedger::created(uint64_t handle) {
    std::lock_guard<std::mutex> lock(mu_);
    handles_[handle] = Counts{1, 0, 0};
}

void VmmLedger::retained(uint64_t handle) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = handles_.find(handle);
    if (it != handles_.end()) ++it->second.references;
}

void VmmLedger::mapped(uint64_t handle) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = handles_.find(handle);
    if (it != handles_.end()) ++it->second.mappings;
}

bool VmmLedger::begin(uint64_t handle, int releases, int unmaps, bool *known) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = handles_.find(handle);
    if (known) *known = it != handles_.end();
    if (it == handles_.end()) return false;
    Counts &c = it->second;
    bool had_some = c.references > 0 || c.mappings > 0;
    c.references -= releases;
    c.mappings -= unmaps;
    ++c.in_flight;
    return had_some && c.references <= 0 && c.mappings <= 0;
}

void VmmLedger::end(uint64_t handle, int releases, int unmaps, bool succeeded) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = handles_.find(handle);
    if (it == handles_.end()) return;
    Counts &c = it->second;
    if (!succeeded) {
        c.references += releases;
        c.mappings += unmaps;
    }
    --c.in_flight;
    if (c.in_flight <= 0 && c.references <= 0 && c.mappings <= 0) handles_.erase(it);
}

bool VmmLedger::known(uint64_t handle) const {
    std::lock_guard<std::mutex> lock(mu_);
    return handles_.count(handle) != 0;
}

} // namespace vramtrace
