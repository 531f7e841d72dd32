// raw_memory.h: kernel-backed memory for the tracker. make_resident leaves no page of the range to
// be faulted in later, and leaves errno alone.
#include <catch2/catch.hpp>

#include <cerrno>
#include <sys/mman.h>
#include <vector>

#include "tracking/raw_memory.h"

using namespace vramtrace;

namespace {

size_t resident_pages(void *p, size_t bytes) {
    const size_t pages = bytes / 4096;
    std::vector<unsigned char> in(pages);
    REQUIRE(mincore(p, bytes, in.data()) == 0);
    size_t n = 0;
    for (unsigned char c : in) n += c & 1;
    return n;
}

} // namespace

TEST_CASE("raw memory: a fresh mapping holds no resident page until make_resident, then all of them") {
    constexpr size_t kBytes = size_t{3} << 20; // 768 pages
    void *p = map_zeroed(kBytes);
    REQUIRE(p != nullptr);
    CHECK(resident_pages(p, kBytes) == 0);
    errno = 1234;
    make_resident(p, kBytes);
    CHECK(errno == 1234);
    CHECK(resident_pages(p, kBytes) == kBytes / 4096);
    // Still zero-filled: the pages were made resident, not written with anything.
    const auto *bytes = static_cast<const unsigned char *>(p);
    size_t nonzero = 0;
    for (size_t i = 0; i < kBytes; ++i) nonzero += bytes[i] != 0;
    CHECK(nonzero == 0);
}
