#include "workloads/chakra/chakra_trace.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/unknown_field_set.h>
#include <zlib.h>

#include <algorithm>
#include <climits>
#include <limits>
#include <mutex>

#include "common/errors.h"
#include "common/input_file.h"
#include "et_def.pb.h"

namespace orrery::chakra {

namespace pb = google::protobuf;

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

// The enums of chakra_trace.h are the schema's, number for number.
static_assert(int{kCheckpointNode} == int{ChakraProtoMsg::CHECKPOINT_NODE} &&
              int{kCommCollNode} == int{ChakraProtoMsg::COMM_COLL_NODE} &&
              int{kBarrier} == int{ChakraProtoMsg::BARRIER} &&
              int{kReduceScatterBlock} == int{ChakraProtoMsg::REDUCE_SCATTER_BLOCK});

// A message libprotobuf parsed but could not fully place. libprotobuf keeps a field whose wire
// type differs from the schema's (e.g. a Node id sent length-delimited) as an unknown field
// instead of failing, and accepts groups (wire types 3 and 4), which no Chakra writer emits.
// Both are malformed traces here, as they were for the hand decoder this replaced: a wrong wire
// type would otherwise read as an absent field (id 0, no type) and hide the damage.
// Returns "" when the message and everything in it is well-formed.
std::string misplaced_field(const pb::Message& m) {
  const pb::Reflection* refl = m.GetReflection();
  const pb::Descriptor* desc = m.GetDescriptor();
  const pb::UnknownFieldSet& unknown = refl->GetUnknownFields(m);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const pb::UnknownField& f = unknown.field(i);
    if (f.type() == pb::UnknownField::TYPE_GROUP) {
      return "unsupported wire type 3 (a group, field " + std::to_string(f.number()) + ") in " +
             desc->name();
    }
    if (desc->FindFieldByNumber(f.number()) != nullptr) {
      static const int kWire[] = {0, 5, 1, 2, 3};  // UnknownField::Type -> wire type
      return desc->name() + " field " + std::to_string(f.number()) + " (" +
             desc->FindFieldByNumber(f.number())->name() + ") has wire type " +
             std::to_string(kWire[f.type()]);
    }
  }
  std::vector<const pb::FieldDescriptor*> fields;
  refl->ListFields(m, &fields);
  for (const pb::FieldDescriptor* fd : fields) {
    if (fd->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (fd->is_repeated()) {
      for (int i = 0; i < refl->FieldSize(m, fd); ++i) {
        std::string why = misplaced_field(refl->GetRepeatedMessage(m, fd, i));
        if (!why.empty()) return why;
      }
    } else {
      std::string why = misplaced_field(refl->GetMessage(m, fd));
      if (!why.empty()) return why;
    }
  }
  return "";
}

// misplaced_field's answer without reflection for the usual node: nothing unknown in it, its
// inputs, outputs or scalar attributes (a list attribute takes the full check).
bool surely_well_formed(const ChakraProtoMsg::Node& n) {
  if (!n.GetReflection()->GetUnknownFields(n).empty()) return false;
  if (n.has_inputs() && !n.inputs().GetReflection()->GetUnknownFields(n.inputs()).empty())
    return false;
  if (n.has_outputs() && !n.outputs().GetReflection()->GetUnknownFields(n.outputs()).empty())
    return false;
  for (const auto& a : n.attr()) {
    if (!a.GetReflection()->GetUnknownFields(a).empty()) return false;
    const int number = static_cast<int>(a.value_case());
    if (number != 0 && number % 2 == 0) return false;  // the even members are the lists
  }
  return true;
}

// libprotobuf says why a parse failed only through its log (e.g. a string field holding
// invalid UTF-8); the handler keeps the last message for the InputError instead of printing it.
// The handler is one global of libprotobuf's, and rank files are decoded on several threads
// (chakra_files.cc): it is installed once, for good, and keeps each thread's message apart.
thread_local std::string last_protobuf_log;
void keep_protobuf_log(pb::LogLevel, const char*, int, const std::string& message) {
  last_protobuf_log = message;
}

// Parses one message's bytes; false when libprotobuf rejects them (truncated field, bad varint,
// field number 0, wire type 6 or 7, invalid UTF-8 in a string...). `why` then says what
// libprotobuf logged, if anything.
bool parse_message(const char* data, size_t size, pb::Message* m, std::string* why) {
  static std::once_flag installed;
  std::call_once(installed, [] { pb::SetLogHandler(&keep_protobuf_log); });
  last_protobuf_log.clear();
  const bool ok = m->ParseFromArray(data, static_cast<int>(size));
  *why = last_protobuf_log;
  return ok;
}

// A scalar AttributeProto -> Attr through the generated accessors; false for a list or an unset
// value (to_attr's reflection handles those, rarer, cases).
bool scalar_attr(const ChakraProtoMsg::AttributeProto& a, Attr* out) {
  using P = ChakraProtoMsg::AttributeProto;
  using K = Attr::Kind;
  switch (a.value_case()) {
    case P::kDoubleVal:
      out->kind = K::kFloat, out->float_value = a.double_val();
      break;
    case P::kFloatVal:
      out->kind = K::kFloat, out->float_value = a.float_val();
      break;
    case P::kInt32Val:
      out->kind = K::kSigned, out->int_value = a.int32_val();
      break;
    case P::kInt64Val:
      out->kind = K::kSigned, out->int_value = a.int64_val();
      break;
    case P::kSint32Val:
      out->kind = K::kSigned, out->int_value = a.sint32_val();
      break;
    case P::kSint64Val:
      out->kind = K::kSigned, out->int_value = a.sint64_val();
      break;
    case P::kSfixed32Val:
      out->kind = K::kSigned, out->int_value = a.sfixed32_val();
      break;
    case P::kSfixed64Val:
      out->kind = K::kSigned, out->int_value = a.sfixed64_val();
      break;
    case P::kUint32Val:
      out->kind = K::kUnsigned, out->uint_value = a.uint32_val();
      break;
    case P::kUint64Val:
      out->kind = K::kUnsigned, out->uint_value = a.uint64_val();
      break;
    case P::kFixed32Val:
      out->kind = K::kUnsigned, out->uint_value = a.fixed32_val();
      break;
    case P::kFixed64Val:
      out->kind = K::kUnsigned, out->uint_value = a.fixed64_val();
      break;
    case P::kBoolVal:
      out->kind = K::kBool, out->int_value = a.bool_val() ? 1 : 0;
      break;
    case P::kStringVal:
      out->kind = K::kString, out->string_value = a.string_val();
      break;
    case P::kBytesVal:
      out->kind = K::kBytes, out->string_value = a.bytes_val();
      break;
    default:
      return false;
  }
  out->field = static_cast<int>(a.value_case());
  return true;
}

// AttributeProto -> Attr: scalars directly, lists through reflection (the oneof member set is
// the field it names; its message's field 1 holds the values).
Attr to_attr(const ChakraProtoMsg::AttributeProto& a) {
  Attr out;
  out.name = a.name();
  if (scalar_attr(a, &out)) return out;
  const int number = static_cast<int>(a.value_case());
  if (number == 0) return out;  // VALUE_NOT_SET
  out.field = number;
  const pb::FieldDescriptor* fd = a.GetDescriptor()->FindFieldByNumber(number);
  const pb::Reflection* refl = a.GetReflection();
  out.is_list = true;
  const pb::Message* holder = &refl->GetMessage(a, fd);
  const pb::FieldDescriptor* values = holder->GetDescriptor()->FindFieldByNumber(1);
  const pb::Reflection* hr = holder->GetReflection();
  const int n = hr->FieldSize(*holder, values);
  for (int i = 0; i < n; ++i) {
    switch (values->cpp_type()) {
      case pb::FieldDescriptor::CPPTYPE_INT32:
        out.kind = Attr::Kind::kSigned;
        out.ints.push_back(hr->GetRepeatedInt32(*holder, values, i));
        break;
      case pb::FieldDescriptor::CPPTYPE_INT64:
        out.kind = Attr::Kind::kSigned;
        out.ints.push_back(hr->GetRepeatedInt64(*holder, values, i));
        break;
      case pb::FieldDescriptor::CPPTYPE_UINT32:
        out.kind = Attr::Kind::kUnsigned;
        out.uints.push_back(hr->GetRepeatedUInt32(*holder, values, i));
        break;
      case pb::FieldDescriptor::CPPTYPE_UINT64:
        out.kind = Attr::Kind::kUnsigned;
        out.uints.push_back(hr->GetRepeatedUInt64(*holder, values, i));
        break;
      case pb::FieldDescriptor::CPPTYPE_DOUBLE:
        out.kind = Attr::Kind::kFloat;
        out.floats.push_back(hr->GetRepeatedDouble(*holder, values, i));
        break;
      case pb::FieldDescriptor::CPPTYPE_FLOAT:
        out.kind = Attr::Kind::kFloat;
        out.floats.push_back(hr->GetRepeatedFloat(*holder, values, i));
        break;
      case pb::FieldDescriptor::CPPTYPE_BOOL:
        out.kind = Attr::Kind::kBool;
        out.ints.push_back(hr->GetRepeatedBool(*holder, values, i) ? 1 : 0);
        break;
      case pb::FieldDescriptor::CPPTYPE_STRING:
        out.kind = values->type() == pb::FieldDescriptor::TYPE_BYTES ? Attr::Kind::kBytes
                                                                     : Attr::Kind::kString;
        out.strings.push_back(hr->GetRepeatedString(*holder, values, i));
        break;
      default:
        break;
    }
  }
  // An empty list still says what it is a list of.
  if (n == 0) {
    static const Attr::Kind kinds[] = {
        Attr::Kind::kFloat,    Attr::Kind::kFloat,    Attr::Kind::kSigned, Attr::Kind::kSigned,
        Attr::Kind::kUnsigned, Attr::Kind::kUnsigned, Attr::Kind::kSigned, Attr::Kind::kSigned,
        Attr::Kind::kUnsigned, Attr::Kind::kUnsigned, Attr::Kind::kSigned, Attr::Kind::kSigned,
        Attr::Kind::kBool,     Attr::Kind::kString,   Attr::Kind::kBytes};
    out.kind = kinds[(number - 3) / 2];
  }
  return out;
}

Node to_node(const ChakraProtoMsg::Node& m, size_t offset) {
  Node n;
  n.offset = offset;
  n.id = m.id();
  n.name = m.name();
  n.type = m.type();
  n.ctrl_deps.assign(m.ctrl_deps().begin(), m.ctrl_deps().end());
  n.data_deps.assign(m.data_deps().begin(), m.data_deps().end());
  n.start_time_micros = m.start_time_micros();
  n.duration_micros = m.duration_micros();
  n.attrs.reserve(m.attr_size());
  for (const auto& a : m.attr()) n.attrs.push_back(to_attr(a));
  if (n.type == kMetadataNode && m.has_inputs()) n.input_values = m.inputs().values();
  return n;
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

// Reads the varint length prefix at `pos`; false when it is truncated or longer than 10 bytes.
bool read_length(const std::string& bytes, size_t* pos, uint64_t* len) {
  // A reader over at most the 10 bytes a varint may take: CodedInputStream counts in int, and a
  // trace may be larger than INT_MAX bytes.
  const size_t window = std::min<size_t>(10, bytes.size() - *pos);
  pb::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data() + *pos),
                              static_cast<int>(window));
  if (!in.ReadVarint64(len)) return false;
  *pos += static_cast<size_t>(in.CurrentPosition());
  return true;
}

