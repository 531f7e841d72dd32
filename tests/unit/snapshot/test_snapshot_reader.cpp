// The CLI's snapshot reader: every kind of bad input gives one line naming the file, never an
// exception or a crash; unknown members are skipped; a custom sink sees records one at a time.
#include <catch2/catch.hpp>

#include <random>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include "snapshot/reader/snapshot_reader.h"
#include "report_test_data.h"
#include "snapshot/snapshot_writer.h"

using namespace vramtrace::snapshot;
using vramtrace::snapshot::read_snapshot_file;

namespace {

std::string replaced(std::string text, const std::string &from, const std::string &to) {
    size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

// Reads `content` from a file named `name`; returns the error ("" on success) and checks that a
// failure is one line naming the file, and leaves the output empty.
std::string read_error(const std::string &content, const std::string &name = "input.json") {
    vt_test::TempDir dir;
    std::string path = dir.write(name, content);
    Snapshot out = vt_test::golden_snapshot();
    std::string error;
    bool ok = false;
    REQUIRE_NOTHROW(ok = read_snapshot_file(path, &out, &error));
    if (ok) return "";
    INFO(error);
    CHECK(error.rfind(path + ": ", 0) == 0);
    CHECK(error.find('\n') == std::string::npos);
    CHECK(error.size() < 400);
    CHECK(out == Snapshot{});
    return error.substr(path.size() + 2);
}

} // namespace

TEST_CASE("reader: empty and whitespace-only files", "[reader]") {
    CHECK(read_error("") == "empty file (no JSON document), not a vramtrace snapshot");
    CHECK(read_error(" \n\t\n") == "empty file (no JSON document), not a vramtrace snapshot");
}

TEST_CASE("reader: truncated JSON", "[reader]") {
    std::string json = vt_test::snapshot_json(vt_test::golden_snapshot());
    std::string error = read_error(json.substr(0, json.size() / 2));
    CHECK_THAT(error, Catch::StartsWith("truncated JSON (parse error at line "));
    CHECK_THAT(error, Catch::Contains("unexpected end of input"));
    CHECK_THAT(read_error(json.substr(0, json.find("vramtrace-snapshot"))),
               Catch::StartsWith("truncated JSON (parse error at line 2, column 14: syntax error while parsing value - "
                                 "invalid string: missing closing quote; "));
    CHECK(read_error("\"abc").rfind("truncated JSON (", 0) == 0);
    // Every prefix of a document is reported as truncated, on one line naming the input.
    std::string small = vt_test::snapshot_json(vt_test::doc_example_snapshot());
    for (size_t n = 1; n + 1 < small.size(); ++n) {
        std::istringstream in(small.substr(0, n));
        vramtrace::snapshot::SnapshotSink ignore;
        std::string e;
        INFO("prefix of " << n << " bytes");
        CHECK_FALSE(vramtrace::snapshot::read_snapshot_stream(in, "cut.json", ignore, &e));
        CHECK(e.rfind("cut.json: truncated JSON (", 0) == 0);
        CHECK(e.find('\n') == std::string::npos);
    }
    CHECK(read_error(small).empty());
    CHECK(read_error(small.substr(0, small.size() - 1)).empty()); // only the final newline missing
}

TEST_CASE("reader: binary garbage", "[reader]") {
    CHECK_THAT(read_error(std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16)),
               Catch::StartsWith("not JSON, not a vramtrace snapshot (parse error at line 1, column 1: "));
    std::mt19937 rng(7);
    for (int round = 0; round < 200; ++round) {
        std::string bytes(size_t(1 + rng() % 300), '\0');
        for (char &c : bytes) c = char(rng());
        CHECK_FALSE(read_error(bytes).empty());
    }
}

TEST_CASE("reader: corrupted snapshots never crash", "[reader]") {
    std::string json = vt_test::snapshot_json(vt_test::golden_snapshot());
    std::mt19937 rng(11);
    for (int round = 0; round < 500; ++round) {
        std::string bad = json;
        for (int k = 0; k < 1 + int(rng() % 3); ++k) bad[rng() % bad.size()] = "{}[]\":,0x-9a \\\x01\xff"[rng() % 17];
        read_error(bad); // either valid or one line naming the file: checked inside
    }
}

