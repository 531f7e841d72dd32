// The lifetime of VMM physical allocations (cuMemCreate, cuMemImportFromShareableHandle): their
// memory lives until the handle is released (cuMemRelease), every reference taken with
// cuMemRetainAllocationHandle is released, and every mapping of it is unmapped (cuMemUnmap), in
// any order. The ledger counts references and mappings per handle; the hooks ask it, before the
// real call, whether that call ends the memory (then the handle's record leaves the table before
// the call, as a free's does, so that a handle value the driver hands out again at once is never
// confused with the old one), and tell it the outcome after.
//
// VMM calls are rare next to allocations (a segment's growth, a communicator's set-up), so a
// short lock is used; it is never held while a CUDA function runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace vramtrace {

class VmmLedger {
public:
    void created(uint64_t handle);                 // one reference, no mapping
    void retained(uint64_t handle);                // +1 reference (known handles only)
    void mapped(uint64_t handle);                  // +1 mapping (known handles only)
    // Whether `releases` more releases and `unmaps` more unmaps of a known handle leave it with no
    // reference and no mapping. false for an unknown handle.
    bool would_end(uint64_t handle, int releases, int unmaps) const;
    // Applies a successful call; returns true when the handle is now gone (and forgets it).
    bool released(uint64_t handle);
    bool unmapped(uint64_t handle);
    bool known(uint64_t handle) const;

private:
    struct Counts {
        int references = 0;
        int mappings = 0;
    };
    bool settle(std::unordered_map<uint64_t, Counts>::iterator it);
    mutable std::mutex mu_;
    std::unordered_map<uint64_t, Counts> handles_;
};

} // namespace vramtrace
