#include "triggers/trigger_config.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/config.h"
#include "core/hot_flags.h"
#include "triggers/trigger_parse.h"

namespace vramtrace::triggers {
namespace {

TriggerConfig g_config;
const TriggerConfig kDefaults;
// 0: not read, 1: being read (by the first caller), 2: read and published.
std::atomic<int> g_state{0};

using settings::Id;

// A number of seconds that may be 0 ("0", "0.0").
bool parse_interval(const char *v, uint64_t *ns) {
    if (auto n = parse_period_ns(v)) {
        *ns = *n;
        return true;
    }
    const char *p = v;
    while (*p == '0') ++p;
    if (*p == '.') for (++p; *p == '0'; ++p) {}
    if (*p != 0 || p == v) return false;
    *ns = 0;
    return true;
}

uint64_t read_seconds(Id id, uint64_t fallback) {
    const char *v = settings::text(id);
    if (v == nullptr) return fallback;
    auto ns = parse_period_ns(v);
    if (ns && *ns <= settings::info(id).max * 1'000'000'000ull) return *ns;
    warn_refused_setting(id, v);
    return fallback;
}

uint64_t read_seconds_or_zero(Id id, uint64_t fallback) {
    const char *v = settings::text(id);
    if (v == nullptr) return fallback;
    uint64_t ns = 0;
    if (parse_interval(v, &ns) && ns <= settings::info(id).max * 1'000'000'000ull) return ns;
    warn_refused_setting(id, v);
    return fallback;
}

const char *read_text(Id id, const char *fallback) {
    const char *v = settings::text(id);
    return v != nullptr ? v : fallback;
}

void read_signal(Id id, int &signo, bool &is_explicit) {
    const char *v = settings::text(id);
    if (v == nullptr) return;
    if (auto s = parse_signal(v)) {
        signo = *s;
        is_explicit = true;
    } else {
        warn_refused_setting(id, v);
    }
}

void read_threshold(Id id, uint64_t &bytes, double &fraction) {
    const char *v = settings::text(id);
    if (v == nullptr) return;
    if (auto t = parse_byte_threshold(v)) {
        bytes = t->bytes;
        fraction = t->fraction;
    } else {
        warn_refused_setting(id, v);
    }
}

} // namespace

const TriggerConfig &trigger_config() {
    // Read on first use, from whichever comes first: the library constructor or a hook that runs
    // before it (another library's constructor may allocate first). One acquire load after that.
    int state = g_state.load(std::memory_order_acquire);
    if (state == 0) {
        load_trigger_config();
        state = g_state.load(std::memory_order_acquire);
    }
    return state == 2 ? g_config : kDefaults;
}

void load_trigger_config() {
    int expected = 0;
    if (!g_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) return; // read once
    TriggerConfig c;
#define VT_SETTING(group, field, name, kind, ...) VT_LOAD_TRIGGERS_##group(field, kind)
#define VT_LOAD_TRIGGERS_triggers(field, kind) VT_LOAD_TRIGGERS_##kind(field)
#define VT_LOAD_TRIGGERS_core(field, kind)
#define VT_LOAD_TRIGGERS_text(field, kind)
#define VT_LOAD_TRIGGERS_Bool(field) c.field = read_bool_setting(Id::field, c.field);
#define VT_LOAD_TRIGGERS_Count(field) c.field = read_count_setting(Id::field, c.field);
#define VT_LOAD_TRIGGERS_Seconds(field) c.field = read_seconds(Id::field, c.field);
#define VT_LOAD_TRIGGERS_SecondsOrZero(field) c.field = read_seconds_or_zero(Id::field, c.field);
#define VT_LOAD_TRIGGERS_Text(field) c.field = read_text(Id::field, c.field);
#define VT_LOAD_TRIGGERS_Signal(field) read_signal(Id::field, c.field, c.field##_explicit);
#define VT_LOAD_TRIGGERS_Threshold(field) read_threshold(Id::field, c.field##_bytes, c.field##_fraction);
#include "settings/settings.def"
#undef VT_SETTING
    g_config = c;
    g_state.store(2, std::memory_order_release);
    if (!c.threshold_on()) hot::set(hot::kNoThreshold);
}

} // namespace vramtrace::triggers
