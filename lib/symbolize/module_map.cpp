#include "symbolize/module_map.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/elf_symbols.h"
#include "symbolize/regular_file.h"
#include "tracking/elf_notes.h"

namespace vramtrace::symbolize {

// ---------------------------------------------------------------------------------------------
// LoadedModule

bool LoadedModule::contains(uint64_t address) const {
    for (const Segment &s : segments)
        if (address >= s.begin && address < s.end) return true;
    return false;
}

bool LoadedModule::executable_contains(uint64_t address) const {
    for (const Segment &s : segments)
        if (s.executable && address >= s.begin && address < s.end) return true;
    return false;
}

// ---------------------------------------------------------------------------------------------
// MappedFile

MappedFile::MappedFile(MappedFile &&other) noexcept : data_(other.data_), size_(other.size_) {
    other.data_ = nullptr;
    other.size_ = 0;
}

MappedFile &MappedFile::operator=(MappedFile &&other) noexcept {
    if (this != &other) {
        reset();
        data_ = other.data_;
        size_ = other.size_;
        other.data_ = nullptr;
        other.size_ = 0;
    }
    return *this;
}

MappedFile::~MappedFile() { reset(); }

void MappedFile::reset() {
    if (data_) munmap(const_cast<uint8_t *>(data_), size_);
    data_ = nullptr;
    size_ = 0;
}

bool MappedFile::open(const char *path) {
    reset();
    if (!path || !*path) return false;
    // A module's path may be a symlink (a library loaded by its unversioned name).
    int fd = open_regular_file(AT_FDCWD, path, {true, false, kMaxElfFileBytes});
    if (fd < 0) return false;
    bool mapped = map(fd);
    ::close(fd);
    return mapped;
}

bool MappedFile::map(int fd) {
    reset();
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        uint64_t(st.st_size) > kMaxElfFileBytes)
        return false;
    void *p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) return false;
    data_ = static_cast<const uint8_t *>(p);
    size_ = static_cast<size_t>(st.st_size);
    return true;
}

// ---------------------------------------------------------------------------------------------
// Notes

namespace {

void append_hex(std::string &out, const uint8_t *bytes, size_t n) {
    static const char kDigits[] = "0123456789abcdef";
    out.reserve(out.size() + 2 * n);
    for (size_t i = 0; i < n; ++i) {
        out.push_back(kDigits[bytes[i] >> 4]);
        out.push_back(kDigits[bytes[i] & 15]);
    }
}

template <typename T>
const T *table_at(const uint8_t *data, size_t size, uint64_t offset, uint64_t entsize, uint64_t count) {
    if (count == 0 || entsize < sizeof(T) || offset > size) return nullptr;
    if (count > (size - offset) / entsize) return nullptr;
    if (offset % alignof(T) != 0 || entsize % alignof(T) != 0) return nullptr;
    return reinterpret_cast<const T *>(data + offset);
}

// Entry i of a table whose entries lie entsize bytes apart (at least sizeof(T): a later ELF version
// may append members).
template <typename T> const T &table_entry(const T *table, uint64_t entsize, unsigned i) {
    return *reinterpret_cast<const T *>(reinterpret_cast<const uint8_t *>(table) + i * size_t(entsize));
}

// Where a program or section header puts its bytes in the file, and whether they are notes.
struct NoteSpan {
    bool is_note;
    uint64_t offset, size, align;
};
NoteSpan note_span(const Elf64_Phdr &p) { return {p.p_type == PT_NOTE, p.p_offset, p.p_filesz, p.p_align}; }
NoteSpan note_span(const Elf64_Shdr &s) { return {s.sh_type == SHT_NOTE, s.sh_offset, s.sh_size, s.sh_addralign}; }

// The build id in the first note entry of a table of program or section headers that holds one;
// "" when none does.
template <typename T>
std::string build_id_from_note_table(const uint8_t *d, size_t n, uint64_t offset, uint64_t entsize, unsigned count) {
    const T *table = table_at<T>(d, n, offset, entsize, count);
    if (!table) return {};
    for (unsigned i = 0; i < count; ++i) {
        NoteSpan s = note_span(table_entry(table, entsize, i));
        if (!s.is_note || s.offset > n || s.size > n - s.offset) continue;
        std::string id = build_id_from_notes(d + s.offset, s.size, s.align);
        if (!id.empty()) return id;
    }
    return {};
}

} // namespace

std::string build_id_from_notes(const void *notes, size_t size, size_t align) {
    size_t n = 0;
    const uint8_t *id = gnu_build_id_note(notes, size, align, &n); // tracking/elf_notes.h
    std::string hex;
    if (id != nullptr) append_hex(hex, id, n);
    return hex;
}

std::string read_build_id_from_file(const std::string &path) {
    MappedFile f;
    if (!f.open(path.c_str())) return {};
    return build_id_from_elf_image(f.data(), f.size());
}

std::string build_id_from_elf_image(const uint8_t *d, size_t n) {
    const Elf64_Ehdr *eh = elf_header(d, n);
    if (!eh) return {};
    std::string id = build_id_from_note_table<Elf64_Phdr>(d, n, eh->e_phoff, eh->e_phentsize, eh->e_phnum);
    if (!id.empty()) return id;
    // Separate debug files (objcopy --only-keep-debug) keep the note as a section.
    return build_id_from_note_table<Elf64_Shdr>(d, n, eh->e_shoff, eh->e_shentsize, eh->e_shnum);
}