TEST_CASE("reader: foreign JSON documents", "[reader]") {
    CHECK(read_error("{\"name\": \"x\", \"items\": [1, {\"a\": []}]}") ==
          "not a vramtrace snapshot (no \"format\": \"vramtrace-snapshot\" member)");
    CHECK(read_error("[1, 2, 3]") == "not a vramtrace snapshot (the document is a JSON array, not an object)");
    CHECK(read_error("42") == "not a vramtrace snapshot (the document is an integer, not an object)");
    CHECK(read_error("{\"format\": \"chrome-trace\"}") ==
          "not a vramtrace snapshot (\"format\" is \"chrome-trace\", expected \"vramtrace-snapshot\")");
    CHECK(read_error("{\"format\": 3}") == "not a vramtrace snapshot (\"format\" is an integer)");
    // Members that look like ours but do not fit, before any "format": still foreign.
    CHECK(read_error("{\"allocations\": [1, 2], \"devices\": {\"a\": 1}}") ==
          "not a vramtrace snapshot (no \"format\": \"vramtrace-snapshot\" member)");
    // ... and once "format" shows up, the first problem is the one reported.
    CHECK(read_error("{\"allocations\": [1], \"format\": \"vramtrace-snapshot\"}") ==
          "allocations[0]: expected an object, got an integer");
    std::string json = vt_test::snapshot_json(vt_test::golden_snapshot());
    CHECK(read_error(replaced(json, "\"format\": \"vramtrace-snapshot\",\n", "")) ==
          "not a vramtrace snapshot (no \"format\": \"vramtrace-snapshot\" member)");
}

TEST_CASE("reader: schema versions", "[reader]") {
    std::string json = vt_test::snapshot_json(vt_test::golden_snapshot());
    CHECK(read_error(replaced(json, "\"schema_version\": 1,", "\"schema_version\": 999,")) ==
          "schema_version 999 is newer than this vramtrace reads (1); use a newer vramtrace");
    CHECK(read_error(replaced(json, "\"schema_version\": 1,", "\"schema_version\": 0,")) ==
          "schema_version 0 is not valid");
    CHECK(read_error(replaced(json, "\"schema_version\": 1,", "\"schema_version\": \"1\",")) ==
          "schema_version: expected an integer, got a string");
    CHECK(read_error(replaced(json, "\"schema_version\": 1,\n", "")) == "missing member \"schema_version\"");
}

