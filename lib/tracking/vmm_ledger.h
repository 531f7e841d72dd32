// The lifetime of VMM physical allocations (cuMemCreate, cuMemImportFromShareableHandle): their
// memory lives until the handle is released (cuMemRelease), every reference taken with
// cuMemRetainAllocationHandle is released, and every mapping of it is unmapped (cuMemUnmap), in
// any order. The ledger counts references and mappings per handle. A release or an unmap is split
// around the real call like a free: begin() applies it to the counts before the call, in one step
// under the lock, and says whether it leaves the handle with nothing (then the handle's record
// leaves the table before the call, so that a handle value the driver hands out again at once is
// never confused with the old one); end() after the call undoes it when the call failed, and
// forgets the handle once nothing is left and no call on it is in flight. So of two threads that
// each remove the last-but-one and the last mapping at once, exactly one is told the memory ends.
//
// VMM calls are rare next to allocations (a segment's growth, a communicator's set-up), so a
// short lock is used; it is never held while a CUDA function runs.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace vramtrace {

class VmmLedger {
public:
    void created(uint64_t handle);   // one reference, no mapping
    void retained(uint64_t handle);  // +1 reference (known handles only)
    void mapped(uint64_t handle);    // +1 mapping (known handles only)
    // Before a cuMemRelease (releases = 1) or a cuMemUnmap of `unmaps` mappings of a known handle:
    // applies them and returns whether the handle is left with no reference and no mapping. false
    // for an unknown handle (*known false then).
    bool begin(uint64_t handle, int releases, int unmaps, bool *known = nullptr);
    // After the call that began(handle, releases, unmaps): `succeeded` false gives them back.
    void end(uint64_t handle, int releases, int unmaps, bool succeeded);
    bool known(uint64_t handle) const;

private:
    struct Counts {
        int references = 0;
        int mappings = 0;
        int in_flight = 0; // begun and not yet ended
    };
    mutable std::mutex mu_;
    std::unordered_map<uint64_t, Counts> handles_;
};

} // namespace vramtrace
