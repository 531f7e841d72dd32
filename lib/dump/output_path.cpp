#include "dump/output_path.h"

namespace vramtrace {
namespace {

// A host name or rank as one file-name component: only [A-Za-z0-9._-] kept, every other byte '_'
// (RANK=../other/x must not leave the directory), and a value of dots alone ("." or "..") made
// underscores too.
void append_component(std::string &out, const char *value) {
    size_t start = out.size();
    bool only_dots = true;
    for (const char *p = value; *p; ++p) {
        char c = *p;
        bool kept = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
        out += kept ? c : '_';
        only_dots = only_dots && c == '.';
    }
    if (only_dots)
        for (size_t i = start; i < out.size(); ++i) out[i] = '_';
}

} // namespace

std::string expand_output_path(const char *pattern, long pid, const char *host, const char *rank) {
    std::string out;
    for (const char *p = pattern; *p; ++p) {
        if (*p != '%' || p[1] == 0) {
            out += *p;
            continue;
        }
        switch (*++p) {
        case 'p': out += std::to_string(pid); break;
        case 'h': append_component(out, host); break;
        case 'r': append_component(out, rank != nullptr && *rank != 0 ? rank : "norank"); break;
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
