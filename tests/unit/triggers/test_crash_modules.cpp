// The crash handler's module map (lib/triggers/crash_modules.h), built from /proc/self/maps and the
// ELF headers in memory, must agree with the dump-time one (dl_iterate_phdr): same objects, same
// load bases, same build ids.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

#include "symbolize/module_map.h"
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

TEST_CASE("crash module map: a data file mapping is not read (a truncated one would fault)") {
    // A file mapped at offset 0, then truncated to nothing: any read of the mapping is SIGBUS. It has
    // no executable mapping, so the crash module map must leave its bytes alone.
    char name[] = "/tmp/vt-crash-modules-XXXXXX";
    int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    std::vector<char> page(8192, 'x');
    REQUIRE(write(fd, page.data(), page.size()) == ssize_t(page.size()));
    void *mapped = mmap(nullptr, page.size(), PROT_READ, MAP_SHARED, fd, 0);
    REQUIRE(mapped != MAP_FAILED);
    REQUIRE(ftruncate(fd, 0) == 0);
    close(fd);

    std::vector<crash::CrashModule> storage(1024);
    std::vector<char> paths(1 << 20), scratch(8192);
    crash::ModuleTable table;
    table.modules = storage.data();
    table.capacity = uint32_t(storage.size());
    table.paths = paths.data();
    table.paths_capacity = uint32_t(paths.size());
    CHECK(crash::read_crash_modules(table, scratch.data(), scratch.size(), 4096));
    CHECK(table.count > 0);
    CHECK(crash::find_crash_module(table, reinterpret_cast<uintptr_t>(mapped)) == -1);
    CHECK(crash::find_crash_module(table, reinterpret_cast<uintptr_t>(&hex)) >= 0);
    munmap(mapped, page.size());
    unlink(name);
}

TEST_CASE("crash module map: memory that is gone or past its file's end is copied as a failure, not a fault") {
    // The module map reads ELF headers and notes through MemoryProbe, so a library unmapped by a
    // dlclose in another thread after /proc/self/maps was read, or a truncated file, ends the copy
    // with an error instead of a second fault in the crash handler.
    crash::MemoryProbe probe;
    REQUIRE(probe.has_pipe());
    const long page = sysconf(_SC_PAGESIZE);

    std::vector<unsigned char> bytes(3000);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 7);
    std::vector<unsigned char> out(bytes.size());
    CHECK(probe.copy(out.data(), reinterpret_cast<uint64_t>(bytes.data()), bytes.size()));
    CHECK(out == bytes);
    CHECK_FALSE(probe.copy(out.data(), reinterpret_cast<uint64_t>(bytes.data()), crash::MemoryProbe::kMaxCopy + 1));

    // Two pages mapped, the second unmapped: a copy inside the first works, one into the second or
    // across the boundary fails.
    auto *two = static_cast<unsigned char *>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
                                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(two != MAP_FAILED);
    two[0] = 42;
    REQUIRE(munmap(two + page, page) == 0);
    unsigned char one = 0;
    CHECK(probe.copy(&one, reinterpret_cast<uint64_t>(two), 1));
    CHECK(one == 42);
    CHECK_FALSE(probe.copy(out.data(), reinterpret_cast<uint64_t>(two + page), 64));
    CHECK_FALSE(probe.copy(out.data(), reinterpret_cast<uint64_t>(two + page - 32), 64));
    munmap(two, page);

    // A shared file mapping whose file was truncated: reading it directly would be SIGBUS.
    char name[] = "/tmp/vt-crash-probe-XXXXXX";
    int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    std::vector<char> data(size_t(page), 'x');
    REQUIRE(write(fd, data.data(), data.size()) == ssize_t(data.size()));
    void *mapped = mmap(nullptr, size_t(page), PROT_READ, MAP_SHARED, fd, 0);
    REQUIRE(mapped != MAP_FAILED);
    char c = 0;
    CHECK(probe.copy(&c, reinterpret_cast<uint64_t>(mapped), 1));
    CHECK(c == 'x');
    REQUIRE(ftruncate(fd, 0) == 0);
    close(fd);
    CHECK_FALSE(probe.copy(&c, reinterpret_cast<uint64_t>(mapped), 1));
    munmap(mapped, size_t(page));
    unlink(name);

    // And the probe is still usable after failures (nothing left in the pipe).
    CHECK(probe.copy(out.data(), reinterpret_cast<uint64_t>(bytes.data()), 100));
    CHECK(std::equal(out.begin(), out.begin() + 100, bytes.begin()));
}

