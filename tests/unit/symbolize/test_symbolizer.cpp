#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <map>
#include <sstream>
#include <sys/auxv.h>

#include "symbolize/symbolizer.h"
#include "symbolize_test_util.h"
#include "report/text_format.h"

using namespace vramtrace::symbolize;
using namespace vt_symbolize_test;
namespace report = vramtrace::report;
namespace snapshot = vramtrace::snapshot;

// ---------------------------------------------------------------------------------------------
// Code at known places in this executable. noipa keeps GCC from inlining, cloning (.constprop,
// .isra) or tail-calling, so the names and lines below are exact.

namespace vt_symbolize_test {

volatile int g_sink = 0;

struct Captured {
    void *ra = nullptr; // a return address inside the function
    int line = 0;       // the line of the call it returns from
};

__attribute__((noipa)) void *capture_return_address() { return __builtin_return_address(0); }

constexpr int kExportedTargetLine = __LINE__ + 1;
__attribute__((noipa)) Captured exported_target(int x) {
    Captured c;
    c.ra = capture_return_address(); c.line = __LINE__;
    g_sink = g_sink + x;
    return c;
}

__attribute__((always_inline)) inline Captured inlined_helper(int x) {
    Captured c;
    c.ra = capture_return_address(); c.line = __LINE__;
    g_sink = g_sink + x;
    return c;
}

constexpr int kInlinedHelperCallLine = __LINE__ + 2;
__attribute__((noipa)) Captured calls_inlined_helper(int x) {
    Captured c = inlined_helper(x);
    g_sink = g_sink + 1;
    return c;
}

} // namespace vt_symbolize_test

constexpr int kStaticTargetLine = __LINE__ + 1;
__attribute__((noipa)) static vt_symbolize_test::Captured static_target(int x) {
    vt_symbolize_test::Captured c;
    c.ra = vt_symbolize_test::capture_return_address(); c.line = __LINE__;
    vt_symbolize_test::g_sink = vt_symbolize_test::g_sink + x;
    return c;
}

namespace {

const char *const kExportedName = "vt_symbolize_test::exported_target(int)";
const char *const kStaticName = "static_target(int)";
const char *const kThisFile = "test_symbolizer.cpp";

bool libdw_available_here() {
    void *h = dlopen("libdw.so.1", RTLD_LAZY | RTLD_LOCAL);
    return h != nullptr; // left open: the symbolizer opens the same library
}

SymbolizerOptions without_libdw() {
    SymbolizerOptions o;
    o.use_libdw = false;
    return o;
}

// A return address inside libc: the comparator qsort calls back.
void *g_libc_ra = nullptr;
__attribute__((noipa)) int capture_comparator(const void *a, const void *b) {
    if (!g_libc_ra) g_libc_ra = __builtin_return_address(0);
    return *static_cast<const int *>(a) - *static_cast<const int *>(b);
}

void *libc_return_address() {
    int v[] = {5, 3, 9, 1, 7, 2, 8, 6, 4, 0};
    g_libc_ra = nullptr;
    using QsortFn = void (*)(void *, size_t, size_t, int (*)(const void *, const void *));
    auto libc_qsort = reinterpret_cast<QsortFn>(libc_symbol("qsort"));
    if (!libc_qsort) return nullptr;
    libc_qsort(v, 10, sizeof v[0], &capture_comparator);
    return g_libc_ra;
}

uint64_t l_addr_of(void *handle) {
    struct link_map *lm = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm) return ~0ull;
    return lm->l_addr;
}

} // namespace

// ---------------------------------------------------------------------------------------------

TEST_CASE("symbolizer: this test is not linked with -rdynamic", "[symbolizer]") {
    // The functions below are not in .dynsym, so naming them needs .symtab (or DWARF).
    Dl_info info{};
    REQUIRE(dladdr(reinterpret_cast<void *>(&vt_symbolize_test::exported_target), &info) != 0);
    CHECK(info.dli_sname == nullptr);
    CHECK(dlsym(RTLD_DEFAULT, "_ZN17vt_symbolize_test15exported_targetEi") == nullptr);
}

