#include "live/socket_dir.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace vramtrace::live {

std::string socket_directory() {
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    struct stat st {};
    // A runtime directory that is not there (a variable inherited into a container) is no place.
    if (xdg != nullptr && xdg[0] == '/' && stat(xdg, &st) == 0 && S_ISDIR(st.st_mode)) {
        std::string dir = xdg;
        while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
        return dir + "/vramtrace";
    }
    return "/tmp/vramtrace-" + std::to_string(getuid());
}

std::string socket_path(const std::string &directory, pid_t pid) {
    return directory + "/" + std::to_string(pid) + ".sock";
}

pid_t pid_of_socket_name(const char *name) {
    long pid = 0;
    const char *p = name;
    for (; *p >= '0' && *p <= '9'; ++p) {
        pid = pid * 10 + (*p - '0');
        if (pid > 0x3fffffff) return 0;
    }
    if (p == name || *name == '0' || strcmp(p, ".sock") != 0) return 0;
    return static_cast<pid_t>(pid);
}

bool check_directory(const std::string &directory, bool create, std::string *why) {
    if (create && mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
        *why = directory + ": cannot create (" + strerror(errno) + "); not used";
        return false;
    }
    struct stat st {};
    if (lstat(directory.c_str(), &st) != 0) {
        *why = directory + ": " + strerror(errno) + "; not used";
        return false;
    }
    if (S_ISLNK(st.st_mode)) *why = directory + ": is a symlink; not used";
    else if (!S_ISDIR(st.st_mode)) *why = directory + ": is not a directory; not used";
    else if (st.st_uid != getuid())
        *why = directory + ": owned by uid " + std::to_string(st.st_uid) + ", not " + std::to_string(getuid()) + "; not used";
    else if ((st.st_mode & 077) != 0) *why = directory + ": open to group or others (mode " +
                                            std::to_string((st.st_mode >> 6) & 7) + std::to_string((st.st_mode >> 3) & 7) +
                                            std::to_string(st.st_mode & 7) + "); not used";
    else return true;
    return false;
}

bool check_socket(const std::string &path, std::string *why) {
    why->clear();
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) {
        if (errno != ENOENT) *why = path + ": " + strerror(errno) + "; not used";
        return false;
    }
    if (S_ISLNK(st.st_mode)) *why = path + ": is a symlink; not used";
    else if (!S_ISSOCK(st.st_mode)) *why = path + ": is not a socket; not used";
    else if (st.st_uid != getuid())
        *why = path + ": owned by uid " + std::to_string(st.st_uid) + ", not " + std::to_string(getuid()) + "; not used";
    else return true;
    return false;
}

} // namespace vramtrace::live
