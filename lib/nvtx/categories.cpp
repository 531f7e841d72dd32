// NVTX category names (see categories.h).
#include "nvtx/categories.h"

#include <atomic>
#include <cstdio>
#include <cstring>

#include "nvtx/range_table.h"

namespace vramtrace::nvtx {
namespace {

struct CategoryName {
    uint16_t domain;
    uint32_t category;
    std::atomic<uint32_t> name; // range_table.h name id
};

// Named rarely (once per category), read at dump time: a short table under a spin lock.
CategoryName g_categories[kMaxCategoryNames];
std::atomic<uint32_t> g_count{0};
std::atomic<bool> g_lock{false};

void lock() {
    while (g_lock.exchange(true, std::memory_order_acquire)) __builtin_ia32_pause();
}
void unlock() { g_lock.store(false, std::memory_order_release); }

} // namespace

void name_category(uint16_t domain, uint32_t category, const char *name) {
    if (category == 0) return;
    uint32_t id = intern_name(name);
    lock();
    uint32_t n = g_count.load(std::memory_order_relaxed);
    uint32_t i = 0;
    while (i < n && !(g_categories[i].domain == domain && g_categories[i].category == category)) ++i;
    if (i == n && n < kMaxCategoryNames) {
        g_categories[i].domain = domain;
        g_categories[i].category = category;
        g_count.store(n + 1, std::memory_order_release);
    }
    if (i < kMaxCategoryNames) g_categories[i].name.store(id, std::memory_order_relaxed);
    unlock();
}

const char *category_name(uint16_t domain, uint32_t category) {
    if (category == 0) return nullptr;
    const char *out = nullptr;
    lock();
    for (uint32_t i = 0, n = g_count.load(std::memory_order_relaxed); i < n; ++i)
        if (g_categories[i].domain == domain && g_categories[i].category == category) {
            const char *text = name_text(g_categories[i].name.load(std::memory_order_relaxed));
            out = *text != 0 ? text : nullptr; // an empty name names nothing
        }
    unlock();
    return out;
}

size_t category_text(uint16_t domain, uint32_t category, char *out) {
    out[0] = 0;
    if (category == 0) return 0;
    if (const char *name = category_name(domain, category)) {
        size_t n = strnlen(name, kMaxNameBytes - 1);
        memcpy(out, name, n);
        out[n] = 0;
        return n;
    }
    int n = snprintf(out, kMaxNameBytes, "%u", category);
    return n > 0 ? static_cast<size_t>(n) : 0;
}

void reset_categories_for_testing() { g_count.store(0); }

} // namespace vramtrace::nvtx
