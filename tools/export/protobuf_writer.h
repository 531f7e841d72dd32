// The protobuf wire format, encoding side only: varints, and length-delimited fields built in a
// nested writer. Enough for profile.proto (pprof). Fields are written in the order called, so the
// output is byte-stable.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vramtrace::exporter {

class ProtoWriter {
public:
    void varint_field(uint32_t field, uint64_t value) {
        tag(field, 0);
        varint(value);
    }
    // int64 fields: negative values as 10-byte two's complement varints (proto3 int64).
    void int64_field(uint32_t field, int64_t value) { varint_field(field, uint64_t(value)); }
    void bytes_field(uint32_t field, std::string_view bytes) {
        tag(field, 2);
        varint(bytes.size());
        out_.append(bytes);
    }
    void message_field(uint32_t field, const ProtoWriter &message) { bytes_field(field, message.out_); }
    // A packed repeated varint field (skipped when empty, as proto3 does).
    void packed_field(uint32_t field, const std::vector<uint64_t> &values) {
        if (values.empty()) return;
        ProtoWriter packed;
        for (uint64_t v : values) packed.varint(v);
        bytes_field(field, packed.out_);
    }
    const std::string &bytes() const { return out_; }

private:
    void tag(uint32_t field, uint32_t wire_type) { varint((uint64_t(field) << 3) | wire_type); }
    void varint(uint64_t value) {
        while (value >= 0x80) {
            out_ += char((value & 0x7f) | 0x80);
            value >>= 7;
        }
        out_ += char(value);
    }
    std::string out_;
};

} // namespace vramtrace::exporter
