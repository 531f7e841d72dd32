#include "python/python_frame_table.h"

#include <cstring>

namespace vramtrace::python {
namespace {

// Entry layout, in words: word 0 = line | file_len << 32 | function_len << 48, then the bytes of
// the file name followed by the function name, zero-padded to a whole word.
constexpr uint32_t kHeaderWords = 1;

// A cut that does not split a UTF-8 sequence: back off over continuation bytes.
size_t utf8_cut(const char *s, size_t len, size_t max) {
    if (len <= max) return len;
    size_t n = max;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    return n;
}

} // namespace

uint32_t intern_frame(StackDepot &table, const char *file, size_t file_len, const char *function,
                      size_t function_len, uint32_t line) {
    file_len = utf8_cut(file, file_len, kMaxNameBytes);
    function_len = utf8_cut(function, function_len, kMaxNameBytes);
    static_assert(kHeaderWords + (2 * kMaxNameBytes + 7) / 8 <= StackDepot::kMaxDepth);
    uintptr_t words[StackDepot::kMaxDepth];
    size_t bytes = file_len + function_len;
    uint32_t count = kHeaderWords + static_cast<uint32_t>((bytes + 7) / 8);
    words[count - 1] = 0; // padding of the last word (also covers count == 1)
    words[0] = uint64_t{line} | uint64_t(file_len) << 32 | uint64_t(function_len) << 48;
    char *text = reinterpret_cast<char *>(words + kHeaderWords);
    if (file_len) memcpy(text, file, file_len);
    if (function_len) memcpy(text + file_len, function, function_len);
    return table.intern(words, count);
}

FrameEntryView entry_view(const StackDepot &table, uint32_t id) {
    FrameEntryView v;
    if (id == 0) return v;
    StackView s = table.get(id);
    if (s.depth < kHeaderWords) return v;
    uint64_t header = s.frames[0];
    v.line = static_cast<uint32_t>(header);
    v.file_len = (header >> 32) & 0xffff;
    v.function_len = (header >> 48) & 0xffff;
    if (kHeaderWords + (v.file_len + v.function_len + 7) / 8 != s.depth) return FrameEntryView{};
    v.file = reinterpret_cast<const char *>(s.frames + kHeaderWords);
    v.function = v.file + v.file_len;
    v.valid = true;
    return v;
}

bool decode_frame(const StackDepot &table, uint64_t value, std::string *file, std::string *function,
                  uint32_t *line) {
    if (!is_python_frame(value)) return false;
    FrameEntryView v = entry_view(table, python_frame_id(value));
    if (!v.valid) return false;
    file->assign(v.file, v.file_len);
    function->assign(v.function, v.function_len);
    *line = v.line;
    return true;
}

uint32_t merge_frames(const uintptr_t *native, uint32_t native_depth, const uintptr_t *python,
                      uint32_t python_depth, IsEvalFrame is_eval, const void *context, uintptr_t *out,
                      uint32_t capacity, const uint8_t *ends_group) {
    uint32_t n = 0;
    auto put = [&](uintptr_t f) {
        if (n < capacity) out[n++] = f;
    };
    uint32_t evals = 0;
    for (uint32_t i = 0; i < native_depth; ++i)
        if (is_eval(native[i], context)) ++evals;
    if (evals == 0) {
        for (uint32_t i = 0; i < native_depth; ++i) put(native[i]);
        for (uint32_t i = 0; i < python_depth; ++i) put(python[i]);
        return n;
    }
    uint32_t groups = 0;
    for (uint32_t i = 0; i < python_depth; ++i)
        if (ends_group == nullptr || ends_group[i] || i + 1 == python_depth) ++groups;
    // The last eval frame (from the innermost) that receives a group takes the rest.
    uint32_t last_matched = groups < evals ? groups : evals;
    uint32_t k = 0;    // eval frames seen so far
    uint32_t next = 0; // the next Python frame to place
    for (uint32_t i = 0; i < native_depth; ++i) {
        bool eval = is_eval(native[i], context);
        if (!eval || k >= last_matched) {
            if (eval) ++k;
            put(native[i]);
            continue;
        }
        if (k + 1 == last_matched) {
            while (next < python_depth) put(python[next++]);
        } else {
            while (next < python_depth) {
                bool end = ends_group == nullptr || ends_group[next];
                put(python[next++]);
                if (end) break;
            }
        }
        ++k;
    }
    return n;
}

uint32_t FrameCache::slot_of(const FrameKey &key) {
    uint64_t h = (key.code >> 4) * 0x9E3779B97F4A7C15ull ^ key.instr * 0xC2B2AE3D27D4EB4Full;
    return static_cast<uint32_t>(h >> 52) & (kSlots - 1);
}

bool FrameCache::find(const FrameKey &key, uint32_t epoch, uint32_t *id) const {
    const Slot &s = slots_[slot_of(key)];
    uint64_t before = s.seq.load(std::memory_order_acquire);
    if (before & 1) return false;
    uint64_t w[5];
    for (int i = 0; i < 5; ++i) w[i] = s.word[i].load(std::memory_order_relaxed);
    uint64_t ie = s.id_epoch.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s.seq.load(std::memory_order_relaxed) != before) return false;
    if (static_cast<uint32_t>(ie) == 0 || static_cast<uint32_t>(ie >> 32) != epoch) return false;
    if (w[0] != key.code || w[1] != key.instr || w[2] != key.file || w[3] != key.name || w[4] != key.meta)
        return false;
    *id = static_cast<uint32_t>(ie);
    return true;
}

void FrameCache::put(const FrameKey &key, uint32_t epoch, uint32_t id) {
    Slot &s = slots_[slot_of(key)];
    uint64_t seq = s.seq.load(std::memory_order_relaxed);
    if ((seq & 1) || !s.seq.compare_exchange_strong(seq, seq + 1, std::memory_order_relaxed)) return;
    std::atomic_thread_fence(std::memory_order_release);
    const uint64_t w[5] = {key.code, key.instr, key.file, key.name, key.meta};
    for (int i = 0; i < 5; ++i) s.word[i].store(w[i], std::memory_order_relaxed);
    s.id_epoch.store(uint64_t{id} | uint64_t{epoch} << 32, std::memory_order_relaxed);
    s.seq.store(seq + 2, std::memory_order_release);
}

} // namespace vramtrace::python