TEST_CASE("reader: missing and mistyped fields", "[reader]") {
    std::string json = vt_test::snapshot_json(vt_test::golden_snapshot());
    std::string first_alloc = "{\"address\": \"0x7f0000000000\", \"size\": 2097152, ";
    CHECK(read_error(replaced(json, first_alloc, "{\"address\": \"0x7f0000000000\", ")) ==
          "allocations[0]: missing field \"size\"");
    CHECK(read_error(replaced(json, "\"size\": 512,", "\"size\": \"512\",")) ==
          "allocations[2].size: expected an unsigned integer, got a string");
    CHECK(read_error(replaced(json, "\"size\": 512,", "\"size\": -512,")) ==
          "allocations[2].size: expected an unsigned integer, got -512");
    CHECK(read_error(replaced(json, "\"size\": 512,", "\"size\": 5.12e2,")) ==
          "allocations[2].size: expected an unsigned integer, got a fractional number");
    CHECK(read_error(replaced(json, "\"size\": 512,", "\"size\": null,")) ==
          "allocations[2].size: expected an unsigned integer, got null");
    CHECK(read_error(replaced(json, "\"size\": 512,", "\"size\": [512],")) ==
          "allocations[2].size: expected a scalar, got an array");
    CHECK(read_error(replaced(json, "\"address\": \"0x7f0000400000\"", "\"address\": 139637976727552")) ==
          "allocations[2].address: expected a hex string such as \"0x1f\", got an integer");
    CHECK(read_error(replaced(json, "\"address\": \"0x7f0000400000\"", "\"address\": \"7f0000400000\"")) ==
          "allocations[2].address: expected a hex string such as \"0x1f\", got \"7f0000400000\"");
    CHECK(read_error(replaced(json, "\"address\": \"0x7f0000400000\"", "\"address\": \"0x10000000000000000\"")) ==
          "allocations[2].address: expected a hex string such as \"0x1f\", got \"0x10000000000000000\"");
    CHECK(read_error(replaced(json, "\"device\": 0, \"current_bytes\"", "\"device\": 4294967296, \"current_bytes\"")) ==
          "devices[1].device: integer 4294967296 is out of range");
    CHECK(read_error(replaced(json, "\"thread_id\": 4243", "\"thread_id\": 4294967296")) ==
          "allocations[3].thread_id: integer 4294967296 is out of range");
    CHECK(read_error(replaced(json, "\"pid\": 4242,", "\"pid\": true,")) == "process.pid: expected an integer, got a boolean");
    CHECK(read_error(replaced(json, "\"./train\", ", "\"./train\", 7, ")) ==
          "process.command_line[1]: expected a string, got an integer");
    CHECK(read_error(replaced(json, "\"frames\": [0, 3, 2]", "\"frames\": [0, {}, 2]")) ==
          "stacks[1].frames[1]: expected a scalar, got an object");
    CHECK(read_error(replaced(json, "\"frames\": [0, 3, 2]", "\"frames\": 3")) ==
          "stacks[1].frames: expected an array, got an integer");
    CHECK(read_error(replaced(json, "\"dropped\": {\"allocations\": 0, \"stacks\": 1,", "\"dropped\": {\"stacks\": 1,")) ==
          "dropped: missing field \"allocations\"");
    CHECK(read_error(replaced(json, "\"dropped\": {\"allocations\": 0, \"stacks\": 1, \"peak_sites\": 0}", "\"dropped\": [0, 1]")) ==
          "dropped: expected an object, got an array");
    CHECK(read_error(replaced(json, "\"devices\": [", "\"devices\": 3, \"x\": [")) ==
          "devices: expected an array, got an integer");
    CHECK(read_error(replaced(json, "\"modules\": [", "\"modules\": [7, ")) ==
          "modules[0]: expected an object, got an integer");
    CHECK(read_error(replaced(json, "  \"allocations\": [", "  \"other\": [")) == "missing member \"allocations\"");
}

TEST_CASE("reader: dangling references", "[reader]") {
    std::string json = vt_test::snapshot_json(vt_test::golden_snapshot());
    CHECK(read_error(replaced(json, "\"module\": -1,", "\"module\": 2,")) ==
          "frames[5].module: 2 is not an index into modules (2 entries)");
    CHECK(read_error(replaced(json, "\"frames\": [0, 3, 2]", "\"frames\": [0, 7, 2]")) ==
          "stacks[1].frames[1]: 7 is not an index into frames (7 entries)");
    CHECK(read_error(replaced(json, "\"frames\": [0], \"call_site\": -1", "\"frames\": [0], \"call_site\": 1")) ==
          "stacks[3].call_site: 1 is not an index into this stack's frames (1 entries)");
    CHECK(read_error(replaced(json, "\"frames\": [0], \"call_site\": -1", "\"frames\": [0], \"call_site\": -1, \"via\": 9")) ==
          "stacks[3].via: 9 is not an index into this stack's frames (1 entries)");
    CHECK(read_error(replaced(json, "{\"id\": 2,", "{\"id\": 1,")) == "stacks: id 1 appears more than once");
    CHECK(read_error(replaced(json, "{\"id\": 2,", "{\"id\": 0,")) == "stacks[1].id: 0 is reserved for \"no stack\"");
    CHECK(read_error(replaced(json, "\"time_ns\": 9000000, \"stack\": 6}", "\"time_ns\": 9000000, \"stack\": 60}")) ==
          "allocations[8].stack: 60 is not the id of an entry in stacks");
}