TEST_CASE("symbolizer: functions of the executable, with libdw", "[symbolizer]") {
    if (!libdw_available_here()) {
        WARN("libdw.so.1 not installed here: file:line checks skipped");
        return;
    }
    Symbolizer sym;
    REQUIRE(sym.libdw_state() == LibdwState::Loaded);
    // Searched first beside the object holding the symbolizer (this executable: no libdw there).
    CHECK(own_object_path() == self_exe());
    CHECK(sym.libdw_message() == "libdw.so.1");

    vt_symbolize_test::Captured e = vt_symbolize_test::exported_target(1);
    vt_symbolize_test::Captured s = static_target(2);

    SymbolizedAddress re = sym.lookup(reinterpret_cast<uint64_t>(e.ra));
    CHECK(re.function == kExportedName);
    CHECK(base_name(re.file) == kThisFile);
    CHECK(re.line == static_cast<uint32_t>(e.line));

    SymbolizedAddress rs = sym.lookup(reinterpret_cast<uint64_t>(s.ra));
    CHECK(rs.function == kStaticName);
    CHECK(base_name(rs.file) == kThisFile);
    CHECK(rs.line == static_cast<uint32_t>(s.line));

    // Function entry points, looked up as they are (not as return addresses).
    SymbolizedAddress fe = sym.lookup(reinterpret_cast<uint64_t>(&vt_symbolize_test::exported_target), AddressKind::Exact);
    CHECK(fe.function == kExportedName);
    CHECK(base_name(fe.file) == kThisFile);
    CHECK(fe.line == static_cast<uint32_t>(kExportedTargetLine));
    SymbolizedAddress fs = sym.lookup(reinterpret_cast<uint64_t>(&static_target), AddressKind::Exact);
    CHECK(fs.function == kStaticName);
    CHECK(base_name(fs.file) == kThisFile);
    CHECK(fs.line == static_cast<uint32_t>(kStaticTargetLine));

    // Module and offset: the executable, offset = address - l_addr.
    REQUIRE(re.module >= 0);
    const LoadedModule &m = sym.modules()[static_cast<size_t>(re.module)];
    CHECK(m.main_executable);
    CHECK(m.path == self_exe());
    CHECK(re.module_offset == reinterpret_cast<uint64_t>(e.ra) - m.base);
}

TEST_CASE("symbolizer: inlined code is listed as inlined calls of the real function", "[symbolizer]") {
    vt_symbolize_test::Captured c = vt_symbolize_test::calls_inlined_helper(3);
    if (libdw_available_here()) {
        Symbolizer sym;
        SymbolizedAddress r = sym.lookup(reinterpret_cast<uint64_t>(c.ra));
        CHECK(r.function == "vt_symbolize_test::calls_inlined_helper(int)");
        CHECK(base_name(r.file) == kThisFile);
        CHECK(r.line == static_cast<uint32_t>(kInlinedHelperCallLine));
        REQUIRE(r.inlined.size() == 1);
        CHECK(r.inlined[0].function == "vt_symbolize_test::inlined_helper(int)");
        CHECK(base_name(r.inlined[0].file) == kThisFile);
        CHECK(r.inlined[0].line == static_cast<uint32_t>(c.line));

        SymbolizerOptions no_inline;
        no_inline.inline_frames = false;
        Symbolizer plain(no_inline);
        SymbolizedAddress p = plain.lookup(reinterpret_cast<uint64_t>(c.ra));
        CHECK(p.function == "vt_symbolize_test::calls_inlined_helper(int)");
        CHECK(p.line == static_cast<uint32_t>(c.line)); // the line table still says where
        CHECK(p.inlined.empty());
    }
    Symbolizer bare(without_libdw());
    SymbolizedAddress b = bare.lookup(reinterpret_cast<uint64_t>(c.ra));
    CHECK(b.function == "vt_symbolize_test::calls_inlined_helper(int)");
    CHECK(b.inlined.empty());
}

