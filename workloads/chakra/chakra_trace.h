// Chakra execution traces (MLCommons Chakra, schema/protobuf/et_def.proto; the format ASTRA-sim
// reads): one file per rank, optionally gzipped, holding a stream of messages each prefixed by
// its length as a varint: one GlobalMetadata, then Nodes. This header is the schema as plain
// data and its decoder; chakra_import.h turns a set of rank traces into an ExecutionGraph.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace orrery::chakra {

// et_def.proto NodeType.
enum NodeType : int {
  kInvalidNode = 0,
  kMetadataNode = 1,
  kMemLoadNode = 2,
  kMemStoreNode = 3,
  kCompNode = 4,
  kCommSendNode = 5,
  kCommRecvNode = 6,
  kCommCollNode = 7,
  kStorageNode = 8,
  kBatchNode = 9,
  kCheckpointNode = 10,
};
// "COMP_NODE"...; nullptr for values outside the enum.
const char* node_type_name(int type);

// et_def.proto CollectiveCommType.
enum CollectiveCommType : int {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};
const char* collective_name(int type);  // "ALL_REDUCE"...; nullptr outside the enum

// One AttributeProto: its name and its value, whichever member of the `value` oneof was set.
// A scalar is held in place (a trace has a few per node, and a list each would be an allocation
// apiece); a list in the vector of its kind.
struct Attr {
  enum class Kind { kNone, kSigned, kUnsigned, kFloat, kBool, kString, kBytes };
  std::string name;
  Kind kind = Kind::kNone;
  bool is_list = false;
  int field = 0;  // the oneof member's field number (3 double_val ... 32 bytes_list)
  // Scalars (is_list false), by kind.
  int64_t int_value = 0;     // kSigned, kBool (0 or 1)
  uint64_t uint_value = 0;   // kUnsigned
  double float_value = 0.0;  // kFloat
  std::string string_value;  // kString, kBytes
  // Lists (is_list true), by kind.
  std::vector<int64_t> ints;         // kSigned, kBool
  std::vector<uint64_t> uints;       // kUnsigned
  std::vector<double> floats;        // kFloat
  std::vector<std::string> strings;  // kString, kBytes

  // The oneof member's name, e.g. "int64_val", "string_list", "(unset)".
  const char* value_name() const;
  // A scalar of any integer type (int32/64, uint32/64, sint32/64, fixed32/64, sfixed32/64,
  // bool) that fits int64; false otherwise.
  bool integer(int64_t* out) const;
  // A scalar of any numeric type (the integers above, float, double).
  bool number(double* out) const;
  // A scalar string or bytes value.
  bool text(std::string* out) const;
};

struct Node {
  uint64_t id = 0;
  std::string name;
  int type = kInvalidNode;
  std::vector<uint64_t> ctrl_deps;
  std::vector<uint64_t> data_deps;
  uint64_t start_time_micros = 0;
  uint64_t duration_micros = 0;
  std::vector<Attr> attrs;
  // inputs.values (IOInfo), kept for METADATA_NODE only: PyTorch's process-group table lives
  // there (chakra_process_groups.h); other nodes' inputs are not read.
  std::string input_values;
  size_t offset = 0;  // byte offset of the node's message in the (decompressed) file

  const Attr* attr(std::string_view attr_name) const;  // nullptr if absent
};

struct Trace {
  std::string origin;   // the file it came from
  std::string version;  // GlobalMetadata.version
  std::vector<Attr> metadata;
  std::vector<Node> nodes;  // in file order
};

// Decodes a trace held in memory (already decompressed). Throws InputError naming `origin`, the
// message (GlobalMetadata or node index and id) and the byte offset on malformed input: a
// truncated message, a bad varint, a field with the wrong wire type, a first message that is not
// a GlobalMetadata.
Trace parse_trace(const std::string& bytes, const std::string& origin);
// Reads a file, gunzipping it if it starts with the gzip magic bytes.
Trace read_trace(const std::string& path);

// Writing, for tests and tools: the wire encoding of a message stream.
std::string encode_varint(uint64_t v);
// Prefixes a serialized message with its length.
std::string length_prefixed(const std::string& message);

}  // namespace orrery::chakra
