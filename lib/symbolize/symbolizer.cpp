#include "symbolize/symbolizer.h"

#include "symbolize/debug_files.h"
#include "symbolize/dwarf_lookup.h"
#include "symbolize/elf_symbols.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <utility>

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <unistd.h>

namespace vramtrace::symbolize {

// ---------------------------------------------------------------------------------------------
// Small helpers

std::string demangle(const char *name) {
    if (!name) return {};
    std::string plain(name);
    size_t at = plain.find('@');
    if (at != std::string::npos && at > 0) plain.resize(at);
    if (plain.size() > 2 && plain[0] == '_' && plain[1] == 'Z') {
        int status = 0;
        char *out = abi::__cxa_demangle(plain.c_str(), nullptr, nullptr, &status);
        if (out) {
            std::string result = (status == 0) ? std::string(out) : plain;
            free(out);
            return result;
        }
    }
    return plain;
}

namespace {

std::string near_symbol(std::string name, uint64_t offset) {
    char hex[24];
    snprintf(hex, sizeof hex, "+0x%llx", static_cast<unsigned long long>(offset));
    return name + hex;
}

} // namespace

namespace {


// ---------------------------------------------------------------------------------------------
// Per-module state

// The module's file and its symbol table, read once at the first look-up in the module.
struct ElfModule {
    bool tried = false;
    bool file_usable = false; // the file on disk is the one loaded (build ids agree or unknown)
    MappedFile file;
    MappedFile debug_file;
    SymbolTable symbols;
    std::unordered_map<int, std::string> names; // symbol index -> demangled
};

// What is known of one module. Members go in reverse order: the libdw session ends first, then
// the module's files are unmapped.
struct ModuleState {
    ElfModule elf;
    DwarfModule dwarf;
};

struct CacheEntry : FrameNames {
    int module = -1;
};

// dl_iterate_phdr's add/sub counters: they change whenever an object is loaded or unloaded.
std::pair<unsigned long long, unsigned long long> load_counters() {
    std::pair<unsigned long long, unsigned long long> c{0, 0};
    dl_iterate_phdr(
        [](struct dl_phdr_info *info, size_t size, void *data) -> int {
            auto *out = static_cast<std::pair<unsigned long long, unsigned long long> *>(data);
            if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
                *out = {info->dlpi_adds, info->dlpi_subs};
            return 1;
        },
        &c);
    return c;
}

} // namespace

std::string own_object_path() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(&own_object_path), &info) && info.dli_fname &&
        info.dli_fname[0] == '/')
        return info.dli_fname;
    // The main executable: glibc reports argv[0] (possibly relative) or nothing.
    auto here = reinterpret_cast<uint64_t>(&own_object_path);
    for (const LoadedModule &m : read_loaded_modules())
        if (m.contains(here)) return m.vdso ? std::string() : m.path;
    return {};
}

// ---------------------------------------------------------------------------------------------
// Symbolizer

struct Symbolizer::Impl {
    SymbolizerOptions options;
    bool live = true;

    DwarfLookup dwarf; // declared before `states`, whose destructors still call dwfl_end through it

    std::vector<LoadedModule> modules;
    std::vector<std::unique_ptr<ModuleState>> states; // parallel to modules
    ModuleIndex index;
    std::pair<unsigned long long, unsigned long long> counters{0, 0};
    std::unordered_map<uint64_t, CacheEntry> cache; // by looked-up address (pc)
    uint64_t generation = 0;                        // bumped whenever `modules` is renumbered

    void set_modules(std::vector<LoadedModule> fresh) {
        std::vector<std::unique_ptr<ModuleState>> kept(fresh.size());
        for (size_t i = 0; i < fresh.size(); ++i)
            for (size_t j = 0; j < modules.size(); ++j)
                if (states[j] && modules[j].path == fresh[i].path && modules[j].base == fresh[i].base &&
                    modules[j].build_id == fresh[i].build_id) {
                    kept[i] = std::move(states[j]);
                    break;
                }
        for (auto &s : kept)
            if (!s) s = std::make_unique<ModuleState>();
        modules = std::move(fresh);
        states = std::move(kept);
        index = ModuleIndex(modules);
        cache.clear();
        ++generation;
    }

    std::vector<LoadedModule> registered; // module registry's objects, newest first (live mode)

    // The loaded objects, then the registered ones that are no longer loaded (and overlap nothing
    // kept before them: the loaded object, or the newer unloaded one, names reused addresses).
    std::vector<LoadedModule> with_unloaded(std::vector<LoadedModule> loaded) const {
        if (registered.empty()) return loaded;
        std::unordered_map<std::string, std::vector<uint64_t>> loaded_bases; // path -> bases
        for (const LoadedModule &m : loaded) loaded_bases[m.path].push_back(m.base);
        auto overlaps = [&](const LoadedModule &r) {
            for (const LoadedModule &m : loaded)
                for (const Segment &a : m.segments)
                    for (const Segment &b : r.segments)
                        if (a.begin < b.end && b.begin < a.end) return true;
            return false;
        };
        for (const LoadedModule &r : registered) {
            auto it = loaded_bases.find(r.path);
            if (it != loaded_bases.end() && std::find(it->second.begin(), it->second.end(), r.base) != it->second.end())
                continue; // still loaded (or loaded again at the same base)
            if (r.segments.empty() || overlaps(r)) continue;
            LoadedModule m = r;
            m.unloaded = true;
            m.main_executable = m.vdso = false;
            loaded.push_back(std::move(m));
        }
        return loaded;
    }