TEST_CASE("symbolizer: two levels of inlined calls in an -O2 library", "[symbolizer]") {
    if (!libdw_available_here()) {
        WARN("libdw.so.1 not installed here: inlined-call checks skipped");
        return;
    }
    const std::string kInlineLib = fixture_path("VT_SYMBOLIZE_INLINE_LIB", VT_SYMBOLIZE_INLINE_LIB);
    void *lib = dlopen(kInlineLib.c_str(), RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib != nullptr);
    using OuterFn = void *(*)(void *(*)(), int *);
    auto outer = reinterpret_cast<OuterFn>(dlsym(lib, "vt_inline_outer"));
    REQUIRE(outer);
    int lines[3] = {0, 0, 0};
    void *ra = outer(&vt_symbolize_test::capture_return_address, lines);
    // inline_lib.cpp: inner's call at line 10, middle's at 16, vt_inline_outer's at 25.
    CHECK(lines[0] == 10);
    CHECK(lines[1] == 16);
    CHECK(lines[2] == 25);

    auto check = [&](const std::string &function, const std::string &file, uint32_t line,
                     const std::vector<snapshot::Frame::Inlined> &inlined) {
        CHECK(function == "vt_inline_outer");
        CHECK(base_name(file) == "inline_lib.cpp");
        CHECK(line == 25u);
        REQUIRE(inlined.size() == 2);
        // A static function has no linkage name in GCC's DWARF: qualified name, no parameters.
        CHECK(inlined[0].function == "vt_inline::inner");
        CHECK(base_name(inlined[0].file) == "inline_lib.cpp");
        CHECK(inlined[0].line == 10u);
        CHECK(inlined[1].function == "void* vt_inline::middle<int>(void* (*)(), int*)");
        CHECK(base_name(inlined[1].file) == "inline_lib.cpp");
        CHECK(inlined[1].line == 16u);
    };
    Symbolizer sym;
    SymbolizedAddress r = sym.lookup(reinterpret_cast<uint64_t>(ra));
    check(r.function, r.file, r.line, r.inlined);

    // symbolize() fills Frame::inlined; describe_frame shows the chain, innermost first.
    std::vector<snapshot::Frame> frames(1);
    frames[0].address = reinterpret_cast<uint64_t>(ra);
    snapshot::Snapshot snap;
    sym.symbolize(frames, snap.modules);
    check(frames[0].function, frames[0].file, frames[0].line, frames[0].inlined);
    snap.frames = frames;
    snapshot::Frame shown = frames[0];
    shown.file = "/src/inline_lib.cpp";
    for (auto &i : shown.inlined) i.file = "/src/inline_lib.cpp";
    CHECK(report::describe_frame(snap, shown) ==
          "vt_inline::inner at /src/inline_lib.cpp:10 "
          "(inlined into void* vt_inline::middle<int>(void* (*)(), int*) at /src/inline_lib.cpp:16) "
          "(inlined into vt_inline_outer at /src/inline_lib.cpp:25) (" + base_name(kInlineLib) + ")");

    // Offline (the CLI symbolizing a snapshot's modules): the same chain.
    uint64_t base = l_addr_of(lib);
    LoadedModule m;
    m.path = real_path(kInlineLib);
    m.base = 0x200000000000ull;
    Symbolizer offline(std::vector<LoadedModule>{m}, SymbolizerOptions{});
    SymbolizedAddress o = offline.lookup(m.base + (reinterpret_cast<uint64_t>(ra) - base));
    check(o.function, o.file, o.line, o.inlined);

    // Without libdw: the real function, no file:line, no inlined calls.
    Symbolizer bare(without_libdw());
    SymbolizedAddress b = bare.lookup(reinterpret_cast<uint64_t>(ra));
    CHECK(b.function == "vt_inline_outer");
    CHECK(b.inlined.empty());
    dlclose(lib);
}

