#include "tracking/stack_capture.h"

#include "tracking/recent_walks.h"
#include "tracking/stack_words.h"
#include "tracking/startup_code.h"
#include "tracking/unwind_rules.h"

#include <atomic>
#include <cstring>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

// Linker-defined bounds of this shared object's image. Declared hidden so that they bind to this
// object's own at link time: a program linked with --export-dynamic (sanitizer builds are) exports
// its own _end, which would otherwise take the place of ours wherever no version script hides it.
extern "C" const char __ehdr_start __attribute__((visibility("hidden")));
extern "C" const char _end __attribute__((visibility("hidden")));

namespace vramtrace {

bool address_in_self(uintptr_t address) {
    return address >= reinterpret_cast<uintptr_t>(&__ehdr_start) &&
           address < reinterpret_cast<uintptr_t>(&_end);
}

namespace {

using namespace unwind;

// A bound on steps guards against a corrupt stack that loops.
constexpr int kMaxSteps = 1024;

// The recent-walks memo is on in every build but the measurement one that compiles it out
// (lib/CMakeLists.txt, VRAMTRACE_BENCH_WITHOUT_RECENT_WALKS), which counts what it saves.
#ifndef VT_RECENT_WALKS
#define VT_RECENT_WALKS 1
#endif
constexpr bool kRecentWalks = VT_RECENT_WALKS != 0;

std::atomic<uint64_t> g_rules_derived{0};
std::atomic<uint64_t> g_fallbacks{0};

// The rule for return address `ip` from its FDE (found by libunwind for ip - 1, as its own step
// does). kNoFde when libunwind knows no unwind information there.
uint64_t derive_rule(uint64_t ip) {
    unw_context_t uc;
    unw_cursor_t cursor;
    unw_proc_info_t info;
    if (unw_getcontext(&uc) != 0 || unw_init_local(&cursor, &uc) != 0 ||
        unw_set_reg(&cursor, UNW_REG_IP, ip - 1) != 0)
        return unsupported_rule();
    if (unw_get_proc_info(&cursor, &info) != 0 || info.unwind_info == 0 || info.end_ip == 0) return kNoFde;
    g_rules_derived.fetch_add(1, std::memory_order_relaxed);
    return rule_from_fde(reinterpret_cast<const uint8_t *>(info.unwind_info), info.start_ip, ip);
}

// ---- The cache ---------------------------------------------------------------------------------
//
// Direct-mapped, process-wide, in .bss (its pages are touched only as slots fill). Each slot is a
// small seqlock: readers never wait and never see a torn slot; a writer that finds the slot being
// written by another thread just does not store. A slot also keeps the aligned 8 bytes of code that
// hold the end of the call instruction before its return address: a library unloaded and another
// one mapped at the same address does not match them, so a rule never outlives its code.

constexpr unsigned kCacheLog2 = 14;
struct alignas(32) Slot {
    std::atomic<uint64_t> seq;
    std::atomic<uint64_t> ip;
    std::atomic<uint64_t> code;
    std::atomic<uint64_t> rule;
};
Slot g_cache[1u << kCacheLog2];

inline Slot &slot_for(uint64_t ip) {
    return g_cache[(ip * 0x9e3779b97f4a7c15ull) >> (64 - kCacheLog2)];
}

inline bool cache_find(uint64_t ip, uint64_t *rule) {
    Slot &s = slot_for(ip);
    uint64_t seq = s.seq.load(std::memory_order_acquire);
    if (seq & 1) return false;
    uint64_t key = s.ip.load(std::memory_order_relaxed);
    if (key != ip) return false;
    uint64_t code = s.code.load(std::memory_order_relaxed);
    uint64_t value = s.rule.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s.seq.load(std::memory_order_relaxed) != seq) return false;
    if (code != code_word(ip)) return false;
    *rule = value;
    return true;
}

void cache_store(uint64_t ip, uint64_t rule) {
    Slot &s = slot_for(ip);
    uint64_t seq = s.seq.load(std::memory_order_relaxed);
    if ((seq & 1) || !s.seq.compare_exchange_strong(seq, seq + 1, std::memory_order_acquire))
        return;
    std::atomic_thread_fence(std::memory_order_release);
    s.ip.store(ip, std::memory_order_relaxed);
    s.code.store(code_word(ip), std::memory_order_relaxed);
    s.rule.store(rule, std::memory_order_relaxed);
    s.seq.store(seq + 2, std::memory_order_release);
}

// Per thread, the rules used at each of the first kMemoFrames steps of its last walk, decoded. A
// program allocates from the same few call paths over and over, so the frame at step k usually has
// the same return address as last time: then its rule is at hand without a cache look-up, and the
// walk runs a short loop whose critical path is the stack pointer arithmetic. The code word is
// checked as in the shared cache. 1.5 KiB of TLS per thread: the library's TLS block is static as a
// whole (t_thread is initial-exec), so a dlopen of it (the CUPTI injection) needs this much of
// glibc's static TLS surplus; the e2e injection tests load it that way. (Also consulting the memo
// after a first difference, where two walks fall in step again, was tried: the hot 32-frame
// capture went from 80-146 ns to 205-212 ns on the development machine and the cold 16-path case
// did not move, so the loops stay apart.)
constexpr int kMemoFrames = 64;
struct MemoEntry {
    uint64_t ip;   // 0: nothing memoized at this step
    uint64_t code;
    int32_t cfa_off;
    int16_t ra_off;
    int8_t bp_saved_off; // bp_off / 8 when bp is saved (a nonzero multiple of 8 in +-1 KiB), else 0
    uint8_t cfa_from_bp;
};
static_assert(sizeof(MemoEntry) == 24);
thread_local MemoEntry t_memo[kMemoFrames];

// Whether a kKindStep rule fits a memo entry; fills it.
inline bool memo_fill(MemoEntry &m, uint64_t ip, uint64_t rule) {
    int32_t bp_off = rule_bp_off(rule);
    bool fits = rule_kind(rule) == kKindStep && (!rule_bp_saved(rule) || (bp_off != 0 && bp_off % 8 == 0 &&
                                                                          bp_off >= -1024 && bp_off <= 1016));
    if (!fits) {
        m.ip = 0;
        return false;
    }
    m.ip = ip;
    m.code = code_word(ip);
    m.cfa_off = rule_cfa_off(rule);
    m.ra_off = static_cast<int16_t>(rule_ra_off(rule));
    m.bp_saved_off = static_cast<int8_t>(rule_bp_saved(rule) ? bp_off / 8 : 0);
    m.cfa_from_bp = rule_cfa_from_bp(rule);
    return true;
}

// The rule for `ip` from the shared cache, deriving and storing it on a miss (kNoFde: none).
inline uint64_t shared_rule(uint64_t ip) {
    uint64_t rule;
    if (cache_find(ip, &rule)) return rule;
    rule = derive_rule(ip);
    if (rule != kNoFde) cache_store(ip, rule);
    return rule;
}

// A CFA that cannot be one: at or below the stack pointer, absurdly far above it, or misaligned. A
// frame pointer that is not one (code whose unwind info says the CFA hangs off RBP while RBP holds
// something else would be a bug in that code) must not send loads astray; libunwind decides then.
inline bool bad_cfa(uint64_t cfa, uint64_t sp) {
    return cfa <= sp || cfa - sp > (uint64_t{1} << 30) || (cfa & 7) != 0;
}

struct WalkState {
    uint64_t ip, sp, bp;
    int steps;
    uint32_t depth;
    bool leading; // skip our own frames only at the top of the stack
};

// Writes down a walk's reads into a recent_walks.h entry as it goes (nothing when walk is null), in
// the order the walk reads them. A restored frame pointer is checked on replay only when a later
// step takes its frame address from it: code built without frame pointers saves RBP as an ordinary
// register, whose value may differ from call to call on an unchanged stack. A rule's code word is
// checked only outside the code loaded with the process (startup_code.h).
struct StepLog {
    walks::Walk *walk;
    bool bp_from_start = true; // the frame pointer is still the starting one
    bool bp_unchecked = false; // the last restored frame pointer is not in the list yet
    uint64_t bp_at = 0, bp = 0;

