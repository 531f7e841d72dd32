// NVTX names, domains and range stacks (see range_table.h).
#include "nvtx/range_table.h"

#include <cstring>

namespace vramtrace::nvtx {
namespace {

constexpr uint32_t kNameSlots = kMaxNames * 2;  // open addressing, at most half full
constexpr uint32_t kStackSlots = kMaxStacks * 2;

struct NameEntry {
    uint64_t hash;
    uint32_t length;
    char text[kMaxNameBytes];
};

struct DomainEntry {
    char name[kMaxNameBytes];
};

// Only the holder inserts; readers never wait for it.
class SpinLock {
public:
    void lock() {
        while (flag_.exchange(true, std::memory_order_acquire))
            while (flag_.load(std::memory_order_relaxed)) __builtin_ia32_pause();
    }
    void unlock() { flag_.store(false, std::memory_order_release); }

private:
    std::atomic<bool> flag_{false};
};

NameEntry g_names[kMaxNames];
std::atomic<uint32_t> g_name_slots[kNameSlots];
std::atomic<uint32_t> g_name_count{1};
std::atomic<uint64_t> g_names_overflowed{0};
SpinLock g_name_lock;

DomainEntry g_domains[kMaxDomains];
std::atomic<uint32_t> g_domain_count{1};
SpinLock g_domain_lock;

StackNode g_stacks[kMaxStacks];
std::atomic<uint16_t> g_stack_slots[kStackSlots];
std::atomic<uint16_t> g_stack_count{1};
std::atomic<uint64_t> g_stacks_overflowed{0};
SpinLock g_stack_lock;

uint64_t hash_bytes(const char *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull; // FNV-1a: messages are short
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(p[i])) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

bool same_node(const StackNode &a, const StackNode &b) {
    return a.parent == b.parent && a.domain == b.domain && a.name == b.name && a.category == b.category;
}
uint64_t hash_node(const StackNode &n) {
    uint64_t k = uint64_t{n.parent} | uint64_t{n.domain} << 16 | uint64_t{n.name} << 32;
    k = (k ^ (uint64_t{n.category} * 0xbf58476d1ce4e5b9ull)) * 0x9e3779b97f4a7c15ull;
    return k ^ (k >> 31);
}

// The slot holding `text`, or the empty slot where it goes.
uint32_t find_name(uint64_t h, const char *text, size_t length, uint32_t *slot) {
    for (uint32_t i = static_cast<uint32_t>(h) % kNameSlots;; i = (i + 1) % kNameSlots) {
        uint32_t id = g_name_slots[i].load(std::memory_order_acquire);
        if (id == 0) {
            *slot = i;
            return 0;
        }
        const NameEntry &e = g_names[id];
        if (e.hash == h && e.length == length && memcmp(e.text, text, length) == 0) return id;
    }
}

uint16_t find_stack(const StackNode &key, uint32_t *slot) {
    for (uint32_t i = static_cast<uint32_t>(hash_node(key)) % kStackSlots;; i = (i + 1) % kStackSlots) {
        uint16_t id = g_stack_slots[i].load(std::memory_order_acquire);
        if (id == 0) {
            *slot = i;
            return 0;
        }
        if (same_node(g_stacks[id], key)) return id;
    }
}

const char *const kCounterTails[] = {", seq = ", ", op_id = ", ", sizes = "};

// Whether `p` (at a ',') starts one of kCounterTails.
bool at_counter_tail(const char *p) {
    for (const char *tail : kCounterTails)
        if (strncmp(p, tail, strlen(tail)) == 0) return true;
    return false;
}

} // namespace

size_t normalise_message(const char *message, char *out) {
    size_t n = message == nullptr ? 0 : strnlen(message, 4096);
    for (const char *tail : kCounterTails) {
        const char *at = message == nullptr ? nullptr : static_cast<const char *>(memmem(message, n, tail, strlen(tail)));
        if (at != nullptr) n = static_cast<size_t>(at - message);
    }
    if (n > kMaxNameBytes - 1) n = kMaxNameBytes - 1;
    if (n > 0) memcpy(out, message, n);
    out[n] = 0;
    return n;
}

uint32_t intern_normalised(const char *text, size_t length) {
    if (length == 0) return 0;
    uint64_t h = hash_bytes(text, length);
    uint32_t slot = 0;
    if (uint32_t id = find_name(h, text, length, &slot)) return id;
    g_name_lock.lock();
    uint32_t id = find_name(h, text, length, &slot); // another thread may have added it
    if (id == 0) {
        uint32_t next = g_name_count.load(std::memory_order_relaxed);
        if (next >= kOverflowName) {
            g_names_overflowed.fetch_add(1, std::memory_order_relaxed);
            id = kOverflowName;
        } else {
            NameEntry &e = g_names[next];
            e.hash = h;
            e.length = static_cast<uint32_t>(length);
            memcpy(e.text, text, length);
            e.text[length] = 0;
            g_name_count.store(next + 1, std::memory_order_release);
            g_name_slots[slot].store(next, std::memory_order_release);
            id = next;
        }
    }
    g_name_lock.unlock();
    return id;
}

// One pass over the message: the cut (normalise_message's) and the hash together, so that a name
// already seen costs a scan and a comparison, no copy.
uint32_t intern_name(const char *message) {
    if (message == nullptr) return 0;
    uint64_t h = 0xcbf29ce484222325ull;
    size_t n = 0;
    for (; n < kMaxNameBytes - 1 && message[n] != 0; ++n) {
        if (message[n] == ',' && message[n + 1] == ' ' && at_counter_tail(message + n)) break;
        h = (h ^ static_cast<unsigned char>(message[n])) * 0x100000001b3ull;
    }
    if (n == 0) return 0;
    h ^= h >> 29;
    uint32_t slot = 0;
    if (uint32_t id = find_name(h, message, n, &slot)) return id;
    return intern_normalised(message, n);
}

const char *name_text(uint32_t name) {
    if (name == kOverflowName) return "(more range names than vramtrace keeps)";
    if (name == 0 || name >= g_name_count.load(std::memory_order_acquire)) return "";
    return g_names[name].text;
}

uint32_t name_count() { return g_name_count.load(std::memory_order_acquire); }

uint16_t create_domain(const char *name) {
    char text[kMaxNameBytes];
    size_t n = normalise_message(name, text);
    g_domain_lock.lock();
    uint32_t count = g_domain_count.load(std::memory_order_relaxed);
    uint16_t id = 0;
    for (uint32_t i = 1; i < count; ++i)
        if (strcmp(g_domains[i].name, text) == 0) id = static_cast<uint16_t>(i);
    if (id == 0 && count < kMaxDomains) {
        memcpy(g_domains[count].name, text, n + 1);
        g_domain_count.store(count + 1, std::memory_order_release);
        id = static_cast<uint16_t>(count);
    }
    g_domain_lock.unlock();
    return id; // a domain beyond kMaxDomains is counted as the default one
}

const char *domain_name(uint16_t domain) {
    if (domain == 0 || domain >= g_domain_count.load(std::memory_order_acquire)) return "";
    return g_domains[domain].name;
}

uint32_t domain_count() { return g_domain_count.load(std::memory_order_acquire); }

uint16_t push_stack(uint16_t parent, uint16_t domain, uint32_t name, uint32_t category) {
    if (parent == kOverflowStack) return kOverflowStack;
    StackNode key{parent, domain, name, category};
    uint32_t slot = 0;
    if (uint16_t id = find_stack(key, &slot)) return id;
    g_stack_lock.lock();
    uint16_t id = find_stack(key, &slot);
    if (id == 0) {
        uint16_t next = g_stack_count.load(std::memory_order_relaxed);
        if (next >= kOverflowStack) {
            g_stacks_overflowed.fetch_add(1, std::memory_order_relaxed);
            id = kOverflowStack;
        } else {
            g_stacks[next] = key;
            g_stack_count.store(static_cast<uint16_t>(next + 1), std::memory_order_release);
            g_stack_slots[slot].store(next, std::memory_order_release);
            id = next;
        }
    }
    g_stack_lock.unlock();
    return id;
}

bool stack_node(uint16_t id, StackNode *out) {
    if (id == 0 || id >= g_stack_count.load(std::memory_order_acquire)) return false;
    *out = g_stacks[id];
    return true;
}

uint16_t stack_count() { return g_stack_count.load(std::memory_order_acquire); }
uint64_t names_overflowed() { return g_names_overflowed.load(std::memory_order_relaxed); }
uint64_t stacks_overflowed() { return g_stacks_overflowed.load(std::memory_order_relaxed); }

void reset_tables_for_testing() {
    for (auto &s : g_name_slots) s.store(0, std::memory_order_relaxed);
    for (auto &s : g_stack_slots) s.store(0, std::memory_order_relaxed);
    g_name_count.store(1);
    g_domain_count.store(1);
    g_stack_count.store(1);
    g_names_overflowed.store(0);
    g_stacks_overflowed.store(0);
}

} // namespace vramtrace::nvtx
