// Python frames in stacks (docs/python-frames.md): Debian's python3 runs a script that allocates
// through a small C extension (tests/e2e/python/) on the stand-in runtime. The script's own lines
// are found from "# @name" markers in its source, never from vramtrace's output.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

using namespace e2e;
using nlohmann::json;

namespace {

const std::string kScript = VT_PYTHON_DIR "/python_frames_program.py";

// VT_E2E_PYTHON: another interpreter to run the same tests with (each struct layout of
// lib/python/python_layouts.h: CPython 3.10 to 3.13, docs/python-frames.md); else the build's.
std::string python3() {
    const char *other = getenv("VT_E2E_PYTHON");
    std::string p = other != nullptr && *other != 0 ? other : VT_PYTHON3;
    if (p.empty()) FAIL("no python3 was found when the build was configured (README's apt-get line installs it)");
    return p;
}

std::string extension() { return bin_dir() + "/libvt_python_ext.so"; }

// The line of the script that carries "# @name".
int marker_line(const std::string &name) {
    std::ifstream in(kScript);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
        if (line.size() >= name.size() + 3 && line.compare(line.size() - name.size() - 3, std::string::npos, "# @" + name) == 0)
            return n;
    FAIL("marker @" << name << " not in " << kScript);
    return 0;
}

struct ShownFrame {
    bool python = false;
    std::string function, file;
    int line = 0;
};

// The frames of the stack of the live allocation of `size` bytes, leaf first, and its call site.
std::vector<ShownFrame> stack_of(const json &s, uint64_t size, int *call_site = nullptr) {
    uint64_t id = 0;
    int found = 0;
    for (const auto &a : s.at("allocations"))
        if (a.at("size") == size) id = a.at("stack").get<uint64_t>(), ++found;
    REQUIRE(found == 1);
    for (const auto &st : s.at("stacks")) {
        if (st.at("id") != id) continue;
        std::vector<ShownFrame> out;
        for (const auto &i : st.at("frames")) {
            const auto &f = s.at("frames").at(i.get<size_t>());
            out.push_back({f.value("python", false), f.at("function"), f.at("file"), f.at("line")});
        }
        if (call_site) *call_site = st.at("call_site");
        return out;
    }
    FAIL("no stack " << id);
    return {};
}

std::string show(const std::vector<ShownFrame> &frames) {
    std::string out;
    for (const auto &f : frames)
        out += (f.python ? "  py " : "  native ") + f.function + " " + f.file + ":" + std::to_string(f.line) + "\n";
    return out;
}

// The Python frames of a stack, innermost first, as "function:line" (the file checked separately).
std::vector<std::string> python_part(const std::vector<ShownFrame> &frames) {
    std::vector<std::string> out;
    for (const auto &f : frames)
        if (f.python) {
            CHECK(f.file == kScript);
            out.push_back(f.function + ":" + std::to_string(f.line));
        }
    return out;
}

// CPython before 3.11: code objects have no qualified name (co_qualname: "Model.forward" is
// "forward"), and every Python call runs its own evaluation loop, so native frames separate the
// Python ones. The expectations below follow the interpreter the tests run.
bool python_before_311() {
    static int cached = -1;
    if (cached < 0) {
        std::string cmd = python3() + " -c 'import sys; print(int(sys.version_info < (3, 11)))'";
        FILE *p = popen(cmd.c_str(), "r");
        char buf[8] = {};
        cached = p != nullptr && fgets(buf, sizeof buf, p) != nullptr && buf[0] == '1' ? 1 : 0;
        if (p != nullptr) pclose(p);
    }
    return cached == 1;
}

std::string qualified(const std::string &name) {
    size_t dot = name.rfind('.');
    return python_before_311() && dot != std::string::npos ? name.substr(dot + 1) : name;
}

std::string at(const std::string &function, const std::string &marker) {
    return qualified(function) + ":" + std::to_string(marker_line(marker));
}

// Every Python frame of a stack, innermost first, as "function file:line".
std::vector<std::string> python_frames(const std::vector<ShownFrame> &frames) {
    std::vector<std::string> out;
    for (const auto &f : frames)
        if (f.python) out.push_back(f.function + " " + f.file + ":" + std::to_string(f.line));
    return out;
}

struct ScriptRun {
    RunResult result;
    // The worker thread's frames outside without_gil(), as the interpreter reported them to the
    // script ("function file:line", innermost first).
    std::vector<std::string> worker_outer;
};

ScriptRun run_script(const std::string &dir, std::map<std::string, std::string> env) {
    env["VRAMTRACE_OUTPUT"] = dir + "/py.json";
    ScriptRun s{run({python3(), kScript, extension()}, {true, env, dir}), {}};
    const RunResult &r = s.result;
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    std::istringstream lines(r.out);
    std::string line, last;
    while (std::getline(lines, line)) {
        last = line;
        if (line.rfind("outer ", 0) != 0) continue;
        std::istringstream words(line.substr(6));
        std::string function, file, number;
        words >> function >> file >> number;
        s.worker_outer.push_back(function + " " + file + ":" + number);
    }
    REQUIRE(last == "allocated 6");
    REQUIRE(s.worker_outer.size() >= 3); // Thread.run, Thread._bootstrap_inner, Thread._bootstrap
    return s;
}

} // namespace

