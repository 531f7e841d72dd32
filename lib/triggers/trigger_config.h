// The trigger settings: the rows of group "triggers" in settings/settings.def, which documents each
// one (docs/configuration.md is generated from it; docs/triggers.md tells how they work together).
// A value that cannot be parsed gives one warning and the default.
#pragma once

#include <csignal>
#include <cstdint>

#include "settings/setting_members.h"

namespace vramtrace::triggers {

struct TriggerConfig {
#define VT_SETTING(group, field, name, kind, value, ...) VT_SETTING_IN_TRIGGERS_##group(field, kind, value)
#define VT_SETTING_IN_TRIGGERS_triggers(field, kind, value) VT_MEMBER_##kind(field, value)
#define VT_SETTING_IN_TRIGGERS_core(field, kind, value)
#define VT_SETTING_IN_TRIGGERS_text(field, kind, value)
#include "settings/settings.def"
#undef VT_SETTING

    bool threshold_on() const { return warn_bytes != 0 || warn_fraction > 0.0; }
};

// The settings, read from the environment on first use (from the constructor, or from a hook that
// runs before it); while another thread is reading them, the defaults.
const TriggerConfig &trigger_config();
void load_trigger_config(); // reads them now unless already read; idempotent

} // namespace vramtrace::triggers
