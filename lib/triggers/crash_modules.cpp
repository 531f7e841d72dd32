// Module map from /proc/self/maps for the crash handler (see crash_modules.h). Everything here is a
// system call (open/read/close/pipe2/write) or a read of memory made through a pipe (MemoryProbe):
// a mapping listed in /proc/self/maps can be gone a moment later (a dlclose in another thread) or
// fault on read (a file truncated under it), and a fault here would abandon the crash snapshot.
#include "triggers/crash_modules.h"

#include <cerrno>
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include "tracking/elf_notes.h"

namespace vramtrace::crash {
namespace {

// One parsed line of /proc/self/maps: "begin-end perms offset major:minor inode    path".
struct MapsLine {
    uint64_t begin = 0, end = 0, offset = 0, inode = 0, device = 0;
    bool readable = false, executable = false;
    const char *path = nullptr;
    size_t path_length = 0;
};

bool parse_hex(const char *&p, const char *end, uint64_t &out) {
    const char *start = p;
    uint64_t v = 0;
    for (; p < end; ++p) {
        unsigned d;
        if (*p >= '0' && *p <= '9') d = unsigned(*p - '0');
        else if (*p >= 'a' && *p <= 'f') d = unsigned(*p - 'a' + 10);
        else if (*p >= 'A' && *p <= 'F') d = unsigned(*p - 'A' + 10);
        else break;
        v = v << 4 | d;
    }
    out = v;
    return p != start;
}

bool parse_dec(const char *&p, const char *end, uint64_t &out) {
    const char *start = p;
    uint64_t v = 0;
    for (; p < end && *p >= '0' && *p <= '9'; ++p) v = v * 10 + uint64_t(*p - '0');
    out = v;
    return p != start;
}

bool expect(const char *&p, const char *end, char c) {
    if (p >= end || *p != c) return false;
    ++p;
    return true;
}

bool parse_line(const char *p, const char *end, MapsLine &l) {
    uint64_t major = 0, minor = 0;
    if (!parse_hex(p, end, l.begin) || !expect(p, end, '-') || !parse_hex(p, end, l.end) || !expect(p, end, ' '))
        return false;
    if (end - p < 5) return false;
    l.readable = p[0] == 'r';
    l.executable = p[2] == 'x';
    p += 4;
    if (!expect(p, end, ' ') || !parse_hex(p, end, l.offset) || !expect(p, end, ' ') || !parse_hex(p, end, major) ||
        !expect(p, end, ':') || !parse_hex(p, end, minor) || !expect(p, end, ' ') || !parse_dec(p, end, l.inode))
        return false;
    l.device = major << 32 | minor;
    while (p < end && *p == ' ') ++p;
    l.path = p;
    l.path_length = size_t(end - p);
    return true;
}

uint64_t page_down(uint64_t v, uint64_t page) { return v & ~(page - 1); }

// An ELF object mapped at file offset 0 by this line: fills m (not the path) and returns true.
bool module_from_mapping(const MemoryProbe &probe, const MapsLine &l, uint64_t page_size, CrashModule &m) {
    const uint64_t length = l.end - l.begin;
    if (length < sizeof(Elf64_Ehdr)) return false;
    Elf64_Ehdr header;
    if (!probe.copy(&header, l.begin, sizeof header)) return false; // unmapped or unreadable by now
    const Elf64_Ehdr *eh = &header;
    if (eh->e_ident[EI_MAG0] != ELFMAG0 || eh->e_ident[EI_MAG1] != ELFMAG1 || eh->e_ident[EI_MAG2] != ELFMAG2 ||
        eh->e_ident[EI_MAG3] != ELFMAG3 || eh->e_ident[EI_CLASS] != ELFCLASS64)
        return false;
    if (eh->e_type != ET_DYN && eh->e_type != ET_EXEC) return false;
    if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0 || eh->e_phoff % 8 != 0) return false;
    if (eh->e_phoff > length || uint64_t(eh->e_phnum) * sizeof(Elf64_Phdr) > length - eh->e_phoff) return false;
    // One program header at a time: no buffer sized by the file on the handler's stack.
    auto phdr = [&](unsigned i, Elf64_Phdr &out) {
        return probe.copy(&out, l.begin + eh->e_phoff + uint64_t(i) * sizeof(Elf64_Phdr), sizeof out);
    };

