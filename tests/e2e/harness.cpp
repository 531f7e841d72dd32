#include "harness.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <signal.h>
#include <sstream>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace e2e {

std::string bin_dir() { return VT_BIN_DIR; }
std::string preload_library() { return VT_PRELOAD_LIBRARY; }
std::string cli() { return std::string(VT_BIN_DIR) + "/vramtrace"; }

std::string make_temp_dir(const std::string &name) {
    std::string base = std::string(VT_TEST_TMP_DIR);
    mkdir(base.c_str(), 0700);
    std::string dir = base + "/" + name + "." + std::to_string(getpid());
    std::string cmd = "rm -rf '" + dir + "'";
    if (system(cmd.c_str()) != 0) {}
    mkdir(dir.c_str(), 0700);
    return dir;
}

std::string preload_list(const std::string &library) {
    // VT_E2E_PRELOAD_FIRST: a library loaded before ours, the sanitizer runtime when the library
    // itself is built with one (tests/sanitizers/run_*_e2e.sh): that runtime must come first.
    const char *first = getenv("VT_E2E_PRELOAD_FIRST");
    return (first != nullptr && *first != 0 ? std::string(first) + ":" : "") + library;
}

static std::vector<std::string> build_env(const RunOptions &options) {
    std::map<std::string, std::string> env;
    for (char **e = environ; *e; ++e) {
        const char *eq = strchr(*e, '=');
        if (eq) env[std::string(*e, eq - *e)] = eq + 1;
    }
    // Tests must not inherit a tracer's settings from the developer's shell.
    for (auto it = env.begin(); it != env.end();)
        it = (it->first.rfind("VRAMTRACE_", 0) == 0 || it->first == "LD_PRELOAD") ? env.erase(it) : std::next(it);
    if (options.preload) env["LD_PRELOAD"] = preload_list();
    for (auto &[k, v] : options.env) env[k] = v;
    std::vector<std::string> out;
    for (auto &[k, v] : env) out.push_back(k + "=" + v);
    return out;
}

RunResult run(const std::vector<std::string> &argv, const RunOptions &options) {
    RunResult result;
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) return result;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
    std::string cwd = options.cwd.empty() ? make_temp_dir("run") : options.cwd;
    posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    std::vector<std::string> env = build_env(options);
    std::vector<char *> envp, args;
    for (auto &e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv_copy = argv;
    for (auto &a : argv_copy) args.push_back(a.data());
    args.push_back(nullptr);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (rc != 0) {
        close(out_pipe[0]);
        close(err_pipe[0]);
        result.err = std::string("spawn failed: ") + strerror(rc);
        return result;
    }
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    std::string *sinks[2] = {&result.out, &result.err};
    int open_count = 2;
    while (open_count > 0) {
        if (poll(fds, 2, -1) < 0) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buf[65536];
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                sinks[i]->append(buf, static_cast<size_t>(n));
            } else {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_count;
            }
        }
    }
    int status = 0;
    waitpid(pid, &status, 0);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

OtherUserStage::OtherUserStage(const std::vector<std::string> &paths) {
    std::vector<std::string> argv = {"/bin/sh", std::string(VT_SUPPORT_DIR) + "/other_user_stage.sh"};
    argv.insert(argv.end(), paths.begin(), paths.end());
    RunResult r = run(argv, {false, {}, "/"});
    if (r.exit_code != 0 || r.out.empty() || r.out.back() != '\n') {
        error_ = "other_user_stage.sh: exit status " + std::to_string(r.exit_code) + ": " + r.err;
        return;
    }
    path_ = r.out.substr(0, r.out.size() - 1);
}

OtherUserStage::~OtherUserStage() {
    if (path_.empty()) return;
    RunResult r = run({"/bin/rm", "-rf", "--", path_}, {false, {}, "/"});
    (void)r;
}