    void rule_of(uint64_t ip) {
        if (!startup_code::holds(ip)) walk->add_check((ip - 1) & ~uint64_t{7}, code_word(ip));
    }
    void step(uint64_t ip, bool cfa_from_bp, uint64_t ra_at, uint64_t ra, bool bp_loaded, uint64_t loaded_at,
              uint64_t loaded) {
        rule_of(ip);
        if (cfa_from_bp) {
            if (bp_from_start) {
                walk->bp0_used = true;
            } else if (bp_unchecked) {
                walk->add_check(bp_at, bp);
                bp_unchecked = false;
            }
        }
        walk->add_check(ra_at, ra);
        if (bp_loaded) {
            bp_from_start = false;
            bp_unchecked = true;
            bp_at = loaded_at;
            bp = loaded;
        }
    }
};

// Records the new ip as libunwind's walk would after a successful step. False: the walk is over.
inline bool record(WalkState &w, uintptr_t *out) {
    if (w.ip == 0) return false;
    if (w.leading && address_in_self(w.ip)) return true;
    w.leading = false;
    out[w.depth++] = static_cast<uintptr_t>(w.ip);
    return true;
}

// Walks from `start` (its ip is the first frame, unless it is our own) with cached rules, writing
// its reads into log when kLog. False when some frame needs libunwind.
template <bool kLog>
bool walk_cached(const StartFrame &start, uintptr_t *out, uint32_t max_depth, uint32_t *depth_out,
                 StepLog &log) {
    WalkState w{start.ip, start.sp, start.bp, 0, 0, true};
    if (!record(w, out)) {
        *depth_out = 0;
        return true;
    }
    MemoEntry *memo = t_memo;
    // Fast loop: every step as memoized by the last walk of this thread.
    while (w.depth < max_depth && w.steps < kMemoFrames) {
        const MemoEntry &m = memo[w.steps];
        if (m.ip != w.ip || m.code != code_word(w.ip)) break;
        uint64_t cfa = (m.cfa_from_bp ? w.bp : w.sp) + static_cast<int64_t>(m.cfa_off);
        if (bad_cfa(cfa, w.sp)) return false;
        const uint64_t ra_at = cfa + m.ra_off, bp_at = cfa + int64_t{m.bp_saved_off} * 8;
        w.ip = load_word(ra_at);
        if (m.bp_saved_off != 0) w.bp = load_word(bp_at);
        if (kLog) log.step(m.ip, m.cfa_from_bp, ra_at, w.ip, m.bp_saved_off != 0, bp_at, w.bp);
        w.sp = cfa;
        ++w.steps;
        if (!record(w, out)) {
            *depth_out = w.depth;
            return true;
        }
    }
    // General loop: the shared cache (deriving rules it lacks), refreshing the memo as it goes.
    for (; w.depth < max_depth && w.steps < kMaxSteps; ++w.steps) {
        uint64_t rule = shared_rule(w.ip);
        if (w.steps < kMemoFrames) {
            if (rule == kNoFde)
                memo[w.steps].ip = 0;
            else
                memo_fill(memo[w.steps], w.ip, rule);
        }
        if (rule == kNoFde) { // libunwind's step ends the walk there too
            if (kLog) log.walk = nullptr; // without having read the code there: such a walk is not replayed
            break;
        }
        RuleKind kind = rule_kind(rule);
        if (kind == kKindEnd) {
            if (kLog && log.walk != nullptr) log.rule_of(w.ip);
            break;
        }
        if (kind != kKindStep) return false;
        uint64_t cfa = (rule_cfa_from_bp(rule) ? w.bp : w.sp) + static_cast<int64_t>(rule_cfa_off(rule));
        if (bad_cfa(cfa, w.sp)) return false;
        const uint64_t ra_at = cfa + static_cast<int64_t>(rule_ra_off(rule));
        const uint64_t bp_at = cfa + static_cast<int64_t>(rule_bp_off(rule));
        uint64_t ra = load_word(ra_at);
        if (rule_bp_saved(rule)) w.bp = load_word(bp_at);
        if (kLog && log.walk != nullptr)
            log.step(w.ip, rule_cfa_from_bp(rule), ra_at, ra, rule_bp_saved(rule), bp_at, w.bp);
        w.sp = cfa;
        w.ip = ra;
        if (!record(w, out)) {
            ++w.steps;
            break;
        }
    }
    *depth_out = w.depth;
    return true;
}

uint32_t walk_unwinder(unw_context_t &context, uintptr_t *out, uint32_t max_depth) {
    unw_cursor_t cursor;
    if (unw_init_local(&cursor, &context) != 0) return 0;
    uint32_t depth = 0;
    bool leading = true;
    for (int steps = 0; depth < max_depth && steps < kMaxSteps && unw_step(&cursor) > 0; ++steps) {
        unw_word_t ip = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
        if (leading && address_in_self(ip)) continue;
        leading = false;
        out[depth++] = static_cast<uintptr_t>(ip);
    }
    return depth;
}

// Walks again from the same registers, writing the walk down, and stores it when it gives the same
// frames (it does: nothing on the stack above this frame has changed since the first walk).
void record_walk(const StartFrame &start, walks::LaneWalks &recent, const uintptr_t *frames, uint32_t depth,
                 uint32_t max_depth) {
    walks::Walk &w = recent.start_walk(start.ip, start.sp, start.bp, max_depth);
    StepLog log{&w};
    uintptr_t again[walks::kMaxDepth];
    uint32_t depth_again = 0;
    if (!walk_cached<true>(start, again, max_depth, &depth_again, log) || log.walk == nullptr ||
        depth_again != depth || std::memcmp(again, frames, depth * sizeof(uintptr_t)) != 0)
        return;
    std::memcpy(w.frame, frames, depth * sizeof(uintptr_t));
    w.depth = depth;
    recent.store();
}

__attribute__((noinline)) uint32_t unwinder_from_here(uintptr_t *out, uint32_t max_depth) {
    unw_context_t context;
    if (unw_getcontext(&context) != 0) return 0;
    return walk_unwinder(context, out, max_depth);
}

} // namespace