bool segments_from_file(const std::string &path, uint64_t base, std::vector<Segment> &out) {
    MappedFile f;
    if (!f.open(path.c_str())) return false;
    const Elf64_Ehdr *eh = elf_header(f.data(), f.size());
    if (!eh) return false;
    auto *ph = table_at<Elf64_Phdr>(f.data(), f.size(), eh->e_phoff, eh->e_phentsize, eh->e_phnum);
    if (!ph) return false;
    out.clear();
    for (unsigned i = 0; i < eh->e_phnum; ++i) {
        const Elf64_Phdr &p = table_entry(ph, eh->e_phentsize, i);
        if (p.p_type != PT_LOAD || p.p_memsz == 0) continue;
        out.push_back({base + p.p_vaddr, base + p.p_vaddr + p.p_memsz, (p.p_flags & PF_X) != 0});
    }
    return !out.empty();
}

// ---------------------------------------------------------------------------------------------
// dl_iterate_phdr

namespace {

struct IterateState {
    std::vector<LoadedModule> *out;
    uintptr_t main_phdr;
    uintptr_t vdso_ehdr;
    bool failed;
};

int collect_module(struct dl_phdr_info *info, size_t, void *data) {
    auto *st = static_cast<IterateState *>(data);
    try {
        LoadedModule m;
        m.base = info->dlpi_addr;
        for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
            const ElfW(Phdr) &p = info->dlpi_phdr[i];
            if (p.p_type != PT_LOAD || p.p_memsz == 0) continue;
            uint64_t begin = info->dlpi_addr + p.p_vaddr;
            m.segments.push_back({begin, begin + p.p_memsz, (p.p_flags & PF_X) != 0});
        }
        if (m.segments.empty()) return 0;

        // Notes are read where the dynamic linker mapped them, only when they lie inside a PT_LOAD
        // segment (anything else is not guaranteed to be mapped).
        for (ElfW(Half) i = 0; i < info->dlpi_phnum && m.build_id.empty(); ++i) {
            const ElfW(Phdr) &p = info->dlpi_phdr[i];
            if (p.p_type != PT_NOTE || p.p_memsz == 0) continue;
            uint64_t begin = info->dlpi_addr + p.p_vaddr;
            uint64_t end = begin + p.p_memsz;
            bool mapped = false;
            for (const Segment &s : m.segments)
                if (begin >= s.begin && end <= s.end) mapped = true;
            if (mapped)
                m.build_id = build_id_from_notes(reinterpret_cast<const void *>(begin), p.p_memsz, p.p_align);
        }

        if (st->main_phdr != 0 && reinterpret_cast<uintptr_t>(info->dlpi_phdr) == st->main_phdr) {
            m.main_executable = true; // path filled in afterwards, outside the dynamic linker's lock
        } else if (st->vdso_ehdr != 0 && m.contains(st->vdso_ehdr)) {
            m.vdso = true;
            m.path = "[vdso]";
        } else if (info->dlpi_name && info->dlpi_name[0]) {
            m.path = info->dlpi_name;
        } else if (st->out->empty()) {
            m.main_executable = true; // the first entry is the program when AT_PHDR is unavailable
        }
        st->out->push_back(std::move(m));
        return 0;
    } catch (...) {
        st->failed = true;
        return 1;
    }
}

std::string read_link(const char *link) {
    char buf[PATH_MAX + 1];
    ssize_t n = readlink(link, buf, PATH_MAX);
    if (n <= 0) return {};
    return std::string(buf, static_cast<size_t>(n));
}

std::string base_name(const std::string &path) {
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string absolute_path(const std::string &path) {
    if (path.empty() || path[0] == '/') return path;
    char buf[PATH_MAX + 1];
    if (realpath(path.c_str(), buf)) return buf;
    return path;
}

std::string main_executable_path() {
    std::string exe = read_link("/proc/self/exe");
    // Started as "ld.so ./program": /proc/self/exe is the dynamic linker; AT_EXECFN names the program.
    std::string name = base_name(exe);
    if (exe.empty() || name.rfind("ld-linux", 0) == 0 || name.rfind("ld.so", 0) == 0 ||
        name.rfind("ld64.so", 0) == 0) {
        auto *execfn = reinterpret_cast<const char *>(getauxval(AT_EXECFN));
        if (execfn && *execfn) {
            std::string p = absolute_path(execfn);
            if (!p.empty()) return p;
        }
    }
    return exe;
}

} // namespace

std::vector<LoadedModule> read_loaded_modules() {
    std::vector<LoadedModule> out;
    out.reserve(64);
    IterateState st{&out, static_cast<uintptr_t>(getauxval(AT_PHDR)),
                    static_cast<uintptr_t>(getauxval(AT_SYSINFO_EHDR)), false};
    dl_iterate_phdr(&collect_module, &st);
    if (st.failed) throw std::bad_alloc();
    for (LoadedModule &m : out) {
        if (m.main_executable) m.path = main_executable_path();
        else if (!m.vdso) m.path = absolute_path(m.path);
    }
    return out;
}

const LoadedModule *find_module(const std::vector<LoadedModule> &modules, uint64_t address) {
    for (const LoadedModule &m : modules)
        if (m.contains(address)) return &m;
    return nullptr;
}

ModuleIndex::ModuleIndex(const std::vector<LoadedModule> &modules) {
    for (size_t i = 0; i < modules.size(); ++i)
        for (const Segment &s : modules[i].segments)
            if (s.end > s.begin) entries_.push_back({s.begin, s.end, static_cast<int>(i)});
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry &a, const Entry &b) { return a.begin < b.begin; });
}

int ModuleIndex::find(uint64_t address) const {
    auto it = std::upper_bound(entries_.begin(), entries_.end(), address,
                               [](uint64_t a, const Entry &e) { return a < e.begin; });
    // Segments of different modules never overlap in a real process; look back a little in case a
    // hand-made list has nested ranges.
    for (int n = 0; it != entries_.begin() && n < 4; ++n) {
        --it;
        if (address < it->end) return it->module;
    }
    return -1;
}

} // namespace vramtrace::symbolize
