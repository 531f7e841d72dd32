#include "reporting/output_path.h"

namespace vramtrace {

std::string expand_output_path(const char *pattern, long pid, const char *host, const char *rank) {
    std::string out;
    for (const char *p = pattern; *p; ++p) {
        if (*p != '%' || p[1] == 0) {
            out += *p;
            continue;
        }
        switch (*++p) {
        case 'p': out += std::to_string(pid); break;
        case 'h': out += host; break;
        case 'r': out += rank != nullptr && *rank != 0 ? rank : "norank"; break;
        case '%': out += '%'; break;
        default: out += '%'; out += *p; break;
        }
    }
    return out;
}

std::string trigger_path_for(const std::string &expanded_output, const char *reason, int seq) {
    static constexpr char kJson[] = ".json";
    constexpr size_t kJsonLen = sizeof kJson - 1;
    std::string stem = expanded_output;
    size_t slash = stem.rfind('/');
    size_t base = slash == std::string::npos ? 0 : slash + 1;
    // Only a ".json" that ends the file name and is not the whole name counts.
    if (stem.size() >= base + kJsonLen + 1 && stem.compare(stem.size() - kJsonLen, kJsonLen, kJson) == 0)
        stem.resize(stem.size() - kJsonLen);
    stem += '.';
    stem += reason;
    if (seq >= 0) stem += '-' + std::to_string(seq);
    return stem + kJson;
}

} // namespace vramtrace
