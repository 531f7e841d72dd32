// A reading as the viewer reads it (tools/analysis/live_view.h): sites grouped by call site, per
// device on request, Python frames as the process named them; malformed answers refused.
#include <catch2/catch.hpp>

#include <string>

#include "analysis/live_view.h"

using namespace vramtrace::cli;

namespace {

// Two devices; stacks 1 and 2 end in the same Python line (one call site), stack 3 in another.
const char *const kReading = R"({"format":"vramtrace-live","version":1,
 "process":{"pid":77,"command_line":["python","train.py"],"executable":"/usr/bin/python3","host":"h",
            "rank":"2","python":"3.11.2","start_time_ns":1,"monotonic_ns":5000000000,
            "exit_snapshot":"/out/v-77.json","live_snapshots":1},
 "devices":[{"device":0,"current_bytes":700,"peak_bytes":900,"allocation_count":4,"free_count":1,
             "total_allocated_bytes":1000,"total_freed_bytes":300,"process_used_bytes":5000},
            {"device":1,"current_bytes":50,"peak_bytes":50,"allocation_count":1,"free_count":0,
             "total_allocated_bytes":50,"total_freed_bytes":0}],
 "live_allocations":4,"live_bytes":750,
 "sites":[{"stack":3,"device":0,"bytes":400,"count":1},{"stack":1,"device":0,"bytes":200,"count":1},
          {"stack":2,"device":0,"bytes":100,"count":1},{"stack":2,"device":1,"bytes":50,"count":1}],
 "sites_left_out":{"sites":1,"bytes":7,"count":2},
 "frames":[{"address":"0x8000000000000001","python":true,"function":"step","file":"/src/train.py","line":10},
           {"address":"0x8000000000000002","python":true,"function":"main","file":"/src/train.py","line":20},
           {"address":"0x8000000000000003","python":true,"function":"main","file":"/src/train.py","line":21},
           {"address":"0x8000000000000004","python":true,"function":"load","file":"/src/data.py","line":5}],
 "modules":[],
 "stacks":[{"id":1,"frames":[0,1]},{"id":2,"frames":[0,2]},{"id":3,"frames":[3,1]}],
 "pools":[],"oom_count":1,"ooms":[{"time_ns":9,"device":0,"requested_bytes":4096,"api":"cudaMalloc","stack":3}],
 "history":{"seconds":3,"end_monotonic_ns":5000000000,"complete_from_ns":0,
            "devices":[{"device":0,"bytes":[-1,100,700]},{"device":1,"bytes":[0,0,50]}],
            "marks":[{"time_ns":4,"label":"epoch 1"}]},
 "serve_cpu_ns":1234})";

} // namespace

TEST_CASE("a reading: devices, call sites across stacks, what was left out") {
    LiveNamer namer;
    LiveView v;
    std::string error;
    REQUIRE(parse_live_reading(kReading, namer, -3, &v, &error));
    CHECK(v.pid == 77);
    CHECK(v.rank == "2");
    CHECK(v.exit_snapshot == "/out/v-77.json");
    REQUIRE(v.devices.size() == 2);
    CHECK(v.devices[0].totals.current_bytes == 700);
    CHECK(v.devices[0].totals.process_used_bytes == 5000);
    CHECK_FALSE(v.devices[1].totals.process_used_bytes.has_value());
    CHECK(v.devices[0].history == std::vector<int64_t>{-1, 100, 700});
    REQUIRE(v.sites.size() == 2);
    CHECK(v.sites[0].function == "load");
    CHECK(v.sites[0].file == "/src/data.py");
    CHECK(v.sites[0].line == 5);
    CHECK(v.sites[0].bytes == 400);
    // Stacks 1 and 2 on both devices: one call site, step at train.py:10.
    CHECK(v.sites[1].function == "step");
    CHECK(v.sites[1].line == 10);
    CHECK(v.sites[1].bytes == 350);
    CHECK(v.sites[1].count == 3);
    CHECK(v.sites[1].devices == std::vector<int>{0, 1});
    // The heaviest of its stacks (1: 200 bytes) is the one shown.
    REQUIRE(v.sites[1].stack.size() == 2);
    CHECK(v.sites[1].stack[1] == "main at /src/train.py:20 (python)");
    CHECK(v.left_out_bytes == 7);
    CHECK(v.oom_count == 1);
    REQUIRE(v.marks.size() == 1);
    CHECK(v.marks[0].label == "epoch 1");
    CHECK(v.serve_cpu_ns == 1234);
}

TEST_CASE("a reading for one device keeps that device's sites") {
    LiveNamer namer;
    LiveView v;
    std::string error;
    REQUIRE(parse_live_reading(kReading, namer, 1, &v, &error));
    REQUIRE(v.sites.size() == 1);
    CHECK(v.sites[0].function == "step");
    CHECK(v.sites[0].bytes == 50);
    CHECK(v.sites[0].devices == std::vector<int>{1});
}

TEST_CASE("answers that are not readings are refused with one line") {
    LiveNamer namer;
    LiveView v;
    std::string error;
    CHECK_FALSE(parse_live_reading("not json", namer, -3, &v, &error));
    CHECK(error == "the answer is not a live reading");
    CHECK_FALSE(parse_live_reading(R"({"format":"vramtrace-live","version":1,"error":"tracking is off"})", namer, -3, &v, &error));
    CHECK(error == "the process says: tracking is off");
    CHECK_FALSE(parse_live_reading(R"({"format":"vramtrace-live","version":1,"process":{}})", namer, -3, &v, &error));
    CHECK(error.rfind("the reading is malformed (", 0) == 0);
    std::string path;
    CHECK(parse_snapshot_answer(R"({"format":"vramtrace-live","version":1,"snapshot":"/o/x.live-1.json"})", &path, &error));
    CHECK(path == "/o/x.live-1.json");
    CHECK_FALSE(parse_snapshot_answer(R"({"format":"vramtrace-live","version":1,"error":"cannot write /o"})", &path, &error));
    CHECK(error == "the process says: cannot write /o");
}

TEST_CASE("a reading for the process list: devices only, no frame named") {
    LiveNamer namer;
    LiveView v;
    std::string error;
    REQUIRE(parse_live_reading(kReading, namer, -3, &v, &error, false));
    CHECK(v.sites.empty());
    REQUIRE(v.devices.size() == 2);
    CHECK(v.devices[1].totals.current_bytes == 50);
    CHECK(v.command_line == std::vector<std::string>{"python", "train.py"});
}
