// The .eh_frame reader behind the capture's rule cache (unwind_rules.h): only what a rule of the
// common shape needs; anything unexpected gives kKindUnsupported, and the capture then takes
// libunwind's own walk for that frame.
#include "tracking/unwind_rules.h"

#include <cstring>

namespace vramtrace::unwind {
namespace {

constexpr unsigned kRegRbp = 6, kRegRsp = 7, kRegRip = 16; // DWARF numbers on x86-64
constexpr unsigned kLastReg = 16;

struct Reader {
    const uint8_t *p;
    const uint8_t *end;
    bool ok = true;

    bool need(size_t n) {
        if (!ok || static_cast<size_t>(end - p) < n) ok = false;
        return ok;
    }
    template <class T> T fixed() {
        T v{};
        if (!need(sizeof v)) return v;
        std::memcpy(&v, p, sizeof v);
        p += sizeof v;
        return v;
    }
    // The bits of a LEB128 number; *width: how many it has (7 a byte), 0 when it is malformed.
    uint64_t leb128(unsigned *width) {
        uint64_t v = 0;
        for (unsigned shift = 0;; shift += 7) {
            if (!need(1) || shift >= 64) return ok = false, 0;
            uint8_t b = *p++;
            v |= static_cast<uint64_t>(b & 0x7f) << shift;
            if (!(b & 0x80)) return *width = shift + 7, v;
        }
    }
    uint64_t uleb() {
        unsigned width = 0;
        return leb128(&width);
    }
    int64_t sleb() {
        unsigned width = 0;
        uint64_t v = leb128(&width);
        // The top bit of the last byte's seven is the sign.
        if (width != 0 && width < 64 && ((v >> (width - 1)) & 1)) v |= ~uint64_t{0} << width;
        return static_cast<int64_t>(v);
    }
    void skip(uint64_t n) {
        if (need(n)) p += n;
    }
    // Skips a pointer in DW_EH_PE encoding `enc` (only its size matters here).
    void skip_encoded(uint8_t enc) {
        if (enc == 0xff) return; // DW_EH_PE_omit
        switch (enc & 0x0f) {
        case 0x00: case 0x04: case 0x0c: skip(8); break; // absptr, udata8, sdata8
        case 0x02: case 0x0a: skip(2); break;            // udata2, sdata2
        case 0x03: case 0x0b: skip(4); break;            // udata4, sdata4
        case 0x01: uleb(); break;
        case 0x09: sleb(); break;
        default: ok = false;
        }
        if ((enc & 0x70) == 0x50) ok = false; // DW_EH_PE_aligned
    }
};

enum How : uint8_t { kUnused, kAtCfaOffset, kUndefined, kOther };
struct RegRule {
    How how = kUnused;
    int64_t off = 0;
};
struct CfaState {
    uint64_t cfa_reg = 0;
    int64_t cfa_off = 0;
    bool cfa_expression = false;
    RegRule reg[kLastReg + 1];
};

struct Cie {
    uint64_t code_align = 1;
    int64_t data_align = 1;
    uint64_t ra_reg = kRegRip;
    uint8_t fde_encoding = 0;
    bool has_z = false;
    const uint8_t *insns = nullptr;
    const uint8_t *end = nullptr;
};

// Reads a length-prefixed record at p; returns its contents' end (nullptr when malformed) and moves
// p past the length field.
const uint8_t *record_end(const uint8_t *&p) {
    uint32_t len32;
    std::memcpy(&len32, p, 4);
    p += 4;
    if (len32 == 0) return nullptr;
    if (len32 == 0xffffffffu) return nullptr; // 64-bit DWARF: not produced for .eh_frame on x86-64
    return p + len32;
}

bool parse_cie(const uint8_t *start, Cie &cie) {
    const uint8_t *p = start;
    const uint8_t *end = record_end(p);
    if (end == nullptr) return false;
    Reader r{p, end};
    if (r.fixed<uint32_t>() != 0) return false; // CIE id in .eh_frame
    uint8_t version = r.fixed<uint8_t>();
    if (!r.ok || (version != 1 && version != 3)) return false;
    const char *aug = reinterpret_cast<const char *>(r.p);
    size_t aug_len = strnlen(aug, static_cast<size_t>(end - r.p));
    r.skip(aug_len + 1);
    if (!r.ok) return false;
    if (aug_len > 0 && aug[0] != 'z') return false; // "eh" and other old forms
    cie.code_align = r.uleb();
    cie.data_align = r.sleb();
    cie.ra_reg = version == 1 ? r.fixed<uint8_t>() : r.uleb();
    if (!r.ok) return false;
    if (aug_len > 0) {
        cie.has_z = true;
        uint64_t aug_data_len = r.uleb();
        if (!r.need(aug_data_len)) return false;
        Reader a{r.p, r.p + aug_data_len};
        for (size_t i = 1; i < aug_len; ++i) {
            switch (aug[i]) {
            case 'L': a.fixed<uint8_t>(); break;
            case 'R': cie.fde_encoding = a.fixed<uint8_t>(); break;
            case 'P': a.skip_encoded(a.fixed<uint8_t>()); break;
            default: return false; // 'S' (signal frame) and anything newer
            }
        }
        if (!a.ok) return false;
        r.p += aug_data_len;
    }
    cie.insns = r.p;
    cie.end = end;
    return true;
}

// Runs CFA instructions [p, end) while the location stays below `pc_offset`, as libunwind does.
bool run_cfa(const uint8_t *p, const uint8_t *end, const Cie &cie, uint64_t pc_offset, CfaState &st,
             const CfaState &initial) {
    Reader r{p, end};
    uint64_t loc = 0;
    CfaState saved[16];
    unsigned saved_count = 0;
    auto set = [&](uint64_t reg, How how, int64_t off) {
        if (reg > kLastReg) return false;
        st.reg[reg] = {how, off};
        return true;
    };
    while (r.ok && r.p < r.end && loc < pc_offset) {
        uint8_t op = r.fixed<uint8_t>();
        uint8_t low = op & 0x3f;
        switch (op >> 6) {
        case 1: loc += low * cie.code_align; continue;                                   // advance_loc
        case 2: if (!set(low, kAtCfaOffset, static_cast<int64_t>(r.uleb()) * cie.data_align)) return false; continue; // offset
        case 3: if (low > kLastReg) return false; st.reg[low] = initial.reg[low]; continue; // restore
        default: break;
        }
        switch (op) {
        case 0x00: break;                                                // nop
        case 0x02: loc += r.fixed<uint8_t>() * cie.code_align; break;    // advance_loc1
        case 0x03: loc += r.fixed<uint16_t>() * cie.code_align; break;   // advance_loc2
        case 0x04: loc += r.fixed<uint32_t>() * cie.code_align; break;   // advance_loc4
        case 0x05: {                                                     // offset_extended
            uint64_t reg = r.uleb();
            if (!set(reg, kAtCfaOffset, static_cast<int64_t>(r.uleb()) * cie.data_align)) return false;
            break;
        }
        case 0x06: {                                                     // restore_extended
            uint64_t reg = r.uleb();
            if (reg > kLastReg) return false;
            st.reg[reg] = initial.reg[reg];
            break;
        }
        case 0x07: if (!set(r.uleb(), kUndefined, 0)) return false; break; // undefined
        case 0x08: if (!set(r.uleb(), kUnused, 0)) return false; break;    // same_value
        case 0x09: {                                                     // register
            uint64_t reg = r.uleb();
            r.uleb();
            if (!set(reg, kOther, 0)) return false;
            break;
        }
        case 0x0a:                                                       // remember_state
            if (saved_count == 16) return false;
            saved[saved_count++] = st;
            break;
        case 0x0b: {                                                     // restore_state
            if (saved_count == 0) return false;
            // The CFA is part of the remembered state too (libunwind restores all of it).
            st = saved[--saved_count];
            break;
        }
        case 0x0c: st.cfa_reg = r.uleb(); st.cfa_off = static_cast<int64_t>(r.uleb()); st.cfa_expression = false; break; // def_cfa
        case 0x0d: st.cfa_reg = r.uleb(); st.cfa_expression = false; break;                         // def_cfa_register
        case 0x0e: st.cfa_off = static_cast<int64_t>(r.uleb()); break;                               // def_cfa_offset
        case 0x0f: r.skip(r.uleb()); st.cfa_expression = true; break;                                // def_cfa_expression
        case 0x10: {                                                     // expression
            uint64_t reg = r.uleb();
            r.skip(r.uleb());
            if (!set(reg, kOther, 0)) return false;
            break;
        }
        case 0x11: {                                                     // offset_extended_sf
            uint64_t reg = r.uleb();
            if (!set(reg, kAtCfaOffset, r.sleb() * cie.data_align)) return false;
            break;
        }
        case 0x12:                                                       // def_cfa_sf
            st.cfa_reg = r.uleb();
            st.cfa_off = r.sleb() * cie.data_align;
            st.cfa_expression = false;
            break;
        case 0x13: st.cfa_off = r.sleb() * cie.data_align; break;        // def_cfa_offset_sf
        case 0x14: case 0x15: {                                          // val_offset(_sf)
            uint64_t reg = r.uleb();
            if (op == 0x14) r.uleb(); else r.sleb();
            if (!set(reg, kOther, 0)) return false;
            break;
        }
        case 0x16: {                                                     // val_expression
            uint64_t reg = r.uleb();
            r.skip(r.uleb());
            if (!set(reg, kOther, 0)) return false;
            break;
        }
        case 0x2e: r.uleb(); break;                                      // GNU_args_size
        default: return false; // set_loc, GNU_window_save, GNU_negative_offset_extended, unknown
        }
    }
    return r.ok;
}

} // namespace

uint64_t pack(const Rule &r) {
    if (r.kind != kKindStep) return static_cast<uint64_t>(r.kind) << 60;
    if (r.ra_off < -128 || r.ra_off > 127 || r.bp_off < -32768 || r.bp_off > 32767)
        return static_cast<uint64_t>(kKindUnsupported) << 60;
    return static_cast<uint64_t>(static_cast<uint32_t>(r.cfa_off)) |
           static_cast<uint64_t>(static_cast<uint16_t>(static_cast<int16_t>(r.bp_off))) << 32 |
           static_cast<uint64_t>(static_cast<uint8_t>(static_cast<int8_t>(r.ra_off))) << 48 |
           static_cast<uint64_t>(r.cfa_from_bp) << 56 | static_cast<uint64_t>(r.bp_saved) << 57 |
           static_cast<uint64_t>(kKindStep) << 60;
}

uint64_t rule_from_fde(const uint8_t *fde, uint64_t start_ip, uint64_t ip) {
    Rule rule; // kKindUnsupported until proven otherwise
    const uint8_t *p = fde;
    const uint8_t *fde_end = record_end(p);
    if (fde_end == nullptr) return pack(rule);
    uint32_t cie_delta;
    std::memcpy(&cie_delta, p, 4);
    if (cie_delta == 0) return pack(rule); // a CIE, not an FDE
    const uint8_t *cie_start = p - cie_delta;
    p += 4;
    Cie cie;
    if (!parse_cie(cie_start, cie) || cie.ra_reg != kRegRip) return pack(rule);
    Reader r{p, fde_end};
    r.skip_encoded(cie.fde_encoding);           // pc_begin (libunwind decoded it: start_ip)
    r.skip_encoded(cie.fde_encoding & 0x0f);    // pc_range
    if (cie.has_z) r.skip(r.uleb());            // augmentation data
    if (!r.ok || ip - 1 < start_ip) return pack(rule);
    uint64_t pc_offset = ip - 1 - start_ip;

    CfaState initial;
    if (!run_cfa(cie.insns, cie.end, cie, pc_offset, initial, initial)) return pack(rule);
    CfaState st = initial;
    if (!run_cfa(r.p, fde_end, cie, pc_offset, st, initial)) return pack(rule);

    const RegRule &ra = st.reg[kRegRip];
    if (ra.how == kUndefined) {
        rule.kind = kKindEnd;
        return pack(rule);
    }
    if (st.cfa_expression || (st.cfa_reg != kRegRsp && st.cfa_reg != kRegRbp)) return pack(rule);
    if (st.cfa_off < 0 || st.cfa_off > (1 << 30)) return pack(rule);
    if (st.reg[kRegRsp].how != kUnused || ra.how != kAtCfaOffset) return pack(rule);
    const RegRule &bp = st.reg[kRegRbp];
    if (bp.how != kUnused && bp.how != kAtCfaOffset) return pack(rule);
    rule.kind = kKindStep;
    rule.cfa_from_bp = st.cfa_reg == kRegRbp;
    rule.cfa_off = static_cast<int32_t>(st.cfa_off);
    rule.ra_off = static_cast<int32_t>(ra.off);
    rule.bp_saved = bp.how == kAtCfaOffset;
    rule.bp_off = static_cast<int32_t>(bp.off);
    return pack(rule);
}

} // namespace vramtrace::unwind
