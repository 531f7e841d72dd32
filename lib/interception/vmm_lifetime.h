// The lifetime of VMM memory as both backends (the preload hooks, the CUPTI callbacks) apply it:
// split around the real call like a free, "before" takes out of the table the records the call
// ends if it succeeds, "after" settles them (accounted as freed, or put back when the call failed)
// and updates the handle's references and mappings (tracking/vmm_ledger.h).
#pragma once

#include <cstdint>
#include <vector>

#include "core/tracker.h"

namespace vramtrace {

// cuMemRelease(handle): the handle's record, when this release leaves no reference and no mapping.
std::vector<AllocationRecord> vmm_before_release(Tracker &t, uint64_t handle);
void vmm_after_release(Tracker &t, uint64_t handle, const std::vector<AllocationRecord> &taken, bool succeeded);

// cuMemUnmap(ptr, size): the mappings inside the range (the one at ptr and those back to back after
// it, as the driver requires of one call; else every mapping record starting inside), and the
// record of each handle that loses its last mapping with no reference left.
std::vector<AllocationRecord> vmm_before_unmap(Tracker &t, uint64_t ptr, uint64_t size);
void vmm_after_unmap(Tracker &t, const std::vector<AllocationRecord> &taken, bool succeeded);

// cuMemMap(ptr, size, ..., handle) succeeded: one more mapping of the handle; an imported handle
// (recorded with size 0: the exporter's size is not known to the importer) takes the mapping's size.
void vmm_after_map(Tracker &t, uint64_t handle, uint64_t size);

} // namespace vramtrace
