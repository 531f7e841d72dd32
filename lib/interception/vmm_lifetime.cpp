#include "interception/vmm_lifetime.h"

#include "triggers/hook_triggers.h"

namespace vramtrace {
namespace {

void settle(Tracker &t, const AllocationRecord &r, bool succeeded) {
    if (!succeeded) {
        restore_allocation(t, r);
        return;
    }
    account_free(t, r);
}

} // namespace

std::vector<AllocationRecord> vmm_before_release(Tracker &t, uint64_t handle) {
    std::vector<AllocationRecord> taken;
    AllocationRecord r;
    if (t.vmm.begin(handle, 1, 0) && take_allocation(t, handle, &r)) taken.push_back(r);
    return taken;
}

void vmm_after_release(Tracker &t, uint64_t handle, const std::vector<AllocationRecord> &taken, bool succeeded) {
    t.vmm.end(handle, 1, 0, succeeded);
    for (const AllocationRecord &r : taken) settle(t, r, succeeded);
}

std::vector<AllocationRecord> vmm_before_unmap(Tracker &t, uint64_t ptr, uint64_t size) {
    std::vector<AllocationRecord> mappings;
    uint64_t at = ptr;
    AllocationRecord r;
    while (at < ptr + size && t.table.find(at, &r) && r.kind == MemoryKind::VmmMapping && r.size != 0) {
        if (take_allocation(t, at, &r)) mappings.push_back(r);
        at += r.size;
    }
    if (at < ptr + size) {
        std::vector<uint64_t> more;
        t.table.for_each([&](const AllocationRecord &m) {
            if (m.kind == MemoryKind::VmmMapping && m.address >= at && m.address < ptr + size) more.push_back(m.address);
        });
        for (uint64_t a : more)
            if (take_allocation(t, a, &r)) mappings.push_back(r);
    }
    // Each handle's mappings in the range are taken from its counts at once; the handle left with
    // nothing is freed by this call (its record is taken out too).
    std::vector<AllocationRecord> taken = mappings;
    for (size_t i = 0; i < mappings.size(); ++i) {
        const uint64_t handle = mappings[i].stream;
        bool first = true;
        int unmaps = 0;
        for (size_t j = 0; j < mappings.size(); ++j) {
            if (mappings[j].stream != handle) continue;
            first = first && j >= i;
            ++unmaps;
        }
        if (first && t.vmm.begin(handle, 0, unmaps) && take_allocation(t, handle, &r)) taken.push_back(r);
    }
    return taken;
}

void vmm_after_unmap(Tracker &t, const std::vector<AllocationRecord> &taken, bool succeeded) {
    // One end() per handle, with the number of its mappings this call unmapped (as begun).
    for (size_t i = 0; i < taken.size(); ++i) {
        if (taken[i].kind != MemoryKind::VmmMapping) continue;
        bool first = true;
        int unmaps = 0;
        for (size_t j = 0; j < taken.size(); ++j) {
            if (taken[j].kind != MemoryKind::VmmMapping || taken[j].stream != taken[i].stream) continue;
            first = first && j >= i;
            ++unmaps;
        }
        if (first) t.vmm.end(taken[i].stream, 0, unmaps, succeeded);
    }
    for (const AllocationRecord &r : taken) settle(t, r, succeeded);
}

void vmm_after_map(Tracker &t, uint64_t handle, uint64_t size) {
    t.vmm.mapped(handle);
    AllocationRecord imp;
    if (t.table.find(handle, &imp) && imp.kind == MemoryKind::VmmImported && imp.size == 0 &&
        take_allocation(t, handle, &imp)) {
        imp.size = size;
        restore_allocation(t, imp);
    }
}

} // namespace vramtrace
