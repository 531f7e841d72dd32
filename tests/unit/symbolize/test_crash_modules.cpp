// The crash handler's module map (lib/triggers/crash_modules.h), built from /proc/self/maps and the
// ELF headers in memory, must agree with the dump-time one (dl_iterate_phdr): same objects, same
// load bases, same build ids.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "reporting/module_map.h"
#include "triggers/crash_modules.h"

using namespace vramtrace;

namespace {

std::string hex(const uint8_t *bytes, size_t n) {
    static const char kDigits[] = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < n; ++i) out += {kDigits[bytes[i] >> 4], kDigits[bytes[i] & 15]};
    return out;
}

} // namespace

TEST_CASE("crash module map: the same objects, bases and build ids as dl_iterate_phdr") {
    std::vector<crash::CrashModule> storage(1024);
    std::vector<char> paths(1 << 20), scratch(8192); // a small read buffer: lines cross reads
    crash::ModuleTable table;
    table.modules = storage.data();
    table.capacity = uint32_t(storage.size());
    table.paths = paths.data();
    table.paths_capacity = uint32_t(paths.size());
    REQUIRE(crash::read_crash_modules(table, scratch.data(), scratch.size(), 4096));

    std::vector<symbolize::LoadedModule> loaded = symbolize::read_loaded_modules();
    size_t expected = 0;
    for (const symbolize::LoadedModule &m : loaded) {
        if (m.vdso) continue; // mapped without a file
        ++expected;
        INFO(m.path);
        bool found = false;
        for (uint32_t i = 0; i < table.count; ++i) {
            const crash::CrashModule &c = table.modules[i];
            if (c.base != m.base) continue;
            found = true;
            CHECK(hex(c.build_id, c.build_id_length) == m.build_id);
            // Every PT_LOAD segment lies in the span, and an address in one finds this module.
            for (const symbolize::Segment &s : m.segments) {
                CHECK(s.begin >= c.begin);
                CHECK(s.end <= c.end);
                CHECK(crash::find_crash_module(table, s.begin) == int(i));
            }
        }
        CHECK(found);
    }
    CHECK(table.count == expected);
    // This test's own code is in the table, and address 0 in none.
    CHECK(crash::find_crash_module(table, reinterpret_cast<uintptr_t>(&hex)) >= 0);
    CHECK(crash::find_crash_module(table, 0) == -1);
}
