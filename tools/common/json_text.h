// A string as a JSON string literal, ill-formed UTF-8 replaced (U+FFFD): what the CLI's own JSON
// writers (merge) put out.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace vramtrace::cli {

inline std::string json_string(std::string_view s) {
    return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace vramtrace::cli
