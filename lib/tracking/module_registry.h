// The module registry: every shared object that was loaded while a new stack was interned, kept for
// the life of the process, so that frames of a library dlclose'd before the dump can still be named
// (from its file on disk, by path and load base).
//
// Why: at dump time the symbolizer reads the module map with dl_iterate_phdr, which lists only the
// objects loaded *now*. A stack captured inside a plugin that was unloaded since would otherwise
// resolve to no module at all.
//
// When it is refreshed: only after the stack depot interned a new stack (rare: a program has a few
// hundred to a few thousand distinct allocation stacks), and then only when the dynamic linker's
// load/unload counters (dlpi_adds/dlpi_subs) moved since the last refresh. Checking the counters is
// one dl_iterate_phdr call that stops at the first object. A refresh walks every loaded object and
// appends those not registered yet (same path and load base). Frames of a stack interned while an
// object is loaded therefore always find it registered: the counters moved when it was loaded, and
// the refresh runs after the stack was captured, before the hook returns.
//
// Cost and safety: no malloc (entries live in an mmap'd arena, never freed: they must outlive
// static destructors, as all tracker memory), no lock of vramtrace's held while the dynamic
// linker's lock is taken except the registry's own mutex, which nothing else takes and whose holder
// calls nothing that could enter a CUDA hook. dl_iterate_phdr takes the dynamic linker's (recursive)
// list lock briefly, exactly as the stack unwinder already does for every frame it unwinds.
//
// Address reuse: after a dlclose another object may be mapped at the same addresses. The registry
// keeps both; the symbolizer prefers the object loaded at dump time, and among unloaded objects the
// most recently registered one (see docs/reliability.md).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <pthread.h>

#include "tracking/elf_notes.h" // gnu_build_id_in_notes
#include "tracking/raw_memory.h"

namespace vramtrace {

struct RegisteredSegment {
    uint64_t begin = 0;      // absolute address, inclusive
    uint64_t end = 0;        // exclusive
    bool executable = false; // PF_X
};

// One object as it was loaded. Immutable once published.
struct RegisteredModule {
    const RegisteredModule *older = nullptr; // the entry registered before this one
    uint64_t base = 0;                       // dlpi_addr: address = base + ELF virtual address
    const char *path = nullptr;              // NUL-terminated, as the dynamic linker named it
    const RegisteredSegment *segments = nullptr; // PT_LOAD segments, program-header order
    uint32_t segment_count = 0;
    uint32_t sequence = 0;                   // 1, 2, ...: order of registration
    uint8_t build_id[64] = {};               // raw NT_GNU_BUILD_ID bytes
    uint8_t build_id_length = 0;             // 0: none found
};

class ModuleRegistry {
public:
    ModuleRegistry();
    ModuleRegistry(const ModuleRegistry &) = delete;
    ModuleRegistry &operator=(const ModuleRegistry &) = delete;

    // After a new stack was interned: refreshes when the dynamic linker loaded or unloaded anything
    // since the last refresh. Never blocks on anything but the registry's own mutex and the
    // dynamic linker's list lock.
    void note_new_stack();

    // Registers every loaded object not registered yet (skipping the main executable and the vDSO,
    // which never unload). Returns the number of objects added.
    uint32_t refresh();

    // The newest entry; follow `older` for the rest. nullptr when none.
    const RegisteredModule *newest() const { return head_.load(std::memory_order_acquire); }
    uint32_t size() const { return count_.load(std::memory_order_acquire); }
    uint64_t refreshes() const { return refreshes_.load(std::memory_order_relaxed); }
    uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); } // objects not stored (no memory)

    // Internal: called from the dl_iterate_phdr callback.
    struct Walk;

private:
    std::atomic<const RegisteredModule *> head_{nullptr};
    std::atomic<uint32_t> count_{0};
    std::atomic<uint64_t> seen_adds_{0};   // dlpi_adds at the last refresh
    std::atomic<uint64_t> seen_subs_{0};   // dlpi_subs at the last refresh
    std::atomic<uint64_t> refreshes_{0};
    std::atomic<uint64_t> dropped_{0};
    pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER; // serializes refreshes (writers only)
    BumpArena arena_{64u << 10};
};

} // namespace vramtrace
