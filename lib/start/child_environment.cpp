#include "child_environment.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <sys/stat.h>

#include "core/log.h"

namespace vramtrace {
namespace {

constexpr size_t PATH_MAX_LEN = 4096;

// VRAMTRACE_FOLLOW=0: take this library out of LD_PRELOAD so that programs this process execs are
// not traced (it is already loaded here; the loader read LD_PRELOAD before we ran). The other
// entries are kept in their order. An entry is ours when it names the same file (device and inode)
// as the library we were loaded from, or, for a bare name the loader searched for, the same base
// name.
void remove_self_from_ld_preload() {
    const char *list = getenv("LD_PRELOAD");
    if (list == nullptr) return;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(&remove_self_from_ld_preload), &info) == 0 || info.dli_fname == nullptr)
        return;
    const char *self = info.dli_fname;
    const char *self_base = strrchr(self, '/') ? strrchr(self, '/') + 1 : self;
    struct stat self_st {};
    bool have_self_st = stat(self, &self_st) == 0;
    static char kept[4096];
    size_t used = 0;
    bool removed = false;
    char entry[PATH_MAX_LEN];
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ": ");
        if (n > 0 && n < sizeof entry) {
            memcpy(entry, p, n);
            entry[n] = 0;
            bool ours;
            if (strchr(entry, '/') != nullptr) {
                struct stat st {};
                ours = have_self_st && stat(entry, &st) == 0 && st.st_dev == self_st.st_dev &&
                       st.st_ino == self_st.st_ino;
            } else {
                ours = strcmp(entry, self_base) == 0;
            }
            if (ours) {
                removed = true;
            } else if (used + n + 2 < sizeof kept) {
                if (used > 0) kept[used++] = ':';
                memcpy(kept + used, entry, n);
                used += n;
            }
        }
        p += n;
        if (*p) ++p;
    }
    if (!removed) return;
    kept[used] = 0;
    if (used == 0) unsetenv("LD_PRELOAD");
    else setenv("LD_PRELOAD", kept, 1);
    log_debug("VRAMTRACE_FOLLOW=0: removed %s from LD_PRELOAD; child programs are not traced", self);
}

// VRAMTRACE_FOLLOW=0: NVTX in the programs this process execs must not load this library either
// (it would find tracing on there): NVTX_INJECTION64_PATH is removed when it names this library.
void remove_self_from_nvtx_injection() {
    const char *path = getenv("NVTX_INJECTION64_PATH");
    if (path == nullptr) return;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(&remove_self_from_nvtx_injection), &info) == 0 || info.dli_fname == nullptr)
        return;
    struct stat self_st {}, st {};
    if (stat(info.dli_fname, &self_st) != 0 || stat(path, &st) != 0) return;
    if (st.st_dev != self_st.st_dev || st.st_ino != self_st.st_ino) return;
    unsetenv("NVTX_INJECTION64_PATH");
    log_debug("VRAMTRACE_FOLLOW=0: removed NVTX_INJECTION64_PATH; child programs' NVTX is not traced");
}

} // namespace

void stop_following_children() {
    remove_self_from_ld_preload();
    remove_self_from_nvtx_injection();
}

} // namespace vramtrace
