#include "symbolize/symbolizer.h"

#include "symbolize/debug_files.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/libdw_index.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
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


// ---------------------------------------------------------------------------------------------
// Per-module state

struct ModuleState {
    bool elf_tried = false;
    bool file_usable = false; // the file on disk is the one loaded (build ids agree or unknown)
    MappedFile file;
    MappedFile debug_file;
    SymbolTable symbols;
    std::unordered_map<int, std::string> names; // symbol index -> demangled

#if VT_HAVE_LIBDW_HEADERS
    bool dwfl_tried = false;
    Dwfl *dwfl = nullptr;
    Dwfl_Module *dwfl_module = nullptr;
    std::unordered_map<uint64_t, std::unique_ptr<CuIndex>> units; // by compile unit DIE offset
    const LibdwApi *api = nullptr;
#endif

    ModuleState() = default;
    ModuleState(const ModuleState &) = delete;
    ModuleState &operator=(const ModuleState &) = delete;
    ~ModuleState() {
#if VT_HAVE_LIBDW_HEADERS
        units.clear();
        if (dwfl && api) api->end(dwfl);
#endif
    }
};

struct CacheEntry {
    int module = -1;
    std::string function;
    std::string file;
    uint32_t line = 0;
    std::vector<report::Frame::Inlined> inlined; // innermost first (see SymbolizedAddress)
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

    LibdwState libdw_state = LibdwState::NotTried;
    std::string libdw_message;
    bool notice_sent = false;
#if VT_HAVE_LIBDW_HEADERS
    LibdwApi api; // declared before `states`, whose destructors still call dwfl_end through it
    bool inline_ok = false;
    bool call_sites_ok = false; // DW_AT_call_file/line readable: frames get their chain of inlined calls
#endif

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

    void notice(const std::string &message) {
        if (notice_sent || !options.notice) return;
        notice_sent = true;
        options.notice(options.notice_context, message.c_str());
    }

    void load_libdw() {
        if (libdw_state != LibdwState::NotTried) return;
        if (!options.use_libdw) {
            libdw_state = LibdwState::Disabled;
            libdw_message = "libdw disabled by option";
            return;
        }
#if !VT_HAVE_LIBDW_HEADERS
        libdw_state = LibdwState::NotCompiled;
        libdw_message = "built without libdw support; frames get function names from ELF symbol "
                        "tables but no file:line";
        notice(libdw_message);
        return;
#else
        std::vector<std::string> candidates;
        const char *env = secure_getenv("VRAMTRACE_LIBDW");
        if (!options.libdw_path.empty()) {
            candidates.push_back(options.libdw_path);
        } else if (env && *env) {
            candidates.push_back(env);
        } else {
            std::string own = own_object_path();
            if (!own.empty()) candidates.push_back(directory_of(own) + "/libdw.so.1");
            candidates.push_back("libdw.so.1");
        }
        std::string errors;
        for (const std::string &c : candidates) {
            api.handle = dlopen(c.c_str(), RTLD_LOCAL | RTLD_LAZY);
            if (api.handle) {
                libdw_message = c;
                break;
            }
            const char *e = dlerror();
            if (!errors.empty()) errors += "; ";
            errors += e ? e : c + ": cannot be loaded";
        }
        if (!api.handle) {
            libdw_state = LibdwState::NotFound;
            libdw_message = std::string(options.libdw_path.empty() && env && *env ? "VRAMTRACE_LIBDW: " : "") + "libdw not loaded (" + errors +
                            "); frames get function names from ELF symbol tables but no file:line";
            notice(libdw_message);
            return;
        }
        const char *missing = nullptr;
        auto need = [&](const char *name, auto &slot) {
            if (!bind_symbol(api.handle, name, slot) && !missing) missing = name;
        };
        need("dwfl_begin", api.begin);
        need("dwfl_end", api.end);
        need("dwfl_report_begin", api.report_begin);
        need("dwfl_report_elf", api.report_elf);
        need("dwfl_report_end", api.report_end);
        need("dwfl_module_getsrc", api.module_getsrc);
        need("dwfl_lineinfo", api.lineinfo);
        if (missing) {
            // The handle stays open: unloading a library at dump time (maybe at exit) gains nothing.
            api = LibdwApi{};
            libdw_state = LibdwState::Unusable;
            libdw_message = "libdw at " + libdw_message + " lacks " + missing +
                            "; frames get function names from ELF symbol tables but no file:line";
            notice(libdw_message);
            return;
        }
        bind_symbol(api.handle, "dwfl_module_addrdie", api.module_addrdie);
        bind_symbol(api.handle, "dwarf_child", api.child);
        bind_symbol(api.handle, "dwarf_siblingof", api.siblingof);
        bind_symbol(api.handle, "dwarf_tag", api.tag);
        bind_symbol(api.handle, "dwarf_ranges", api.ranges);
        bind_symbol(api.handle, "dwarf_attr_integrate", api.attr_integrate);
        bind_symbol(api.handle, "dwarf_formstring", api.formstring);
        bind_symbol(api.handle, "dwarf_dieoffset", api.dieoffset);
        bind_symbol(api.handle, "dwarf_attr", api.attr);
        bind_symbol(api.handle, "dwarf_formudata", api.formudata);
        bind_symbol(api.handle, "dwarf_getsrcfiles", api.getsrcfiles);
        bind_symbol(api.handle, "dwarf_filesrc", api.filesrc);
        bind_symbol(api.handle, "dwarf_formref_die", api.formref_die);
        inline_ok = options.inline_frames && api.has_inline_api();
        call_sites_ok = inline_ok && api.has_call_site_api();
        libdw_state = LibdwState::Loaded;
#endif
    }