TEST_CASE("python: the script's lines replace the interpreter's frames in each stack") {
    std::string dir = make_temp_dir("python-frames");
    ScriptRun run_result = run_script(dir, {});
    const RunResult &r = run_result.result;
    json s = load_json(dir + "/py.json");
    REQUIRE(s.at("process").at("python").get<std::string>().rfind("3.", 0) == 0);

    int site = -1;
    auto model = stack_of(s, 8 << 20, &site);
    INFO(show(model));
    CHECK(python_part(model) == std::vector<std::string>{at("allocate", "allocate"), at("Model.forward", "forward"),
                                                        at("main", "main-forward"), at("<module>", "module")});
    // Native frames on both sides: the extension inside, the interpreter's start outside; the Python
    // frames contiguous (one evaluation loop ran them all) and no evaluation-loop frame left.
    REQUIRE(model.size() > 6);
    CHECK(!model.front().python);
    CHECK(model.front().function == "vt_py_alloc");
    CHECK(!model.back().python);
    size_t first = 0, last = 0;
    for (size_t i = 0; i < model.size(); ++i)
        if (model[i].python) last = i, first = first ? first : i;
    if (!python_before_311()) CHECK(last - first == 3);
    for (const auto &f : model) CHECK(f.function != "_PyEval_EvalFrameDefault");
    // The call site is the script's innermost line.
    REQUIRE(site >= 0);
    CHECK(model[size_t(site)].python);
    CHECK(model[size_t(site)].line == marker_line("allocate"));

    auto nested = stack_of(s, 4 << 20);
    INFO(show(nested));
    CHECK(python_part(nested) == std::vector<std::string>{at("allocate", "allocate"), at("nested", "nested-leaf"),
                                                         at("nested", "nested-call"), at("nested", "nested-call"),
                                                         at("main", "main-nested"), at("<module>", "module")});

    // The main thread calling through ctypes.CDLL, which releases the GIL around the call: the
    // same Python frames, read from the thread's own frame chain without the GIL.
    auto released = stack_of(s, 3 << 20, &site);
    INFO(show(released));
    CHECK(python_part(released) == std::vector<std::string>{at("allocate", "allocate"), at("main", "main-released"),
                                                           at("<module>", "module")});
    CHECK(released.front().function == "vt_py_alloc");
    REQUIRE(site >= 0);
    CHECK(released[size_t(site)].python);
    CHECK(released[size_t(site)].line == marker_line("allocate"));

    // A function whose name is not ASCII (Latin-1), GIL released.
    auto latin1 = stack_of(s, 6 << 20);
    INFO(show(latin1));
    CHECK(python_part(latin1) == std::vector<std::string>{at("allocate", "allocate"), at("caf\xc3\xa9", "latin1"),
                                                         at("main", "main-latin1"), at("<module>", "module")});

    // A second Python thread without the GIL: its own frames, threading's included, none of the
    // main thread's.
    auto worker = stack_of(s, 2 << 20, &site);
    INFO(show(worker));
    std::vector<std::string> expected_worker = {"allocate " + kScript + ":" + std::to_string(marker_line("allocate")),
                                                "without_gil " + kScript + ":" + std::to_string(marker_line("thread"))};
    expected_worker.insert(expected_worker.end(), run_result.worker_outer.begin(), run_result.worker_outer.end());
    CHECK(python_frames(worker) == expected_worker);
    CHECK(worker.front().function == "vt_py_alloc");
    // Two runs of the evaluation loop (threading calls the target through C): each Python frame
    // in place of its own run, none left over. From 3.11 one run holds both allocate and
    // without_gil, so they are adjacent; threading's frames come after C frames.
    for (const auto &f : worker) CHECK(f.function != "_PyEval_EvalFrameDefault");
    if (!python_before_311()) {
        size_t i = 0;
        while (i < worker.size() && !worker[i].python) ++i;
        REQUIRE(i + 2 < worker.size());
        CHECK(worker[i + 1].function == "without_gil");
        // 3.11 reaches Thread.run's call of the target through C (CALL_FUNCTION_EX); 3.12 and
        // later run it in the same loop, so there threading's frame follows directly.
        if (s.at("process").at("python").get<std::string>().rfind("3.11.", 0) == 0) CHECK(!worker[i + 2].python);
    }
    REQUIRE(site >= 0);
    CHECK(worker[size_t(site)].python);
    CHECK(worker[size_t(site)].line == marker_line("allocate"));

    // A pthread of the extension that never ran Python: native frames only, and the summary says so.
    auto native = stack_of(s, 5 << 20, &site);
    INFO(show(native));
    CHECK(python_frames(native).empty());
    REQUIRE(native.size() >= 2);
    CHECK(native[0].function == "vt_py_alloc");
    CHECK(native[1].function == "native_thread_main");
    REQUIRE(site >= 0);
    CHECK(native[size_t(site)].function == "vt_py_alloc");

    CHECK(r.err.find("vramtrace: Python 3.") != std::string::npos);
    CHECK(r.err.find("allocate at " + kScript + ":" + std::to_string(marker_line("allocate")) + " (python)") !=
          std::string::npos);
    CHECK(r.err.find("[no Python frames]") != std::string::npos);

    // The CLI shows the same stacks: the summary from the file, folded stacks py-spy style.
    RunResult summary = run({cli(), "summary", dir + "/py.json"}, {false, {}, dir});
    CHECK(summary.exit_code == 0);
    CHECK(summary.out.find("allocate at " + kScript) != std::string::npos);
    CHECK(summary.out.find("[no Python frames]") != std::string::npos);
    RunResult folded = run({cli(), "export", "--format", "folded", dir + "/py.json"}, {false, {}, dir});
    CHECK(folded.exit_code == 0);
    // Outermost first; adjacent from 3.11 (one evaluation loop), separated by native frames before.
    std::vector<std::string> pieces = {
        "<module> (python_frames_program.py:" + std::to_string(marker_line("module")) + ");",
        "main (python_frames_program.py:" + std::to_string(marker_line("main-forward")) + ");",
        qualified("Model.forward") + " (python_frames_program.py:" + std::to_string(marker_line("forward")) + ");",
        "allocate (python_frames_program.py:" + std::to_string(marker_line("allocate")) + ");"};
    INFO(folded.out);
    if (!python_before_311()) {
        std::string expected;
        for (const auto &p : pieces) expected += p;
        CHECK(folded.out.find(expected) != std::string::npos);
    } else {
        size_t line_start = folded.out.find(pieces[0]);
        REQUIRE(line_start != std::string::npos);
        size_t line_end = folded.out.find('\n', line_start);
        size_t at_ = line_start;
        for (const auto &p : pieces) {
            at_ = folded.out.find(p, at_);
            CHECK(at_ < line_end);
        }
    }
}