TEST_CASE("reader: trailing data and duplicate documents", "[reader]") {
    std::string json = vt_test::snapshot_json(vt_test::doc_example_snapshot());
    CHECK_THAT(read_error(json + "x"), Catch::StartsWith("malformed JSON (parse error at line "));
    CHECK_THAT(read_error(json + json), Catch::StartsWith("malformed JSON ("));
}

TEST_CASE("reader: unknown members are skipped (fields added later keep the version)", "[reader]") {
    std::string json = vt_test::snapshot_json(vt_test::golden_snapshot());
    json = replaced(json, "\"schema_version\": 1,", "\"schema_version\": 1, \"future\": {\"a\": [1, {\"b\": null}]},");
    json = replaced(json, "\"pid\": 4242,", "\"pid\": 4242, \"cgroup\": \"/x\", \"env\": {\"A\": [\"1\"]},");
    json = replaced(json, "{\"address\": \"0x7f0000000000\",", "{\"labels\": [\"a\", {\"b\": 2}], \"address\": \"0x7f0000000000\",");
    json = replaced(json, "\"allocations\": [", "\"segments\": [{\"x\": 1}], \"allocations\": [");
    CHECK(read_error(json).empty());
    vt_test::TempDir dir;
    Snapshot back;
    std::string error;
    REQUIRE(read_snapshot_file(dir.write("f.json", json), &back, &error));
    CHECK(back == vt_test::golden_snapshot());
}

TEST_CASE("reader: files that cannot be opened", "[reader]") {
    vt_test::TempDir dir;
    Snapshot out;
    std::string error;
    CHECK_FALSE(read_snapshot_file(dir.file("nope.json"), &out, &error));
    CHECK(error == dir.file("nope.json") + ": cannot open: No such file or directory");
    CHECK_FALSE(read_snapshot_file(dir.file(""), &out, &error));
    CHECK(error == dir.file("") + ": is a directory, not a snapshot file");
}

namespace {
struct CountingSink : vramtrace::snapshot::SnapshotSink {
    int version = 0;
    uint64_t allocations = 0, bytes = 0, frames = 0, stacks = 0, devices = 0, modules = 0, dropped_stacks = 0;
    std::string reason;
    void on_schema_version(int v) override { version = v; }
    void on_process(ProcessInfo &&p) override { reason = p.reason; }
    void on_device(DeviceTotals &&) override { ++devices; }
    void on_dropped(uint64_t, uint64_t s) override { dropped_stacks = s; }
    void on_module(Module &&) override { ++modules; }
    void on_frame(Frame &&) override { ++frames; }
    void on_stack(Stack &&) override { ++stacks; }
    void on_allocation(Allocation &&a) override { ++allocations, bytes += a.size; }
};
} // namespace

TEST_CASE("reader: streaming into a custom sink", "[reader]") {
    std::istringstream in(vt_test::snapshot_json(vt_test::golden_snapshot()));
    CountingSink sink;
    std::string error;
    REQUIRE(vramtrace::snapshot::read_snapshot_stream(in, "stream", sink, &error));
    CHECK(sink.version == 1);
    CHECK(sink.reason == "exit");
    CHECK(sink.devices == 3);
    CHECK(sink.modules == 2);
    CHECK(sink.frames == 7);
    CHECK(sink.stacks == 6);
    CHECK(sink.allocations == 9);
    CHECK(sink.bytes == 16848360);
    CHECK(sink.dropped_stacks == 1);

    std::istringstream bad("{\"format\": \"vramtrace-snapshot\", \"schema_version\": 2}");
    CHECK_FALSE(vramtrace::snapshot::read_snapshot_stream(bad, "<stdin>", sink, &error));
    CHECK(error == "<stdin>: schema_version 2 is newer than this vramtrace reads (1); use a newer vramtrace");
}

