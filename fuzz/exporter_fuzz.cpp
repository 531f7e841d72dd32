// libFuzzer targets over the exporters (tools/export/), one per format: the input bytes build a
// snapshot::Snapshot directly (no JSON), with what a file could never carry past the reader as well:
// stacks 8 000 frames deep, frames with 8 000 inlined functions, device ordinals
// anywhere in int's range, names full of control characters, marks, OOMs, peaks. Each snapshot is
// exported at the dump and at the peak, for all devices and for one; every output is checked:
//
//   html    valid UTF-8, no raw control character but the page's line feeds; exactly the page's
//           two scripts (the data, the viewer); the data parses as JSON whose strings hold no '<'
//           raw; the compare page of the snapshot against itself passes the same checks
//   folded  one "frames bytes" line per stack, no control character
//   pickle  the restricted unpickler below: only the writer's whitelisted opcodes, every length
//           inside the file, every string valid UTF-8, a consistent stack and memo, STOP last,
//           and a result that is one dict (what tests/cli/restricted_unpickle.py accepts)
//   chrome  parses as JSON
//   pprof   a gzip stream
//
// The snapshots keep the reader's cross references (check_snapshot_references): exporters may
// rely on them. Built per format by fuzz/run_fuzz.sh (VT_FUZZ_EXPORTER), replayed in CTest by
// fuzz_replay_main.cpp. Kept free of <ranges> (clang-14 cannot compile libstdc++ 12's).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "export/export.h"
#include "report/text_safety.h"

#ifndef VT_FUZZ_EXPORTER
#error "VT_FUZZ_EXPORTER: 0 chrome, 1 folded, 2 pprof, 3 pickle, 4 html"
#endif

