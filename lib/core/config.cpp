#include "core/config.h"

#include "core/log.h"
#include "core/process_identity.h"

namespace vramtrace {

constinit Config detail::g_config;

namespace {

using settings::Id;


const char *read_text(Id id, const char *fallback) {
    const char *v = settings::text(id);
    return v != nullptr ? v : fallback; // environment strings live as long as the process
}

const char *read_absolute_path(Id id, const char *fallback) {
    const char *v = settings::text(id);
    if (v == nullptr) return fallback;
    if (*v == '/') return v;
    warn_refused_setting(id, v);
    return fallback;
}

uint8_t read_backend(Id id, uint8_t fallback) {
    const char *v = settings::text(id);
    if (v == nullptr) return fallback;
    if (auto b = settings::parse_backend(v)) return *b;
    warn_refused_setting(id, v);
    return fallback;
}

} // namespace

void warn_refused_setting(Id id, const char *value) {
    const settings::Info &s = settings::info(id);
    char what[192], instead[64];
    log_warning("%s=\"%s\" is not %s; %s", s.name, ShownValue(value).text, settings::accepts(s, what, sizeof what),
                settings::fallback(s, instead, sizeof instead));
}

bool read_bool_setting(Id id, bool fallback) {
    const char *v = settings::text(id);
    if (v == nullptr) return fallback;
    if (auto b = settings::parse_bool(v)) return *b;
    warn_refused_setting(id, v);
    return fallback;
}

uint32_t read_count_setting(Id id, uint32_t fallback) {
    const char *v = settings::text(id);
    if (v == nullptr) return fallback;
    if (auto n = settings::parse_count(v, settings::info(id).max)) return static_cast<uint32_t>(*n);
    warn_refused_setting(id, v);
    return fallback;
}


void load_config() {
    Config c;
#define VT_SETTING(group, field, name, kind, ...) VT_LOAD_CONFIG_##group(field, kind)
#define VT_LOAD_CONFIG_core(field, kind) VT_LOAD_CONFIG_##kind(field)
#define VT_LOAD_CONFIG_triggers(field, kind)
#define VT_LOAD_CONFIG_text(field, kind)
#define VT_LOAD_CONFIG_Bool(field) c.field = read_bool_setting(Id::field, c.field);
#define VT_LOAD_CONFIG_Count(field) c.field = read_count_setting(Id::field, c.field);
#define VT_LOAD_CONFIG_Text(field) c.field = read_text(Id::field, c.field);
#define VT_LOAD_CONFIG_AbsolutePath(field) c.field = read_absolute_path(Id::field, c.field);
#define VT_LOAD_CONFIG_Backend(field) c.field = read_backend(Id::field, c.field);
#include "settings/settings.def"
#undef VT_SETTING
    detail::g_config = c;
    load_process_identity();
}

} // namespace vramtrace
