// The library's settings read once at start: the rows of group "core" in settings/settings.def,
// which documents each one (docs/configuration.md is generated from it). A value that cannot be
// parsed gives one warning and the default.
#pragma once

#include <cstdint>

#include "settings/setting_members.h"
#include "settings/settings.h"

namespace vramtrace {

struct Config {
#define VT_SETTING(group, field, name, kind, value, ...) VT_SETTING_IN_CONFIG_##group(field, kind, value)
#define VT_SETTING_IN_CONFIG_core(field, kind, value) VT_MEMBER_##kind(field, value)
#define VT_SETTING_IN_CONFIG_triggers(field, kind, value)
#define VT_SETTING_IN_CONFIG_text(field, kind, value)
#include "settings/settings.def"
#undef VT_SETTING
};

// The settings in force: the defaults until load_config() runs. Inline: every hook reads it, and
// a call per read would cost more than the read.
namespace detail {
extern Config g_config;
}
inline const Config &config() { return detail::g_config; }
void load_config(); // reads the environment; called once from init

// The one warning for a value the setting cannot take: NAME="VALUE" is not WHAT; using the default
// D (or: left off). VALUE is shown cut and with control characters replaced (core/log.h).
void warn_refused_setting(settings::Id id, const char *value);

// A Bool or Count row read from the environment: its value, or fallback (with the warning) when
// unset or refused.
bool read_bool_setting(settings::Id id, bool fallback);
uint32_t read_count_setting(settings::Id id, uint32_t fallback);

} // namespace vramtrace
