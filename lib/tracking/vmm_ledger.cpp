#include "tracking/vmm_ledger.h"

namespace vramtrace {

void VmmLedger::created(uint64_t handle) {
    std::lock_guard<std::mutex> lock(mu_);
    handles_[handle] = Counts{1, 0};
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

bool VmmLedger::would_end(uint64_t handle, int releases, int unmaps) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = handles_.find(handle);
    if (it == handles_.end()) return false;
    return it->second.references - releases <= 0 && it->second.mappings - unmaps <= 0;
}

bool VmmLedger::settle(std::unordered_map<uint64_t, Counts>::iterator it) {
    if (it->second.references > 0 || it->second.mappings > 0) return false;
    handles_.erase(it);
    return true;
}

bool VmmLedger::released(uint64_t handle) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = handles_.find(handle);
    if (it == handles_.end()) return false;
    if (it->second.references > 0) --it->second.references;
    return settle(it);
}

bool VmmLedger::unmapped(uint64_t handle) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = handles_.find(handle);
    if (it == handles_.end()) return false;
    if (it->second.mappings > 0) --it->second.mappings;
    return settle(it);
}

bool VmmLedger::known(uint64_t handle) const {
    std::lock_guard<std::mutex> lock(mu_);
    return handles_.count(handle) != 0;
}

} // namespace vramtrace
