// VRAMTRACE_OUTPUT placeholders and the names of trigger snapshots (lib/dump/output_path.h).
#include <catch2/catch.hpp>

#include "dump/output_path.h"

using vramtrace::expand_output_path;
using vramtrace::trigger_path_for;

TEST_CASE("output path: %p %h %r %% and unknown placeholders") {
    CHECK(expand_output_path("vt-%p-%h-%r.json", 42, "node7", "3") == "vt-42-node7-3.json");
    CHECK(expand_output_path("vt-%r.json", 42, "n", "") == "vt-norank.json");
    CHECK(expand_output_path("vt-%r.json", 42, "n", nullptr) == "vt-norank.json");
    CHECK(expand_output_path("100%%-%x-%", 1, "n", "0") == "100%-%x-%");
    CHECK(expand_output_path("/runs/r%r/p%p.json", 7, "n", "12") == "/runs/r12/p7.json");
}

TEST_CASE("output path: trigger snapshots sit next to the exit snapshot") {
    CHECK(trigger_path_for("out/vramtrace-12.json", "oom", 1) == "out/vramtrace-12.oom-1.json");
    CHECK(trigger_path_for("out/vramtrace-12.json", "signal", 3) == "out/vramtrace-12.signal-3.json");
    CHECK(trigger_path_for("out/vramtrace-12.json", "periodic", -1) == "out/vramtrace-12.periodic.json");
    CHECK(trigger_path_for("snap", "crash", -1) == "snap.crash.json");               // no .json: appended
    CHECK(trigger_path_for("dir.json/snap", "oom", 2) == "dir.json/snap.oom-2.json"); // only the file name's
    CHECK(trigger_path_for("out/.json", "oom", 1) == "out/.json.oom-1.json");          // the whole name stays
    CHECK(trigger_path_for("a.json.json", "oom", 1) == "a.json.oom-1.json");           // only the final one
}
