// Internal limits reached are never silent: the summary has a line for each (dropped allocations,
// stacks and peak sites; a wrapped event history), and none when nothing was reached.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "report_test_data.h"
#include "report/summary_format.h"

using namespace vramtrace::report;
using namespace vramtrace::snapshot;

namespace {

std::vector<std::string> limit_lines(const std::string &text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    bool after = false;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("vramtrace: ", 0) == 0) line.erase(0, 11); // every summary line carries it
        if (line.rfind("warning: ", 0) == 0 || line.rfind("note: the event history", 0) == 0) after = true;
        else if (line.rfind("  ", 0) != 0) after = false;
        if (after) out.push_back(line);
    }
    return out;
}

} // namespace

TEST_CASE("summary: one line (and its consequence) for every internal limit reached", "[summary][limits]") {
    Snapshot s = vt_test::golden_snapshot();
    s.dropped_allocations = s.dropped_stacks = s.dropped_peak_sites = 0; // the golden one has a dropped stack
    REQUIRE_FALSE(format_summary(s).empty());
    CHECK(limit_lines(format_summary(s)).empty());

    s.dropped_allocations = 2;
    s.dropped_stacks = 1;
    s.dropped_peak_sites = 3;
    s.events.capacity = 4;
    s.events.recorded = 9;
    s.events.wrapped = true;
    s.events.events.resize(4);
    for (Event &e : s.events.events) e.type = "mark", e.device = -2, e.stack = 0;
    INFO(format_summary(s));
    CHECK(limit_lines(format_summary(s)) ==
          std::vector<std::string>{
              "warning: 2 allocations could not be recorded (no memory for the live table);",
              "  the live figures above are incomplete",
              "warning: 1 stack could not be stored (no memory for the stack depot);",
              "  allocations without a stack show as (no stack captured)",
              "warning: 3 allocations got no peak counter for their call site (no memory);",
              "  their bytes are in the peaks under (no stack captured)",
              "note: the event history kept the newest 4 events of 9 (VRAMTRACE_EVENTS=4)",
          });
}
