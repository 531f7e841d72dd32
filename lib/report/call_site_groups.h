// A snapshot's allocations, or weights on its stacks, grouped by call site: the tables of the
// summary, `vramtrace summary`, diff, merge and the exports. Keys and order are the same whichever
// entry point built the groups, so the reports agree on what one call site is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "snapshot/snapshot_model.h"

namespace vramtrace::report {

// Live allocations grouped by the call-site frame of their stack. Frames with file:line group by
// (module path, file, line, function, and the position of each inlined call), so two return addresses on one source line are one call
// site; frames without file:line group by (module path, module offset), or by address when the
// module is unknown. Allocations whose stack is 0 or missing, and those whose stack has no call
// site (every frame inside vramtrace, the CUDA runtime or the driver), form one group each.
struct CallSiteGroup {
    enum class Kind { Frame, NoStack, NoCallSite };
    Kind kind = Kind::Frame;
    int frame = -1;               // index into Snapshot::frames of a representative frame (Frame)
    std::string key;              // unique per group and stable across runs: the tie-break
    std::string location;         // display text (describe_frame, or a parenthesised note)
    uint64_t live_bytes = 0;
    uint64_t live_count = 0;
    std::vector<std::string> apis;                     // ascending, unique
    std::vector<int> devices;                          // ascending, unique
    std::vector<std::pair<uint64_t, uint64_t>> sizes;  // (size, allocations): the most bytes
                                                       // (size x allocations) first, then larger size
};
// Groups the allocations that count_as_held. Sorted by live bytes descending, then live count
// descending, then key ascending.
std::vector<CallSiteGroup> group_live_by_call_site(const snapshot::Snapshot &snapshot);

// For the streaming `vramtrace summary`: live allocations folded by the caller,
// `count` allocations of `size` bytes each made through `stack` on `device` by `api`, all of kinds
// that count as held. `api` must outlive the call.
struct FoldedLive {
    uint32_t stack = 0;
    int device = 0;
    std::string_view api;
    uint64_t size = 0;   // bytes of each
    uint64_t count = 0;
};
// The same groups, keys, order, apis, devices and sizes as group_live_by_call_site gives for the
// allocations that were folded. Takes `folded` by value and frees it early (it can be large).
std::vector<CallSiteGroup> group_folded_by_call_site(const snapshot::Snapshot &snapshot, std::vector<FoldedLive> folded);

// Bytes and allocations attributed to a stack (e.g. DevicePeak::sites).
struct StackWeight {
    uint32_t stack = 0;  // Stack::id; 0 = no stack
    uint64_t bytes = 0;
    uint64_t count = 0;
};
// Groups weighted stacks by call site with the same keys, locations and order as
// group_live_by_call_site (live_bytes/live_count are the summed weights); apis, devices and sizes
// stay empty. With weight_groups: for each weight, the index of its group in the result (one pass,
// for callers that need to know which stacks each group merged).
std::vector<CallSiteGroup> group_by_call_site(const snapshot::Snapshot &snapshot, const std::vector<StackWeight> &weights,
                                              std::vector<size_t> *weight_groups = nullptr);

} // namespace vramtrace::report