TEST_CASE("symbolizer: without libdw the ELF symbol table still names static functions", "[symbolizer]") {
    vt_symbolize_test::Captured e = vt_symbolize_test::exported_target(1);
    vt_symbolize_test::Captured s = static_target(2);

    SECTION("libdw turned off by option") {
        Symbolizer sym(without_libdw());
        CHECK(sym.libdw_state() == LibdwState::Disabled);
        SymbolizedAddress rs = sym.lookup(reinterpret_cast<uint64_t>(s.ra));
        CHECK(rs.function == kStaticName);
        CHECK(rs.file.empty());
        CHECK(rs.line == 0);
        CHECK(sym.lookup(reinterpret_cast<uint64_t>(e.ra)).function == kExportedName);
        CHECK(sym.lookup(reinterpret_cast<uint64_t>(&static_target), AddressKind::Exact).function == kStaticName);
        // An address in the executable's ELF header belongs to no function.
        CHECK(sym.lookup(sym.modules().front().base + 1, AddressKind::Exact).function.empty());
    }
    SECTION("VRAMTRACE_LIBDW=/nonexistent, reported once through the notice") {
        setenv("VRAMTRACE_LIBDW", "/nonexistent/libdw.so.1", 1);
        struct Count {
            int calls = 0;
            std::string message;
        } count;
        SymbolizerOptions o;
        o.notice_context = &count;
        o.notice = [](void *ctx, const char *message) {
            auto *c = static_cast<Count *>(ctx);
            ++c->calls;
            c->message = message;
        };
        Symbolizer sym(o);
        SymbolizedAddress rs = sym.lookup(reinterpret_cast<uint64_t>(s.ra));
        SymbolizedAddress re = sym.lookup(reinterpret_cast<uint64_t>(e.ra));
        unsetenv("VRAMTRACE_LIBDW");
        CHECK(sym.libdw_state() == LibdwState::NotFound);
        CHECK(rs.function == kStaticName);
        CHECK(re.function == kExportedName);
        CHECK(rs.line == 0);
        CHECK(count.calls == 1);
        CHECK(count.message.find("/nonexistent/libdw.so.1") != std::string::npos);
        CHECK(count.message.find("no file:line") != std::string::npos);
        CHECK(count.message.find('\n') == std::string::npos);
        CHECK(sym.libdw_message() == count.message);
    }
    SECTION("libdw_path naming something that is not libdw") {
        SymbolizerOptions o;
        o.libdw_path = "libc.so.6";
        int calls = 0;
        o.notice_context = &calls;
        o.notice = [](void *ctx, const char *) { ++*static_cast<int *>(ctx); };
        Symbolizer sym(o);
        CHECK(sym.lookup(reinterpret_cast<uint64_t>(s.ra)).function == kStaticName);
        CHECK(sym.libdw_state() == LibdwState::Unusable);
        CHECK(calls == 1);
    }
}

