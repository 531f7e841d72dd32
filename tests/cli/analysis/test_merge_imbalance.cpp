// How merge compares ranks (tools/analysis/merge_imbalance.cpp): the lower median, the extremes and
// their ranks, the outlier rule both ways with its floor, the roles, and the call sites above the
// median. The rank files are the doc example with other byte counts.
#include <catch2/catch.hpp>

#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include "analysis/merge_core.h"
#include "report_test_data.h"
#include "snapshot/snapshot_writer.h"

using namespace vramtrace::snapshot;
using namespace vramtrace::cli;

namespace {

constexpr uint64_t MiB = 1ull << 20;

// A rank whose GPU peaked at `peak` bytes: stack 2 held `at_2` of them, stack 1 the rest; it also
// holds 64 KiB of pinned host memory. `rank` "" leaves process.rank unset.
Snapshot rank_file(const std::string &rank, uint64_t current, uint64_t peak, uint64_t at_2) {
    Snapshot s = vt_test::doc_example_snapshot();
    s.process.rank = rank;
    s.devices[0].current_bytes = current;
    s.devices[0].peak_bytes = peak;
    DeviceTotals host;
    host.device = -1;
    host.current_bytes = host.peak_bytes = 65536;
    s.devices.push_back(host);
    s.peaks = {{0, peak, 1, {{2, at_2, 3}, {1, peak - at_2, 1}}}, {-1, 65536, 1, {{1, 65536, 1}}}};
    return s;
}

void add(Merger &m, const Snapshot &s, const std::string &name) {
    std::istringstream in(vt_test::snapshot_json(s));
    std::string error;
    REQUIRE(m.add_stream(in, name, &error));
}

} // namespace

TEST_CASE("merge imbalance: lower median, extremes, a low outlier, the floor, the host role", "[merge]") {
    Merger m(SiteKeyOptions{}, nullptr);
    // GPU peaks 100, 100, 101, 100 and 10 MiB: median 100 MiB, MAD 0, scale the 1 MiB floor; rank
    // 2's 1 MiB above is no outlier (under 5.19 MiB), process #4's 90 MiB below is.
    add(m, rank_file("0", 50 * MiB, 100 * MiB, 60 * MiB), "r0.json");
    add(m, rank_file("1", 40 * MiB, 100 * MiB, 60 * MiB), "r1.json");
    add(m, rank_file("2", 50 * MiB, 101 * MiB, 61 * MiB), "r2.json");
    add(m, rank_file("3", 60 * MiB, 100 * MiB, 60 * MiB), "r3.json");
    add(m, rank_file("", 40 * MiB, 10 * MiB, 6 * MiB), "r4.json");
    Imbalance im = m.imbalance();
    REQUIRE(im.roles.size() == 2);
    const ImbalanceRole &gpu = im.roles[0];
    CHECK(gpu.role == "gpu");
    CHECK(gpu.role_index == 0);
    CHECK(gpu.ranks == 5);
    CHECK(gpu.peak_min_bytes == 10 * MiB);
    CHECK(gpu.peak_min_input == 4);
    CHECK(gpu.peak_min_rank == -1);
    CHECK(gpu.peak_median_bytes == 100 * MiB);
    CHECK(gpu.peak_max_bytes == 101 * MiB);
    CHECK(gpu.peak_max_rank == 2);
    // Current 50, 40, 50, 60, 40 MiB: the minimum's first holder is rank 1, the median 50 MiB.
    CHECK(gpu.current_min_bytes == 40 * MiB);
    CHECK(gpu.current_min_rank == 1);
    CHECK(gpu.current_median_bytes == 50 * MiB);
    CHECK(gpu.current_max_bytes == 60 * MiB);
    CHECK(gpu.current_max_rank == 3);
    CHECK(gpu.peak_mad_bytes == 0);
    CHECK(gpu.scale_bytes == 1 * MiB);
    CHECK(gpu.outliers == 1);
    REQUIRE(im.outliers.size() == 1);
    const ImbalanceOutlier &low = im.outliers[0];
    CHECK(low.imbalance == 0);
    CHECK(low.input == 4);
    CHECK(low.rank == -1);
    CHECK(low.peak_bytes == 10 * MiB);
    CHECK(low.sites_known);
    CHECK(low.sites.empty()); // no call site holds more at its peak than the median rank's
    const ImbalanceRole &host = im.roles[1];
    CHECK(host.role == "host");
    CHECK(host.ranks == 5);
    CHECK(host.peak_median_bytes == 65536);
    CHECK(host.outliers == 0);

    std::string text = format_imbalance_text(im, 10, [&](uint32_t stack) { return m.site_key_of_stack(stack); });
    CHECK(text.find("imbalance: each rank's GPU, 5 ranks\n") != std::string::npos);
    CHECK(text.find("  process #4 (node17 cuda:0): peak 10.00 MiB (10485760 B), 90.00 MiB (94371840 B) below the "
                    "median, z -60.7\n    no call site holds more at its peak than at the median rank's\n") !=
          std::string::npos);
    CHECK(text.find("imbalance: host-pinned memory of each rank, 5 ranks\n") != std::string::npos);
}

