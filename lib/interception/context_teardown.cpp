#include "interception/context_teardown.h"

#include <algorithm>
#include <unordered_map>

#include "core/clock.h"
#include "triggers/hook_triggers.h"

namespace vramtrace {

std::vector<uint16_t> live_context_ids(const Tracker &t, uint64_t handle) {
    std::vector<uint16_t> ids;
    t.contexts.for_each_live_id(handle, [&](uint16_t id) { ids.push_back(id); });
    return ids;
}

std::vector<uint16_t> live_primary_ids(const Tracker &t, int device) {
    std::vector<uint16_t> ids;
    t.contexts.for_each_live_primary(device, [&](uint16_t id) { ids.push_back(id); });
    return ids;
}

std::vector<AllocationRecord> take_context_records(Tracker &t, const std::vector<uint16_t> &ids) {
    std::vector<AllocationRecord> taken;
    if (ids.empty()) return taken;
    t.table.take_matching(
        [&](const AllocationRecord &r) {
            return r.context != 0 && std::find(ids.begin(), ids.end(), r.context) != ids.end();
        },
        &taken);
    return taken;
}

void restore_context_records(Tracker &t, const std::vector<AllocationRecord> &records) {
    for (const AllocationRecord &r : records) restore_allocation(t, r);
}

void end_context_records(Tracker &t, const std::vector<AllocationRecord> &records,
                         const std::vector<uint16_t> &ids, TeardownCause cause, uint8_t api, int device) {
    TeardownRecord log;
    log.time_ns = monotonic_ns();
    log.api = api;
    log.cause = cause;
    log.device = static_cast<int16_t>(device);
    log.context = ids.empty() ? 0 : ids.front();
    log.handle = ids.empty() ? 0 : t.contexts.handle_of(ids.front());
    std::unordered_map<uint32_t, TeardownRecord::Site> by_stack;
    for (const AllocationRecord &r : records) {
        account_free(t, r, cause);
        TeardownRecord::Site &s = by_stack[r.stack_id];
        s.stack = r.stack_id;
        ++s.count;
        ++log.ended_count;
        if (counts_toward_device(r.kind)) {
            s.bytes += r.size;
            (r.device == kHostDevice ? log.ended_host_bytes : log.ended_bytes) += r.size;
        }
    }
    std::vector<TeardownRecord::Site> sites;
    sites.reserve(by_stack.size());
    for (const auto &[stack, site] : by_stack) sites.push_back(site);
    std::sort(sites.begin(), sites.end(), [](const TeardownRecord::Site &a, const TeardownRecord::Site &b) {
        if (a.bytes != b.bytes) return a.bytes > b.bytes;
        if (a.count != b.count) return a.count > b.count;
        return a.stack < b.stack;
    });
    for (const TeardownRecord::Site &s : sites) {
        if (log.site_count < TeardownRecord::kMaxSites) {
            log.sites[log.site_count++] = s;
        } else {
            log.other_bytes += s.bytes;
            log.other_count += s.count;
        }
    }
    t.teardowns.add(log);
    for (uint16_t id : ids) t.contexts.retire(id);
}

} // namespace vramtrace
