#include "tracking/module_registry.h"

#include <cstring>
#include <elf.h>
#include <link.h>
#include <sys/auxv.h>

namespace vramtrace {

struct ModuleRegistry::Walk {
    ModuleRegistry *registry;
    uintptr_t main_phdr; // AT_PHDR: the main executable's program headers
    uintptr_t vdso;      // AT_SYSINFO_EHDR
    uint64_t adds = 0, subs = 0;
    uint32_t added = 0;

    bool is_registered(const char *path, uint64_t base, uint64_t first_begin) const {
        for (const RegisteredModule *m = registry->newest(); m; m = m->older)
            if (m->base == base && m->segment_count != 0 && m->segments[0].begin == first_begin &&
                strcmp(m->path, path) == 0)
                return true;
        return false;
    }

    // Copies one object into the arena and publishes it. Runs inside dl_iterate_phdr, under the
    // registry's mutex; allocates only from the arena (mmap).
    void add(const dl_phdr_info *info) {
        const char *name = info->dlpi_name;
        if (name == nullptr || name[0] == 0) return; // the main executable: never unloaded
        if (main_phdr != 0 && reinterpret_cast<uintptr_t>(info->dlpi_phdr) == main_phdr) return;
        uint32_t loads = 0;
        uint64_t first_begin = 0;
        bool holds_vdso = false;
        for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
            const ElfW(Phdr) &ph = info->dlpi_phdr[i];
            if (ph.p_type != PT_LOAD || ph.p_memsz == 0) continue;
            uint64_t begin = info->dlpi_addr + ph.p_vaddr;
            if (loads == 0) first_begin = begin;
            if (vdso >= begin && vdso < begin + ph.p_memsz) holds_vdso = true;
            ++loads;
        }
        if (loads == 0 || holds_vdso) return; // the vDSO is never unloaded either
        if (is_registered(name, info->dlpi_addr, first_begin)) return;

        size_t path_bytes = strlen(name) + 1;
        auto *m = static_cast<RegisteredModule *>(registry->arena_.allocate(sizeof(RegisteredModule), alignof(RegisteredModule)));
        auto *segs = static_cast<RegisteredSegment *>(
            registry->arena_.allocate(sizeof(RegisteredSegment) * loads, alignof(RegisteredSegment)));
        auto *path = static_cast<char *>(registry->arena_.allocate(path_bytes, 1));
        if (!m || !segs || !path) {
            registry->dropped_.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        memcpy(path, name, path_bytes);
        uint32_t n = 0;
        for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
            const ElfW(Phdr) &ph = info->dlpi_phdr[i];
            if (ph.p_type != PT_LOAD || ph.p_memsz == 0) continue;
            uint64_t begin = info->dlpi_addr + ph.p_vaddr;
            segs[n++] = {begin, begin + ph.p_memsz, (ph.p_flags & PF_X) != 0};
        }
        m->base = info->dlpi_addr;
        m->path = path;
        m->segments = segs;
        m->segment_count = n;
        // The build id, read where the dynamic linker mapped the notes (only inside a PT_LOAD
        // segment: anything else is not guaranteed to be mapped).
        for (ElfW(Half) i = 0; i < info->dlpi_phnum && m->build_id_length == 0; ++i) {
            const ElfW(Phdr) &ph = info->dlpi_phdr[i];
            if (ph.p_type != PT_NOTE || ph.p_memsz == 0) continue;
            uint64_t begin = info->dlpi_addr + ph.p_vaddr, end = begin + ph.p_memsz;
            bool mapped = false;
            for (uint32_t k = 0; k < n; ++k)
                if (begin >= segs[k].begin && end <= segs[k].end) mapped = true;
            if (mapped)
                m->build_id_length = static_cast<uint8_t>(gnu_build_id_in_notes(
                    reinterpret_cast<const void *>(begin), ph.p_memsz, ph.p_align, m->build_id, sizeof m->build_id));
        }
        m->older = registry->head_.load(std::memory_order_relaxed);
        m->sequence = registry->count_.load(std::memory_order_relaxed) + 1;
        registry->head_.store(m, std::memory_order_release);
        registry->count_.store(m->sequence, std::memory_order_release);
        ++added;
    }
};

namespace {

struct Counters {
    uint64_t adds = 0, subs = 0;
};

int read_counters(dl_phdr_info *info, size_t size, void *data) {
    auto *c = static_cast<Counters *>(data);
    if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) *c = {info->dlpi_adds, info->dlpi_subs};
    return 1; // the counters are the same in every entry: stop at the first
}

int register_object(dl_phdr_info *info, size_t size, void *data) {
    auto *walk = static_cast<ModuleRegistry::Walk *>(data);
    if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
        walk->adds = info->dlpi_adds;
        walk->subs = info->dlpi_subs;
    }
    walk->add(info);
    return 0;
}

} // namespace

ModuleRegistry::ModuleRegistry() = default;

void ModuleRegistry::note_new_stack() {
    Counters now;
    dl_iterate_phdr(&read_counters, &now);
    if (now.adds == seen_adds_.load(std::memory_order_acquire) && now.subs == seen_subs_.load(std::memory_order_acquire) &&
        refreshes_.load(std::memory_order_relaxed) != 0)
        return;
    refresh();
}

uint32_t ModuleRegistry::refresh() {
    if (pthread_mutex_lock(&mutex_) != 0) return 0;
    Walk walk{this, static_cast<uintptr_t>(getauxval(AT_PHDR)), static_cast<uintptr_t>(getauxval(AT_SYSINFO_EHDR))};
    dl_iterate_phdr(&register_object, &walk);
    seen_adds_.store(walk.adds, std::memory_order_release);
    seen_subs_.store(walk.subs, std::memory_order_release);
    refreshes_.fetch_add(1, std::memory_order_relaxed);
    pthread_mutex_unlock(&mutex_);
    return walk.added;
}

} // namespace vramtrace
