// Where traced processes serve their live state (docs/live.md) and the checks both ends make
// before trusting a path there. Shared by the library's server (lib/serve) and the CLI's viewer
// (`vramtrace top`): plain libc, no allocation beyond std::string.
//
// The directory: $XDG_RUNTIME_DIR/vramtrace when XDG_RUNTIME_DIR is set to an absolute path of a
// directory that exists, else /tmp/vramtrace-UID. It must be a real directory (not a symlink), owned by the caller's real
// uid, with no access for group or others (mode 0700 when created). Each process's socket is
// PID.sock in it, mode 0600, owned by the same uid.
#pragma once

#include <string>
#include <sys/types.h>

namespace vramtrace::live {

// The directory for this user (from XDG_RUNTIME_DIR and getuid()).
std::string socket_directory();

// The socket path of process `pid` in `directory`: "DIR/PID.sock".
std::string socket_path(const std::string &directory, pid_t pid);

// The pid a socket file name stands for ("1234.sock" -> 1234); 0 when the name is not one.
pid_t pid_of_socket_name(const char *name);

// Checks `directory` as described above; with `create`, makes it first (mode 0700) when missing
// (its parent must exist). On refusal returns false with *why = one line naming the path and the
// reason ("/run/user/1000/vramtrace: is a symlink; not used").
bool check_directory(const std::string &directory, bool create, std::string *why);

// Checks an existing socket path: a socket (not a symlink, not another kind of file) owned by the
// caller's real uid. On refusal returns false with *why = one line as above; a path that does not
// exist gives false with *why empty.
bool check_socket(const std::string &path, std::string *why);

} // namespace vramtrace::live