    // The path to open for module i (the running executable through /proc/self/exe, which works
    // even when the file was deleted or replaced since).
    std::string open_path(const LoadedModule &m) const {
        if (live && m.main_executable) return "/proc/self/exe";
        return m.path;
    }

    void ensure_elf(const LoadedModule &m, ModuleState &s) {
        if (s.elf_tried) return;
        s.elf_tried = true;
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
            std::string debug = find_debug_file(m.path, m.build_id, debuglink_of(data, size));
            if (!debug.empty() && s.debug_file.open(debug.c_str()) &&
                s.symbols.load(s.debug_file.data(), s.debug_file.size(), SHT_SYMTAB))
                return;
            s.debug_file.reset();
        }
        s.symbols.load(data, size, SHT_DYNSYM);
    }

#if VT_HAVE_LIBDW_HEADERS
    void ensure_dwfl(const LoadedModule &m, ModuleState &s) {
        if (s.dwfl_tried) return;
        s.dwfl_tried = true;
        if (libdw_state != LibdwState::Loaded || m.vdso || !s.file_usable) return;
        s.api = &api;
        s.dwfl = api.begin(&kDwflCallbacks);
        if (!s.dwfl) return;
        std::string path = m.path;
        // The running executable's path may be gone or hold another build by now.
        if (live && m.main_executable && (!readable(path) || (!m.build_id.empty() &&
                                                               read_build_id_from_file(path) != m.build_id)))
            path = "/proc/self/exe";
        std::string name = path.substr(path.rfind('/') + 1);
        api.report_begin(s.dwfl);
        s.dwfl_module = api.report_elf(s.dwfl, name.c_str(), path.c_str(), -1, m.base, true);
        api.report_end(s.dwfl, nullptr, nullptr);
        if (!s.dwfl_module) {
            api.end(s.dwfl);
            s.dwfl = nullptr;
        }
    }

    // The function DIEs at pc, innermost first (inlined subroutines, then the subprogram they were
    // inlined into), as indices into the returned unit; nullptr when the unit has none there.
    CuIndex *functions_at(ModuleState &s, uint64_t pc, std::vector<uint32_t> &chain) {
        chain.clear();
        Dwarf_Addr bias = 0;
        Dwarf_Die *cu = api.module_addrdie(s.dwfl_module, pc, &bias);
        if (!cu) return nullptr;
        uint64_t key = api.dieoffset(cu);
        auto &slot = s.units[key];
        if (!slot) {
            slot = std::make_unique<CuIndex>();
            slot->cu = *cu;
            std::vector<Interval> intervals;
            collect_functions(api, cu, 0, *slot, intervals);
            build_segments(intervals, *slot);
        }
        CuIndex &unit = *slot;
        int die = unit.find(pc - bias);
        // Bounded: collect_functions stops descending at depth 512.
        for (uint32_t d = die < 0 ? CuIndex::kNoParent : static_cast<uint32_t>(die);
             d != CuIndex::kNoParent && chain.size() <= 512; d = unit.parent[d])
            chain.push_back(d);
        return chain.empty() ? nullptr : &unit;
    }

    const std::string &die_name_cached(CuIndex &unit, uint32_t die) {
        auto it = unit.names.find(die);
        if (it == unit.names.end()) it = unit.names.emplace(die, die_name(api, unit, &unit.dies[die])).first;
        return it->second;
    }

    // DW_AT_call_file / DW_AT_call_line of an inlined subroutine: where its caller calls it.
    void call_position(CuIndex &unit, uint32_t die, std::string &file, uint32_t &line) {
        file.clear();
        line = 0;
        Dwarf_Attribute attr;
        Dwarf_Word value = 0;
        if (api.attr(&unit.dies[die], DW_AT_call_line, &attr) && api.formudata(&attr, &value) == 0 &&
            value <= UINT32_MAX)
            line = static_cast<uint32_t>(value);
        if (!api.attr(&unit.dies[die], DW_AT_call_file, &attr) || api.formudata(&attr, &value) != 0) return;
        if (!unit.files_loaded) {
            unit.files_loaded = true;
            if (api.getsrcfiles(&unit.cu, &unit.files, &unit.file_count) != 0) {
                unit.files = nullptr;
                unit.file_count = 0;
            }
        }
        if (unit.files && value < unit.file_count)
            if (const char *name = api.filesrc(unit.files, static_cast<size_t>(value), nullptr, nullptr))
                file = name;
    }

    // Names the frame from DWARF. `e` holds the symbol table's name and the line table's file:line
    // (the position in the innermost function). With the call-site attributes, the inlined
    // functions go to e.inlined, innermost first, each with the position in it, and e.file/e.line
    // become the position in the real (outermost) function, where the outermost inlined call is.
    // Without them, the innermost inlined function names the frame (the older behaviour).
    void name_from_dwarf(ModuleState &s, uint64_t pc, CacheEntry &e) {
        std::vector<uint32_t> chain;
        CuIndex *unit = functions_at(s, pc, chain);
        if (!unit) return;
        size_t inlined = 0; // leading inlined subroutines in the chain
        while (inlined < chain.size() && unit->inlined[chain[inlined]]) ++inlined;
        if (inlined == 0 || !call_sites_ok) {
            // A DWARF subprogram name is used only where the symbol tables had none (symbol names
            // keep clone suffixes).
            const std::string &name = die_name_cached(*unit, chain[0]);
            if (!name.empty() && (inlined != 0 || e.function.empty())) e.function = name;
            return;
        }
        std::string file = std::move(e.file);
        uint32_t line = e.line;
        e.inlined.reserve(inlined);
        for (size_t i = 0; i < inlined; ++i) {
            report::Frame::Inlined call;
            call.function = die_name_cached(*unit, chain[i]);
            call.file = std::move(file);
            call.line = line;
            e.inlined.push_back(std::move(call));
            call_position(*unit, chain[i], file, line); // where chain[i + 1] calls it
        }
        e.file = std::move(file);
        e.line = line;
        if (e.function.empty() && inlined < chain.size()) e.function = die_name_cached(*unit, chain[inlined]);
    }