TEST_CASE("crash module map: registered objects no longer loaded are added in order, loaded ones win") {
    // Two objects "loaded" (as read_crash_modules leaves them) and five registered ones, newest first.
    std::vector<crash::CrashModule> storage(4); // room for two more
    std::vector<char> paths(4096);
    crash::ModuleTable table;
    table.modules = storage.data();
    table.capacity = uint32_t(storage.size());
    table.paths = paths.data();
    table.paths_capacity = uint32_t(paths.size());
    auto loaded = [&](uint64_t begin, uint64_t end, const std::string &path) {
        crash::CrashModule &m = table.modules[table.count++];
        m.base = begin, m.begin = begin, m.end = end, m.executable = true;
        m.path_offset = table.paths_used, m.path_length = uint32_t(path.size());
        path.copy(table.paths + table.paths_used, path.size());
        table.paths_used += m.path_length;
    };
    loaded(0x10000, 0x20000, "/lib/loaded-a.so");
    loaded(0x50000, 0x60000, "/lib/loaded-b.so");

    RegisteredSegment segs_still[] = {{0x10000, 0x18000, true}};         // loaded-a itself
    RegisteredSegment segs_new[] = {{0x30000, 0x31000, false}, {0x31000, 0x34000, true}};
    RegisteredSegment segs_old[] = {{0x31000, 0x32000, true}};           // same addresses, older
    RegisteredSegment segs_high[] = {{0x70000, 0x78000, true}};
    RegisteredSegment segs_full[] = {{0x90000, 0x98000, true}};          // no room left for it
    RegisteredModule full, high, old, fresh, still;
    full = {nullptr, 0x90000, "/x/full.so", segs_full, 1, 1, {}, 0};
    high = {&full, 0x70000, "/x/high.so", segs_high, 1, 2, {0xab, 0xcd}, 2};
    old = {&high, 0x31000, "/x/old.so", segs_old, 1, 3, {}, 0};
    fresh = {&old, 0x30000, "/x/new.so", segs_new, 2, 4, {0x01, 0x02, 0x03}, 3};
    still = {&fresh, 0x10000, "/lib/loaded-a-by-another-name.so", segs_still, 1, 5, {}, 0};

    CHECK(crash::add_unloaded_modules(table, &still) == 2); // new.so and high.so; full.so has no room
    REQUIRE(table.count == 4);
    auto path_of = [&](int i) {
        const crash::CrashModule &m = table.modules[i];
        return std::string(table.paths + m.path_offset, m.path_length);
    };
    CHECK(path_of(0) == "/lib/loaded-a.so");
    CHECK(path_of(1) == "/x/new.so");
    CHECK(path_of(2) == "/lib/loaded-b.so");
    CHECK(path_of(3) == "/x/high.so");
    CHECK(table.modules[1].base == 0x30000);
    CHECK(table.modules[1].begin == 0x30000);
    CHECK(table.modules[1].end == 0x34000);
    CHECK(hex(table.modules[1].build_id, table.modules[1].build_id_length) == "010203");
    CHECK(hex(table.modules[3].build_id, table.modules[3].build_id_length) == "abcd");
    CHECK(crash::find_crash_module(table, 0x31800) == 1); // the newer of the two at these addresses
    CHECK(crash::find_crash_module(table, 0x17000) == 0); // the loaded object, not its registry entry
    CHECK(crash::find_crash_module(table, 0x77fff) == 3);
    CHECK(crash::find_crash_module(table, 0x78000) == -1);
    CHECK(crash::find_crash_module(table, 0x90000) == -1);
    for (uint32_t i = 1; i < table.count; ++i) CHECK(table.modules[i - 1].end <= table.modules[i].begin);
}