TEST_CASE("merge imbalance: an even count takes the lower middle, a heavy rank's sites above the median", "[merge]") {
    Merger m(SiteKeyOptions{}, nullptr);
    // Peaks 200, 210, 220, 230, 1000 MiB (and a sixth of 205): sorted 200 205 210 220 230 1000, the
    // lower middle 210 MiB. Deviations 10 5 0 10 20 790: MAD 10 MiB, scale max(10, 2.1, 1) MiB.
    const uint64_t peaks[] = {200, 205, 210, 220, 230, 1000};
    const uint64_t at_2[] = {100, 100, 110, 100, 100, 700};
    for (int r = 0; r < 6; ++r)
        add(m, rank_file(std::to_string(r), 10 * MiB, peaks[r] * MiB, at_2[r] * MiB), "r" + std::to_string(r) + ".json");
    Imbalance im = m.imbalance();
    REQUIRE(im.roles.size() == 2);
    CHECK(im.roles[0].peak_median_bytes == 210 * MiB);
    CHECK(im.roles[0].peak_mad_bytes == 10 * MiB);
    CHECK(im.roles[0].scale_bytes == 10 * MiB);
    REQUIRE(im.outliers.size() == 1);
    const ImbalanceOutlier &heavy = im.outliers[0];
    CHECK(heavy.rank == 5);
    // Stack 2's site: 700 MiB against a median of 100 (100 100 100 100 110 700); stack 1's: 300
    // against 105 (the lower middle of 100 100 105 120 130 300).
    REQUIRE(heavy.sites.size() == 2);
    CHECK(heavy.sites[0].bytes == 600 * MiB);
    CHECK(heavy.sites[0].count == 3);
    CHECK(heavy.sites[1].bytes == 195 * MiB);
    CHECK(heavy.sites[1].count == 1);
    CHECK(m.site_key_of_stack(heavy.sites[0].stack) != m.site_key_of_stack(heavy.sites[1].stack));
}

TEST_CASE("merge imbalance: fewer than 3 ranks have no outliers", "[merge]") {
    Merger m(SiteKeyOptions{}, nullptr);
    add(m, rank_file("0", 10 * MiB, 100 * MiB, 50 * MiB), "r0.json");
    add(m, rank_file("1", 10 * MiB, 900 * MiB, 50 * MiB), "r1.json");
    Imbalance im = m.imbalance();
    REQUIRE(!im.roles.empty());
    CHECK(im.roles[0].ranks == 2);
    CHECK(im.roles[0].peak_median_bytes == 100 * MiB);
    CHECK(im.roles[0].outliers == 0);
    CHECK(im.outliers.empty());
}