TEST_CASE("reader: fields added within schema 1 are checked like the others", "[reader]") {
    std::string json = vt_test::snapshot_json(vt_test::doc_example_snapshot());
    // Dangling stack ids.
    CHECK(read_error(replaced(json, "{\"stack\": 2, \"bytes\": 3145728", "{\"stack\": 9, \"bytes\": 3145728")) ==
          "peaks[0].sites[0].stack: 9 is not the id of an entry in stacks");
    CHECK(read_error(replaced(json, "\"stream\": \"0x0\", \"stack\": 2,", "\"stream\": \"0x0\", \"stack\": 7,")) ==
          "ooms[0].stack: 7 is not the id of an entry in stacks");
    CHECK(read_error(replaced(json, "\"api\": \"cudaFree\", \"stack\": 2}", "\"api\": \"cudaFree\", \"stack\": 5}")) ==
          "events[2].stack: 5 is not the id of an entry in stacks");
    // Types, values and required fields of the new records.
    CHECK(read_error(replaced(json, "\"type\": \"mark\"", "\"type\": \"poke\"")) ==
          "events[0].type: \"poke\" is not one of \"alloc\", \"free\", \"mark\", \"oom\"");
    CHECK(read_error(replaced(json, "\"is_default\": true", "\"is_default\": 1")) ==
          "pools[0].is_default: expected true or false, got an integer");
    CHECK(read_error(replaced(json, "\"symbolized\": true", "\"symbolized\": \"yes\"")) ==
          "process.symbolized: expected true or false, got a string");
    CHECK(read_error(replaced(json, "\"stack\": 2, \"bytes\": 3145728, \"count\": 1", "\"stack\": 2, \"bytes\": 3145728")) ==
          "peaks[0].sites[0]: missing field \"count\"");
    CHECK(read_error(replaced(json, "\"bytes\": 1048576,", "\"bytes\": -1,")) ==
          "peaks[0].sites[1].bytes: expected an unsigned integer, got -1");
    CHECK(read_error(replaced(json, "\"sites\": [", "\"sites\": [[], ")) ==
          "peaks[0].sites[0]: expected an object, got an array");
    CHECK(read_error(replaced(json, "\"line\": 12}", "\"line\": [12]}")) ==
          "frames[1].inlined[0].line: expected a scalar, got an array");
    CHECK(read_error(replaced(json, "\"oom_count\": 1", "\"oom_count\": \"1\"")) ==
          "oom_count: expected an unsigned integer, got a string");
    CHECK(read_error(replaced(json, "\"event_history\": {\"capacity\": 65536, ", "\"event_history\": {")) ==
          "event_history: missing field \"capacity\"");
    CHECK(read_error(replaced(json, "{\"type\": \"alloc\", \"time_ns\": 120000000, ", "{\"type\": \"alloc\", ")) ==
          "events[1]: missing field \"time_ns\"");
    CHECK(read_error(replaced(json, "\"total_memory_bytes\": 85899345920", "\"total_memory_bytes\": null")) ==
          "devices[0].total_memory_bytes: expected an unsigned integer, got null");
    CHECK(read_error(json).empty());
}

TEST_CASE("reader: a file without the fields added within schema 1 reads with their defaults", "[reader]") {
    Snapshot s;
    std::string error;
    REQUIRE(read_snapshot_file(std::string(VT_TEST_DATA_DIR) + "/summary_input.json", &s, &error));
    CHECK(s.process.dump_monotonic_ns == 0);
    CHECK(s.process.rank == "");
    CHECK(s.process.symbolized == true);
    CHECK(s.dropped_peak_sites == 0);
    CHECK(s.oom_count == 0);
    CHECK(s.peaks.empty());
    CHECK(s.ooms.empty());
    CHECK(s.pools.empty());
    CHECK(s.events == EventHistory{});
    for (const DeviceTotals &d : s.devices) {
        CHECK(d.uuid == "");
        CHECK(!d.total_memory_bytes.has_value());
        CHECK(!d.process_used_bytes.has_value());
    }
    for (const Frame &f : s.frames) CHECK(f.inlined.empty());
    for (const Allocation &a : s.allocations) CHECK(!a.size_is_estimate);
}
