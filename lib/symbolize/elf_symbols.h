// ELF symbol tables, read by our own reader (.symtab, else .dynsym), so that static functions of
// executables built without -rdynamic are named too; and the section headers and .gnu_debuglink
// of an image mapped in memory. Every read is bounds-checked against the image's size.
#pragma once

#include <elf.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace vramtrace::symbolize {

// The ELF header of a 64-bit image of this machine's byte order, nullptr otherwise.
const Elf64_Ehdr *elf_header(const uint8_t *data, size_t size);

// Section headers of an image, bounds-checked; empty span when absent or malformed.
struct Sections {
    const uint8_t *base = nullptr;
    size_t entsize = 0;
    size_t count = 0;
    const Elf64_Shdr &operator[](size_t i) const {
        return *reinterpret_cast<const Elf64_Shdr *>(base + i * entsize);
    }
};

Sections section_headers(const uint8_t *data, size_t size);

// The .gnu_debuglink file name of an image, empty when none.
std::string debuglink_of(const uint8_t *data, size_t size);

class SymbolTable {
public:
    // Loads the first section of type `type` (SHT_SYMTAB or SHT_DYNSYM) with at least one function.
    bool load(const uint8_t *data, size_t size, uint32_t type) {
        syms_.clear();
        exec_sections_.clear();
        Sections sh = section_headers(data, size);
        if (!sh.count) return false;
        for (size_t i = 0; i < sh.count; ++i) {
            const Elf64_Shdr &s = sh[i];
            if (s.sh_type != type || s.sh_entsize < sizeof(Elf64_Sym) || s.sh_link >= sh.count) continue;
            if (s.sh_offset > size || s.sh_size > size - s.sh_offset || s.sh_offset % 8 != 0) continue;
            const Elf64_Shdr &str = sh[s.sh_link];
            if (str.sh_type != SHT_STRTAB || str.sh_offset > size || str.sh_size > size - str.sh_offset)
                continue;
            strtab_ = reinterpret_cast<const char *>(data + str.sh_offset);
            strtab_size_ = str.sh_size;

            exec_sections_.assign(sh.count, {0, 0});
            for (size_t k = 0; k < sh.count; ++k)
                if (sh[k].sh_flags & SHF_EXECINSTR)
                    exec_sections_[k] = {sh[k].sh_addr, sh[k].sh_addr + sh[k].sh_size};

            size_t n = s.sh_size / s.sh_entsize;
            syms_.reserve(n / 2);
            for (size_t k = 1; k < n; ++k) {
                const auto *e = reinterpret_cast<const Elf64_Sym *>(data + s.sh_offset + k * s.sh_entsize);
                unsigned st = ELF64_ST_TYPE(e->st_info);
                if (st != STT_FUNC && st != STT_GNU_IFUNC) continue;
                if (e->st_shndx == SHN_UNDEF || e->st_shndx >= SHN_LORESERVE || e->st_value == 0) continue;
                if (e->st_name == 0 || e->st_name >= strtab_size_) continue;
                if (e->st_shndx < exec_sections_.size() && exec_sections_[e->st_shndx].second == 0) continue;
                syms_.push_back({e->st_value, e->st_size, static_cast<uint32_t>(e->st_name),
                                 e->st_shndx, rank(*e)});
            }
            if (syms_.empty()) continue;
            // One symbol per start address: the preferred alias (sized, global over weak over local,
            // fewest leading underscores: "malloc" over "__libc_malloc").
            std::sort(syms_.begin(), syms_.end(), [](const Sym &a, const Sym &b) {
                if (a.start != b.start) return a.start < b.start;
                if (a.rank != b.rank) return a.rank < b.rank;
                return a.name < b.name;
            });
            syms_.erase(std::unique(syms_.begin(), syms_.end(),
                                    [](const Sym &a, const Sym &b) { return a.start == b.start; }),
                        syms_.end());
            syms_.shrink_to_fit();
            return true;
        }
        return false;
    }

    // Index of the function containing vaddr, -1 when none.
    int find(uint64_t vaddr) const {
        auto it = std::upper_bound(syms_.begin(), syms_.end(), vaddr,
                                   [](uint64_t v, const Sym &s) { return v < s.start; });
        if (it == syms_.begin()) return -1;
        size_t last = static_cast<size_t>(it - syms_.begin()) - 1;
        // A sized symbol containing vaddr; look back a little for one that encloses smaller ones.
        for (size_t k = last, n = 0; n < 16; --k, ++n) {
            const Sym &s = syms_[k];
            if (s.size != 0 && vaddr - s.start < s.size) return static_cast<int>(k);
            if (k == 0) break;
        }
        // An unsized symbol (hand-written assembly): the nearest one, within its section.
        const Sym &s = syms_[last];
        if (s.size == 0 && s.section < exec_sections_.size()) {
            auto [lo, hi] = exec_sections_[s.section];
            if (vaddr >= lo && vaddr < hi) return static_cast<int>(last);
        }
        return -1;
    }

    // Index of the nearest symbol at or below vaddr in the executable section that holds vaddr
    // (for an address find() places in no function: stripped code between exported symbols), -1
    // when none.
    int nearest_below(uint64_t vaddr) const {
        auto it = std::upper_bound(syms_.begin(), syms_.end(), vaddr,
                                   [](uint64_t v, const Sym &s) { return v < s.start; });
        if (it == syms_.begin()) return -1;
        const Sym &s = *(it - 1);
        if (s.section >= exec_sections_.size()) return -1;
        auto [lo, hi] = exec_sections_[s.section];
        return vaddr >= lo && vaddr < hi ? static_cast<int>(it - syms_.begin() - 1) : -1;
    }
    uint64_t start(int i) const { return syms_[static_cast<size_t>(i)].start; }

    const char *name(int i) const { return strtab_ + syms_[static_cast<size_t>(i)].name; }
    bool empty() const { return syms_.empty(); }

private:
    struct Sym {
        uint64_t start;
        uint64_t size;
        uint32_t name;
        uint16_t section;
        uint16_t rank;
    };

    uint16_t rank(const Elf64_Sym &e) const {
        unsigned bind = ELF64_ST_BIND(e.st_info);
        unsigned b = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : bind == STB_LOCAL ? 2 : 3;
        const char *n = strtab_ + e.st_name;
        size_t room = strtab_size_ - e.st_name;
        unsigned underscores = 0;
        while (underscores < room && underscores < 15 && n[underscores] == '_') ++underscores;
        if (!memchr(n, 0, room)) b = 7; // unterminated name: last resort
        return static_cast<uint16_t>((e.st_size == 0 ? 1u << 8 : 0u) | (b << 4) | underscores);
    }

    std::vector<Sym> syms_;
    std::vector<std::pair<uint64_t, uint64_t>> exec_sections_; // per section index, executable only
    const char *strtab_ = nullptr;
    size_t strtab_size_ = 0;
};

} // namespace vramtrace::symbolize
