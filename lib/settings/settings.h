// The VRAMTRACE_* variables as data (settings.def): their names, kinds, defaults and docs, the
// parsers every kind shares, and the words of the one warning a refused value gets. The library's
// Config and TriggerConfig are generated from the same rows (core/config.h, triggers/
// trigger_config.h); the CLI prints the rows in `vramtrace run --help` and docs/configuration.md.
// Pure data and pure functions over libc: the layers below core (symbolize) and the CLI use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace vramtrace::settings {

enum class Kind { Bool, Count, Seconds, SecondsOrZero, Text, AbsolutePath, Backend, Signal, Threshold };
enum class ReadBy { library, cli, both };
enum class Audience { user, internal, tests };

// One row of settings.def.
struct Info {
    const char *name;          // "VRAMTRACE_STACK_DEPTH"
    const char *group;         // "core", "triggers" or "text"
    Kind kind;
    const char *shown_default; // "32", "off", "unset"
    uint64_t max;              // Count: the largest value; Seconds kinds: the most seconds; else 0
    ReadBy read_by;
    Audience audience;
    const char *help;          // one line for `vramtrace run --help`
    const char *doc;           // the sentence of docs/configuration.md (markdown)
};

// One id per row, in the table's order.
enum class Id : uint16_t {
#define VT_SETTING(group, field, ...) field,
#include "settings/settings.def"
#undef VT_SETTING
};

inline constexpr Info kTable[] = {
#define VT_SETTING(group, field, name, kind, value, shown, max, read_by, audience, help, doc) \
    {name, #group, Kind::kind, shown, max, ReadBy::read_by, Audience::audience, help, doc},
#include "settings/settings.def"
#undef VT_SETTING
};
inline constexpr size_t kCount = sizeof kTable / sizeof kTable[0];

constexpr const Info &info(Id id) { return kTable[static_cast<size_t>(id)]; }

// The variable's text from the environment; nullptr when unset or empty. In a setuid or setgid
// process (secure execution) every setting reads as unset, as glibc's secure_getenv does.
const char *text(Id id);

// What a kind accepts, for the warning and the docs: "0 or 1", "a whole number from 0 to 256".
// Writes into buf (NUL-terminated, cut to size) and returns it.
const char *accepts(const Info &s, char *buf, size_t size);

// The end of the warning for a refused value: "using the default 32", or "left off" / "left unset"
// for a setting that is off or unset by default.
const char *fallback(const Info &s, char *buf, size_t size);

// Bool: "1", "true", "yes", "on" and "0", "false", "no", "off" (case-insensitive).
std::optional<bool> parse_bool(const char *text);
// Count: decimal digits only, from 0 to max.
std::optional<uint64_t> parse_count(const char *text, uint64_t max);
// Backend: "preload" 1, "cupti" 2 (case-insensitive).
std::optional<uint8_t> parse_backend(const char *text);

} // namespace vramtrace::settings