    Elf64_Phdr first{};
    bool have_first = false;
    uint64_t span_end = 0;
    for (unsigned i = 0; i < eh->e_phnum; ++i) {
        Elf64_Phdr ph;
        if (!phdr(i, ph)) return false;
        if (ph.p_type != PT_LOAD || ph.p_memsz == 0) continue;
        if (!have_first || ph.p_vaddr < first.p_vaddr) first = ph, have_first = true;
        if (ph.p_vaddr + ph.p_memsz > span_end) span_end = ph.p_vaddr + ph.p_memsz;
    }
    // The mapping at file offset 0 is the lowest PT_LOAD's, which must start at offset 0.
    if (!have_first || page_down(first.p_offset, page_size) != 0) return false;
    const uint64_t first_page = page_down(first.p_vaddr, page_size);
    if (l.begin < first_page) return false;
    m.base = l.begin - first_page;
    m.begin = l.begin;
    m.end = m.base + span_end;
    m.device = l.device;
    m.inode = l.inode;
    m.executable = l.executable;
    m.build_id_length = 0;
    for (unsigned i = 0; i < eh->e_phnum && m.build_id_length == 0; ++i) {
        Elf64_Phdr ph;
        if (!phdr(i, ph)) break;
        if (ph.p_type != PT_NOTE || ph.p_memsz == 0) continue;
        const uint64_t at = m.base + ph.p_vaddr;
        if (at < l.begin || at > l.end || ph.p_memsz > l.end - at) continue; // not in this mapping
        // The GNU build id sits in the first notes of a segment (after the ABI tag and the
        // properties at most): a kibibyte of them is enough and keeps the stack small.
        alignas(8) uint8_t notes[1024];
        const size_t n = ph.p_memsz < sizeof notes ? size_t(ph.p_memsz) : sizeof notes;
        if (!probe.copy(notes, at, n)) continue;
        m.build_id_length = static_cast<uint8_t>(gnu_build_id_in_notes(notes, n, ph.p_align, m.build_id, sizeof m.build_id));
    }
    return true;
}

// The last offset-0 mapping of a file that is not executable itself, kept unread until an executable
// mapping of the same file shows that it is a loaded object. Its path is copied to the free end of
// the path store, which nothing else writes before it is taken or dropped.
struct Pending {
    bool valid = false;
    uint64_t begin = 0, end = 0, device = 0, inode = 0;
    uint32_t path_length = 0;
};

// Adds the module that starts with mapping l (whose path is already at t.paths + t.paths_used).
void add_module(ModuleTable &t, const MemoryProbe &probe, const MapsLine &l, uint32_t path_length,
                uint64_t page_size) {
    if (t.count >= t.capacity) return;
    CrashModule m;
    if (!module_from_mapping(probe, l, page_size, m)) return;
    m.path_offset = t.paths_used;
    m.path_length = path_length;
    t.paths_used += m.path_length;
    t.modules[t.count++] = m;
}

// Only mappings of files that the process also maps executable are read: those are loaded objects.
// Reading any other file mapping could fault: a file truncated after it was mapped (SIGBUS), or
// ThreadSanitizer's "tsan.rodata" mappings, which lie in its shadow memory, where an instrumented
// read looks up a shadow address that may be a protected gap (docs/reliability.md). Program headers
// put the offset-0 mapping first, so an object's executable mapping comes after it in the maps.
void take_line(ModuleTable &t, const MemoryProbe &probe, Pending &pending, const char *p, const char *end,
               uint64_t page_size) {
    MapsLine l;
    if (!parse_line(p, end, l) || l.path_length == 0 || l.path[0] != '/' || l.inode == 0) return;
    if (l.executable && pending.valid && pending.inode == l.inode && pending.device == l.device &&
        l.begin >= pending.end) {
        pending.valid = false;
        MapsLine first;
        first.begin = pending.begin, first.end = pending.end, first.offset = 0;
        first.device = pending.device, first.inode = pending.inode;
        first.readable = true;
        add_module(t, probe, first, pending.path_length, page_size);
    }
    if (l.executable && t.count > 0) {
        // The executable segment of an object met earlier (maps are in address order).
        for (uint32_t i = t.count; i-- > 0;) {
            CrashModule &m = t.modules[i];
            if (l.begin >= m.begin && l.begin < m.end) {
                if (m.inode == l.inode && m.device == l.device) m.executable = true;
                break;
            }
            if (m.end <= l.begin) break;
        }
    }
    if (l.offset != 0 || !l.readable || t.count >= t.capacity) return;
    pending.valid = false;
    if (l.path_length > t.paths_capacity - t.paths_used) return;
    for (size_t i = 0; i < l.path_length; ++i) t.paths[t.paths_used + i] = l.path[i];
    if (l.executable) return add_module(t, probe, l, static_cast<uint32_t>(l.path_length), page_size);
    pending.valid = true;
    pending.begin = l.begin, pending.end = l.end, pending.device = l.device, pending.inode = l.inode;
    pending.path_length = static_cast<uint32_t>(l.path_length);
}

} // namespace

MemoryProbe::MemoryProbe() {
    if (::pipe2(fds_, O_CLOEXEC) != 0) fds_[0] = fds_[1] = -1;
}

