// A string as a JSON string literal, ill-formed UTF-8 replaced (U+FFFD), and a member's key: what
// the CLI's own JSON writers (merge) put out.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace vramtrace::cli {

inline std::string json_string(std::string_view s) {
    return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// `"name": ` for a member name of snapshot/snapshot_fields.h (plain ASCII: nothing to escape).
inline std::string json_key(std::string_view name) { return "\"" + std::string(name) + "\": "; }

} // namespace vramtrace::cli