TEST_CASE("python: stacks that differ only in one Python line stay apart when the memo serves them") {
    std::string dir = make_temp_dir("python-memo");
    ScriptRun run_result = run_script(dir, {{"VRAMTRACE_DEBUG", "1"}});
    const RunResult &r = run_result.result;
    json s = load_json(dir + "/py.json");
    // Each line is written down on its second sight and found in the three rounds after.
    INFO(r.err);
    CHECK(r.err.find("python stacks: 2 remembered, 6 captures found theirs remembered") != std::string::npos);
    // The native thread's five allocations: walked, walked and stored, replayed and interned,
    // then twice replayed with the id the third attached.
    CHECK(r.err.find("(2 with its stack id)") != std::string::npos);
    for (uint64_t i = 0; i < 5; ++i) {
        INFO("round " << i);
        auto a = stack_of(s, (16 << 20) + 4096 * i);
        INFO(show(a));
        CHECK(python_part(a) == std::vector<std::string>{at("allocate", "allocate"), at("take_turns", "turn-a"),
                                                        at("main", "main-turns"), at("<module>", "module")});
        auto b = stack_of(s, (32 << 20) + 4096 * i);
        INFO(show(b));
        CHECK(python_part(b) == std::vector<std::string>{at("allocate", "allocate"), at("take_turns", "turn-b"),
                                                        at("main", "main-turns"), at("<module>", "module")});
    }
    // One stack per line: the memo's ids are the depot's.
    CHECK(stack_of(s, 16 << 20)[0].function == "vt_py_alloc");
    uint64_t first_a = 0, first_b = 0;
    for (const auto &al : s.at("allocations")) {
        uint64_t size = al.at("size");
        if (size >= (16u << 20) && size < (16u << 20) + 5 * 4096) {
            if (first_a == 0) first_a = al.at("stack");
            CHECK(al.at("stack") == first_a);
        }
        if (size >= (32u << 20) && size < (32u << 20) + 5 * 4096) {
            if (first_b == 0) first_b = al.at("stack");
            CHECK(al.at("stack") == first_b);
        }
    }
    CHECK(first_a != 0);
    CHECK(first_b != 0);
    CHECK(first_a != first_b);

    // A thread that never ran Python: its stack is the native one, taken from the walk's id.
    uint64_t series = 0;
    for (uint64_t i = 0; i < 5; ++i) {
        INFO("series " << i);
        auto native = stack_of(s, (48 << 20) + 4096 * i);
        INFO(show(native));
        CHECK(python_frames(native).empty());
        REQUIRE(native.size() >= 2);
        CHECK(native[0].function == "vt_py_alloc");
        CHECK(native[1].function == "native_series_main");
    }
    for (const auto &al : s.at("allocations")) {
        uint64_t size = al.at("size");
        if (size < (48u << 20) || size >= (48u << 20) + 5 * 4096) continue;
        if (series == 0) series = al.at("stack");
        CHECK(al.at("stack") == series);
    }
    CHECK(series != 0);
}

