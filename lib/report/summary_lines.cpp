#include "report/summary_lines.h"
#include "report/text_format.h"

#include <algorithm>

namespace vramtrace::report::summary {

using snapshot::ProcessInfo;

__extension__ typedef unsigned __int128 u128; // exact products of two 64-bit values


std::string plural(uint64_t n, std::string_view word) {
    std::string out = to_dec(n);
    out += ' ';
    out += word;
    if (n != 1) out += 's';
    return out;
}

// A command line as a shell would need it typed: arguments with special characters single-quoted.
std::string shell_words(const std::vector<std::string> &args) {
    std::string out;
    for (const std::string &arg : args) {
        if (!out.empty()) out += ' ';
        bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
        });
        if (plain) {
            out += arg;
            continue;
        }
        out += '\'';
        for (char c : arg) {
            if (c == '\'') out += "'\\''";
            else out += c;
        }
        out += '\'';
    }
    return out;
}

// Share of total in percent with one decimal, rounded half up: "56.0%".
std::string percent(uint64_t part, uint64_t total) {
    if (total == 0) return "-";
    auto permille = uint64_t((static_cast<u128>(part) * 1000 + total / 2) / total);
    return to_dec(permille / 10) + "." + to_dec(permille % 10) + "%";
}

std::string driver_text(int version) {
    return to_dec(uint64_t(version / 1000)) + "." + to_dec(uint64_t(version % 1000 / 10));
}

std::optional<uint64_t> since_start(const ProcessInfo &p, uint64_t monotonic_ns) {
    if (p.dump_monotonic_ns == 0 || p.start_time_ns == 0 || p.dump_time_ns < p.start_time_ns ||
        monotonic_ns > p.dump_monotonic_ns)
        return std::nullopt;
    uint64_t run = p.dump_time_ns - p.start_time_ns, before_dump = p.dump_monotonic_ns - monotonic_ns;
    if (before_dump > run) return std::nullopt;
    return run - before_dump;
}

std::string when_text(const ProcessInfo &p, uint64_t monotonic_ns) {
    auto t = since_start(p, monotonic_ns);
    return t ? format_duration(*t) + " after start" : std::string();
}

} // namespace vramtrace::report::summary