namespace {

using namespace vramtrace;

// Takes values from the input; zeros once it is used up.
class Bytes {
public:
    Bytes(const uint8_t *data, size_t size) : p_(data), end_(data + size) {}
    uint8_t u8() { return p_ < end_ ? *p_++ : 0; }
    uint32_t u32() { return uint32_t(u8()) | uint32_t(u8()) << 8 | uint32_t(u8()) << 16 | uint32_t(u8()) << 24; }
    uint64_t u64() { return uint64_t(u32()) | uint64_t(u32()) << 32; }
    // A string of up to max bytes: printable, control characters, UTF-8 sequences (the reader
    // delivers valid UTF-8 only, so that is what the snapshot holds).
    std::string str(size_t max) {
        size_t n = u8() % (max + 1);
        std::string s;
        for (size_t i = 0; i < n && p_ < end_; ++i) {
            uint8_t b = u8();
            switch (b % 8) {
            case 0: s += char(b >> 3); break;                          // a control character
            case 1: s += "\xc3\xa9"; break;                            // é
            case 2: s += "\xe2\x82\xac"; break;                        // €
            case 3: s += "\xc2\x85"; break;                            // a C1 control
            case 4: s += "\\\"<>&;'%"[b % 8]; break;                   // what formats escape
            default: s += char('a' + b % 26);
            }
        }
        return s;
    }
    int device() {
        static const int kOrdinals[] = {0, 1, -1, -2, 7, 1023, 1024, 100000000, 2147483647, -2147483647 - 1};
        uint8_t b = u8();
        return b < 200 ? kOrdinals[b % 10] : int(u32());
    }
    bool done() const { return p_ >= end_; }

private:
    const uint8_t *p_, *end_;
};

snapshot::Snapshot build(Bytes &in) {
    snapshot::Snapshot s;
    s.process.pid = int64_t(in.u32());
    s.process.host = in.str(16);
    s.process.command_line = {in.str(24), in.str(24)};
    s.process.reason = in.u8() & 1 ? "exit" : "peak";
    s.process.dump_time_ns = in.u64();
    s.process.dump_monotonic_ns = in.u64() >> (in.u8() % 64);
    size_t modules = in.u8() % 4;
    for (size_t i = 0; i < modules; ++i) s.modules.push_back({in.str(32), in.u64(), in.str(8)});
    // At most one big dimension per input, and rarely (the fuzzer finds the two selector values
    // through its comparison tracing), so that most runs stay fast: 1 stacks up to 8 160 frames
    // deep (beyond the ~7 600 levels at which a recursive graph drawing exhausts an 8 MiB stack),
    // 2 the first frame with up to 8 160 inlined
    // functions (in stacks of at most 4 frames).
    const uint8_t selector = in.u8();
    const int big = selector == 0xff ? 1 : selector == 0xfe ? 2 : 0;
    size_t frames = 1 + in.u8() % 32;
    for (size_t i = 0; i < frames; ++i) {
        snapshot::Frame f;
        f.address = in.u64();
        f.module = modules ? int(in.u8() % (modules + 1)) - 1 : -1;
        f.module_offset = in.u64();
        f.function = in.str(48);
        f.file = in.str(32);
        f.line = in.u32() % 100000;
        f.python = (in.u8() & 7) == 0;
        uint8_t inl = in.u8();
        size_t inlined = big == 2 && i == 0 ? size_t(inl) * 32 : inl % 4;
        for (size_t k = 0; k < inlined; ++k) f.inlined.push_back({"inl" + std::to_string(k), f.file, uint32_t(k)});
        s.frames.push_back(std::move(f));
    }
    size_t stacks = in.u8() % 6;
    for (size_t i = 0; i < stacks; ++i) {
        snapshot::Stack st;
        st.id = uint32_t(i + 1);
        uint8_t d = in.u8();
        size_t depth = big == 1 ? size_t(d) * 32 : big == 2 ? d % 5 : d % 40;
        for (size_t k = 0; k < depth; ++k) st.frames.push_back(uint32_t((k * 7 + in.u8()) % frames));
        st.call_site = st.frames.empty() ? -1 : int(in.u8() % st.frames.size());
        s.stacks.push_back(std::move(st));
    }
    auto stack_id = [&] { return stacks ? uint32_t(in.u8() % (stacks + 1)) : 0u; };
    static const char *const kKinds[] = {"device", "managed", "host_pinned", "ipc_import", "vmm_mapping"};
    std::vector<int> devices;
    size_t allocations = in.u8() % 24;
    for (size_t i = 0; i < allocations; ++i) {
        snapshot::Allocation a;
        a.address = in.u64();
        a.size = in.u8() & 1 ? in.u64() : in.u32();
        a.kind = kKinds[in.u8() % 5];
        a.device = in.device();
        a.api = in.str(12);
        a.stream = in.u64();
        a.thread_id = in.u32();
        a.time_ns = in.u64() >> (in.u8() % 64);
        a.stack = stack_id();
        devices.push_back(a.device);
        s.allocations.push_back(std::move(a));
    }
    size_t events = in.u8() % 48;
    static const char *const kTypes[] = {"alloc", "free", "mark", "oom"};
    for (size_t i = 0; i < events; ++i) {
        snapshot::Event e;
        e.type = kTypes[in.u8() % 4];
        e.time_ns = in.u64() >> (in.u8() % 64);
        e.device = e.type == "mark" ? -2 : in.device();
        e.address = in.u64();
        e.size = in.u32();
        e.kind = kKinds[in.u8() % 3];
        e.api = in.str(8);
        e.stack = stack_id();
        e.label = e.type == "mark" ? in.str(40) : "";
        s.events.events.push_back(std::move(e));
    }
    s.events.capacity = 65536;
    s.events.recorded = s.events.events.size() + (in.u8() & 1 ? in.u32() : 0);
    s.events.wrapped = s.events.recorded > s.events.events.size();
    size_t ooms = in.u8() % 6;
    for (size_t i = 0; i < ooms; ++i) {
        snapshot::OomEvent o;
        o.time_ns = in.u64() >> (in.u8() % 64);
        o.device = in.device();
        o.requested_bytes = in.u64();
        o.api = in.str(8);
        o.stack = stack_id();
        if (in.u8() & 1) o.device_free_bytes = in.u64();
        s.ooms.push_back(std::move(o));
    }
    for (int d : devices) {
        bool seen = false;
        for (const snapshot::DeviceTotals &t : s.devices) seen = seen || t.device == d;
        if (seen) continue;
        snapshot::DeviceTotals t;
        t.device = d;
        t.current_bytes = in.u32();
        t.peak_bytes = in.u64();
        s.devices.push_back(t);
        if (in.u8() & 1) {
            snapshot::DevicePeak p;
            p.device = d;
            p.peak_bytes = t.peak_bytes;
            p.time_ns = in.u64() >> (in.u8() % 64);
            size_t sites = in.u8() % 4;
            for (size_t k = 0; k < sites; ++k) p.sites.push_back({stack_id(), in.u32(), in.u8()});
            s.peaks.push_back(std::move(p));
        }
    }
    return s;
}

// ---- the restricted unpickler: walks the opcodes as pickle.load would, accepting only plain data.
[[noreturn]] void bad_pickle() { abort(); }

void check_pickle(const std::string &p) {
    enum Kind : uint8_t { Dict, List, Str, Num, Tuple, Bool, NoneV, Mark };
    std::vector<Kind> stack;
    std::vector<Kind> memo;
    size_t i = 0;
    auto need = [&](size_t n) {
        if (p.size() - i < n) bad_pickle();
    };
    auto le = [&](size_t n) {
        need(n);
        uint64_t v = 0;
        for (size_t k = 0; k < n; ++k) v |= uint64_t(uint8_t(p[i + k])) << (8 * k);
        i += n;
        return v;
    };
    auto pop_to_mark = [&]() {
        std::vector<Kind> items;
        for (;;) {
            if (stack.empty()) bad_pickle();
            Kind k = stack.back();
            stack.pop_back();
            if (k == Mark) break;
            items.push_back(k);
        }
        return items;
    };
    if (p.size() < 3 || uint8_t(p[0]) != 0x80 || p[1] != 4) bad_pickle();
    i = 2;
    for (;;) {
        need(1);
        uint8_t op = uint8_t(p[i++]);
        switch (op) {
        case '}': stack.push_back(Dict); break;
        case ']': stack.push_back(List); break;
        case '(': stack.push_back(Mark); break;
        case 'u': {
            std::vector<Kind> items = pop_to_mark();
            if (items.size() % 2 != 0 || stack.empty() || stack.back() != Dict) bad_pickle();
            for (size_t k = 1; k < items.size(); k += 2)
                if (items[k] != Str) bad_pickle(); // keys (pushed first, so odd positions reversed)
            break;
        }
        case 'e': {
            pop_to_mark();
            if (stack.empty() || stack.back() != List) bad_pickle();
            break;
        }
        case 'K': le(1), stack.push_back(Num); break;
        case 'M': le(2), stack.push_back(Num); break;
        case 'J': le(4), stack.push_back(Num); break;
        case 0x8a: {
            size_t n = size_t(le(1));
            if (n > 9) bad_pickle();
            need(n);
            i += n;
            stack.push_back(Num);
            break;
        }
        case 0x8c: case 'X': {
            size_t n = size_t(le(op == 'X' ? 4 : 1));
            need(n);
            if (!report::is_valid_utf8(std::string_view(p).substr(i, n))) bad_pickle();
            i += n;
            stack.push_back(Str);
            break;
        }
        case 0x86:
            if (stack.size() < 2 || stack.back() != Num || stack[stack.size() - 2] != Num) bad_pickle();
            stack.pop_back(), stack.back() = Tuple;
            break;
        case 0x88: case 0x89: stack.push_back(Bool); break;
        case 'N': stack.push_back(NoneV); break;
        case 0x94:
            if (stack.empty() || stack.back() == Mark) bad_pickle();
            memo.push_back(stack.back());
            break;
        case 'h': case 'j': {
            uint64_t index = le(op == 'h' ? 1 : 4);
            if (index >= memo.size()) bad_pickle();
            stack.push_back(memo[size_t(index)]);
            break;
        }
        case '.':
            if (i != p.size() || stack.size() != 1 || stack[0] != Dict) bad_pickle();
            return;
        default: bad_pickle(); // not whitelisted: GLOBAL, REDUCE, BUILD, FRAME, ...
        }
    }
}

size_t count_of(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// The interactive page: text checks, then the embedded data (tools/export/html/page_data.h).
void check_html(const std::string &out) {
    if (!report::is_valid_utf8(out)) abort();
    for (char c : out)
        if ((uint8_t(c) < 0x20 && c != '\n') || c == 0x7f) abort();
    // No string of the snapshot opens or closes an element: the page's own scripts only.
    if (count_of(out, "<script") != 2 || count_of(out, "</script") != 2) abort();
    static const std::string kOpen = "<script type=\"application/json\" id=\"vt-data\">";
    size_t begin = out.find(kOpen);
    if (begin == std::string::npos) abort();
    begin += kOpen.size();
    size_t end = out.find("</script>", begin);
    if (end == std::string::npos) abort();
    std::string_view data(out.data() + begin, end - begin);
    if (data.find('<') != std::string_view::npos) abort();
    nlohmann::json page = nlohmann::json::parse(data, nullptr, false);
    if (page.is_discarded() || !page.is_object() || !page["runs"].is_array() || page["runs"].empty()) abort();
    for (const auto &run : page["runs"]) {
        const auto &strings = run["strings"];
        if (!strings.is_array()) abort();
        // Every index into the tables is inside them.
        auto index_ok = [&](const nlohmann::json &v, size_t size) { return v.is_number_unsigned() && v.get<uint64_t>() < size; };
        for (const auto &f : run["frames"])
            if (!index_ok(f[0], strings.size()) || !index_ok(f[1], strings.size())) abort();
        for (const auto &st : run["stacks"]) {
            if (!index_ok(st[0], strings.size()) || !index_ok(st[4], strings.size()) || st[3].size() > 513) abort();
            for (const auto &f : st[3])
                if (!index_ok(f, run["frames"].size())) abort();
            // The call-site frame's place among the stack's frames, or -1.
            if (!st[5].is_number_integer() || st[5].get<int64_t>() < -1 || st[5].get<int64_t>() >= int64_t(st[3].size())) abort();
        }
        for (const auto &d : run["devices"]) {
            const auto &b = d["bands"];
            size_t n = b["t0"].size();
            for (const char *column : {"dur", "size", "stack", "api", "thread", "stream", "flags", "addr"})
                if (b[column].size() != n) abort();
            for (const auto &k : b["stack"])
                if (!index_ok(k, run["stacks"].size())) abort();
        }
    }
}

void check_output(exporter::Format format, const std::string &out) {
    switch (format) {
    case exporter::Format::Html: check_html(out); break;
    case exporter::Format::Folded:
        for (size_t start = 0; start < out.size();) {
            size_t end = out.find('\n', start);
            if (end == std::string::npos) abort(); // every line ends with '\n'
            size_t space = out.rfind(' ', end);
            if (space == std::string::npos || space < start || space + 1 == end) abort();
            for (size_t k = space + 1; k < end; ++k)
                if (out[k] < '0' || out[k] > '9') abort();
            for (size_t k = start; k < end; ++k)
                if (uint8_t(out[k]) < 0x20 || out[k] == 0x7f) abort();
            start = end + 1;
        }
        break;
    case exporter::Format::Pickle: check_pickle(out); break;
    case exporter::Format::Chrome:
        if (!nlohmann::json::accept(out)) abort();
        break;
    case exporter::Format::Pprof:
        if (out.size() < 2 || uint8_t(out[0]) != 0x1f || uint8_t(out[1]) != 0x8b) abort();
        break;
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Bytes in(data, size);
    uint8_t variants = in.u8();
    snapshot::Snapshot snapshot = build(in);
    const auto format = exporter::Format(VT_FUZZ_EXPORTER);
    for (int variant = 0; variant < 4; ++variant) {
        if (!(variants & (1 << variant)) && variant != 0) continue;
        exporter::Options options;
        if (format != exporter::Format::Chrome && format != exporter::Format::Pickle)
            options.at = variant & 1 ? exporter::At::Peak : exporter::At::Exit;
        if (variant & 2) options.device = snapshot.allocations.empty() ? 0 : snapshot.allocations[0].device;
        std::string out, error;
        std::vector<std::string> notes;
        if (!exporter::export_snapshot(snapshot, format, options, &out, &notes, &error)) {
            if (error.empty() || error.find('\n') != std::string::npos) abort();
            continue;
        }
        check_output(format, out);
        if (format == exporter::Format::Html && variant == 1)
            check_html(exporter::export_html_compare(snapshot, snapshot, options, &notes));
        for (const std::string &note : notes)
            if (note.empty() || note.find('\n') != std::string::npos) abort();
    }
    return 0;
}