TEST_CASE("symbolizer: frames in a shared library", "[symbolizer]") {
    const std::string kFixtureLib = fixture_path("VT_SYMBOLIZE_FIXTURE_LIB", VT_SYMBOLIZE_FIXTURE_LIB);
    void *lib = dlopen(kFixtureLib.c_str(), RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib != nullptr);
    using CallFn = void *(*)(void *(*)(), int *);
    auto call_static = reinterpret_cast<CallFn>(dlsym(lib, "vt_fixture_call_static"));
    auto call_exported = reinterpret_cast<CallFn>(dlsym(lib, "vt_fixture_call_exported"));
    REQUIRE(call_static);
    REQUIRE(call_exported);
    int static_line = 0, exported_line = 0;
    void *ra_static = call_static(&vt_symbolize_test::capture_return_address, &static_line);
    void *ra_exported = call_exported(&vt_symbolize_test::capture_return_address, &exported_line);
    uint64_t base = l_addr_of(lib);
    std::string path = real_path(kFixtureLib);

    for (bool with_libdw : {true, false}) {
        if (with_libdw && !libdw_available_here()) continue;
        INFO("libdw " << with_libdw);
        Symbolizer sym(with_libdw ? SymbolizerOptions{} : without_libdw());
        SymbolizedAddress r = sym.lookup(reinterpret_cast<uint64_t>(ra_static));
        REQUIRE(r.module >= 0);
        CHECK(real_path(sym.modules()[static_cast<size_t>(r.module)].path) == path);
        CHECK(sym.modules()[static_cast<size_t>(r.module)].base == base);
        CHECK(r.module_offset == reinterpret_cast<uint64_t>(ra_static) - base);
        CHECK(r.function == "vt_fixture::static_in_library(void* (*)(), int*)");
        SymbolizedAddress x = sym.lookup(reinterpret_cast<uint64_t>(ra_exported));
        CHECK(x.function == "vt_fixture_call_exported");
        CHECK(x.module == r.module);
        if (with_libdw) {
            CHECK(base_name(r.file) == "fixture_lib.cpp");
            CHECK(r.line == static_cast<uint32_t>(static_line));
            CHECK(base_name(x.file) == "fixture_lib.cpp");
            CHECK(x.line == static_cast<uint32_t>(exported_line));
        } else {
            CHECK(r.file.empty());
        }
    }

    SECTION("a symbolizer made before the dlopen reads the module map again") {
        dlclose(lib);
        // Made while the library is not loaded, then it is loaded again (maybe elsewhere).
        Symbolizer sym(without_libdw());
        void *again = dlopen(kFixtureLib.c_str(), RTLD_NOW | RTLD_LOCAL);
        REQUIRE(again != nullptr);
        auto fn = reinterpret_cast<CallFn>(dlsym(again, "vt_fixture_call_static"));
        int line = 0;
        void *ra = fn(&vt_symbolize_test::capture_return_address, &line);
        SymbolizedAddress r = sym.lookup(reinterpret_cast<uint64_t>(ra));
        REQUIRE(r.module >= 0);
        CHECK(real_path(sym.modules()[static_cast<size_t>(r.module)].path) == path);
        CHECK(r.function == "vt_fixture::static_in_library(void* (*)(), int*)");
        lib = again;
    }

    SECTION("offline: the same module known only by path and base (as the CLI reads a snapshot)") {
        uint64_t fake_base = 0x100000000000ull;
        LoadedModule m;
        m.path = path;
        m.base = fake_base;
        std::vector<LoadedModule> modules{m};
        Symbolizer offline(modules, SymbolizerOptions{});
        uint64_t offset = reinterpret_cast<uint64_t>(ra_static) - base;
        SymbolizedAddress r = offline.lookup(fake_base + offset);
        CHECK(r.module == 0);
        CHECK(r.module_offset == offset);
        CHECK(r.function == "vt_fixture::static_in_library(void* (*)(), int*)");
        if (libdw_available_here()) CHECK(r.line == static_cast<uint32_t>(static_line));
        // No dladdr offline: an address of this process outside the given module stays unknown.
        SymbolizedAddress none = offline.lookup(reinterpret_cast<uint64_t>(&vt_symbolize_test::exported_target), AddressKind::Exact);
        CHECK(none.module == -1);
        CHECK(none.function.empty());
    }
    dlclose(lib);
}

TEST_CASE("symbolizer: a return address inside libc", "[symbolizer]") {
    void *ra = libc_return_address();
    REQUIRE(ra != nullptr);
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    REQUIRE(libc != nullptr);
    uint64_t base = l_addr_of(libc);
    Dl_info info{};
    REQUIRE(dladdr(libc_symbol("qsort"), &info) != 0);
    std::string libc_path = real_path(info.dli_fname);
    dlclose(libc);

    Symbolizer sym;
    SymbolizedAddress r = sym.lookup(reinterpret_cast<uint64_t>(ra));
    REQUIRE(r.module >= 0);
    const LoadedModule &m = sym.modules()[static_cast<size_t>(r.module)];
    CHECK(real_path(m.path) == libc_path);
    CHECK(m.base == base);
    CHECK(r.module_offset == reinterpret_cast<uint64_t>(ra) - base);
    // An exported libc function is named from .dynsym (libc's .symtab is stripped on Debian).
    SymbolizedAddress q = sym.lookup(reinterpret_cast<uint64_t>(libc_symbol("qsort")), AddressKind::Exact);
    CHECK(q.function == "qsort");
    CHECK(q.module == r.module);
}

