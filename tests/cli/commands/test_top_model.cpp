// A reading as the viewer reads it (tools/commands/top_model.h): sites grouped by call site, per
// device on request, Python frames as the process named them; malformed answers refused.
#include <catch2/catch.hpp>

#include <string>

#include "commands/top_model.h"
#include "input/live_client.h"

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
    CHECK(v.frames[v.sites[1].stack[1]] == "main at /src/train.py:20 (python)");
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

TEST_CASE("a reading's merged stacks: each stack of a site once, heaviest first, frames shared") {
    LiveNamer namer;
    LiveView v;
    std::string error;
    REQUIRE(parse_live_reading(kReading, namer, -3, &v, &error));
    REQUIRE(v.sites.size() == 2);
    const LiveSite &step = v.sites[1];
    REQUIRE(step.stacks.size() == 3);
    CHECK(step.stacks[0].bytes == 200);
    CHECK(step.stacks[1].bytes == 100);
    CHECK(step.stacks[1].device == 0);
    CHECK(step.stacks[2].bytes == 50);
    CHECK(step.stacks[2].device == 1);
    // Stack 2 on both devices: the same frames, described once.
    CHECK(step.stacks[1].frames == std::vector<uint32_t>{0, 2});
    CHECK(step.stacks[2].frames == std::vector<uint32_t>{0, 2});
    CHECK(v.frames[2] == "main at /src/train.py:21 (python)");
    CHECK(v.sites[0].stacks.size() == 1);
    CHECK(v.sites[0].stacks[0].frames == std::vector<uint32_t>{3, 1});
}

namespace {

// kReading with `from` replaced by `to` (once).
std::string reading_with(const std::string &from, const std::string &to) {
    std::string text = kReading;
    size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

std::string list_of(size_t n, const std::string &item) {
    std::string out;
    for (size_t i = 0; i < n; ++i) out += (i ? "," : "") + item;
    return out;
}

} // namespace

TEST_CASE("a reading past the protocol's bounds is refused with one line") {
    LiveNamer namer;
    LiveView v;
    std::string error;
    auto refused = [&](const std::string &text) {
        error.clear();
        CHECK_FALSE(parse_live_reading(text, namer, -3, &v, &error));
        return error;
    };
    CHECK(refused(reading_with(R"("stacks":[{"id":1,"frames":[0,1]})",
                               R"("stacks":[{"id":1,"frames":[)" + list_of(257, "0") + "]}")) ==
          "the reading is over the protocol's bounds (257 frames in one stack, at most 256)");
    CHECK(refused(reading_with(R"("sites":[)", R"("sites":[)" + list_of(253, R"({"stack":1,"device":0,"bytes":1,"count":1})") + ",")) ==
          "the reading is over the protocol's bounds (257 sites, at most 256)");
    CHECK(refused(reading_with(R"("stacks":[)", R"("stacks":[)" + list_of(270, R"({"id":9,"frames":[0]})") + ",")) ==
          "the reading is over the protocol's bounds (273 stacks, at most 272)");
    CHECK(refused(reading_with(R"("function":"step")", R"("function":")" + std::string(1017, 'f') + "\"")) ==
          "the reading is over the protocol's bounds (1017 bytes in a Python frame's name, at most 1016)");
    CHECK(refused(reading_with(R"("ooms":[)", R"("ooms":[)" + list_of(16, R"({"time_ns":1})") + ",")) ==
          "the reading is over the protocol's bounds (17 out-of-memory failures, at most 16)");
    CHECK(refused(reading_with(R"("marks":[)", R"("marks":[)" + list_of(32, R"({"time_ns":1,"label":"m"})") + ",")) ==
          "the reading is over the protocol's bounds (33 marks, at most 32)");
    CHECK(refused(reading_with(R"("bytes":[-1,100,700])", "\"bytes\":[" + list_of(121, "0") + "]")) ==
          "the reading is over the protocol's bounds (121 seconds of history, at most 120)");
    CHECK(refused(std::string(kReading) + std::string((32u << 20) + 1 - std::string(kReading).size(), ' ')) ==
          "the reading is over the protocol's bounds (33554433 bytes, at most 33554432)");
    CHECK(refused(reading_with(R"("pools":[])", "\"pools\":[],\"pad\":[" + list_of(1000000, "0") + "]")) ==
          "the reading is over the protocol's bounds (more than 1000000 JSON values)");
    // At the bounds: accepted.
    REQUIRE(parse_live_reading(reading_with(R"("stacks":[{"id":1,"frames":[0,1]})",
                                            R"("stacks":[{"id":1,"frames":[)" + list_of(256, "0") + "]}"),
                               namer, -3, &v, &error));
    CHECK(v.sites[1].stacks[0].frames.size() == 256);
}

TEST_CASE("a reading's text is escaped for a terminal, and its JSON stays valid") {
    LiveNamer namer;
    LiveView v;
    std::string error;
    // A C1 control (U+0085) and a right-to-left override (U+202E), as the process sends them (its
    // JSON is valid UTF-8; a name that is not comes from the files on disk: live_test.sh).
    const std::string odd = "\xc2\x85\xe2\x80\xae";
    std::string text = reading_with(R"("function":"load")", "\"function\":\"load" + odd + "\"");
    size_t at = text.find(R"("train.py"])");
    REQUIRE(at != std::string::npos);
    text.replace(at, 11, "\"train" + odd + "\"]");
    at = text.find(R"("label":"epoch 1")");
    REQUIRE(at != std::string::npos);
    text.replace(at, 17, "\"label\":\"epoch" + odd + "\"");
    REQUIRE(parse_live_reading(text, namer, -3, &v, &error));
    const std::string escaped = "\\xc2\\x85\\xe2\\x80\\xae";
    CHECK(v.sites[0].function == "load" + escaped);
    CHECK(v.sites[0].location == "load" + escaped + " at /src/data.py:5 (python)");
    CHECK(v.frames[v.sites[0].stack[0]] == "load" + escaped + " at /src/data.py:5 (python)");
    CHECK(v.command_line == std::vector<std::string>{"python", "train" + escaped});
    CHECK(v.marks[0].label == "epoch" + escaped);
    std::string json = live_view_json(v, 10);
    CHECK(json.find("\"function\": \"load\\\\xc2\\\\x85\\\\xe2\\\\x80\\\\xae\"") != std::string::npos);
    CHECK(json.find("\"label\": \"epoch\\\\xc2\\\\x85\\\\xe2\\\\x80\\\\xae\"") != std::string::npos);
}

TEST_CASE("a server may be root or this user, no one else") {
    CHECK(peer_uid_allowed(0, 1000));
    CHECK(peer_uid_allowed(1000, 1000));
    CHECK_FALSE(peer_uid_allowed(65534, 1000));
    CHECK(peer_uid_allowed(0, 0));
    CHECK_FALSE(peer_uid_allowed(1000, 0));
}
