#include "reporting/symbolizer.h"

#include "reporting/debug_files.h"
#include "reporting/elf_symbols.h"

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

// The elfutils headers give libdw's types and prototypes only; every function is reached through
// dlsym. Without the headers (or with -DVT_NO_LIBDW) the build still works, with libdw support
// compiled out.
#if !defined(VT_NO_LIBDW) && __has_include(<elfutils/libdwfl.h>) && __has_include(<dwarf.h>)
#define VT_HAVE_LIBDW_HEADERS 1
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#else
#define VT_HAVE_LIBDW_HEADERS 0
#endif

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
// libdw, reached through dlsym only

#if VT_HAVE_LIBDW_HEADERS

struct LibdwApi {
    void *handle = nullptr;
    // file:line (required)
    decltype(&::dwfl_begin) begin = nullptr;
    decltype(&::dwfl_end) end = nullptr;
    decltype(&::dwfl_report_begin) report_begin = nullptr;
    decltype(&::dwfl_report_elf) report_elf = nullptr;
    decltype(&::dwfl_report_end) report_end = nullptr;
    decltype(&::dwfl_module_getsrc) module_getsrc = nullptr;
    decltype(&::dwfl_lineinfo) lineinfo = nullptr;
    // inlined functions (optional)
    decltype(&::dwfl_module_addrdie) module_addrdie = nullptr;
    decltype(&::dwarf_child) child = nullptr;
    decltype(&::dwarf_siblingof) siblingof = nullptr;
    decltype(&::dwarf_tag) tag = nullptr;
    decltype(&::dwarf_ranges) ranges = nullptr;
    decltype(&::dwarf_attr_integrate) attr_integrate = nullptr;
    decltype(&::dwarf_formstring) formstring = nullptr;
    decltype(&::dwarf_dieoffset) dieoffset = nullptr;
    // the chain of inlined calls (optional: without them a frame names only the innermost function)
    decltype(&::dwarf_attr) attr = nullptr;
    decltype(&::dwarf_formudata) formudata = nullptr;
    decltype(&::dwarf_getsrcfiles) getsrcfiles = nullptr;
    decltype(&::dwarf_filesrc) filesrc = nullptr;
    // qualified names of functions without a linkage name (optional)
    decltype(&::dwarf_formref_die) formref_die = nullptr;

    bool has_inline_api() const {
        return module_addrdie && child && siblingof && tag && ranges && attr_integrate && formstring &&
               dieoffset;
    }
    bool has_call_site_api() const { return attr && formudata && getsrcfiles && filesrc; }
};

template <typename F> bool bind_symbol(void *handle, const char *name, F &out) {
    out = reinterpret_cast<F>(dlsym(handle, name));
    return out != nullptr;
}

// find_debuginfo: local files only (dwfl_standard_find_debuginfo would also ask debuginfod when
// DEBUGINFOD_URLS is set, from inside someone else's process, at exit).
int find_debuginfo_locally(Dwfl_Module *, void **, const char *, Dwarf_Addr, const char *file_name,
                           const char *debuglink_file, GElf_Word, char **debuginfo_file_name) {
    if (!file_name) return -1;
    std::string path(file_name);
    std::string found;
    try {
        found = find_debug_file(path, read_build_id_from_file(path), debuglink_file ? debuglink_file : "");
    } catch (...) {
        return -1;
    }
    if (found.empty()) return -1;
    int fd = open(found.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    if (debuginfo_file_name) *debuginfo_file_name = strdup(found.c_str());
    return fd;
}

const Dwfl_Callbacks kDwflCallbacks = {
    nullptr,                 // find_elf: every module is reported with its file
    &find_debuginfo_locally, // find_debuginfo
    nullptr,                 // section_address: only ET_REL needs it
    nullptr,                 // debuginfo_path
};

// Innermost function (subprogram or inlined subroutine) per address range of one compile unit,
// built once by walking the unit's DIE tree: a partition of the unit's code into disjoint segments.
// Each function DIE keeps the index of the function DIE that encloses it (the caller an inlined
// subroutine was inlined into), so the whole chain of inlined calls at an address is a walk up
// these links: no second pass over the tree per address (dwarf_getscopes would walk the unit
// again for every address).
struct CuIndex {
    struct Segment {
        uint64_t lo, hi; // ELF addresses (before bias)
        uint32_t die;    // index into dies
    };
    static constexpr uint32_t kNoParent = UINT32_MAX;
    Dwarf_Die cu{};                 // the unit's DIE (its file table resolves DW_AT_call_file)
    std::vector<Dwarf_Die> dies;
    std::vector<bool> inlined;
    std::vector<uint32_t> parent;   // enclosing function DIE, kNoParent for the outermost
    std::vector<Segment> segments;
    std::unordered_map<uint32_t, std::string> names;
    bool files_loaded = false;
    Dwarf_Files *files = nullptr;   // owned by libdw (lives as long as the Dwfl)
    size_t file_count = 0;
    // The scope ("ns::Class::", index into scopes; scopes[0] = "") of each function declaration in
    // the unit that has a DW_AT_name but no DW_AT_linkage_name, by DIE offset (same walk).
    std::vector<std::string> scopes{std::string()};
    std::unordered_map<uint64_t, uint32_t> decl_scope;

    int find(uint64_t vaddr) const {
        auto it = std::upper_bound(segments.begin(), segments.end(), vaddr,
                                   [](uint64_t v, const Segment &s) { return v < s.lo; });
        if (it == segments.begin()) return -1;
        --it;
        return vaddr < it->hi ? static_cast<int>(it->die) : -1;
    }
};

struct Interval {
    uint64_t lo, hi;
    uint32_t depth;
    uint32_t die;
};

bool descend_into(int tag) {
    switch (tag) {
    case DW_TAG_subprogram:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_lexical_block:
    case DW_TAG_namespace:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_try_block:
    case DW_TAG_catch_block:
    case DW_TAG_module:
        return true;
    default:
        return false;
    }
}

void collect_functions(const LibdwApi &api, Dwarf_Die *parent, uint32_t depth, CuIndex &index,
                       std::vector<Interval> &out, uint32_t enclosing = CuIndex::kNoParent,
                       uint32_t scope = 0) {
    Dwarf_Die child;
    if (api.child(parent, &child) != 0) return;
    for (;;) {
        int tag = api.tag(&child);
        uint32_t d = depth;
        uint32_t inner_enclosing = enclosing;
        uint32_t child_scope = scope;
        Dwarf_Attribute attr;
        if (api.attr && (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
                         tag == DW_TAG_structure_type || tag == DW_TAG_union_type)) {
            // As the demangler writes them.
            const char *name = api.attr(&child, DW_AT_name, &attr) ? api.formstring(&attr) : nullptr;
            child_scope = static_cast<uint32_t>(index.scopes.size());
            index.scopes.push_back(index.scopes[scope] +
                                   (name ? name : tag == DW_TAG_namespace ? "(anonymous namespace)" : "{unnamed type}") +
                                   "::");
        }
        // Declarations of functions without a linkage name keep their scope (see die_name).
        if (tag == DW_TAG_subprogram && scope != 0 && api.attr && api.attr(&child, DW_AT_name, &attr) &&
            !api.attr(&child, DW_AT_linkage_name, &attr))
            index.decl_scope.emplace(api.dieoffset(&child), scope);
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
            uint32_t die = static_cast<uint32_t>(index.dies.size());
            bool any = false;
            Dwarf_Addr base = 0, lo = 0, hi = 0;
            ptrdiff_t off = 0;
            while ((off = api.ranges(&child, off, &base, &lo, &hi)) > 0)
                if (hi > lo) {
                    out.push_back({lo, hi, depth + 1, die});
                    any = true;
                }
            if (any) {
                index.dies.push_back(child);
                index.inlined.push_back(tag == DW_TAG_inlined_subroutine);
                index.parent.push_back(enclosing);
                inner_enclosing = die;
                d = depth + 1;
            }
        }
        if (descend_into(tag) && depth < 512)
            collect_functions(api, &child, d, index, out, inner_enclosing, child_scope);
        Dwarf_Die next;
        if (api.siblingof(&child, &next) != 0) break;
        child = next;
    }
}

