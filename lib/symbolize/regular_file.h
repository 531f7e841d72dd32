// Opening a file to read that vramtrace did not write and someone else may have put in place (a
// module, a debug file, a rules file): without waiting, as a regular file only, within a size.
//
// The open itself must not block: a FIFO opened to read waits for a writer, and a traced program
// would never exit (at exit the symbolizer looks for debug files beside every module). So the
// open is O_NONBLOCK (a FIFO then opens at once), O_NOCTTY and O_CLOEXEC, and fstat on the
// descriptor decides: anything but a regular file is closed unread. An fstatat before the open
// keeps device nodes from being opened at all in the common case (opening some devices has
// effects); the fstat after it is the check that counts, since the name may change in between.
#pragma once

#include <cstdint>
#include <string>

#include <sys/stat.h>

namespace vramtrace::symbolize {

struct RegularFileRules {
    bool follow_symlinks = true; // false: O_NOFOLLOW, a symlink as the last component is refused
    bool trusted_owner = false;  // only a file owned by root or this process's effective uid
    uint64_t max_bytes = 0;      // larger files are refused; 0: no bound
};

// Module and debug files are mapped whole; the bound keeps a sparse or hostile file from taking
// the address space. Debug files of the largest CUDA libraries are a few GiB.
constexpr uint64_t kMaxElfFileBytes = uint64_t(16) << 30;

// Opens `name` (relative to `dirfd`; AT_FDCWD for a path) to read as described above. Returns the
// descriptor (O_NONBLOCK cleared) with *st filled when st is given, or -1 with errno: the open's,
// EINVAL (not a regular file), EFBIG (larger than max_bytes) or EPERM (owned by someone else while
// trusted_owner asks for root or this user).
int open_regular_file(int dirfd, const char *name, const RegularFileRules &rules, struct stat *st = nullptr);

// The whole file read into *out (opened as above): false with errno on failure (EIO: it changed
// size while read).
bool read_regular_file(const char *path, const RegularFileRules &rules, std::string *out);

// Whether a directory lets someone other than root and this process's effective user add names to
// it: owned by another user, or writable by its group or by others (a sticky /tmp included).
bool others_can_write(const struct stat &directory);

} // namespace vramtrace::symbolize
