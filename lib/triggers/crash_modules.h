// The module map of this process as a crash handler can build it: from /proc/self/maps read with
// read(2), and the ELF headers of each loaded object read from its own mapping. No malloc, no lock,
// no dl_iterate_phdr or dladdr (neither is async-signal-safe: both take the dynamic linker's lock,
// which the crashing thread may hold). The ordinary module map (lib/symbolize/module_map.h) is for
// dump time.
//
// Which mappings are modules: a readable mapping of a file at file offset 0 that starts with a
// 64-bit ELF header whose program headers lie inside that mapping, and whose first PT_LOAD covers
// file offset 0; kept only when the same file also has an executable mapping inside the object's
// span (so an ELF file mapped as data is not taken for a loaded library). A mapping is read only once
// an executable mapping of the same file (device and inode) follows it in /proc/self/maps, or when
// it is executable itself, so the bytes of a mapping of a file that the process never maps
// executable are not touched (such a read can fault: a file truncated after it was mapped, or
// ThreadSanitizer's "tsan.rodata" mappings inside its shadow memory; docs/reliability.md). A data
// mapping of a file that is also loaded as a library can still be read. Load base, as everywhere
// in vramtrace (address = base + ELF virtual address):
//     base = mapping start - page_down(p_vaddr of the lowest PT_LOAD)
// The GNU build id is read from PT_NOTE segments that lie inside the offset-0 mapping.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tracking/module_registry.h"

namespace vramtrace::crash {

struct CrashModule {
    uint64_t base = 0;             // address = base + ELF virtual address
    uint64_t begin = 0, end = 0;   // span of its PT_LOAD segments (absolute)
    uint64_t device = 0, inode = 0;
    uint32_t path_offset = 0;      // into ModuleTable::paths
    uint32_t path_length = 0;
    uint8_t build_id[64] = {};
    uint8_t build_id_length = 0;
    bool executable = false;       // an executable mapping of the same file lies inside the span
    int32_t output_index = -1;     // position in the snapshot's modules[] (-1: not referenced)
};

// Storage provided by the caller (an mmap'd arena: nothing here allocates).
struct ModuleTable {
    CrashModule *modules = nullptr;
    uint32_t capacity = 0;
    uint32_t count = 0;
    char *paths = nullptr;         // path bytes, not NUL-terminated
    uint32_t paths_capacity = 0;
    uint32_t paths_used = 0;
};

// Fills `table` from /proc/self/maps, in ascending address order, then drops the objects without an
// executable mapping. `scratch` (at least 8 KiB) is the read buffer. Returns false when
// /proc/self/maps cannot be read (the table is then empty). Objects beyond the table's capacity
// are left out.
bool read_crash_modules(ModuleTable &table, char *scratch, size_t scratch_bytes, uint64_t page_size);

// Copies memory that may not be there any more without faulting: through a pipe, so that an
// unmapped page, or a file page past the end of its file, fails the copy (EFAULT from the kernel)
// instead of raising SIGSEGV or SIGBUS. Async-signal-safe (pipe2, write, read, close). When no pipe
// can be made (no descriptor left), copy() reads directly, as the module map did before.
class MemoryProbe {
public:
    static constexpr size_t kMaxCopy = 4096; // at most this much per copy (within a pipe's buffer)
    MemoryProbe();
    ~MemoryProbe();
    MemoryProbe(const MemoryProbe &) = delete;
    MemoryProbe &operator=(const MemoryProbe &) = delete;
    bool copy(void *dst, uint64_t src, size_t n) const; // false: not all n bytes are readable
    bool has_pipe() const { return fds_[0] >= 0; }

private:
    int fds_[2] = {-1, -1};
};

// Adds the module registry's objects (lib/tracking/module_registry.h; `newest`, then each `older`)
// whose span no module of the table overlaps: libraries dlclose'd before the crash, so that frames
// captured in them keep a module (path, load base, build id as registered) and the CLI can name
// them from the file on disk. An object still loaded overlaps its own entry from /proc/self/maps
// and is not added twice; where addresses were reused, the object loaded now wins, then the most
// recently registered one (as at dump time). Keeps the table in ascending order of begin. Reads the
// registry's published, immutable entries only (no lock, no allocation). Objects beyond the
// table's capacity are left out; returns the number added.
uint32_t add_unloaded_modules(ModuleTable &table, const RegisteredModule *newest);

// Index of the module whose span contains address, -1 when none (binary search: the table is in
// ascending order of begin).
int find_crash_module(const ModuleTable &table, uint64_t address);

} // namespace vramtrace::crash
