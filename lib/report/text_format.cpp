// Text of a snapshot's figures for the reports (report/text_format.h). No third-party
// dependencies: this file is linked into the preload library.
#include "report/text_format.h"

#include <charconv>

namespace vramtrace::report {

using snapshot::Frame;
using snapshot::Module;
using snapshot::RangeStack;
using snapshot::Snapshot;
using snapshot::path_basename;

std::string to_dec(uint64_t value) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, value);
    return std::string(buf, res.ptr);
}

std::string to_dec_signed(int64_t value) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, value);
    return std::string(buf, res.ptr);
}

namespace {

__extension__ typedef unsigned __int128 u128; // exact products of two 64-bit values

// value / 100 as "I.FF" (value in hundredths).
std::string hundredths(uint64_t value) {
    std::string out = to_dec(value / 100);
    out += '.';
    out += char('0' + (value % 100) / 10);
    out += char('0' + value % 10);
    return out;
}

} // namespace

std::string zero_padded(uint64_t value, int width, int base) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, value, base);
    std::string digits(buf, res.ptr);
    if (int(digits.size()) < width) digits.insert(0, size_t(width) - digits.size(), '0');
    return digits;
}

std::string format_bytes(uint64_t bytes) {
    static constexpr const char *kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) return to_dec(bytes) + " B";
    int unit = 1;
    u128 divisor = 1024;
    for (;;) {
        // Hundredths of the unit, rounded half up.
        auto scaled = (static_cast<u128>(bytes) * 100 + divisor / 2) / divisor;
        if (scaled < 1024 * 100 || unit == 6) return hundredths(uint64_t(scaled)) + " " + kUnits[unit];
        ++unit;
        divisor *= 1024;
    }
}

std::string format_bytes_exact(uint64_t bytes) {
    if (bytes < 1024) return format_bytes(bytes);
    return format_bytes(bytes) + " (" + to_dec(bytes) + " B)";
}

std::string format_duration(uint64_t ns) {
    constexpr uint64_t kMs = 1000000, kS = 1000 * kMs;
    if (ns < kS) return to_dec((ns + kMs / 2) / kMs) + " ms";
    if (ns < 60 * kS) {
        uint64_t centi = (ns + kS / 200) / (kS / 100);
        if (centi < 6000) return hundredths(centi) + " s";
    }
    uint64_t seconds = (ns + kS / 2) / kS;
    if (seconds < 3600) return to_dec(seconds / 60) + " min " + zero_padded(seconds % 60, 2, 10) + " s";
    uint64_t minutes = (seconds + 30) / 60;
    return to_dec(minutes / 60) + " h " + zero_padded(minutes % 60, 2, 10) + " min";
}

std::string device_label(int device) {
    if (device >= 0) return "cuda:" + std::to_string(device);
    if (device == -1) return "host";
    if (device == -2) return "unknown";
    return "device " + std::to_string(device);
}

std::string hex_u64(uint64_t value) { return "0x" + zero_padded(value, 1, 16); }

namespace {
// "function at file:line", "function at file", "function", "??".
void append_position(std::string &out, const std::string &function, const std::string &file,
                     uint32_t line) {
    out += function.empty() ? "??" : function;
    if (file.empty()) return;
    out += " at ";
    out += file;
    if (line != 0) out += ":" + std::to_string(line);
}
} // namespace

std::string describe_frame(const Snapshot &snapshot, const Frame &frame) {
    std::string out;
    if (frame.inlined.empty()) {
        append_position(out, frame.function, frame.file, frame.line);
    } else {
        // Innermost first, each caller it was inlined into in parentheses, the real function last.
        append_position(out, frame.inlined[0].function, frame.inlined[0].file, frame.inlined[0].line);
        for (size_t i = 1; i < frame.inlined.size(); ++i) {
            out += " (inlined into ";
            append_position(out, frame.inlined[i].function, frame.inlined[i].file, frame.inlined[i].line);
            out += ')';
        }
        out += " (inlined into ";
        append_position(out, frame.function, frame.file, frame.line);
        out += ')';
    }
    const Module *module = snapshot.find_module(frame);
    if (frame.python) {
        out += " (python)";
        return out;
    }
    if (!frame.file.empty()) {
        if (module) {
            out += " (";
            out += path_basename(module->path);
            out += ")";
        }
    } else if (module) {
        out += " (";
        out += path_basename(module->path);
        out += "+" + hex_u64(frame.module_offset) + ")";
    } else {
        out += " (" + hex_u64(frame.address) + ")";
    }
    return out;
}

std::string range_stack_label(const Snapshot &s, uint32_t id) {
    if (id == 0) return "(no range)";
    const RangeStack *r = s.find_range(id);
    if (r == nullptr) return "(range " + std::to_string(id) + ", not in the snapshot)";
    return range_stack_label(*r);
}

std::string range_stack_label(const RangeStack &r) {
    std::string out;
    for (size_t i = 0; i < r.names.size(); ++i) {
        if (i) out += " > ";
        if (i < r.domains.size() && !r.domains[i].empty()) out += r.domains[i] + ":";
        out += r.names[i].empty() ? "(unnamed)" : r.names[i];
        out += range_category_suffix(r, i);
    }
    return out;
}

std::string range_category_suffix(const RangeStack &r, size_t i) {
    if (i >= r.categories.size() || r.categories[i].empty()) return {};
    return " [" + r.categories[i] + "]";
}

} // namespace vramtrace::report
