#include "symbolize/debug_files.h"

#include <unistd.h>

#include <vector>

#include "symbolize/module_map.h"

namespace vramtrace::symbolize {

std::string directory_of(const std::string &path) {
    size_t slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

bool readable(const std::string &path) { return access(path.c_str(), R_OK) == 0; }

std::string find_debug_file(const std::string &path, const std::string &build_id,
                            const std::string &debuglink) {
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
        if (c == path || !readable(c)) continue;
        if (!build_id.empty()) {
            std::string id = read_build_id_from_file(c);
            if (!id.empty() && id != build_id) continue;
        }
        return c;
    }
    return {};
}

} // namespace vramtrace::symbolize
