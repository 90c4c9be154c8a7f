#include "workloads/chakra/protobuf_wire.h"

namespace orrery::chakra {

uint64_t WireReader::varint() {
  uint64_t v = 0;
  const size_t start = pos_;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos_ >= data_.size()) throw WireError("truncated varint", base_ + start);
    const uint8_t byte = static_cast<uint8_t>(data_[pos_++]);
    if (shift == 63 && (byte & 0x7e)) throw WireError("varint overflows 64 bits", base_ + start);
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return v;
  }
  throw WireError("varint longer than 10 bytes", base_ + start);
}

uint32_t WireReader::fixed32() {
  if (data_.size() - pos_ < 4) throw WireError("truncated fixed32", offset());
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
  pos_ += 4;
  return v;
}

uint64_t WireReader::fixed64() {
  if (data_.size() - pos_ < 8) throw WireError("truncated fixed64", offset());
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
  pos_ += 8;
  return v;
}

std::string_view WireReader::bytes(size_t* payload_offset) {
  const size_t start = offset();
  const uint64_t n = varint();
  if (n > data_.size() - pos_) {
    throw WireError("length-delimited field declares " + std::to_string(n) + " bytes but only " +
                        std::to_string(data_.size() - pos_) + " remain",
                    start);
  }
  if (payload_offset) *payload_offset = offset();
  std::string_view v = data_.substr(pos_, n);
  pos_ += n;
  return v;
}

bool WireReader::next(uint32_t* field, int* wire_type) {
  if (at_end()) return false;
  const size_t start = offset();
  const uint64_t key = varint();
  *wire_type = static_cast<int>(key & 7);
  const uint64_t number = key >> 3;
  if (number == 0 || number > 0x1fffffff) throw WireError("invalid field number", start);
  if (*wire_type != kVarint && *wire_type != kFixed64 && *wire_type != kLengthDelimited &&
      *wire_type != kFixed32) {
    throw WireError("unsupported wire type " + std::to_string(*wire_type) + " (field " +
                        std::to_string(number) + ")",
                    start);
  }
  *field = static_cast<uint32_t>(number);
  return true;
}

void WireReader::skip_raw(size_t n) {
  if (n > data_.size() - pos_) throw WireError("skip past the end", offset());
  pos_ += n;
}

void WireReader::skip(int wire_type) {
  switch (wire_type) {
    case kVarint:
      varint();
      break;
    case kFixed64:
      fixed64();
      break;
    case kLengthDelimited:
      bytes();
      break;
    case kFixed32:
      fixed32();
      break;
    default:
      throw WireError("cannot skip wire type " + std::to_string(wire_type), offset());
  }
}

}  // namespace orrery::chakra
