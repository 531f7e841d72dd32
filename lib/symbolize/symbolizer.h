// Symbolization of raw return addresses: module + offset, demangled function, file:line.
//
// Sources, per address, best first:
//   1. DWARF through libdw, loaded at run time with dlopen(RTLD_LOCAL | RTLD_LAZY) and used only
//      through dlsym'ed pointers (libvramtrace.so never has libdw in NEEDED). Tried in this order:
//        - SymbolizerOptions::libdw_path when non-empty, else $VRAMTRACE_LIBDW when set and
//          non-empty: that path ONLY (an explicit choice is not second-guessed, so
//          VRAMTRACE_LIBDW=/nonexistent turns libdw off);
//        - otherwise libdw.so.1 in the directory of the object holding this code (libvramtrace.so,
//          or the CLI), then plain "libdw.so.1" (the dynamic linker's search).
//      libdw gives file:line and, with inline_frames, the chain of inlined calls at the address
//      (see SymbolizedAddress::inlined). Separate debug files are searched locally only (build id under /usr/lib/debug,
//      .gnu_debuglink beside the file, in .debug/ and under /usr/lib/debug): never debuginfod, so
//      a dump never waits on the network.
//   2. Our own reader of the module's ELF file (mmap): .symtab, else .dynsym (also .symtab of a
//      separate debug file found as above), sorted once per module; names static functions too.
//      The real function's name always comes from here (DWARF names it only where the tables have
//      no symbol), so it is the same with or without libdw; without libdw there is no file:line
//      and no inlined call.
//   3. dladdr (only for addresses of this very process, when 1 and 2 found no name).
//
// Return addresses point after the call; they are looked up at address - 1 so that the line is
// the call's and a call that ends a function is not attributed to the next one
// (AddressKind::Return, the default). AddressKind::Exact looks an address up as is (function
// entry points, a faulting pc).
//
// Results are cached per looked-up address and everything per module (symbol table, libdw session,
// per-compile-unit index of inlined code) is built once. Not thread-safe: use one Symbolizer from
// one thread at a time. It allocates with malloc/new and takes no lock of vramtrace's own, so it
// belongs at dump time, never on the interception path or in a signal handler.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "symbolize/module_map.h"
#include "snapshot/snapshot_model.h"

namespace vramtrace::symbolize {

enum class AddressKind {
    Return, // a return address (stack frames): looked up at address - 1
    Exact,  // an instruction address (function entry, faulting pc): looked up as is
};

enum class LibdwState {
    NotTried,     // nothing needed it yet (libdw is loaded at the first look-up)
    Loaded,       // in use
    Disabled,     // SymbolizerOptions::use_libdw == false
    NotFound,     // no candidate could be dlopen'ed
    Unusable,     // dlopen'ed, but a needed function is missing
    NotCompiled,  // built without the elfutils headers
};

struct SymbolizerOptions {
    bool use_libdw = true;
    bool inline_frames = true; // with libdw: fill SymbolizedAddress::inlined / Frame::inlined
    std::string libdw_path;    // overrides $VRAMTRACE_LIBDW and the search when non-empty

    // Called at most once per Symbolizer when libdw is wanted but cannot be used (state NotFound or
    // Unusable), with a one-line message without prefix or newline, e.g.
    //   "libdw not loaded (libdw.so.1: cannot open shared object file...); frames get function
    //    names from ELF symbol tables but no file:line".
    // The caller prints it (the library with its "vramtrace:" prefix). Nothing is printed here.
    void (*notice)(void *context, const char *message) = nullptr;
    void *notice_context = nullptr;
};

// What an address is. With inlined code (libdw and inline_frames), as snapshot::Frame::inlined:
// `inlined` lists the functions inlined at the address, innermost first, each with the position
// in it (inlined[0]: the line the address is on; inlined[i + 1]: where inlined[i] is called,
// from DW_AT_call_file/DW_AT_call_line); `function` is the real (outermost) function, from the
// symbol table, and file:line the position in it where the outermost inlined call is. Names of
// inlined functions come from DWARF (DW_AT_linkage_name demangled, through DW_AT_abstract_origin
// and DW_AT_specification; DW_AT_name when there is no linkage name). Example, with g() inlined
// into f() at a.cpp:10 and the address in g() at a.cpp:3:
//   function "f()", a.cpp:10, inlined {{"g()", "a.cpp", 3}}.
// Without inline_frames, or when libdw lacks the call-site functions (dwarf_attr,
// dwarf_formudata, dwarf_getsrcfiles, dwarf_filesrc), `inlined` stays empty and file:line is the
// line the address is on; in the second case `function` is then the innermost inlined function.
struct SymbolizedAddress {
    int module = -1;            // index into Symbolizer::modules(), -1 when unknown
    uint64_t module_offset = 0; // address - module base (the address itself, not address - 1)
    std::string function;       // demangled, empty when unknown
    std::string file;           // empty without debug info
    uint32_t line = 0;          // 0 without debug info
    std::vector<snapshot::Frame::Inlined> inlined; // innermost first; empty when nothing is inlined
};

class Symbolizer {
public:
    // Addresses of this process: the module map comes from read_loaded_modules() (at the first
    // look-up, and again when an address falls outside every known module: a library dlopen'ed
    // since) and dladdr is the last resort.
    explicit Symbolizer(SymbolizerOptions options = {});

