// A minimal reader of the protocol-buffers wire format (developers.google.com/protocol-buffers
// /docs/encoding): varints, 32- and 64-bit fixed fields, length-delimited fields, and ZigZag for
// sint types. Enough to decode Chakra execution traces without libprotobuf or generated code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace orrery::chakra {

// Malformed input; `offset` is the byte offset (in the buffer the reader was given, plus the
// reader's base offset) where decoding failed.
class WireError : public std::runtime_error {
 public:
  WireError(const std::string& what, size_t offset)
      : std::runtime_error(what + " at byte " + std::to_string(offset)), offset_(offset) {}
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

enum WireType : int { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

class WireReader {
 public:
  // `base` is added to offsets in errors, so nested readers report file offsets.
  WireReader(std::string_view data, size_t base = 0) : data_(data), base_(base) {}

  bool at_end() const { return pos_ >= data_.size(); }
  size_t offset() const { return base_ + pos_; }

  // Reads the next field key; false at the end of the buffer. Groups (wire types 3, 4) and
  // unknown wire types are errors; field number 0 is an error.
  bool next(uint32_t* field, int* wire_type);

  uint64_t varint();
  uint32_t fixed32();
  uint64_t fixed64();
  // A length-delimited payload; `payload_offset` (if given) receives its absolute offset.
  std::string_view bytes(size_t* payload_offset = nullptr);
  // Skips a field's value of the given wire type.
  void skip(int wire_type);
  // Skips n raw bytes (a payload whose length was read separately).
  void skip_raw(size_t n);

 private:
  std::string_view data_;
  size_t base_;
  size_t pos_ = 0;
};

inline int64_t zigzag_decode(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

}  // namespace orrery::chakra
