#include "reporting/output_path.h"

namespace vramtrace {

std::string expand_output_path(const char *pattern, long pid, const char *host) {
    std::string out;
    for (const char *p = pattern; *p; ++p) {
        if (*p != '%' || p[1] == 0) {
            out += *p;
            continue;
        }
        switch (*++p) {
        case 'p': out += std::to_string(pid); break;
        case 'h': out += host; break;
        case '%': out += '%'; break;
        default: out += '%'; out += *p; break;
        }
    }
    return out;
}

} // namespace vramtrace