MemoryProbe::~MemoryProbe() {
    if (fds_[0] >= 0) ::close(fds_[0]);
    if (fds_[1] >= 0) ::close(fds_[1]);
}

bool MemoryProbe::copy(void *dst, uint64_t src, size_t n) const {
    if (n == 0) return true;
    if (fds_[0] < 0) { // no pipe (out of descriptors): read directly, as before there was a probe
        const auto *from = reinterpret_cast<const uint8_t *>(src);
        auto *to = static_cast<uint8_t *>(dst);
        for (size_t i = 0; i < n; ++i) to[i] = from[i];
        return true;
    }
    if (n > kMaxCopy) return false;
    // The kernel copies from our memory for write(): a page that is not there, or a file page past
    // the end of its file, makes it fail with EFAULT instead of raising a signal in this process.
    ssize_t w;
    do {
        w = ::write(fds_[1], reinterpret_cast<const void *>(src), n);
    } while (w < 0 && errno == EINTR);
    if (w <= 0) return false;
    size_t got = 0;
    while (got < size_t(w)) {
        ssize_t r = ::read(fds_[0], static_cast<uint8_t *>(dst) + got, size_t(w) - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false; // cannot happen with the bytes just written; the pipe is unusable
        got += size_t(r);
    }
    return size_t(w) == n; // a short write: the range ends in memory that is not there
}

bool read_crash_modules(ModuleTable &t, char *buf, size_t cap, uint64_t page_size) {
    t.count = 0;
    t.paths_used = 0;
    if (page_size == 0 || (page_size & (page_size - 1)) != 0) page_size = 4096;
    int fd;
    do {
        fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return false;
    size_t have = 0;
    Pending pending;
    MemoryProbe probe;
    for (;;) {
        ssize_t n = ::read(fd, buf + have, cap - have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        have += size_t(n);
        size_t start = 0;
        for (size_t i = 0; i < have; ++i) {
            if (buf[i] != '\n') continue;
            take_line(t, probe, pending, buf + start, buf + i, page_size);
            start = i + 1;
        }
        // Keep the unfinished line; a line longer than the whole buffer is dropped.
        if (start == 0 && have == cap) start = have;
        for (size_t i = start; i < have; ++i) buf[i - start] = buf[i];
        have -= start;
    }
    if (have > 0) take_line(t, probe, pending, buf, buf + have, page_size);
    ::close(fd);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < t.count; ++i)
        if (t.modules[i].executable) t.modules[kept++] = t.modules[i];
    t.count = kept;
    return true;
}

uint32_t add_unloaded_modules(ModuleTable &t, const RegisteredModule *newest) {
    uint32_t added = 0;
    for (const RegisteredModule *r = newest; r != nullptr; r = r->older) {
        if (t.count >= t.capacity) break;
        if (r->path == nullptr || r->path[0] == 0 || r->segment_count == 0) continue;
        uint64_t begin = ~uint64_t{0}, end = 0;
        for (uint32_t i = 0; i < r->segment_count; ++i) {
            if (r->segments[i].begin < begin) begin = r->segments[i].begin;
            if (r->segments[i].end > end) end = r->segments[i].end;
        }
        if (begin >= end) continue;
        // Loaded now (its own maps entry), or its addresses taken by an object loaded now or by a
        // newer unloaded one: the table is in ascending order, so the first module ending after
        // begin is the only one that can overlap, if any does.
        uint32_t at = 0;
        while (at < t.count && t.modules[at].end <= begin) ++at;
        if (at < t.count && t.modules[at].begin < end) continue;
        size_t length = 0;
        while (r->path[length] != 0) ++length;
        if (length > t.paths_capacity - t.paths_used) continue;
        CrashModule m;
        m.base = r->base;
        m.begin = begin;
        m.end = end;
        m.executable = true;
        m.path_offset = t.paths_used;
        m.path_length = static_cast<uint32_t>(length);
        for (size_t i = 0; i < length; ++i) t.paths[t.paths_used + i] = r->path[i];
        t.paths_used += m.path_length;
        m.build_id_length = r->build_id_length <= sizeof m.build_id ? r->build_id_length : 0;
        for (uint8_t i = 0; i < m.build_id_length; ++i) m.build_id[i] = r->build_id[i];
        for (uint32_t i = t.count; i > at; --i) t.modules[i] = t.modules[i - 1];
        t.modules[at] = m;
        ++t.count;
        ++added;
    }
    return added;
}

int find_crash_module(const ModuleTable &t, uint64_t address) {
    uint32_t lo = 0, hi = t.count; // first module with begin > address
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t.modules[mid].begin <= address) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return -1;
    const CrashModule &m = t.modules[lo - 1];
    return address < m.end ? int(lo - 1) : -1;
}

} // namespace vramtrace::crash