#endif

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
            ensure_elf(m, s);
            uint64_t vaddr = pc - m.base;
            if (s.file_usable) {
                int sym = s.symbols.find(vaddr);
                if (sym >= 0) {
                    auto it = s.names.find(sym);
                    if (it == s.names.end()) it = s.names.emplace(sym, demangle(s.symbols.name(sym))).first;
                    e.function = it->second;
                }
            }
            if (options.use_libdw) load_libdw();
#if VT_HAVE_LIBDW_HEADERS
            if (libdw_state == LibdwState::Loaded) {
                ensure_dwfl(m, s);
                if (s.dwfl_module) {
                    if (Dwfl_Line *line = api.module_getsrc(s.dwfl_module, pc)) {
                        int lineno = 0, column = 0;
                        Dwarf_Addr at = 0;
                        const char *file = api.lineinfo(line, &at, &lineno, &column, nullptr, nullptr);
                        if (file && lineno > 0) {
                            e.file = file;
                            e.line = static_cast<uint32_t>(lineno);
                        }
                    }
                    if (inline_ok) name_from_dwarf(s, pc, e);
                }
            }
#endif
        }
        if (e.function.empty() && live && (mi < 0 || !modules[static_cast<size_t>(mi)].unloaded)) {
            Dl_info info{};
            if (dladdr(reinterpret_cast<void *>(pc), &info) && info.dli_sname && info.dli_saddr)
                e.function = demangle(info.dli_sname);
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

void Symbolizer::symbolize(std::vector<report::Frame> &frames, std::vector<report::Module> &modules,
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
                modules.push_back(report::Module{m.path, m.base, m.build_id});
                found = static_cast<int>(modules.size() - 1);
            }
            out_index.emplace(mi, found);
            return found;
        };
        uint64_t generation = impl_->generation;
        for (report::Frame &f : frames) {
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

void Symbolizer::symbolize(report::Snapshot &snapshot) { symbolize(snapshot.frames, snapshot.modules); }

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
        impl_->load_libdw();
    } catch (...) {
    }
    return impl_->libdw_state;
}

const std::string &Symbolizer::libdw_message() const { return impl_->libdw_message; }

} // namespace vramtrace::symbolize

namespace vramtrace {

void symbolize_snapshot_frames(report::Snapshot &snapshot, const symbolize::SymbolizerOptions &options,
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