// noinline: the fallback's context is taken in a frame below `start`'s, which stays live meanwhile.
__attribute__((noinline)) uint32_t capture_stack_from(const StartFrame &start, uintptr_t *out, uint32_t max_depth,
                                                      StackMemo *memo) {
    if (max_depth == 0) return 0;
#if defined(__x86_64__)
    uint32_t depth = 0;
    walks::LaneWalks *recent =
        kRecentWalks && max_depth <= walks::kMaxDepth ? walks::LaneWalks::acquire() : nullptr;
    StackMemo none_wanted;
    StackMemo &m = memo != nullptr ? *memo : none_wanted;
    if (recent != nullptr &&
        recent->replay(start.ip, start.sp, start.bp, max_depth, out, &depth, m.owner, m.id_only, &m.walk, &m.id)) {
        recent->release();
        return depth;
    }
    StepLog none{nullptr};
    bool walked = walk_cached<false>(start, out, max_depth, &depth, none);
    if (recent != nullptr) {
        if (walked && recent->seen_before(start.sp, out, depth)) record_walk(start, *recent, out, depth, max_depth);
        recent->release();
    }
    if (walked) return depth;
    g_fallbacks.fetch_add(1, std::memory_order_relaxed);
#else
    (void)start;
    (void)memo;
#endif
    return unwinder_from_here(out, max_depth);
}

__attribute__((noinline)) uint32_t capture_stack(uintptr_t *out, uint32_t max_depth, StackMemo *memo) {
    return capture_stack_from(this_frame(), out, max_depth, memo);
}

uint32_t capture_stack(uintptr_t *out, uint32_t max_depth) { return capture_stack(out, max_depth, nullptr); }

void remember_stack_id(const StackMemo &memo, uint32_t id) {
    if (memo.walk.serial == 0 || memo.owner == 0 || id == 0) return;
    walks::LaneWalks *recent = walks::LaneWalks::acquire();
    if (recent == nullptr) return;
    recent->attach_id(memo.walk, memo.owner, id);
    recent->release();
}

__attribute__((noinline)) uint32_t capture_stack_unwinder(uintptr_t *out, uint32_t max_depth) {
    if (max_depth == 0) return 0;
    unw_context_t context;
    if (unw_getcontext(&context) != 0) return 0;
    return walk_unwinder(context, out, max_depth);
}

StackCaptureStats stack_capture_stats() {
    return {g_rules_derived.load(std::memory_order_relaxed), g_fallbacks.load(std::memory_order_relaxed)};
}

} // namespace vramtrace