TEST_CASE("python: VRAMTRACE_PYTHON=0 keeps native stacks only") {
    std::string dir = make_temp_dir("python-off");
    run_script(dir, {{"VRAMTRACE_PYTHON", "0"}, {"VRAMTRACE_SUMMARY", "0"}});
    json s = load_json(dir + "/py.json");
    CHECK(!s.at("process").contains("python"));
    for (const auto &f : s.at("frames")) CHECK(!f.contains("python"));
    auto model = stack_of(s, 8 << 20);
    INFO(show(model));
    bool eval = false;
    for (const auto &f : model) eval |= f.function == "_PyEval_EvalFrameDefault";
    CHECK(eval);
    // Nor for a thread that released the GIL.
    auto released = stack_of(s, 3 << 20);
    INFO(show(released));
    eval = false;
    for (const auto &f : released) eval |= f.function == "_PyEval_EvalFrameDefault";
    CHECK(eval);
}

TEST_CASE("python: a native stack cut before the interpreter gets the Python frames after it") {
    std::string dir = make_temp_dir("python-cut");
    run_script(dir, {{"VRAMTRACE_STACK_DEPTH", "3"}, {"VRAMTRACE_SUMMARY", "0"}});
    json s = load_json(dir + "/py.json");
    auto model = stack_of(s, 8 << 20);
    INFO(show(model));
    REQUIRE(model.size() == 6); // 3 native, then at most 3 Python frames
    for (size_t i = 0; i < 3; ++i) CHECK(!model[i].python);
    CHECK(python_part(model) == std::vector<std::string>{at("allocate", "allocate"), at("Model.forward", "forward"),
                                                        at("main", "main-forward")});
}

namespace {

int count_of(const std::string &text, const std::string &what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

} // namespace

TEST_CASE("python: a struct reader that disagrees with the API is turned off with one line") {
    // VRAMTRACE_PYTHON_TEST_SKEW=1 makes the struct reader's lines one off (tests only): the
    // cross-check at the first allocation with the GIL catches it.
    std::string dir = make_temp_dir("python-skew");
    ScriptRun run_result = run_script(dir, {{"VRAMTRACE_PYTHON_TEST_SKEW", "1"}});
    const RunResult &r = run_result.result;
    INFO(r.err);
    CHECK(count_of(r.err, "vramtrace: warning: Python frames: reading CPython 3.") == 1);
    CHECK(count_of(r.err, "gives a different line (" + std::to_string(marker_line("allocate") + 1) + ", the API " +
                              std::to_string(marker_line("allocate")) + ") at frame 0 than its API; that reader is off") == 1);
    json s = load_json(dir + "/py.json");
    // Threads holding the GIL still get exact frames (the API), those without get none.
    auto model = stack_of(s, 8 << 20);
    INFO(show(model));
    CHECK(python_part(model) == std::vector<std::string>{at("allocate", "allocate"), at("Model.forward", "forward"),
                                                        at("main", "main-forward"), at("<module>", "module")});
    for (uint64_t size : {3u << 20, 2u << 20, 5u << 20, 6u << 20}) {
        auto stack = stack_of(s, size);
        INFO(show(stack));
        CHECK(python_frames(stack).empty());
    }
}

TEST_CASE("python: VRAMTRACE_PYTHON_STRUCTS=0 leaves only the API, for threads holding the GIL") {
    std::string dir = make_temp_dir("python-api");
    ScriptRun run_result = run_script(dir, {{"VRAMTRACE_PYTHON_STRUCTS", "0"}, {"VRAMTRACE_SUMMARY", "0"}});
    INFO(run_result.result.err);
    CHECK(run_result.result.err.find("Python frames: reading") == std::string::npos);
    json s = load_json(dir + "/py.json");
    auto nested = stack_of(s, 4 << 20);
    INFO(show(nested));
    CHECK(python_part(nested) == std::vector<std::string>{at("allocate", "allocate"), at("nested", "nested-leaf"),
                                                         at("nested", "nested-call"), at("nested", "nested-call"),
                                                         at("main", "main-nested"), at("<module>", "module")});
    auto released = stack_of(s, 3 << 20);
    INFO(show(released));
    CHECK(python_frames(released).empty());
}