TEST_CASE("symbolizer: fills report frames and modules", "[symbolizer]") {
    vt_symbolize_test::Captured e = vt_symbolize_test::exported_target(1);
    vt_symbolize_test::Captured s = static_target(2);
    void *libc_ra = libc_return_address();

    std::vector<snapshot::Frame> frames(5);
    frames[0].address = reinterpret_cast<uint64_t>(e.ra);
    frames[1].address = reinterpret_cast<uint64_t>(s.ra);
    frames[2].address = reinterpret_cast<uint64_t>(libc_ra);
    frames[3].address = 0x10; // nothing is mapped there
    frames[4].address = reinterpret_cast<uint64_t>(e.ra);
    frames[3].function = "stale";

    Symbolizer sym;
    // A module list that already holds the executable (as a second dump would).
    std::vector<snapshot::Module> modules{{"/some/other/lib.so", 0x1234, ""},
                                        {self_exe(), sym.modules().front().base, ""}};
    sym.symbolize(frames, modules);

    CHECK(frames[0].module == 1);
    CHECK(frames[1].module == 1);
    CHECK(frames[4].module == 1);
    CHECK(frames[0].function == kExportedName);
    CHECK(frames[1].function == kStaticName);
    CHECK(frames[0].module_offset == frames[0].address - modules[1].base);
    REQUIRE(frames[2].module == 2);
    CHECK(modules.size() == 3);
    CHECK(base_name(modules[2].path) == "libc.so.6");
    CHECK(!modules[2].build_id.empty());
    CHECK(frames[2].module_offset == frames[2].address - modules[2].base);
    CHECK(frames[3].module == -1);
    CHECK(frames[3].module_offset == 0);
    CHECK(frames[3].function.empty());
    CHECK(frames[3].line == 0);
    if (libdw_available_here()) {
        CHECK(frames[0].line == static_cast<uint32_t>(e.line));
        CHECK(frames[1].line == static_cast<uint32_t>(s.line));
    }

    // Whole snapshot, via the dump path's entry point.
    snapshot::Snapshot snap;
    snap.frames.resize(2);
    snap.frames[0].address = reinterpret_cast<uint64_t>(s.ra);
    snap.frames[1].address = reinterpret_cast<uint64_t>(libc_ra);
    vramtrace::symbolize_snapshot_frames(snap);
    REQUIRE(snap.modules.size() == 2);
    CHECK(snap.frames[0].module == 0);
    CHECK(snap.modules[0].path == self_exe());
    CHECK(snap.modules[0].build_id == sym.modules().front().build_id);
    CHECK(snap.frames[0].function == kStaticName);
    CHECK(snap.frames[1].module == 1);
}

TEST_CASE("symbolizer: a non-PIE executable", "[symbolizer]") {
    for (bool with_libdw : {true, false}) {
        if (with_libdw && !libdw_available_here()) continue;
        INFO("libdw " << with_libdw);
        bool ok = false;
        std::string out = run_command("'" + fixture_path("VT_SYMBOLIZE_NOPIE_EXE", VT_SYMBOLIZE_NOPIE_EXE) + "'" + (with_libdw ? "" : " --no-libdw"), &ok);
        REQUIRE(ok);
        INFO(out);
        std::map<std::string, std::vector<std::string>> rows;
        std::istringstream in(out);
        for (std::string line; std::getline(in, line);) {
            std::vector<std::string> cols;
            std::istringstream ls(line);
            for (std::string c; std::getline(ls, c, '\t');) cols.push_back(c);
            if (!cols.empty()) rows[cols[0]] = cols;
        }
        // name, function, file, line, expected line, module is main, base, offset == address
        REQUIRE(rows["static"].size() == 8);
        REQUIRE(rows["exported"].size() == 8);
        CHECK(rows["static"][1] == "nopie_static_function(int*)");
        CHECK(rows["exported"][1] == "nopie_exported_function(int*)");
        for (const char *k : {"static", "exported"}) {
            CHECK(rows[k][5] == "1");
            CHECK(rows[k][6] == "0");
            CHECK(rows[k][7] == "1");
            if (with_libdw) {
                CHECK(rows[k][2] == "nopie_main.cpp");
                CHECK(rows[k][3] == rows[k][4]);
            } else {
                CHECK(rows[k][3] == "0");
            }
        }
    }
}

TEST_CASE("symbolizer: the vDSO is read from memory", "[symbolizer]") {
    if (getauxval(AT_SYSINFO_EHDR) == 0) return; // no vDSO here
    Symbolizer sym(without_libdw());
    const LoadedModule *vdso = nullptr;
    for (const LoadedModule &m : sym.modules())
        if (m.vdso) vdso = &m;
    REQUIRE(vdso != nullptr);
    // Some address in its code is named after one of its clock functions (from its .dynsym).
    bool clock_named = false;
    for (const Segment &s : vdso->segments)
        for (uint64_t a = s.begin; s.executable && a < s.end; a += 16) {
            std::string f = sym.lookup(a, AddressKind::Exact).function;
            if (f.find("clock_gettime") != std::string::npos || f.find("gettimeofday") != std::string::npos)
                clock_named = true;
        }
    CHECK(clock_named);
}

