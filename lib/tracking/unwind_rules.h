// Unwind rules of the capture's fast walk (stack_capture.cpp): what one frame's .eh_frame row says
// at a return address, when it has the shape almost every compiled x86-64 function has:
//   CFA (the caller's stack pointer)  = RSP or RBP of this frame + cfa_off
//   return address                    = load(CFA + ra_off)
//   caller's RBP                      = this frame's RBP, or load(CFA + bp_off)
// packed into 64 bits so that a cache slot is four words, and derived from the FDE that covers the
// return address. Pure functions over bytes: no libunwind, no allocation; unit-tested with
// hand-made CIE/FDE records (tests/unit/tracking/test_unwind_rules.cpp).
#pragma once

#include <cstdint>

namespace vramtrace::unwind {

enum RuleKind : uint64_t {
    kKindEmpty = 0,       // never stored: an empty slot
    kKindStep = 1,        // a rule of the shape above
    kKindEnd = 2,         // the return address is undefined: the outermost frame (_start, clone)
    kKindUnsupported = 3, // anything else: the capture takes libunwind's own walk
};
constexpr uint64_t kNoFde = ~0ull; // no unwind information (never cached)

struct Rule {
    RuleKind kind = kKindUnsupported;
    bool cfa_from_bp = false;
    bool bp_saved = false;
    int32_t cfa_off = 0;
    int32_t ra_off = 0;
    int32_t bp_off = 0;
};

// The rule packed into one word (kKindUnsupported when an offset does not fit).
uint64_t pack(const Rule &r);

inline RuleKind rule_kind(uint64_t p) { return static_cast<RuleKind>(p >> 60); }
inline int32_t rule_cfa_off(uint64_t p) { return static_cast<int32_t>(static_cast<uint32_t>(p)); }
inline int32_t rule_bp_off(uint64_t p) { return static_cast<int16_t>(static_cast<uint16_t>(p >> 32)); }
inline int32_t rule_ra_off(uint64_t p) { return static_cast<int8_t>(static_cast<uint8_t>(p >> 48)); }
inline bool rule_cfa_from_bp(uint64_t p) { return (p >> 56) & 1; }
inline bool rule_bp_saved(uint64_t p) { return (p >> 57) & 1; }

inline uint64_t unsupported_rule() { return static_cast<uint64_t>(kKindUnsupported) << 60; }

// The rule at return address `ip` from the FDE at `fde` (its length field first; the CIE it names
// lies before it, as in .eh_frame) of the function starting at `start_ip`: the row in force at
// ip - 1, as libunwind's own step reads it. kKindUnsupported (packed) for anything else than the
// common shape; kKindEnd when the return address is undefined there.
uint64_t rule_from_fde(const uint8_t *fde, uint64_t start_ip, uint64_t ip);

} // namespace vramtrace::unwind
