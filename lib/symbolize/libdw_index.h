// The DWARF side of symbolization: libdw's functions, reached through dlsym only (libdw is
// dlopen'ed at dump time, never linked), and the per-compile-unit index of functions and inlined
// calls built from a unit's DIE tree.
#pragma once

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

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <dlfcn.h>

namespace vramtrace::symbolize {

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

// dwfl_begin's callbacks: debug files found locally only (dwfl_standard_find_debuginfo would also
// ask debuginfod when DEBUGINFOD_URLS is set, from inside someone else's process, at exit).
extern const Dwfl_Callbacks kDwflCallbacks;

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

// Collects the function DIEs under `parent` into `out` (their address ranges) and `index`.
void collect_functions(const LibdwApi &api, Dwarf_Die *parent, uint32_t depth, CuIndex &index,
                       std::vector<Interval> &out, uint32_t enclosing = CuIndex::kNoParent, uint32_t scope = 0);
// Turns the collected ranges into the unit's disjoint segments (innermost function wins).
void build_segments(std::vector<Interval> &iv, CuIndex &index);
// A function DIE's name as reports print it.
std::string die_name(const LibdwApi &api, const CuIndex &unit, Dwarf_Die *die);

#endif // VT_HAVE_LIBDW_HEADERS

} // namespace vramtrace::symbolize