    void refresh() {
        counters = load_counters();
        set_modules(with_unloaded(read_loaded_modules()));
    }

    // The path to open for module i (the running executable through /proc/self/exe, which works
    // even when the file was deleted or replaced since).
    std::string open_path(const LoadedModule &m) const {
        if (live && m.main_executable) return "/proc/self/exe";
        return m.path;
    }

    void ensure_elf(const LoadedModule &m, ElfModule &s) {
        if (s.tried) return;
        s.tried = true;
        const uint8_t *data = nullptr;
        size_t size = 0;
        if (m.vdso) {
            auto ehdr = static_cast<uint64_t>(live ? getauxval(AT_SYSINFO_EHDR) : 0);
            uint64_t end = 0;
            for (const auto &seg : m.segments) end = std::max(end, seg.end);
            if (!ehdr || end <= ehdr) return;
            data = reinterpret_cast<const uint8_t *>(ehdr);
            size = end - ehdr;
        } else {
            if (!s.file.open(open_path(m).c_str())) return;
            data = s.file.data();
            size = s.file.size();
        }
        if (!elf_header(data, size)) return;
        if (!m.build_id.empty() && !m.vdso) {
            std::string id = build_id_from_elf_image(data, size);
            if (!id.empty() && id != m.build_id) {
                s.file.reset(); // the file was replaced after it was loaded
                return;
            }
        }
        s.file_usable = true;
        if (s.symbols.load(data, size, SHT_SYMTAB)) return;
        if (!m.vdso) {
            DebugFile debug = open_debug_file(m.path, m.build_id, debuglink_of(data, size));
            bool mapped = debug.fd >= 0 && s.debug_file.map(debug.fd);
            if (debug.fd >= 0) close(debug.fd);
            if (mapped && s.symbols.load(s.debug_file.data(), s.debug_file.size(), SHT_SYMTAB)) return;
            s.debug_file.reset();
        }
        s.symbols.load(data, size, SHT_DYNSYM);
    }

    const CacheEntry &resolve(uint64_t pc) {
        auto found = cache.find(pc);
        if (found != cache.end()) return found->second;

        int mi = index.find(pc);
        if (mi < 0 && live) {
            // Something was loaded since the map was read: read it again (cheap check first).
            if (load_counters() != counters) {
                refresh();
                mi = index.find(pc);
            }
        }
        CacheEntry e;
        e.module = mi;
        if (mi >= 0) {
            const LoadedModule &m = modules[static_cast<size_t>(mi)];
            ModuleState &s = *states[static_cast<size_t>(mi)];
            ElfModule &elf = s.elf;
            ensure_elf(m, elf);
            uint64_t vaddr = pc - m.base;
            if (elf.file_usable) {
                int sym = elf.symbols.find(vaddr);
                if (sym >= 0) {
                    auto it = elf.names.find(sym);
                    if (it == elf.names.end()) it = elf.names.emplace(sym, demangle(elf.symbols.name(sym))).first;
                    e.function = it->second;
                }
            }
            if (options.use_libdw) dwarf.load(options);
            dwarf.describe(m, live, elf.file_usable, s.dwarf, pc, e);
        }
        if (e.function.empty() && mi >= 0) {
            // Code no symbol covers (a stripped library's internal function): the nearest symbol
            // below it and the distance, "PyObject_Vectorcall+0x4f", rather than no name at all.
            const LoadedModule &m = modules[static_cast<size_t>(mi)];
            ElfModule &elf = states[static_cast<size_t>(mi)]->elf;
            uint64_t vaddr = pc - m.base;
            int near = elf.file_usable ? elf.symbols.nearest_below(vaddr) : -1;
            if (near >= 0) e.function = near_symbol(demangle(elf.symbols.name(near)), vaddr - elf.symbols.start(near));
        }
        if (e.function.empty() && live && (mi < 0 || !modules[static_cast<size_t>(mi)].unloaded)) {
            Dl_info info{};
            void *entry = nullptr; // the ElfW(Sym) of the symbol found
            if (dladdr1(reinterpret_cast<void *>(pc), &info, &entry, RTLD_DL_SYMENT) &&
                info.dli_sname && info.dli_saddr) {
                uint64_t offset = pc - reinterpret_cast<uint64_t>(info.dli_saddr);
                const auto *sym = static_cast<const ElfW(Sym) *>(entry);
                bool inside = sym != nullptr && offset < sym->st_size;
                e.function = inside ? demangle(info.dli_sname) : near_symbol(demangle(info.dli_sname), offset);
            }
        }
        return cache.emplace(pc, std::move(e)).first->second;
    }

