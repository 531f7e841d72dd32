#include "symbolize/dwarf_lookup.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include "settings/settings.h"
#include "symbolize/debug_files.h"
#include "symbolize/regular_file.h"

namespace vramtrace::symbolize {

DwarfModule::~DwarfModule() {
#if VT_HAVE_LIBDW_HEADERS
    units.clear();
    if (dwfl && api) api->end(dwfl);
#endif
}

#if VT_HAVE_LIBDW_HEADERS
namespace {

// The function DIEs at pc, innermost first (inlined subroutines, then the subprogram they were
// inlined into), as indices into the returned unit; nullptr when the unit has none there.
CuIndex *functions_at(const LibdwApi &api, DwarfModule &s, uint64_t pc, std::vector<uint32_t> &chain) {
    chain.clear();
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = api.module_addrdie(s.module, pc, &bias);
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

const std::string &die_name_cached(const LibdwApi &api, CuIndex &unit, uint32_t die) {
    auto it = unit.names.find(die);
    if (it == unit.names.end()) it = unit.names.emplace(die, die_name(api, unit, &unit.dies[die])).first;
    return it->second;
}

// DW_AT_call_file / DW_AT_call_line of an inlined subroutine: where its caller calls it.
void call_position(const LibdwApi &api, CuIndex &unit, uint32_t die, std::string &file, uint32_t &line) {
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
// (the position in the innermost function). With the call-site attributes (call_sites_ok), the
// inlined functions go to e.inlined, innermost first, each with the position in it, and
// e.file/e.line become the position in the real (outermost) function, where the outermost inlined
// call is. Without them, the innermost inlined function names the frame.
void name_from_dwarf(const LibdwApi &api, bool call_sites_ok, DwarfModule &s, uint64_t pc, FrameNames &e) {
    std::vector<uint32_t> chain;
    CuIndex *unit = functions_at(api, s, pc, chain);
    if (!unit) return;
    size_t inlined = 0; // leading inlined subroutines in the chain
    while (inlined < chain.size() && unit->inlined[chain[inlined]]) ++inlined;
    if (inlined == 0 || !call_sites_ok) {
        // A DWARF subprogram name is used only where the symbol tables had none (symbol names
        // keep clone suffixes).
        const std::string &name = die_name_cached(api, *unit, chain[0]);
        if (!name.empty() && (inlined != 0 || e.function.empty())) e.function = name;
        return;
    }
    std::string file = std::move(e.file);
    uint32_t line = e.line;
    e.inlined.reserve(inlined);
    for (size_t i = 0; i < inlined; ++i) {
        snapshot::Frame::Inlined call;
        call.function = die_name_cached(api, *unit, chain[i]);
        call.file = std::move(file);
        call.line = line;
        e.inlined.push_back(std::move(call));
        call_position(api, *unit, chain[i], file, line); // where chain[i + 1] calls it
    }
    e.file = std::move(file);
    e.line = line;
    if (e.function.empty() && inlined < chain.size()) e.function = die_name_cached(api, *unit, chain[inlined]);
}

} // namespace
#endif // VT_HAVE_LIBDW_HEADERS

void DwarfLookup::load(const SymbolizerOptions &options) {
    if (state_ != LibdwState::NotTried) return;
    // Called at most once per DwarfLookup (the state is set on every path below).
    auto notice = [&](const std::string &message) {
        if (options.notice) options.notice(options.notice_context, message.c_str());
    };
    if (!options.use_libdw) {
        state_ = LibdwState::Disabled;
        message_ = "libdw disabled by option";
        return;
    }
#if !VT_HAVE_LIBDW_HEADERS
    state_ = LibdwState::NotCompiled;
    message_ = "built without libdw support; frames get function names from ELF symbol "
               "tables but no file:line";
    notice(message_);
#else
    std::vector<std::string> candidates;
    const char *env = settings::text(settings::Id::libdw);
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
        api_.handle = dlopen(c.c_str(), RTLD_LOCAL | RTLD_LAZY);
        if (api_.handle) {
            message_ = c;
            break;
        }
        const char *e = dlerror();
        if (!errors.empty()) errors += "; ";
        errors += e ? e : c + ": cannot be loaded";
    }
    if (!api_.handle) {
        state_ = LibdwState::NotFound;
        message_ = std::string(options.libdw_path.empty() && env && *env ? "VRAMTRACE_LIBDW: " : "") +
                   "libdw not loaded (" + errors +
                   "); frames get function names from ELF symbol tables but no file:line";
        notice(message_);
        return;
    }
    const char *missing = nullptr;
    auto need = [&](const char *name, auto &slot) {
        if (!bind_symbol(api_.handle, name, slot) && !missing) missing = name;
    };
    need("dwfl_begin", api_.begin);
    need("dwfl_end", api_.end);
    need("dwfl_report_begin", api_.report_begin);
    need("dwfl_report_elf", api_.report_elf);
    need("dwfl_report_end", api_.report_end);
    need("dwfl_module_getsrc", api_.module_getsrc);
    need("dwfl_lineinfo", api_.lineinfo);
    if (missing) {
        // The handle stays open: unloading a library at dump time (maybe at exit) gains nothing.
        api_ = LibdwApi{};
        state_ = LibdwState::Unusable;
        message_ = "libdw at " + message_ + " lacks " + missing +
                   "; frames get function names from ELF symbol tables but no file:line";
        notice(message_);
        return;
    }
    bind_symbol(api_.handle, "dwfl_module_addrdie", api_.module_addrdie);
    bind_symbol(api_.handle, "dwarf_child", api_.child);
    bind_symbol(api_.handle, "dwarf_siblingof", api_.siblingof);
    bind_symbol(api_.handle, "dwarf_tag", api_.tag);
    bind_symbol(api_.handle, "dwarf_ranges", api_.ranges);
    bind_symbol(api_.handle, "dwarf_attr_integrate", api_.attr_integrate);
    bind_symbol(api_.handle, "dwarf_formstring", api_.formstring);
    bind_symbol(api_.handle, "dwarf_dieoffset", api_.dieoffset);
    bind_symbol(api_.handle, "dwarf_attr", api_.attr);
    bind_symbol(api_.handle, "dwarf_formudata", api_.formudata);
    bind_symbol(api_.handle, "dwarf_getsrcfiles", api_.getsrcfiles);
    bind_symbol(api_.handle, "dwarf_filesrc", api_.filesrc);
    bind_symbol(api_.handle, "dwarf_formref_die", api_.formref_die);
    inline_ok_ = options.inline_frames && api_.has_inline_api();
    call_sites_ok_ = inline_ok_ && api_.has_call_site_api();
    state_ = LibdwState::Loaded;
#endif
}

#if VT_HAVE_LIBDW_HEADERS

void DwarfLookup::open_session(const LoadedModule &m, bool live, bool file_usable, DwarfModule &s) {
    if (s.tried) return;
    s.tried = true;
    if (m.vdso || !file_usable) return;
    s.api = &api_;
    s.dwfl = api_.begin(&kDwflCallbacks);
    if (!s.dwfl) return;
    std::string path = m.path;
    // The running executable's path may be gone or hold another build by now.
    if (live && m.main_executable &&
        (!readable(path) || (!m.build_id.empty() && read_build_id_from_file(path) != m.build_id)))
        path = "/proc/self/exe";
    std::string name = path.substr(path.rfind('/') + 1);
    // Opened here, not by libdw (which would wait on a FIFO put at the path): a regular file
    // starting with the ELF magic. libdw takes the descriptor when it reports the module; when it
    // does not, it closes it only for a compressed image, which the magic rules out, so it is
    // ours to close then.
    int fd = open_regular_file(AT_FDCWD, path.c_str(), {true, false, kMaxElfFileBytes});
    char magic[SELFMAG];
    if (fd >= 0 && (pread(fd, magic, SELFMAG, 0) != SELFMAG || memcmp(magic, ELFMAG, SELFMAG) != 0)) {
        close(fd);
        fd = -1;
    }
    if (fd >= 0) {
        api_.report_begin(s.dwfl);
        s.module = api_.report_elf(s.dwfl, name.c_str(), path.c_str(), fd, m.base, true);
        api_.report_end(s.dwfl, nullptr, nullptr);
        if (!s.module) close(fd);
    }
    if (!s.module) {
        api_.end(s.dwfl);
        s.dwfl = nullptr;
    }
}

void DwarfLookup::describe(const LoadedModule &m, bool live, bool file_usable, DwarfModule &s, uint64_t pc,
                           FrameNames &names) {
    if (state_ != LibdwState::Loaded) return;
    open_session(m, live, file_usable, s);
    if (!s.module) return;
    if (Dwfl_Line *line = api_.module_getsrc(s.module, pc)) {
        int lineno = 0, column = 0;
        Dwarf_Addr at = 0;
        const char *file = api_.lineinfo(line, &at, &lineno, &column, nullptr, nullptr);
        if (file && lineno > 0) {
            names.file = file;
            names.line = static_cast<uint32_t>(lineno);
        }
    }
    if (inline_ok_) name_from_dwarf(api_, call_sites_ok_, s, pc, names);
}

#else

void DwarfLookup::describe(const LoadedModule &, bool, bool, DwarfModule &, uint64_t, FrameNames &) {}

#endif // VT_HAVE_LIBDW_HEADERS

} // namespace vramtrace::symbolize
