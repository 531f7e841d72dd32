// Helpers shared by the symbolize tests.
#pragma once

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <dlfcn.h>
#include <unistd.h>

namespace vt_symbolize_test {

// stdout of a shell command; `ok` is false when it could not run or exited non-zero.
inline std::string run_command(const std::string &command, bool *ok = nullptr) {
    std::string out;
    FILE *p = popen(command.c_str(), "r");
    if (!p) {
        if (ok) *ok = false;
        return out;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    int status = pclose(p);
    if (ok) *ok = status == 0;
    return out;
}

// The "Build ID:" that `readelf -n` prints for a file; empty when readelf is missing or prints none.
inline std::string readelf_build_id(const std::string &path) {
    bool ok = false;
    std::string out = run_command("readelf -n '" + path + "' 2>/dev/null", &ok);
    size_t at = out.find("Build ID: ");
    if (!ok || at == std::string::npos) return {};
    at += 10;
    size_t end = out.find_first_of(" \r\n", at);
    return out.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

inline bool have_readelf() {
    bool ok = false;
    run_command("readelf --version >/dev/null 2>&1", &ok);
    return ok;
}

inline std::string real_path(const std::string &path) {
    char buf[PATH_MAX + 1];
    return realpath(path.c_str(), buf) ? std::string(buf) : path;
}

inline std::string base_name(const std::string &path) {
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

inline std::string self_exe() {
    char buf[PATH_MAX + 1];
    ssize_t n = readlink("/proc/self/exe", buf, PATH_MAX);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// A fixture's path: the build's, unless the environment names another (a copied build tree).
inline std::string fixture_path(const char *env, const char *built) {
    const char *e = getenv(env);
    return e && *e ? std::string(e) : std::string(built);
}

// A function of libc itself, even when something interposes it (a sanitizer, a preload library).
inline void *libc_symbol(const char *name) {
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    void *sym = libc ? dlsym(libc, name) : nullptr;
    if (libc) dlclose(libc);
    return sym;
}

} // namespace vt_symbolize_test
