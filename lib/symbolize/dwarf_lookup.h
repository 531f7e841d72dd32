// What DWARF says about an address, through libdw: loading libdw itself (the candidates searched,
// the functions it must and may have), one libdw session per module, the line table's file:line
// and the chain of functions inlined at the address (SymbolizedAddress, symbolizer.h). The
// symbolizer owns one DwarfLookup and one DwarfModule per module; it names the frame from the
// symbol tables first and asks here for the rest.
//
// Built without the elfutils headers (VT_HAVE_LIBDW_HEADERS 0, libdw_index.h), load() reports
// LibdwState::NotCompiled, DwarfModule holds nothing and describe() leaves the frame as it is.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "snapshot/snapshot_model.h"
#include "symbolize/libdw_index.h"
#include "symbolize/module_map.h"
#include "symbolize/symbolizer.h"

namespace vramtrace::symbolize {

// What names one frame (the fields of SymbolizedAddress that a look-up fills in).
struct FrameNames {
    std::string function;
    std::string file;
    uint32_t line = 0;
    std::vector<snapshot::Frame::Inlined> inlined; // innermost first (see SymbolizedAddress)
};

// The DWARF state of one module: its libdw session, opened at the first look-up in it, and the
// index of every compile unit looked at. Ends the session (dwfl_end through the api of the
// DwarfLookup that opened it) when destroyed, so it must go before that DwarfLookup does.
struct DwarfModule {
#if VT_HAVE_LIBDW_HEADERS
    bool tried = false;
    Dwfl *dwfl = nullptr;
    Dwfl_Module *module = nullptr;
    std::unordered_map<uint64_t, std::unique_ptr<CuIndex>> units; // by compile unit DIE offset
    const LibdwApi *api = nullptr;
#endif

    DwarfModule() = default;
    DwarfModule(const DwarfModule &) = delete;
    DwarfModule &operator=(const DwarfModule &) = delete;
    ~DwarfModule();
};

class DwarfLookup {
public:
    DwarfLookup() = default;
    DwarfLookup(const DwarfLookup &) = delete;
    DwarfLookup &operator=(const DwarfLookup &) = delete;

    // Loads libdw the first time (does nothing after that): `options` say whether, from where (the
    // order in symbolizer.h) and whether inlined calls are wanted. When libdw is wanted but cannot
    // be used, options.notice hears it once.
    void load(const SymbolizerOptions &options);
    LibdwState state() const { return state_; }
    const std::string &message() const { return message_; } // the notice's text, or the path in use

    // DWARF's view of pc, an address in module m: the line table's file:line, then, with inlined
    // calls wanted, the inlined functions (SymbolizedAddress). `names` comes in with the symbol
    // table's function name, which DWARF replaces only where it is empty (or, without the
    // call-site functions, with the innermost inlined function). `file_usable`: m's file on disk
    // is the one loaded; `live`: m is an object of this process (its executable may then be read
    // through /proc/self/exe). Does nothing unless load() left libdw Loaded.
    void describe(const LoadedModule &m, bool live, bool file_usable, DwarfModule &s, uint64_t pc,
                  FrameNames &names);

private:
    LibdwState state_ = LibdwState::NotTried;
    std::string message_;
#if VT_HAVE_LIBDW_HEADERS
    LibdwApi api_;
    bool inline_ok_ = false;
    bool call_sites_ok_ = false; // DW_AT_call_file/line readable: frames get their chain of inlined calls

    void open_session(const LoadedModule &m, bool live, bool file_usable, DwarfModule &s);
#endif
};

} // namespace vramtrace::symbolize