    SymbolizedAddress lookup(uint64_t address, AddressKind kind) {
        uint64_t pc = (kind == AddressKind::Return && address > 0) ? address - 1 : address;
        const CacheEntry &e = resolve(pc);
        SymbolizedAddress r;
        r.module = e.module;
        if (e.module >= 0) r.module_offset = address - modules[static_cast<size_t>(e.module)].base;
        r.function = e.function;
        r.file = e.file;
        r.line = e.line;
        r.inlined = e.inlined;
        return r;
    }
};

Symbolizer::Symbolizer(SymbolizerOptions options) : impl_(std::make_unique<Impl>()) {
    impl_->options = std::move(options);
    impl_->live = true;
    impl_->refresh();
}

Symbolizer::Symbolizer(std::vector<LoadedModule> modules, SymbolizerOptions options)
    : impl_(std::make_unique<Impl>()) {
    impl_->options = std::move(options);
    impl_->live = false;
    for (LoadedModule &m : modules)
        if (m.segments.empty() && !m.vdso) segments_from_file(m.path, m.base, m.segments);
    impl_->set_modules(std::move(modules));
}

Symbolizer::~Symbolizer() = default;

SymbolizedAddress Symbolizer::lookup(uint64_t address, AddressKind kind) {
    try {
        return impl_->lookup(address, kind);
    } catch (...) {
        return {};
    }
}

void Symbolizer::symbolize(std::vector<snapshot::Frame> &frames, std::vector<snapshot::Module> &modules,
                           AddressKind kind) {
    try {
        // Objects loaded or unloaded since the map was read (another dump, later): read it again.
        if (impl_->live && load_counters() != impl_->counters) impl_->refresh();
        std::unordered_map<int, int> out_index; // our module index -> index into `modules`
        auto module_out = [&](int mi) -> int {
            auto it = out_index.find(mi);
            if (it != out_index.end()) return it->second;
            const LoadedModule &m = impl_->modules[static_cast<size_t>(mi)];
            int found = -1;
            for (size_t k = 0; k < modules.size(); ++k)
                if (modules[k].path == m.path && modules[k].base == m.base) {
                    found = static_cast<int>(k);
                    break;
                }
            if (found < 0) {
                modules.push_back(snapshot::Module{m.path, m.base, m.build_id});
                found = static_cast<int>(modules.size() - 1);
            }
            out_index.emplace(mi, found);
            return found;
        };
        uint64_t generation = impl_->generation;
        for (snapshot::Frame &f : frames) {
            if (f.python) continue; // named when the stack was captured (docs/python-frames.md)
            SymbolizedAddress r = impl_->lookup(f.address, kind);
            // A refresh inside lookup() renumbers our modules; the mapping is rebuilt then.
            if (impl_->generation != generation) {
                out_index.clear();
                generation = impl_->generation;
            }
            if (r.module >= 0 && static_cast<size_t>(r.module) < impl_->modules.size()) {
                f.module = module_out(r.module);
            } else {
                f.module = -1;
            }
            f.module_offset = r.module_offset;
            f.function = std::move(r.function);
            f.file = std::move(r.file);
            f.line = r.line;
            f.inlined = std::move(r.inlined);
        }
    } catch (...) {
        // Out of memory at dump time: leave what is filled; the frames keep their addresses.
    }
}

void Symbolizer::symbolize(snapshot::Snapshot &snapshot) { symbolize(snapshot.frames, snapshot.modules); }

void Symbolizer::refresh_modules() {
    if (!impl_->live) return;
    try {
        impl_->refresh();
    } catch (...) {
    }
}

void Symbolizer::set_registered_modules(std::vector<LoadedModule> registered) {
    if (!impl_->live) return;
    try {
        auto same = [](const LoadedModule &a, const LoadedModule &b) {
            return a.path == b.path && a.base == b.base && a.build_id == b.build_id;
        };
        if (std::equal(registered.begin(), registered.end(), impl_->registered.begin(), impl_->registered.end(), same))
            return; // nothing new since the last dump: keep the caches
        impl_->registered = std::move(registered);
        impl_->refresh();
    } catch (...) {
    }
}

const std::vector<LoadedModule> &Symbolizer::modules() const { return impl_->modules; }

LibdwState Symbolizer::libdw_state() {
    try {
        impl_->dwarf.load(impl_->options);
    } catch (...) {
    }
    return impl_->dwarf.state();
}

const std::string &Symbolizer::libdw_message() const { return impl_->dwarf.message(); }

} // namespace vramtrace::symbolize

namespace vramtrace {

void symbolize_snapshot_frames(snapshot::Snapshot &snapshot, const symbolize::SymbolizerOptions &options,
                               std::vector<symbolize::LoadedModule> registered) {
    static std::mutex mutex;
    static symbolize::Symbolizer *shared = nullptr; // never destroyed: dumps may run during exit
    std::lock_guard<std::mutex> lock(mutex);
    try {
        if (!shared) shared = new symbolize::Symbolizer(options);
        shared->set_registered_modules(std::move(registered));
        shared->symbolize(snapshot);
    } catch (...) {
        // Out of memory: the frames keep their addresses.
    }
}

} // namespace vramtrace
