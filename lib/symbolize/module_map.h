// The module map: which ELF objects are loaded in this process, where, and with which GNU build id.
//
// read_loaded_modules() walks dl_iterate_phdr and reads everything it reports from memory (program
// headers and PT_NOTE segments); it opens no file except to resolve the main executable's path
// through /proc/self/exe. It takes no lock of vramtrace's own (dl_iterate_phdr takes the dynamic
// linker's list lock briefly, as any dladdr would) and does not use libdw.
//
// Address arithmetic, valid for PIE and non-PIE executables and for shared libraries alike:
//     address = base + ELF virtual address          (base is the link map's l_addr, dlpi_addr)
// so a frame's module_offset (address - base) is the virtual address to look up in the ELF file;
// for a non-PIE executable base is 0 and the offset is the address itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace vramtrace::symbolize {

struct Segment {
    uint64_t begin = 0;      // absolute address in the process, inclusive
    uint64_t end = 0;        // exclusive
    bool executable = false; // PF_X
};

struct LoadedModule {
    std::string path;              // absolute path of the ELF file; the main executable's comes from
                                   // /proc/self/exe; "[vdso]" for the kernel's vDSO
    uint64_t base = 0;             // dlpi_addr (l_addr): address = base + ELF virtual address
    std::vector<Segment> segments; // its PT_LOAD segments as mapped (absolute), program-header order
    std::string build_id;          // lower-case hex of NT_GNU_BUILD_ID, empty when absent
    bool main_executable = false;
    bool vdso = false;
    bool unloaded = false;         // no longer loaded at dump time (dlclose'd): known from the module
                                   // registry (lib/tracking/module_registry.h), read from its file

    bool contains(uint64_t address) const;            // inside any PT_LOAD segment
    bool executable_contains(uint64_t address) const; // inside an executable PT_LOAD segment
};

// Every object dl_iterate_phdr reports (main executable first, then in load order). Objects without
// a PT_LOAD segment are left out. Never throws except std::bad_alloc.
std::vector<LoadedModule> read_loaded_modules();

// The module whose PT_LOAD segments contain address, or nullptr. Linear; for many look-ups build a
// ModuleIndex.
const LoadedModule *find_module(const std::vector<LoadedModule> &modules, uint64_t address);

// Sorted segment table for O(log n) look-ups over a fixed list of modules. Holds no pointer into the
// vector it was built from, only indices.
class ModuleIndex {
public:
    ModuleIndex() = default;
    explicit ModuleIndex(const std::vector<LoadedModule> &modules);
    // Index into the vector given to the constructor, -1 when no segment contains address.
    int find(uint64_t address) const;

private:
    struct Entry {
        uint64_t begin;
        uint64_t end;
        int module;
    };
    std::vector<Entry> entries_; // sorted by begin
};

// A read-only mapping of a whole file (MAP_PRIVATE), unmapped on destruction. Move-only.
class MappedFile {
public:
    MappedFile() = default;
    MappedFile(const MappedFile &) = delete;
    MappedFile &operator=(const MappedFile &) = delete;
    MappedFile(MappedFile &&other) noexcept;
    MappedFile &operator=(MappedFile &&other) noexcept;
    ~MappedFile();

    // Maps the regular file at path (symbolize/regular_file.h: never waits on a FIFO, refuses
    // anything else and files over kMaxElfFileBytes); false, and empty, otherwise or when empty.
    bool open(const char *path);
    // Maps the regular file open on fd (the caller keeps fd); false, and empty, as above.
    bool map(int fd);
    void reset();
    const uint8_t *data() const { return data_; }
    size_t size() const { return size_; }
    bool empty() const { return data_ == nullptr; }

private:
    const uint8_t *data_ = nullptr;
    size_t size_ = 0;
};

// GNU build id (lower-case hex) found in a buffer of ELF notes, empty when none. align is the note
// alignment of the segment or section holding them (4 or 8; anything else is taken as 4).
std::string build_id_from_notes(const void *notes, size_t size, size_t align);

// GNU build id of an ELF image (a whole file, mapped): PT_NOTE segments, then SHT_NOTE sections.
std::string build_id_from_elf_image(const uint8_t *data, size_t size);

// GNU build id of an ELF file on disk (PT_NOTE segments, then SHT_NOTE sections); empty when the file
// cannot be read, is not a 64-bit native ELF, or carries no build id.
std::string read_build_id_from_file(const std::string &path);

// PT_LOAD segments of an ELF file on disk, placed at base (for a module known only by path and base,
// e.g. from a snapshot). Returns false when the file cannot be read.
bool segments_from_file(const std::string &path, uint64_t base, std::vector<Segment> &out);

} // namespace vramtrace::symbolize