// Messages in the stream, by their length prefixes up to the first one that does not fit (the
// parse reports that): the nodes vector is sized once instead of doubling through copies.
size_t count_messages(const std::string& bytes) {
  size_t pos = 0, count = 0;
  uint64_t len = 0;
  while (pos < bytes.size() && read_length(bytes, &pos, &len) && len <= bytes.size() - pos) {
    pos += len;
    ++count;
  }
  return std::min(count, kMaxNodesPerFile);
}

}  // namespace

const char* Attr::value_name() const {
  static const char* kElemNames[] = {"double",   "float",    "int32",  "int64",   "uint32",
                                     "uint64",   "sint32",   "sint64", "fixed32", "fixed64",
                                     "sfixed32", "sfixed64", "bool",   "string",  "bytes"};
  static thread_local std::string name;
  if (field < 3 || field > 32) return "(unset)";
  name = std::string(kElemNames[(field - 3) / 2]) + (is_list ? "_list" : "_val");
  return name.c_str();
}

bool Attr::integer(int64_t* out) const {
  if (is_list) return false;
  if (kind == Kind::kSigned || kind == Kind::kBool) {
    *out = int_value;
    return true;
  }
  if (kind == Kind::kUnsigned &&
      uint_value <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    *out = static_cast<int64_t>(uint_value);
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
  if (kind == Kind::kUnsigned) {
    *out = static_cast<double>(uint_value);
    return true;
  }
  if (kind == Kind::kFloat) {
    *out = float_value;
    return true;
  }
  return false;
}

bool Attr::text(std::string* out) const {
  if (is_list || (kind != Kind::kString && kind != Kind::kBytes)) return false;
  *out = string_value;
  return true;
}

const Attr* Node::attr(std::string_view attr_name) const {
  for (const auto& a : attrs)
    if (a.name == attr_name) return &a;
  return nullptr;
}

Trace parse_trace(const std::string& bytes, const std::string& origin) {
  Trace t;
  t.origin = origin;
  if (bytes.empty())
    throw InputError(origin + ": empty file (a Chakra trace starts with a GlobalMetadata)");
  ChakraProtoMsg::GlobalMetadata metadata;
  ChakraProtoMsg::Node node;  // reused: parsing clears it
  t.nodes.reserve(count_messages(bytes));
  size_t pos = 0;
  size_t index = 0;  // message number: 0 is the GlobalMetadata
  while (pos < bytes.size()) {
    const size_t start = pos;
    // Only errors spell out where they are: not a string built for every message.
    auto where = [&] {
      return (index == 0 ? std::string("GlobalMetadata") : "node #" + std::to_string(index - 1)) +
             " at byte " + std::to_string(start);
    };
    uint64_t len = 0;
    if (!read_length(bytes, &pos, &len))
      throw InputError(origin + ": " + where() +
                       ": malformed protobuf: the length prefix is a truncated or overlong "
                       "varint");
    const size_t body = pos;
    if (len > bytes.size() - body) {
      throw InputError(origin + ": " + where() + ": message declares " + std::to_string(len) +
                       " bytes but only " + std::to_string(bytes.size() - body) +
                       " remain (truncated file?)");
    }
    if (len > static_cast<uint64_t>(INT_MAX))
      throw InputError(origin + ": " + where() + ": a message of " + std::to_string(len) +
                       " bytes, more than protobuf messages may hold (2 GiB)");
    std::string why;
    if (index == 0) {
      if (!parse_message(bytes.data() + body, len, &metadata, &why) ||
          !misplaced_field(metadata).empty())
        throw InputError(origin +
                         ": the first message is not a GlobalMetadata (Chakra ET "
                         "files since schema 0.0.4 start with one)" +
                         (why.empty() ? "" : ": " + why));
      t.version = metadata.version();
      for (const auto& a : metadata.attr()) t.metadata.push_back(to_attr(a));
    } else {
      // A run of zero bytes reads as a stream of empty messages: nodes without a type. Stop
      // at the first rather than collect millions of them.
      if (len == 0)
        throw InputError(origin + ": " + where() +
                         ": an empty message (no id, no type: INVALID_NODE)");
      if (t.nodes.size() >= kMaxNodesPerFile)
        throw InputError(origin + ": more than " + std::to_string(kMaxNodesPerFile) +
                         " nodes in one rank file, more than Orrery replays");
      if (!parse_message(bytes.data() + body, len, &node, &why))
        throw InputError(origin + ": " + where() + " (" + std::to_string(len) +
                         " bytes): malformed protobuf: not a Node message" +
                         (why.empty() ? " (truncated field, bad varint, invalid field number or "
                                        "wire type, or invalid UTF-8 in a string)"
                                      : ": " + why));
      const std::string misplaced = surely_well_formed(node) ? "" : misplaced_field(node);
      if (!misplaced.empty())
        throw InputError(origin + ": " + where() + " (id " + std::to_string(node.id()) +
                         "): malformed protobuf: " + misplaced);
      t.nodes.push_back(to_node(node, body));
    }
    pos = body + len;
    ++index;
  }
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
  uint8_t buf[10];  // the longest varint
  uint8_t* end = pb::io::CodedOutputStream::WriteVarint64ToArray(v, buf);
  return std::string(reinterpret_cast<const char*>(buf), end - buf);
}

std::string length_prefixed(const std::string& message) {
  return encode_varint(message.size()) + message;
}

}  // namespace orrery::chakra