nlohmann::json load_json(const std::string &path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

bool file_exists(const std::string &path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

std::vector<std::string> list_dir(const std::string &dir) {
    std::vector<std::string> names;
    if (DIR *d = opendir(dir.c_str())) {
        while (dirent *e = readdir(d))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) names.push_back(e->d_name);
        closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<ExpectedLive> parse_expectations(const std::string &program_stdout) {
    std::vector<ExpectedLive> out;
    std::istringstream lines(program_stdout);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string tag, where;
        ExpectedLive e;
        if (!(words >> tag) || tag != "expect-live") continue;
        words >> e.bytes >> e.api >> e.device >> e.function >> where;
        size_t colon = where.rfind(':');
        e.file = where.substr(0, colon);
        e.line = std::stoi(where.substr(colon + 1));
        out.push_back(e);
    }
    return out;
}

static std::string basename_of(const std::string &path) {
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

static std::string without_parameters(const std::string &function) {
    size_t paren = function.find('(');
    return paren == std::string::npos ? function : function.substr(0, paren);
}

std::vector<LiveAllocation> live_allocations(const nlohmann::json &snapshot) {
    std::map<uint64_t, const nlohmann::json *> stacks;
    for (const auto &s : snapshot.at("stacks")) stacks[s.at("id").get<uint64_t>()] = &s;
    const auto &frames = snapshot.at("frames");
    std::vector<LiveAllocation> out;
    for (const auto &a : snapshot.at("allocations")) {
        LiveAllocation l;
        l.address = std::stoull(a.at("address").get<std::string>(), nullptr, 16);
        l.stream = std::stoull(a.at("stream").get<std::string>(), nullptr, 16);
        l.bytes = a.at("size").get<uint64_t>();
        l.api = a.at("api").get<std::string>();
        l.kind = a.at("kind").get<std::string>();
        l.device = a.at("device").get<int>();
        auto it = stacks.find(a.at("stack").get<uint64_t>());
        if (it != stacks.end()) {
            int site = it->second->at("call_site").get<int>();
            if (site >= 0) {
                const auto &frame = frames.at(it->second->at("frames").at(site).get<size_t>());
                l.function = without_parameters(frame.at("function").get<std::string>());
                l.file = basename_of(frame.at("file").get<std::string>());
                l.line = frame.at("line").get<int>();
            }
        }
        out.push_back(l);
    }
    return out;
}

std::vector<std::string> driver_apis_for(const std::string &api) {
    if (api == "cudaMalloc") return {"cuMemAlloc_v2"};
    if (api == "cudaMallocAsync") return {"cuMemAllocAsync", "cuMemAllocAsync_ptsz"};
    if (api == "cudaMallocManaged") return {"cuMemAllocManaged"};
    if (api == "cudaMallocHost" || api == "cudaHostAlloc") return {"cuMemAllocHost_v2", "cuMemHostAlloc"};
    if (api == "cudaMallocPitch" || api == "cudaMalloc3D") return {"cuMemAllocPitch_v2"};
    if (api == "cudaMallocFromPoolAsync") return {"cuMemAllocFromPoolAsync"};
    if (api == "cudaMallocFromPoolAsync_ptsz") return {"cuMemAllocFromPoolAsync_ptsz"};
    if (api == "cudaHostRegister") return {"cuMemHostRegister_v2"};
    if (api == "cudaIpcOpenMemHandle") return {"cuIpcOpenMemHandle_v2"};
    if (api == "cudaMallocArray" || api == "cudaMalloc3DArray") return {"cuArray3DCreate_v2"};
    if (api == "cudaMallocMipmappedArray") return {"cuMipmappedArrayCreate"};
    if (api == "cudaGraphAddMemAllocNode") return {"cuGraphAddMemAllocNode"};
    return {api};
}

std::string describe(const std::vector<ExpectedLive> &expected, const std::vector<LiveAllocation> &live) {
    std::ostringstream o;
    o << "expected (" << expected.size() << "):\n";
    for (auto &e : expected)
        o << "  " << e.bytes << " " << e.api << " dev " << e.device << " " << e.function << " " << e.file << ":" << e.line << "\n";
    o << "tracked (" << live.size() << "):\n";
    for (auto &l : live)
        o << "  " << l.bytes << " " << l.api << " dev " << l.device << " " << l.function << " " << l.file << ":" << l.line << "\n";
    return o.str();
}

std::vector<ExpectedMapping> parse_mapping_expectations(const std::string &program_stdout) {
    std::vector<ExpectedMapping> out;
    std::istringstream lines(program_stdout);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string tag, va, handle;
        ExpectedMapping m;
        if (!(words >> tag) || tag != "expect-mapping") continue;
        words >> va >> m.bytes >> handle;
        m.address = std::stoull(va, nullptr, 16);
        m.handle = std::stoull(handle, nullptr, 16);
        out.push_back(m);
    }
    return out;
}

std::vector<ExpectedMapping> tracked_mappings(const std::vector<LiveAllocation> &live) {
    std::vector<ExpectedMapping> out;
    for (const LiveAllocation &l : live)
        if (l.kind == "vmm_mapping") out.push_back({l.address, l.bytes, l.stream});
    return out;
}

bool same_live_set(const std::vector<ExpectedLive> &expected, const std::vector<LiveAllocation> &all,
                   bool static_cudart) {
    std::vector<LiveAllocation> live;
    for (const LiveAllocation &l : all)
        if (l.kind != "vmm_mapping" && l.kind != "va_reservation") live.push_back(l);
    if (expected.size() != live.size()) return false;
    std::vector<bool> used(live.size(), false);
    for (const ExpectedLive &e : expected) {
        std::vector<std::string> apis = static_cudart ? driver_apis_for(e.api) : std::vector<std::string>{e.api};
        bool found = false;
        for (size_t i = 0; i < live.size() && !found; ++i) {
            const LiveAllocation &l = live[i];
            if (used[i] || l.bytes != e.bytes || l.device != e.device || l.function != e.function ||
                l.file != e.file || l.line != e.line)
                continue;
            if (std::find(apis.begin(), apis.end(), l.api) == apis.end()) continue;
            used[i] = found = true;
        }
        if (!found) return false;
    }
    return true;
}

std::string readelf_build_id(const std::string &path) {
    std::string cmd = "readelf -n '" + path + "' 2>/dev/null";
    FILE *pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) return "";
    std::string text;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) text.append(buf, n);
    pclose(pipe);
    size_t at = text.find("Build ID: ");
    if (at == std::string::npos) return "";
    at += 10;
    return text.substr(at, text.find_first_of(" \r\n", at) - at);
}

std::string field_after(const std::string &out, const std::string &key) {
    size_t at = out.find(key + " ");
    if (at == std::string::npos) return "";
    at += key.size() + 1;
    return out.substr(at, out.find('\n', at) - at);
}

} // namespace e2e