    // Addresses of another process, or of this one at an earlier time (the CLI, from a snapshot's
    // modules): only these modules, never dladdr. Modules given without segments get them from the
    // PT_LOAD headers of their file placed at their base.
    Symbolizer(std::vector<LoadedModule> modules, SymbolizerOptions options);

    ~Symbolizer();
    Symbolizer(const Symbolizer &) = delete;
    Symbolizer &operator=(const Symbolizer &) = delete;

    // One address. The result stays cached.
    SymbolizedAddress lookup(uint64_t address, AddressKind kind = AddressKind::Return);

    // Fills module, module_offset, function, file, line and inlined of every frame from its address, and
    // appends each module a frame refers to to `modules` once (matched by path and base, so
    // entries already there are reused). Frame::module indexes `modules`.
    void symbolize(std::vector<snapshot::Frame> &frames, std::vector<snapshot::Module> &modules,
                   AddressKind kind = AddressKind::Return);

    // symbolize(snapshot.frames, snapshot.modules).
    void symbolize(snapshot::Snapshot &snapshot);

    // Live mode: read the module map again now (drops what was cached for modules that are gone or
    // moved). Offline mode: does nothing.
    void refresh_modules();

    // Live mode: objects seen loaded earlier in this run (the module registry), newest first. Those
    // not loaded now (no loaded object with the same path and base) join the module map, known by
    // path, base, segments and build id, and their frames are named from their files on disk.
    // Address reuse: one whose segments overlap a loaded object, or an unloaded object registered
    // later, is left out (the loaded one, or the newer one, names those addresses). Offline mode:
    // does nothing.
    void set_registered_modules(std::vector<LoadedModule> registered);

    const std::vector<LoadedModule> &modules() const;

    // libdw: loads it when still NotTried (so callers can report the state before any look-up).
    LibdwState libdw_state();
    const std::string &libdw_message() const; // the notice's text, or the path in use when Loaded

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// The path of the object (shared library or executable) that contains this code, from dladdr;
// empty when unknown. The directory searched first for libdw.so.1.
std::string own_object_path();

// abi::__cxa_demangle of a mangled C++ name; other names (C, or anything that fails to demangle)
// come back unchanged. A version suffix ("@GLIBC_2.2.5", "@@...") is dropped first.
std::string demangle(const char *name);

} // namespace vramtrace::symbolize

namespace vramtrace {

// The dump path's entry point: symbolizes snapshot.frames (from their addresses) and appends the
// modules they point into to snapshot.modules, with one Symbolizer for this process that lives until
// exit (never destroyed, so its caches serve every later dump and nothing runs in a static
// destructor). Calls are serialized by a mutex private to the symbolizer. `options` is used by the
// first call only (it creates the Symbolizer); its notice callback is where the caller learns, once,
// that libdw is missing.
// `registered`: the module registry's objects, newest first (see
// Symbolizer::set_registered_modules), so that frames of dlclose'd libraries are named too.
void symbolize_snapshot_frames(snapshot::Snapshot &snapshot,
                               const symbolize::SymbolizerOptions &options = {},
                               std::vector<symbolize::LoadedModule> registered = {});

} // namespace vramtrace
