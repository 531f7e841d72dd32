/* The oldest glibc libvramtrace.so loads on (docs/reliability.md, "glibc").
 *
 * Built against glibc 2.36, every call would bind to the newest version of its symbol: dlopen,
 * dladdr, dlvsym, dlerror, pthread_rwlock_*, pthread_key_create and pthread_setspecific to GLIBC_2.34 (when libdl and libpthread moved into
 * libc), stat, fstat, lstat and fstatat to GLIBC_2.33 (before which they were inline wrappers of
 * __xstat/__fxstat/__lxstat/__fxstatat),
 * pthread_sigmask to GLIBC_2.32, and libstdc++.a's __libc_single_threaded (GLIBC_2.32) and
 * arc4random (GLIBC_2.36). Not only our own sources call these: the static libstdc++ and LLVM
 * libunwind linked into the library do too, so a .symver directive in our sources alone would not
 * do. Instead this file defines each of them, hidden, inside the library: the linker resolves every
 * reference in the library (ours, libstdc++.a's, libunwind.a's) to these definitions, and each
 * calls glibc's GLIBC_2.2.5 version of the function, which every glibc since 2.2.5 has (in libdl.so.2
 * or libpthread.so.0 before 2.34: both are in NEEDED, see lib/CMakeLists.txt; in glibc 2.34 and
 * later those files are empty and the 2.2.5 versions are in libc.so.6).
 * tests/abi/check_glibc_floor.sh checks the result with objdump -T.
 *
 * dlsym is not here: the library exports its own dlsym (lib/interception/dlsym_hook.S) and finds
 * glibc's with dlvsym (lib/device/real_functions.cpp). A dlvsym or dlopen called through the
 * wrapper below still sees a return address inside libvramtrace.so, so RTLD_NEXT keeps meaning
 * "after libvramtrace.so".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define VT_HIDDEN __attribute__((visibility("hidden")))
#define VT_OLD(local, symbol) __asm__(".symver " #local ", " #symbol "@GLIBC_2.2.5")

void *vt_old_dlopen(const char *, int);
VT_OLD(vt_old_dlopen, dlopen);
int vt_old_dladdr(const void *, Dl_info *);
VT_OLD(vt_old_dladdr, dladdr);
int vt_old_dladdr1(const void *, Dl_info *, void **, int);
__asm__(".symver vt_old_dladdr1, dladdr1@GLIBC_2.3.3"); /* python/python_runtime.cpp: a symbol's size */
void *vt_old_dlvsym(void *, const char *, const char *);
VT_OLD(vt_old_dlvsym, dlvsym);
char *vt_old_dlerror(void);
VT_OLD(vt_old_dlerror, dlerror);
int vt_old_rwlock_rdlock(pthread_rwlock_t *);
VT_OLD(vt_old_rwlock_rdlock, pthread_rwlock_rdlock);
int vt_old_rwlock_wrlock(pthread_rwlock_t *);
VT_OLD(vt_old_rwlock_wrlock, pthread_rwlock_wrlock);
int vt_old_rwlock_unlock(pthread_rwlock_t *);
VT_OLD(vt_old_rwlock_unlock, pthread_rwlock_unlock);
int vt_old_sigmask(int, const sigset_t *, sigset_t *);
VT_OLD(vt_old_sigmask, pthread_sigmask);
int vt_old_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
VT_OLD(vt_old_pthread_create, pthread_create); /* the triggers' reporter thread */
int vt_old_key_create(pthread_key_t *, void (*)(void *));
VT_OLD(vt_old_key_create, pthread_key_create); /* tracking/thread_lanes.cpp: lanes given back at exit */
int vt_old_setspecific(pthread_key_t, const void *);
VT_OLD(vt_old_setspecific, pthread_setspecific);
int vt_old_xstat(int, const char *, struct stat *);
VT_OLD(vt_old_xstat, __xstat);
int vt_old_fxstat(int, int, struct stat *);
VT_OLD(vt_old_fxstat, __fxstat);
int vt_old_lxstat(int, const char *, struct stat *);
VT_OLD(vt_old_lxstat, __lxstat);
int vt_old_fxstatat(int, int, const char *, struct stat *, int);
__asm__(".symver vt_old_fxstatat, __fxstatat@GLIBC_2.4"); /* symbolize/regular_file.cpp */

/* noinline: a dlopen/dlvsym caller's return address must stay inside this library (it does either
 * way; this keeps the frame simple to read in a debugger). */
VT_HIDDEN __attribute__((noinline)) void *dlopen(const char *file, int mode) { return vt_old_dlopen(file, mode); }
VT_HIDDEN int dladdr(const void *address, Dl_info *info) { return vt_old_dladdr(address, info); }
VT_HIDDEN int dladdr1(const void *address, Dl_info *info, void **extra, int flags) {
    return vt_old_dladdr1(address, info, extra, flags);
}
VT_HIDDEN __attribute__((noinline)) void *dlvsym(void *handle, const char *name, const char *version) {
    return vt_old_dlvsym(handle, name, version);
}
VT_HIDDEN char *dlerror(void) { return vt_old_dlerror(); }

VT_HIDDEN int pthread_rwlock_rdlock(pthread_rwlock_t *l) { return vt_old_rwlock_rdlock(l); }
VT_HIDDEN int pthread_rwlock_wrlock(pthread_rwlock_t *l) { return vt_old_rwlock_wrlock(l); }
VT_HIDDEN int pthread_rwlock_unlock(pthread_rwlock_t *l) { return vt_old_rwlock_unlock(l); }
VT_HIDDEN int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) { return vt_old_sigmask(how, set, old); }
VT_HIDDEN int pthread_key_create(pthread_key_t *key, void (*destructor)(void *)) {
    return vt_old_key_create(key, destructor);
}
VT_HIDDEN int pthread_setspecific(pthread_key_t key, const void *value) { return vt_old_setspecific(key, value); }
VT_HIDDEN int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg) {
    return vt_old_pthread_create(thread, attr, start, arg);
}

/* _STAT_VER_LINUX: the struct stat layout of x86-64 (the only one this library is built for). */
enum { kStatVersion = 1 };
VT_HIDDEN int stat(const char *path, struct stat *buf) { return vt_old_xstat(kStatVersion, path, buf); }
VT_HIDDEN int fstat(int fd, struct stat *buf) { return vt_old_fxstat(kStatVersion, fd, buf); }
VT_HIDDEN int lstat(const char *path, struct stat *buf) { return vt_old_lxstat(kStatVersion, path, buf); }
VT_HIDDEN int fstatat(int dirfd, const char *path, struct stat *buf, int flags) {
    return vt_old_fxstatat(kStatVersion, dirfd, path, buf, flags);
}

/* libstdc++ skips atomic reference counting when this says the process has one thread; zero is
 * always correct (it only costs the atomics). */
VT_HIDDEN char __libc_single_threaded = 0;

/* For libstdc++'s std::random_device; straight from the kernel (getrandom, Linux 3.17). */
VT_HIDDEN uint32_t arc4random(void) {
    uint32_t value = 0;
    int saved = errno;
    while (syscall(SYS_getrandom, &value, sizeof value, 0) != (long)sizeof value && errno == EINTR) {
    }
    errno = saved;
    return value;
}
