#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <sys/auxv.h>

#include "symbolize/module_map.h"
#include "symbolize_test_util.h"

using namespace vramtrace::symbolize;
using namespace vt_symbolize_test;

namespace {

__attribute__((noipa)) int module_map_probe(int x) { return x * 3 + 1; }

uint64_t libc_function_address() { return reinterpret_cast<uint64_t>(libc_symbol("malloc")); }

} // namespace

TEST_CASE("module map: the executable comes first, with its real path", "[module_map]") {
    std::vector<LoadedModule> modules = read_loaded_modules();
    REQUIRE(!modules.empty());
    const LoadedModule &exe = modules.front();
    CHECK(exe.main_executable);
    CHECK(exe.path == self_exe());
    auto here = reinterpret_cast<uint64_t>(&module_map_probe);
    CHECK(exe.contains(here));
    CHECK(exe.executable_contains(here));
    CHECK(find_module(modules, here) == &exe);
    // PIE: the base is where the first PT_LOAD (vaddr 0) was placed, and below every segment.
    for (const Segment &s : exe.segments) CHECK(s.begin >= exe.base);
    int executable_segments = 0;
    for (const Segment &s : exe.segments) executable_segments += s.executable ? 1 : 0;
    CHECK(executable_segments >= 1);
    // Exactly one main executable.
    int mains = 0;
    for (const LoadedModule &m : modules) mains += m.main_executable ? 1 : 0;
    CHECK(mains == 1);
}

TEST_CASE("module map: bases are the link map's l_addr", "[module_map]") {
    std::vector<LoadedModule> modules = read_loaded_modules();
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    REQUIRE(libc != nullptr);
    struct link_map *lm = nullptr;
    REQUIRE(dlinfo(libc, RTLD_DI_LINKMAP, &lm) == 0);
    const LoadedModule *m = find_module(modules, libc_function_address());
    REQUIRE(m != nullptr);
    CHECK(m->base == lm->l_addr);
    CHECK(real_path(m->path) == real_path(lm->l_name));
    CHECK(m->executable_contains(libc_function_address()));
    dlclose(libc);
}

TEST_CASE("module map: build ids match readelf -n of the files", "[module_map]") {
    std::vector<LoadedModule> modules = read_loaded_modules();
    const LoadedModule &exe = modules.front();
    const LoadedModule *libc = find_module(modules, libc_function_address());
    REQUIRE(libc != nullptr);

    for (const LoadedModule *m : {&exe, libc}) {
        INFO(m->path);
        REQUIRE(!m->build_id.empty());
        CHECK(m->build_id.size() % 2 == 0);
        CHECK(m->build_id.find_first_not_of("0123456789abcdef") == std::string::npos);
        CHECK(read_build_id_from_file(m->path) == m->build_id);
        if (have_readelf()) {
            CHECK(readelf_build_id(m->path) == m->build_id);
        } else {
            WARN("readelf not found: build ids only compared with our own reader of the file");
        }
    }
    // Every module with a file: what we read in memory is what the file says.
    for (const LoadedModule &m : modules) {
        if (m.vdso || m.build_id.empty()) continue;
        INFO(m.path);
        CHECK(read_build_id_from_file(m.path) == m.build_id);
    }
}

TEST_CASE("module map: the vDSO is named, not mistaken for a file", "[module_map]") {
    if (getauxval(AT_SYSINFO_EHDR) == 0) return; // no vDSO here
    std::vector<LoadedModule> modules = read_loaded_modules();
    const LoadedModule *vdso = find_module(modules, getauxval(AT_SYSINFO_EHDR));
    REQUIRE(vdso != nullptr);
    CHECK(vdso->vdso);
    CHECK(vdso->path == "[vdso]");
}

TEST_CASE("module index agrees with the linear search", "[module_map]") {
    std::vector<LoadedModule> modules = read_loaded_modules();
    ModuleIndex index(modules);
    CHECK(index.find(0) == -1);
    CHECK(index.find(16) == -1);
    for (size_t i = 0; i < modules.size(); ++i) {
        for (const Segment &s : modules[i].segments) {
            for (uint64_t a : {s.begin, s.begin + (s.end - s.begin) / 2, s.end - 1}) {
                INFO(modules[i].path << " " << std::hex << a);
                CHECK(index.find(a) == static_cast<int>(i));
                CHECK(find_module(modules, a) == &modules[i]);
            }
        }
    }
    // A hand-made list.
    std::vector<LoadedModule> fake(2);
    fake[0].path = "/a";
    fake[0].segments = {{0x1000, 0x2000, true}, {0x3000, 0x4000, false}};
    fake[1].path = "/b";
    fake[1].segments = {{0x2000, 0x3000, true}};
    ModuleIndex fi(fake);
    CHECK(fi.find(0xfff) == -1);
    CHECK(fi.find(0x1000) == 0);
    CHECK(fi.find(0x1fff) == 0);
    CHECK(fi.find(0x2000) == 1);
    CHECK(fi.find(0x3000) == 0);
    CHECK(fi.find(0x4000) == -1);
}

TEST_CASE("build id notes: parsing and malformed input", "[module_map]") {
    // namesz 4, descsz 4, type 3 (NT_GNU_BUILD_ID), "GNU\0", de ad be ef
    const unsigned char note[] = {4, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 0xde, 0xad, 0xbe, 0xef};
    CHECK(build_id_from_notes(note, sizeof note, 4) == "deadbeef");
    CHECK(build_id_from_notes(note, sizeof note - 1, 4).empty()); // truncated
    // A different note first (type 1, name "GNU"), then the build id.
    const unsigned char two[] = {4, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 'G', 'N', 'U', 0, 1, 2, 3, 4,
                                 4, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 0xab, 0xcd, 0, 0};
    CHECK(build_id_from_notes(two, sizeof two, 4) == "abcd");
    const unsigned char huge[] = {0xff, 0xff, 0xff, 0xff, 4, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0};
    CHECK(build_id_from_notes(huge, sizeof huge, 4).empty());
    CHECK(build_id_from_notes(nullptr, 0, 4).empty());
    CHECK(read_build_id_from_file("/nonexistent/file").empty());
    CHECK(read_build_id_from_file("/proc/self/status").empty()); // not a regular file
}

TEST_CASE("segments_from_file places PT_LOADs at a base", "[module_map]") {
    std::vector<LoadedModule> modules = read_loaded_modules();
    const LoadedModule *libc = find_module(modules, libc_function_address());
    REQUIRE(libc != nullptr);
    std::vector<Segment> segs;
    REQUIRE(segments_from_file(libc->path, libc->base, segs));
    REQUIRE(segs.size() == libc->segments.size());
    for (size_t i = 0; i < segs.size(); ++i) {
        CHECK(segs[i].begin == libc->segments[i].begin);
        CHECK(segs[i].end == libc->segments[i].end);
        CHECK(segs[i].executable == libc->segments[i].executable);
    }
    CHECK_FALSE(segments_from_file("/nonexistent", 0, segs));
}