TEST_CASE("symbolizer: demangle", "[symbolizer]") {
    CHECK(demangle("_ZN17vt_symbolize_test15exported_targetEi") == kExportedName);
    CHECK(demangle("_ZL13static_targeti") == kStaticName);
    CHECK(demangle("_ZL13static_targeti.constprop.0") == "static_target(int) [clone .constprop.0]");
    CHECK(demangle("malloc") == "malloc");
    CHECK(demangle("memcpy@@GLIBC_2.14") == "memcpy");
    CHECK(demangle("_Znot_valid") == "_Znot_valid");
    CHECK(demangle(nullptr).empty());
}

// Hidden: run with  vramtrace_symbolize_tests "[.perf]"
TEST_CASE("symbolizer: 100k distinct addresses", "[.perf]") {
    std::vector<LoadedModule> modules = read_loaded_modules();
    const LoadedModule *libc = find_module(modules, reinterpret_cast<uint64_t>(libc_symbol("malloc")));
    REQUIRE(libc != nullptr);
    std::vector<uint64_t> addresses;
    for (const LoadedModule *m : std::vector<const LoadedModule *>{&modules.front(), libc}) {
        uint64_t total = 0;
        for (const Segment &s : m->segments)
            if (s.executable) total += s.end - s.begin;
        uint64_t step = std::max<uint64_t>(1, total / 50000);
        for (const Segment &s : m->segments)
            if (s.executable)
                for (uint64_t a = s.begin + 1; a < s.end; a += step) addresses.push_back(a);
    }
    std::printf("%zu distinct addresses (executable + libc)\n", addresses.size());
    for (bool with_libdw : {true, false}) {
        std::vector<snapshot::Frame> frames(addresses.size());
        for (size_t i = 0; i < addresses.size(); ++i) frames[i].address = addresses[i];
        std::vector<snapshot::Module> mods;
        auto t0 = std::chrono::steady_clock::now();
        Symbolizer sym(with_libdw ? SymbolizerOptions{} : without_libdw());
        sym.symbolize(frames, mods);
        auto t1 = std::chrono::steady_clock::now();
        size_t named = 0, lines = 0;
        for (const auto &f : frames) {
            named += !f.function.empty();
            lines += f.line != 0;
        }
        int fds = 0;
        if (DIR *d = opendir("/proc/self/fd")) {
            while (readdir(d)) ++fds;
            closedir(d);
        }
        std::printf("(%d entries in /proc/self/fd) ", fds);
        std::printf("libdw %s: %.3f s, %zu named, %zu with file:line\n",
                    with_libdw ? (sym.libdw_state() == LibdwState::Loaded ? "on" : "absent") : "off",
                    std::chrono::duration<double>(t1 - t0).count(), named, lines);
    }
}

TEST_CASE("symbolizer: code no symbol covers is named by the nearest exported symbol below it", "[symbolizer]") {
    const std::string kLib = fixture_path("VT_SYMBOLIZE_STRIPPED_LIB", VT_SYMBOLIZE_STRIPPED_LIB);
    void *lib = dlopen(kLib.c_str(), RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib != nullptr);
    using CallFn = void *(*)(void *(*)());
    auto call = reinterpret_cast<CallFn>(dlsym(lib, "vt_stripped_call_internal"));
    auto anchor = reinterpret_cast<uint64_t>(dlsym(lib, "vt_stripped_anchor"));
    REQUIRE(call);
    REQUIRE(anchor);
    void *ra = call(&vt_symbolize_test::capture_return_address);
    auto pc = reinterpret_cast<uint64_t>(ra) - 1; // what lookup() looks up for a return address
    REQUIRE(pc > anchor);
    char expected[64];
    snprintf(expected, sizeof expected, "vt_stripped_anchor+0x%llx", static_cast<unsigned long long>(pc - anchor));
    Symbolizer sym(without_libdw());
    SymbolizedAddress r = sym.lookup(reinterpret_cast<uint64_t>(ra));
    REQUIRE(r.module >= 0);
    CHECK(r.function == expected);
    dlclose(lib);
}
