// The GNU build id in a buffer of ELF notes: the one parser used by the module registry
// (tracking/module_registry.cpp), the dump-time module map and ELF files on disk
// (symbolize/module_map.cpp) and the crash handler's module map (triggers/crash_modules.cpp).
//
// Async-signal-safe: no allocation, no library call (byte loops instead of memcpy/memcmp, so that
// nothing here is intercepted or can take a lock), reads only inside [notes, notes + size).
#pragma once

#include <cstddef>
#include <cstdint>
#include <elf.h>

namespace vramtrace {

// The descriptor of the first GNU build id note among the notes at [notes, notes + size): its
// address (inside the buffer) and *length (> 0), or nullptr when there is none or a malformed note
// comes before it. align: the alignment of the notes' segment or section (4 or 8; anything else is
// taken as 4).
inline const uint8_t *gnu_build_id_note(const void *notes, size_t size, size_t align, size_t *length) {
    if (align != 8) align = 4;
    const auto *p = static_cast<const uint8_t *>(notes);
    size_t pos = 0;
    while (p != nullptr && pos < size && size - pos >= sizeof(Elf64_Nhdr)) {
        Elf64_Nhdr nh;
        auto *dst = reinterpret_cast<uint8_t *>(&nh);
        for (size_t i = 0; i < sizeof nh; ++i) dst[i] = p[pos + i]; // notes may be unaligned
        if (nh.n_namesz > size || nh.n_descsz > size) return nullptr;
        const size_t name_at = pos + sizeof nh;
        const size_t desc_at = (name_at + nh.n_namesz + align - 1) & ~(align - 1);
        const size_t next = (desc_at + nh.n_descsz + align - 1) & ~(align - 1);
        if (desc_at > size || desc_at + nh.n_descsz > size) return nullptr;
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && p[name_at] == 'G' && p[name_at + 1] == 'N' &&
            p[name_at + 2] == 'U' && p[name_at + 3] == 0 && nh.n_descsz > 0) {
            *length = nh.n_descsz;
            return p + desc_at;
        }
        if (next <= pos) return nullptr;
        pos = next;
    }
    return nullptr;
}

// The GNU build id copied to out[0, capacity): returns its length, 0 when there is none or when it
// is longer than capacity (a cut id would not match the file's, so none is kept rather than a part).
inline size_t gnu_build_id_in_notes(const void *notes, size_t size, size_t align, uint8_t *out, size_t capacity) {
    size_t n = 0;
    const uint8_t *id = gnu_build_id_note(notes, size, align, &n);
    if (id == nullptr || n > capacity) return 0;
    for (size_t i = 0; i < n; ++i) out[i] = id[i];
    return n;
}

} // namespace vramtrace
