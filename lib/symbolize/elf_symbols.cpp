#include "symbolize/elf_symbols.h"

namespace vramtrace::symbolize {

const Elf64_Ehdr *elf_header(const uint8_t *data, size_t size) {
    if (!data || size < sizeof(Elf64_Ehdr)) return nullptr;
    auto *eh = reinterpret_cast<const Elf64_Ehdr *>(data);
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) return nullptr;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (eh->e_ident[EI_DATA] != ELFDATA2LSB) return nullptr;
#else
    if (eh->e_ident[EI_DATA] != ELFDATA2MSB) return nullptr;
#endif
    return eh;
}

Sections section_headers(const uint8_t *data, size_t size) {
    Sections s;
    const Elf64_Ehdr *eh = elf_header(data, size);
    if (!eh || eh->e_shoff == 0 || eh->e_shentsize < sizeof(Elf64_Shdr) || eh->e_shoff > size) return s;
    size_t count = eh->e_shnum;
    if (count == 0 && size - eh->e_shoff >= sizeof(Elf64_Shdr)) // >= SHN_LORESERVE sections
        count = reinterpret_cast<const Elf64_Shdr *>(data + eh->e_shoff)->sh_size;
    if (count == 0 || count > (size - eh->e_shoff) / eh->e_shentsize || eh->e_shoff % 8 != 0) return s;
    s.base = data + eh->e_shoff;
    s.entsize = eh->e_shentsize;
    s.count = count;
    return s;
}

std::string debuglink_of(const uint8_t *data, size_t size) {
    Sections sh = section_headers(data, size);
    if (!sh.count) return {};
    const Elf64_Ehdr *eh = elf_header(data, size);
    size_t shstrndx = eh->e_shstrndx;
    if (shstrndx == SHN_XINDEX) shstrndx = sh[0].sh_link;
    if (shstrndx >= sh.count) return {};
    const Elf64_Shdr &names = sh[shstrndx];
    if (names.sh_offset > size || names.sh_size > size - names.sh_offset) return {};
    const char *strs = reinterpret_cast<const char *>(data + names.sh_offset);
    for (size_t i = 1; i < sh.count; ++i) {
        const Elf64_Shdr &s = sh[i];
        if (s.sh_type != SHT_PROGBITS || s.sh_name >= names.sh_size) continue;
        const char *n = strs + s.sh_name;
        if (!memchr(n, 0, names.sh_size - s.sh_name) || strcmp(n, ".gnu_debuglink") != 0) continue;
        if (s.sh_offset > size || s.sh_size > size - s.sh_offset || s.sh_size == 0) return {};
        const char *link = reinterpret_cast<const char *>(data + s.sh_offset);
        size_t len = strnlen(link, s.sh_size);
        if (len == 0 || len == s.sh_size) return {};
        return std::string(link, len);
    }
    return {};
}

} // namespace vramtrace::symbolize
