#include "symbolize/debug_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "symbolize/module_map.h"
#include "symbolize/regular_file.h"

namespace vramtrace::symbolize {

std::string directory_of(const std::string &path) {
    size_t slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

bool readable(const std::string &path) { return access(path.c_str(), R_OK) == 0; }

namespace {

// The candidate opened under the rules of the directory it is in (header); -1 when unusable. The
// directory is held open while its file is checked, so the directory judged is the one the file
// comes from.
int open_candidate(const std::string &candidate) {
    size_t slash = candidate.rfind('/');
    std::string name = slash == std::string::npos ? candidate : candidate.substr(slash + 1);
    int dir = open(directory_of(candidate).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return -1;
    struct stat st {};
    int fd = -1;
    if (fstat(dir, &st) == 0) {
        bool shared = others_can_write(st);
        fd = open_regular_file(dir, name.c_str(), {!shared, shared, kMaxElfFileBytes});
    }
    close(dir);
    return fd;
}

} // namespace

DebugFile open_debug_file(const std::string &path, const std::string &build_id, const std::string &debuglink) {
    std::vector<std::string> candidates;
    if (build_id.size() > 2)
        candidates.push_back("/usr/lib/debug/.build-id/" + build_id.substr(0, 2) + "/" +
                             build_id.substr(2) + ".debug");
    if (!debuglink.empty() && debuglink.find('/') == std::string::npos) {
        std::string dir = directory_of(path);
        candidates.push_back(dir + "/" + debuglink);
        candidates.push_back(dir + "/.debug/" + debuglink);
        candidates.push_back("/usr/lib/debug" + (dir == "/" ? std::string() : dir) + "/" + debuglink);
    }
    for (const std::string &c : candidates) {
        if (c == path) continue;
        int fd = open_candidate(c);
        if (fd < 0) continue;
        if (!build_id.empty()) {
            MappedFile f;
            std::string id = f.map(fd) ? build_id_from_elf_image(f.data(), f.size()) : std::string();
            if (!id.empty() && id != build_id) {
                close(fd);
                continue;
            }
        }
        return {fd, c};
    }
    return {};
}

} // namespace vramtrace::symbolize
