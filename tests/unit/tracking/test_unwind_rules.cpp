// The capture's unwind rules from hand-made .eh_frame records (a CIE and the FDE after it, as the
// compiler lays them out), for the prologue a frame-pointer function starts with, after 8 bytes of
// other code (where a call can return to, CFA = rsp + 8):
//   +8  push %rbp          then CFA = rsp + 16, caller's rbp at CFA - 16
//   +9  mov  %rsp, %rbp    then CFA = rbp + 16
// A return address's row is the one in force at ip - 1, the call's last byte: never the first
// byte of a row.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "tracking/unwind_rules.h"

using namespace vramtrace::unwind;

namespace {

void put32(std::vector<uint8_t> &v, size_t at, uint32_t x) { std::memcpy(v.data() + at, &x, 4); }

// A CIE ("zR", code alignment 1, data alignment -8, return address register 16, FDE pointers
// pc-relative sdata4, initial rules CFA = rsp + 8 and return address at CFA - 8) followed by an
// FDE whose instructions are `fde_insns`. Returns the buffer; *fde_at is where the FDE starts.
std::vector<uint8_t> eh_frame(const std::vector<uint8_t> &fde_insns, size_t *fde_at) {
    std::vector<uint8_t> v;
    // CIE
    std::vector<uint8_t> cie = {0, 0, 0, 0, // CIE id
                                1,          // version
                                'z', 'R', 0, 1, 0x78 /* sleb -8 */, 16, 1 /* aug length */, 0x1b,
                                0x0c, 7, 8, // DW_CFA_def_cfa rsp, 8
                                0x90, 1,    // DW_CFA_offset r16 (rip), 1 * -8
                                0, 0, 0};   // padding (DW_CFA_nop)
    v.resize(4);
    put32(v, 0, static_cast<uint32_t>(cie.size()));
    v.insert(v.end(), cie.begin(), cie.end());
    *fde_at = v.size();
    std::vector<uint8_t> fde(4 + 4 + 4 + 1); // CIE pointer, pc_begin, pc_range, aug length 0
    fde.insert(fde.end(), fde_insns.begin(), fde_insns.end());
    while ((fde.size() + 4) % 4) fde.push_back(0);
    size_t cie_pointer_at = *fde_at + 4;
    v.resize(*fde_at + 4);
    put32(v, *fde_at, static_cast<uint32_t>(fde.size()));
    v.insert(v.end(), fde.begin(), fde.end());
    put32(v, cie_pointer_at, static_cast<uint32_t>(cie_pointer_at)); // back to the CIE at 0
    put32(v, cie_pointer_at + 8, 64);                                // pc_range
    return v;
}

const std::vector<uint8_t> kPrologue = {
    0x49,       // DW_CFA_advance_loc 9 (past the push at +8)
    0x0e, 16,   // DW_CFA_def_cfa_offset 16
    0x86, 2,    // DW_CFA_offset r6 (rbp), 2 * -8
    0x43,       // DW_CFA_advance_loc 3 (past the mov at +9)
    0x0d, 6,    // DW_CFA_def_cfa_register rbp
};

constexpr uint64_t kStart = 0x400000;

} // namespace

TEST_CASE("unwind rules: a frame-pointer prologue, row by row") {
    size_t at = 0;
    std::vector<uint8_t> buf = eh_frame(kPrologue, &at);
    // A return address points after the call: the row of ip - 1 applies.
    uint64_t entry = rule_from_fde(buf.data() + at, kStart, kStart + 6);
    REQUIRE(rule_kind(entry) == kKindStep);
    CHECK_FALSE(rule_cfa_from_bp(entry));
    CHECK(rule_cfa_off(entry) == 8);
    CHECK(rule_ra_off(entry) == -8);
    CHECK_FALSE(rule_bp_saved(entry));

    uint64_t pushed = rule_from_fde(buf.data() + at, kStart, kStart + 12);
    REQUIRE(rule_kind(pushed) == kKindStep);
    CHECK_FALSE(rule_cfa_from_bp(pushed));
    CHECK(rule_cfa_off(pushed) == 16);
    CHECK(rule_bp_saved(pushed));
    CHECK(rule_bp_off(pushed) == -16);

    uint64_t body = rule_from_fde(buf.data() + at, kStart, kStart + 20);
    REQUIRE(rule_kind(body) == kKindStep);
    CHECK(rule_cfa_from_bp(body));
    CHECK(rule_cfa_off(body) == 16);
    CHECK(rule_ra_off(body) == -8);
    CHECK(rule_bp_off(body) == -16);
}

TEST_CASE("unwind rules: an undefined return address ends the walk, other shapes are left to libunwind") {
    size_t at = 0;
    std::vector<uint8_t> end = eh_frame({0x07, 16 /* DW_CFA_undefined rip */}, &at);
    CHECK(rule_kind(rule_from_fde(end.data() + at, kStart, kStart + 5)) == kKindEnd);

    std::vector<uint8_t> expr = eh_frame({0x0f, 2, 0x77, 8 /* DW_CFA_def_cfa_expression */}, &at);
    CHECK(rule_kind(rule_from_fde(expr.data() + at, kStart, kStart + 5)) == kKindUnsupported);

    // A return address before the function's start, and an FDE with a zero length.
    std::vector<uint8_t> ok = eh_frame(kPrologue, &at);
    CHECK(rule_kind(rule_from_fde(ok.data() + at, kStart, kStart)) == kKindUnsupported);
    put32(ok, at, 0);
    CHECK(rule_kind(rule_from_fde(ok.data() + at, kStart, kStart + 5)) == kKindUnsupported);
}

TEST_CASE("unwind rules: offsets that do not fit the packed word are unsupported") {
    Rule r;
    r.kind = kKindStep;
    r.cfa_off = 16;
    r.ra_off = -8;
    r.bp_off = -40000; // more than 16 bits
    CHECK(rule_kind(pack(r)) == kKindUnsupported);
    r.bp_off = -24;
    r.bp_saved = true;
    uint64_t p = pack(r);
    CHECK(rule_kind(p) == kKindStep);
    CHECK(rule_bp_off(p) == -24);
    CHECK(rule_ra_off(p) == -8);
}
