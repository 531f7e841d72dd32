#include "core/config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/log.h"

namespace vramtrace {
namespace {

Config g_config;

bool parse_bool(const char *name, bool fallback) {
    const char *v = getenv(name);
    if (v == nullptr || *v == 0) return fallback;
    if (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on"))
        return true;
    if (!strcmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcasecmp(v, "off"))
        return false;
    log_warning("%s=\"%s\" is not a boolean (use 0 or 1); using the default %d", name, ShownValue(v).text, fallback);
    return fallback;
}

uint32_t parse_uint(const char *name, uint32_t fallback, uint32_t max) {
    const char *v = getenv(name);
    if (v == nullptr || *v == 0) return fallback;
    char *end = nullptr;
    int saved = errno;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    bool ok = errno == 0 && end != v && *end == 0 && v[0] != '-' && n <= max;
    errno = saved;
    if (!ok) {
        log_warning("%s=\"%s\" is not a whole number from 0 to %u; using the default %u", name, ShownValue(v).text,
                    max, fallback);
        return fallback;
    }
    return static_cast<uint32_t>(n);
}

// VRAMTRACE_BACKEND: "preload" or "cupti"; unset or empty: 0.
uint8_t parse_backend() {
    const char *v = getenv("VRAMTRACE_BACKEND");
    if (v == nullptr || *v == 0) return 0;
    if (!strcasecmp(v, "preload")) return 1;
    if (!strcasecmp(v, "cupti")) return 2;
    log_warning("VRAMTRACE_BACKEND=\"%s\" is not preload or cupti; using the default (preload)", ShownValue(v).text);
    return 0;
}

} // namespace

const Config &config() { return g_config; }

void load_config() {
    Config c;
    c.disabled = parse_bool("VRAMTRACE_DISABLE", false);
    c.summary = parse_bool("VRAMTRACE_SUMMARY", true);
    c.debug = parse_bool("VRAMTRACE_DEBUG", false);
    c.stack_depth = parse_uint("VRAMTRACE_STACK_DEPTH", 32, 256);
    c.hook_exports = parse_bool("VRAMTRACE_HOOK_EXPORTS", true);
    c.hook_dlsym = parse_bool("VRAMTRACE_HOOK_DLSYM", true);
    c.hook_procaddress = parse_bool("VRAMTRACE_HOOK_PROCADDRESS", true);
    c.follow = parse_bool("VRAMTRACE_FOLLOW", true);
    c.crash_dump = parse_bool("VRAMTRACE_CRASH_DUMP", true);
    c.python = parse_bool("VRAMTRACE_PYTHON", true);
    c.tsc_clock = parse_bool("VRAMTRACE_TSC", true);
    c.events = parse_uint("VRAMTRACE_EVENTS", 65536, 1u << 28);
    c.backend = parse_backend();
    const char *cupti = getenv("VRAMTRACE_CUPTI_LIBRARY");
    if (cupti != nullptr && *cupti != 0) c.cupti_library = cupti;
    const char *notes = getenv("VRAMTRACE_RUN_NOTES");
    if (notes != nullptr && *notes == '/') c.run_notes = notes;
    c.test_fail_mappings = parse_bool("VRAMTRACE_TEST_FAIL_MAPPINGS", false);
    const char *out = getenv("VRAMTRACE_OUTPUT");
    if (out != nullptr && *out != 0) c.output = out; // environment strings live as long as the process
    g_config = c;
}

} // namespace vramtrace
