#include "workloads/chakra/chakra_trace.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "common/input_file.h"
#include "common/errors.h"
#include "workloads/chakra/protobuf_wire.h"

namespace orrery::chakra {

const char* node_type_name(int type) {
  static const char* names[] = {"INVALID_NODE",   "METADATA_NODE",  "MEM_LOAD_NODE",
                                "MEM_STORE_NODE", "COMP_NODE",      "COMM_SEND_NODE",
                                "COMM_RECV_NODE", "COMM_COLL_NODE", "STORAGE_NODE",
                                "BATCH_NODE",     "CHECKPOINT_NODE"};
  return type >= 0 && type <= kCheckpointNode ? names[type] : nullptr;
}

const char* collective_name(int type) {
  static const char* names[] = {
      "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER", "SCATTER", "BROADCAST",
      "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};
  return type >= 0 && type <= kBarrier ? names[type] : nullptr;
}

namespace {

// Element types of the AttributeProto oneof, indexed by (scalar field number - 3) / 2.
enum class Elem {
  kDouble,
  kFloat,
  kInt32,
  kInt64,
  kUint32,
  kUint64,
  kSint32,
  kSint64,
  kFixed32,
  kFixed64,
  kSfixed32,
  kSfixed64,
  kBool,
  kString,
  kBytes
};
constexpr const char* kElemNames[] = {"double",   "float",    "int32",  "int64",   "uint32",
                                      "uint64",   "sint32",   "sint64", "fixed32", "fixed64",
                                      "sfixed32", "sfixed64", "bool",   "string",  "bytes"};

int elem_wire_type(Elem e) {
  switch (e) {
    case Elem::kDouble:
    case Elem::kFixed64:
    case Elem::kSfixed64:
      return kFixed64;
    case Elem::kFloat:
    case Elem::kFixed32:
    case Elem::kSfixed32:
      return kFixed32;
    case Elem::kString:
    case Elem::kBytes:
      return kLengthDelimited;
    default:
      return kVarint;
  }
}

Attr::Kind elem_kind(Elem e) {
  switch (e) {
    case Elem::kDouble:
    case Elem::kFloat:
      return Attr::Kind::kFloat;
    case Elem::kUint32:
    case Elem::kUint64:
    case Elem::kFixed32:
    case Elem::kFixed64:
      return Attr::Kind::kUnsigned;
    case Elem::kBool:
      return Attr::Kind::kBool;
    case Elem::kString:
      return Attr::Kind::kString;
    case Elem::kBytes:
      return Attr::Kind::kBytes;
    default:
      return Attr::Kind::kSigned;
  }
}

template <typename To, typename From>
To bit_cast(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To out;
  std::memcpy(&out, &v, sizeof out);
  return out;
}

void read_elem(WireReader& r, Elem e, Attr* a) {
  switch (e) {
    case Elem::kDouble:
      a->floats.push_back(bit_cast<double>(r.fixed64()));
      break;
    case Elem::kFloat:
      a->floats.push_back(bit_cast<float>(r.fixed32()));
      break;
    case Elem::kInt32:
      a->ints.push_back(static_cast<int32_t>(r.varint()));
      break;
    case Elem::kInt64:
      a->ints.push_back(static_cast<int64_t>(r.varint()));
      break;
    case Elem::kUint32:
      a->uints.push_back(static_cast<uint32_t>(r.varint()));
      break;
    case Elem::kUint64:
      a->uints.push_back(r.varint());
      break;
    case Elem::kSint32:
      a->ints.push_back(static_cast<int32_t>(zigzag_decode(r.varint())));
      break;
    case Elem::kSint64:
      a->ints.push_back(zigzag_decode(r.varint()));
      break;
    case Elem::kFixed32:
      a->uints.push_back(r.fixed32());
      break;
    case Elem::kFixed64:
      a->uints.push_back(r.fixed64());
      break;
    case Elem::kSfixed32:
      a->ints.push_back(static_cast<int32_t>(r.fixed32()));
      break;
    case Elem::kSfixed64:
      a->ints.push_back(static_cast<int64_t>(r.fixed64()));
      break;
    case Elem::kBool:
      a->ints.push_back(r.varint() != 0 ? 1 : 0);
      break;
    case Elem::kString:
    case Elem::kBytes:
      a->strings.emplace_back(r.bytes());
      break;
  }
}

[[noreturn]] void wrong_wire_type(const char* what, int field, int got, size_t offset) {
  throw WireError(std::string(what) + " field " + std::to_string(field) + " has wire type " +
                      std::to_string(got),
                  offset);
}

// The DoubleList ... BytesList messages: field 1, repeated, packed or not.
void read_list(std::string_view payload, size_t base, Elem e, Attr* a) {
  WireReader r(payload, base);
  uint32_t field;
  int wt;
  while (r.next(&field, &wt)) {
    if (field != 1) {
      r.skip(wt);
      continue;
    }
    if (wt == elem_wire_type(e)) {
      read_elem(r, e, a);
    } else if (wt == kLengthDelimited) {  // packed numbers
      size_t at = 0;
      std::string_view packed = r.bytes(&at);
      WireReader p(packed, at);
      while (!p.at_end()) read_elem(p, e, a);
    } else {
      wrong_wire_type("list", 1, wt, r.offset());
    }
  }
}

Attr read_attr(std::string_view payload, size_t base) {
  Attr a;
  WireReader r(payload, base);
  uint32_t field;
  int wt;
  while (r.next(&field, &wt)) {
    const size_t at = r.offset();
    if (field == 1 || field == 2) {
      if (wt != kLengthDelimited) wrong_wire_type("AttributeProto", field, wt, at);
      std::string_view s = r.bytes();
      if (field == 1) a.name = std::string(s);
      continue;
    }
    if (field < 3 || field > 32) {
      r.skip(wt);
      continue;
    }
    // A oneof keeps the last member set.
    const bool list = field % 2 == 0;
    const Elem e = static_cast<Elem>((field - 3) / 2);
    a.ints.clear();
    a.uints.clear();
    a.floats.clear();
    a.strings.clear();
    a.field = static_cast<int>(field);
    a.is_list = list;
    a.kind = elem_kind(e);
    if (list) {
      if (wt != kLengthDelimited) wrong_wire_type("AttributeProto", field, wt, at);
      size_t pos = 0;
      std::string_view inner = r.bytes(&pos);
      read_list(inner, pos, e, &a);
    } else {
      if (wt != elem_wire_type(e)) wrong_wire_type("AttributeProto", field, wt, at);
      read_elem(r, e, &a);
    }
  }
  return a;
}

void read_ids(WireReader& r, int wt, std::vector<uint64_t>* out) {
  if (wt == kVarint) {
    out->push_back(r.varint());
  } else {  // packed (proto3's default for repeated scalars)
    size_t at = 0;
    std::string_view packed = r.bytes(&at);
    WireReader p(packed, at);
    while (!p.at_end()) out->push_back(p.varint());
  }
}

Node read_node(std::string_view payload, size_t base) {
  Node n;
  n.offset = base;
  WireReader r(payload, base);
  uint32_t field;
  int wt;
  while (r.next(&field, &wt)) {
    const size_t at = r.offset();
    auto expect = [&](int want) {
      if (wt != want) wrong_wire_type("Node", static_cast<int>(field), wt, at);
    };
    switch (field) {
      case 1:
        expect(kVarint);
        n.id = r.varint();
        break;
      case 2:
        expect(kLengthDelimited);
        n.name = std::string(r.bytes());
        break;
      case 3:
        expect(kVarint);
        n.type = static_cast<int32_t>(r.varint());
        break;
      case 4:
      case 5:
        if (wt != kVarint && wt != kLengthDelimited)
          wrong_wire_type("Node", static_cast<int>(field), wt, at);
        read_ids(r, wt, field == 4 ? &n.ctrl_deps : &n.data_deps);
        break;
      case 6:
        expect(kVarint);
        n.start_time_micros = r.varint();
        break;
      case 7:
        expect(kVarint);
        n.duration_micros = r.varint();
        break;
      case 10: {
        expect(kLengthDelimited);
        size_t pos = 0;
        std::string_view a = r.bytes(&pos);
        n.attrs.push_back(read_attr(a, pos));
        break;
      }
      default:  // inputs, outputs, storage and fields of newer schemas
        r.skip(wt);
    }
  }
  return n;
}

// Returns false when the message is not shaped like a GlobalMetadata.
bool read_metadata(std::string_view payload, size_t base, Trace* t) {
  WireReader r(payload, base);
  uint32_t field;
  int wt;
  while (r.next(&field, &wt)) {
    if ((field == 1 || field == 2) && wt != kLengthDelimited) return false;
    if (field == 1) {
      t->version = std::string(r.bytes());
    } else if (field == 2) {
      size_t pos = 0;
      std::string_view a = r.bytes(&pos);
      t->metadata.push_back(read_attr(a, pos));
    } else {
      r.skip(wt);
    }
  }
  return true;
}

constexpr size_t kMaxTraceBytes = size_t{2} << 30;
// Well above the ops a whole replay accepts by default (common/input_limits.h); each node
// costs a few hundred bytes of memory.
constexpr size_t kMaxNodesPerFile = 20000000;
constexpr size_t kMaxGzipRatio = 200;

std::string gunzip(const std::string& in, const std::string& path) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw InputError(path + ": cannot start gzip decoder");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    // A few bytes of gzip can expand without bound; no real trace comes near this.
    if (out.size() > kMaxTraceBytes) {
      inflateEnd(&zs);
      throw InputError(path + ": gzip: expands past " + std::to_string(kMaxTraceBytes >> 20) +
                       " MiB, more than a Chakra trace accepted here");
    }
    // Protobuf traces compress a few times over; far more is a decompression bomb, which
    // would cost minutes and gigabytes to decode before any limit on nodes applied.
    if (out.size() > (size_t{64} << 20) && out.size() / kMaxGzipRatio > in.size()) {
      inflateEnd(&zs);
      throw InputError(
          path + ": gzip: expands more than " + std::to_string(kMaxGzipRatio) + "-fold (past " +
          std::to_string(out.size() >> 20) + " MiB from " + std::to_string(in.size()) +
          " bytes); a Chakra trace compresses far "
          "less, so this is corrupt or a decompression bomb (gunzip it to read it anyway)");
    }
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      std::string msg = zs.msg ? zs.msg : "truncated or corrupt data";
      inflateEnd(&zs);
      throw InputError(path + ": gzip: " + msg);
    }
    out.append(buf, sizeof buf - zs.avail_out);
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      throw InputError(path + ": gzip: truncated data");
    }
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace

const char* Attr::value_name() const {
  static thread_local std::string name;
  if (field < 3 || field > 32) return "(unset)";
  name = std::string(kElemNames[(field - 3) / 2]) + (is_list ? "_list" : "_val");
  return name.c_str();
}

bool Attr::integer(int64_t* out) const {
  if (is_list) return false;
  if ((kind == Kind::kSigned || kind == Kind::kBool) && ints.size() == 1) {
    *out = ints[0];
    return true;
  }
  if (kind == Kind::kUnsigned && uints.size() == 1 &&
      uints[0] <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    *out = static_cast<int64_t>(uints[0]);
    return true;
  }
  return false;
}

bool Attr::number(double* out) const {
  int64_t i = 0;
  if (integer(&i)) {
    *out = static_cast<double>(i);
    return true;
  }
  if (is_list) return false;
  if (kind == Kind::kUnsigned && uints.size() == 1) {
    *out = static_cast<double>(uints[0]);
    return true;
  }
  if (kind == Kind::kFloat && floats.size() == 1) {
    *out = floats[0];
    return true;
  }
  return false;
}

bool Attr::text(std::string* out) const {
  if (is_list || (kind != Kind::kString && kind != Kind::kBytes) || strings.size() != 1)
    return false;
  *out = strings[0];
  return true;
}

const Attr* Node::attr(const std::string& attr_name) const {
  for (const auto& a : attrs)
    if (a.name == attr_name) return &a;
  return nullptr;
}

Trace parse_trace(const std::string& bytes, const std::string& origin) {
  Trace t;
  t.origin = origin;
  if (bytes.empty())
    throw InputError(origin + ": empty file (a Chakra trace starts with a GlobalMetadata)");
  WireReader framing{std::string_view(bytes)};
  size_t index = 0;  // message number: 0 is the GlobalMetadata
  while (!framing.at_end()) {
    const size_t start = framing.offset();
    const std::string what =
        index == 0 ? std::string("GlobalMetadata") : "node #" + std::to_string(index - 1);
    try {
      const uint64_t len = framing.varint();
      const size_t body = framing.offset();
      if (len > bytes.size() - body) {
        throw InputError(origin + ": " + what + " at byte " + std::to_string(start) +
                         ": message declares " + std::to_string(len) + " bytes but only " +
                         std::to_string(bytes.size() - body) + " remain (truncated file?)");
      }
      std::string_view payload(bytes.data() + body, len);
      if (index == 0) {
        if (!read_metadata(payload, body, &t))
          throw InputError(origin +
                           ": the first message is not a GlobalMetadata (Chakra ET "
                           "files since schema 0.0.4 start with one)");
      } else {
        // A run of zero bytes reads as a stream of empty messages: nodes without a type. Stop
        // at the first rather than collect millions of them.
        if (len == 0)
          throw InputError(origin + ": " + what + " at byte " + std::to_string(start) +
                           ": an empty message (no id, no type: INVALID_NODE)");
        if (t.nodes.size() >= kMaxNodesPerFile)
          throw InputError(origin + ": more than " + std::to_string(kMaxNodesPerFile) +
                           " nodes in one rank file, more than Orrery replays");
        t.nodes.push_back(read_node(payload, body));
      }
      framing.skip_raw(len);
    } catch (const WireError& e) {
      std::string node;
      if (index > 0 && !t.nodes.empty() && t.nodes.size() == index) {
        node = " (id " + std::to_string(t.nodes.back().id) + ")";
      }
      throw InputError(origin + ": " + what + node + ": malformed protobuf: " + e.what());
    }
    ++index;
  }
  if (index == 0) throw InputError(origin + ": no GlobalMetadata");
  return t;
}

Trace read_trace(const std::string& path) {
  // zlib takes 32-bit input sizes.
  std::string bytes = read_input_file(path, "Chakra trace file", std::numeric_limits<uInt>::max());
  if (bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == 0x1f &&
      static_cast<uint8_t>(bytes[1]) == 0x8b) {
    bytes = gunzip(bytes, path);
  }
  return parse_trace(bytes, path);
}

std::string encode_varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

std::string length_prefixed(const std::string& message) {
  return encode_varint(message.size()) + message;
}

}  // namespace orrery::chakra