void build_segments(std::vector<Interval> &iv, CuIndex &index) {
    // Outer before inner: by start, then longer first, then shallower first.
    std::sort(iv.begin(), iv.end(), [](const Interval &a, const Interval &b) {
        if (a.lo != b.lo) return a.lo < b.lo;
        if (a.hi != b.hi) return a.hi > b.hi;
        return a.depth < b.depth;
    });
    std::vector<Interval> open;
    uint64_t cursor = 0;
    auto emit = [&](uint64_t lo, uint64_t hi, uint32_t die) {
        if (hi > lo) index.segments.push_back({lo, hi, die});
    };
    auto close_until = [&](uint64_t limit) {
        while (!open.empty() && open.back().hi <= limit) {
            const Interval top = open.back();
            open.pop_back();
            if (top.hi > cursor) {
                emit(cursor, top.hi, top.die);
                cursor = top.hi;
            }
        }
    };
    for (const Interval &i : iv) {
        close_until(i.lo);
        if (!open.empty() && i.lo > cursor) emit(cursor, i.lo, open.back().die);
        cursor = std::max(cursor, i.lo);
        open.push_back(i);
    }
    close_until(UINT64_MAX);
    index.segments.shrink_to_fit();
}

// The namespaces and classes enclosing a function's declaration, as a prefix: "ns::Class::".
// Follows DW_AT_abstract_origin / DW_AT_specification to the declaration and looks it up in the
// scopes recorded while the unit was indexed (dwarf_getscopes_die would answer too, but walks the
// unit from its start each time: 26 s instead of 0.6 s for 20k addresses in a Catch2 binary).
// Empty when the chain cannot be followed or leaves the unit.
std::string scope_prefix(const LibdwApi &api, const CuIndex &unit, Dwarf_Die *die) {
    if (!api.attr || !api.formref_die || unit.decl_scope.empty()) return {};
    Dwarf_Die decl = *die;
    for (int hops = 0; hops < 8; ++hops) {
        Dwarf_Attribute attr;
        Dwarf_Die next;
        if (!api.attr(&decl, DW_AT_abstract_origin, &attr) && !api.attr(&decl, DW_AT_specification, &attr)) break;
        if (!api.formref_die(&attr, &next)) break;
        decl = next;
    }
    auto it = unit.decl_scope.find(api.dieoffset(&decl));
    return it == unit.decl_scope.end() ? std::string() : unit.scopes[it->second];
}

// A function DIE's name: its linkage name demangled (through DW_AT_abstract_origin and
// DW_AT_specification), so it reads as the symbol table's names do. GCC gives functions with
// internal linkage (static, anonymous namespace) no linkage name: those are named
// "namespace::Class::name", without parameter types.
std::string die_name(const LibdwApi &api, const CuIndex &unit, Dwarf_Die *die) {
    Dwarf_Attribute attr;
    for (int at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
        if (api.attr_integrate(die, at, &attr)) {
            if (const char *s = api.formstring(&attr)) return demangle(s);
        }
    }
    if (api.attr_integrate(die, DW_AT_name, &attr)) {
        if (const char *s = api.formstring(&attr)) return scope_prefix(api, unit, die) + s;
    }
    return {};
}

#endif // VT_HAVE_LIBDW_HEADERS

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
