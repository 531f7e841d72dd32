// Helpers for the end-to-end tests: run a program (optionally under the preload library) with a
// given environment, capture what it printed, read the snapshot it left, and compare the snapshot
// with the program's own "expect-live" lines (the oracle: each test program prints what it leaves
// live, from its own knowledge, never from vramtrace's output).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace e2e {

struct RunResult {
    int exit_code = -1;   // exit status, or 128 + signal
    std::string out;      // stdout
    std::string err;      // stderr
};

struct RunOptions {
    bool preload = true;                       // LD_PRELOAD the library
    std::map<std::string, std::string> env;    // added to (or replacing in) the environment
    std::string cwd;                           // empty: a fresh temporary directory
};

// Paths from the build (compile definitions).
std::string bin_dir();
std::string preload_library();
// What the tests put in LD_PRELOAD: `library` (default preload_library()), after
// VT_E2E_PRELOAD_FIRST when that is set.
std::string preload_list(const std::string &library = preload_library());
std::string cli();

// A fresh empty directory under the build's test area.
std::string make_temp_dir(const std::string &name);

RunResult run(const std::vector<std::string> &argv, const RunOptions &options);

// A directory another user (nobody) can reach, holding copies of `paths` under their own names
// (tests/support/other_user_stage.sh: under TMPDIR or /tmp, mode 0755, never in the build or source
// tree, which a clone under a 0700 directory keeps from other users). Removed with the object;
// path() is empty when it could not be made (why: in error()).
class OtherUserStage {
public:
    explicit OtherUserStage(const std::vector<std::string> &paths);
    ~OtherUserStage();
    OtherUserStage(const OtherUserStage &) = delete;
    OtherUserStage &operator=(const OtherUserStage &) = delete;
    const std::string &path() const { return path_; }
    const std::string &error() const { return error_; }

private:
    std::string path_, error_;
};

nlohmann::json load_json(const std::string &path);
bool file_exists(const std::string &path);
std::vector<std::string> list_dir(const std::string &dir);

// One "expect-live <bytes> <api> <device> <function> <file>:<line>" line.
struct ExpectedLive {
    uint64_t bytes = 0;
    std::string api;
    int device = 0;
    std::string function;
    std::string file;
    int line = 0;
};
std::vector<ExpectedLive> parse_expectations(const std::string &program_stdout);

// One allocation of a snapshot, with its call site resolved.
struct LiveAllocation {
    uint64_t address = 0;
    uint64_t stream = 0;   // for vmm_mapping: the physical handle
    uint64_t bytes = 0;
    std::string api;
    std::string kind;
    int device = 0;
    std::string function; // call site function, without parameter list
    std::string file;      // call site file basename
    int line = 0;
};
std::vector<LiveAllocation> live_allocations(const nlohmann::json &snapshot);

// The API the tracker sees for a runtime call when cudart is linked statically (only the driver
// is visible then).
std::vector<std::string> driver_apis_for(const std::string &runtime_api);

// Describes both lists, for failure messages.
std::string describe(const std::vector<ExpectedLive> &expected, const std::vector<LiveAllocation> &live);

// "expect-mapping <va-hex> <bytes> <handle-hex>" lines (VMM mappings the program left in place).
struct ExpectedMapping {
    uint64_t address = 0, bytes = 0, handle = 0;
    bool operator==(const ExpectedMapping &) const = default;
};
std::vector<ExpectedMapping> parse_mapping_expectations(const std::string &program_stdout);
std::vector<ExpectedMapping> tracked_mappings(const std::vector<LiveAllocation> &live);

// Whether every expected allocation has exactly one match in live and nothing else is live
// (vmm_mapping records are compared separately, with tracked_mappings; va_reservation records are
// address space, not allocations: tests that care read them from the snapshot).
// static_cudart: compare APIs through driver_apis_for.
bool same_live_set(const std::vector<ExpectedLive> &expected, const std::vector<LiveAllocation> &live,
                   bool static_cudart);

// The GNU build id of an ELF file as `readelf -n` prints it ("Build ID: <hex>"), "" when none.
std::string readelf_build_id(const std::string &path);
// The rest of the line after "KEY " in a program's output, "" when absent.
std::string field_after(const std::string &out, const std::string &key);

} // namespace e2e
