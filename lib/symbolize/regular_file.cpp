#include "symbolize/regular_file.h"

#include <cerrno>

#include <fcntl.h>
#include <unistd.h>

namespace vramtrace::symbolize {

namespace {

bool owner_trusted(uid_t uid) { return uid == 0 || uid == geteuid(); }

// errno for a file the rules refuse, 0 when they accept it.
int refusal(const struct stat &st, const RegularFileRules &rules) {
    if (!S_ISREG(st.st_mode)) return EINVAL;
    if (rules.max_bytes != 0 && uint64_t(st.st_size) > rules.max_bytes) return EFBIG;
    if (rules.trusted_owner && !owner_trusted(st.st_uid)) return EPERM;
    return 0;
}

} // namespace

int open_regular_file(int dirfd, const char *name, const RegularFileRules &rules, struct stat *out) {
    if (name == nullptr || *name == 0) {
        errno = ENOENT;
        return -1;
    }
    struct stat st {};
    if (fstatat(dirfd, name, &st, rules.follow_symlinks ? 0 : AT_SYMLINK_NOFOLLOW) != 0) return -1;
    if (int err = S_ISLNK(st.st_mode) ? ELOOP : refusal(st, rules)) {
        errno = err;
        return -1;
    }
    int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (rules.follow_symlinks ? 0 : O_NOFOLLOW);
    int fd;
    do {
        fd = openat(dirfd, name, flags);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return -1;
    int err = fstat(fd, &st) != 0 ? errno : refusal(st, rules);
    if (err == 0) {
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) err = errno;
    }
    if (err != 0) {
        close(fd);
        errno = err;
        return -1;
    }
    if (out) *out = st;
    return fd;
}

bool read_regular_file(const char *path, const RegularFileRules &rules, std::string *out) {
    struct stat st {};
    int fd = open_regular_file(AT_FDCWD, path, rules, &st);
    if (fd < 0) return false;
    out->assign(size_t(st.st_size), '\0');
    size_t got = 0;
    int err = 0;
    while (got < out->size()) {
        ssize_t n = read(fd, out->data() + got, out->size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) err = errno;
        if (n <= 0) break;
        got += size_t(n);
    }
    close(fd);
    if (err == 0 && got != out->size()) err = EIO;
    if (err != 0) {
        out->clear();
        errno = err;
        return false;
    }
    return true;
}

bool others_can_write(const struct stat &directory) {
    return !owner_trusted(directory.st_uid) || (directory.st_mode & (S_IWGRP | S_IWOTH)) != 0;
}

} // namespace vramtrace::symbolize
