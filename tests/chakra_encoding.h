// Chakra traces encoded field by field from et_def.proto, for the importer's tests: a tiny
// protobuf writer (no generated classes, so a test can also write what those would refuse).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "tests/test_util.h"
#include "workloads/chakra/chakra_import.h"
#include "workloads/chakra/chakra_trace.h"

namespace orrery::chakra_encoding {

using chakra::encode_varint;
using chakra::length_prefixed;

inline std::string key(int field, int wire) {
  return encode_varint((static_cast<uint64_t>(field) << 3) | wire);
}
inline std::string varint_field(int field, uint64_t v) { return key(field, 0) + encode_varint(v); }
inline std::string bytes_field(int field, const std::string& payload) {
  return key(field, 2) + encode_varint(payload.size()) + payload;
}
inline std::string fixed32_field(int field, uint32_t v) {
  std::string s = key(field, 5);
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}
inline std::string fixed64_field(int field, uint64_t v) {
  std::string s = key(field, 1);
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}
inline uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

// AttributeProto with an int64_val (field 9), a string_val (29) or a bool_val (27).
inline std::string attr_int(const std::string& name, int64_t v) {
  return bytes_field(10, bytes_field(1, name) + varint_field(9, static_cast<uint64_t>(v)));
}
inline std::string attr_str(const std::string& name, const std::string& v) {
  return bytes_field(10, bytes_field(1, name) + bytes_field(29, v));
}
inline std::string attr_bool(const std::string& name, bool v) {
  return bytes_field(10, bytes_field(1, name) + varint_field(27, v ? 1 : 0));
}

struct N {
  uint64_t id;
  std::string name;
  int type;
  std::vector<uint64_t> data_deps = {};
  std::vector<uint64_t> ctrl_deps = {};
  uint64_t duration_micros = 0;
  std::string attrs = {};  // encoded attr fields
  bool packed = true;      // deps as a packed list (proto3 default) or one field per id
};

inline std::string encode_node(const N& n) {
  std::string m = varint_field(1, n.id) + bytes_field(2, n.name) + varint_field(3, n.type);
  for (auto [field, ids] : {std::pair<int, const std::vector<uint64_t>*>{4, &n.ctrl_deps},
                            std::pair<int, const std::vector<uint64_t>*>{5, &n.data_deps}}) {
    if (ids->empty()) continue;
    if (n.packed) {
      std::string packed;
      for (uint64_t id : *ids) packed += encode_varint(id);
      m += bytes_field(field, packed);
    } else {
      for (uint64_t id : *ids) m += varint_field(field, id);
    }
  }
  if (n.duration_micros) m += varint_field(7, n.duration_micros);
  return m + n.attrs;
}

inline std::string encode_trace(const std::vector<N>& nodes, const std::string& version = "0.0.4") {
  std::string out = length_prefixed(bytes_field(1, version));
  for (const auto& n : nodes) out += length_prefixed(encode_node(n));
  return out;
}

inline std::string comm(const std::string& kind, int64_t peer, int64_t bytes, int64_t tag = 0) {
  return attr_int(kind, peer) + attr_int("comm_size", bytes) + attr_int("comm_tag", tag);
}
inline std::string coll(int64_t type, int64_t bytes, const std::string& pg = "") {
  return attr_int("comm_type", type) + attr_int("comm_size", bytes) +
         (pg.empty() ? "" : attr_str("pg_name", pg));
}

// Writes rank files NAME.<r>.et and returns the prefix.
inline std::string write_ranks(const std::vector<std::string>& ranks, const std::string& tag) {
  std::string dir = testing::make_temp_dir(tag);
  for (size_t r = 0; r < ranks.size(); ++r) {
    std::ofstream(dir + "/t." + std::to_string(r) + ".et", std::ios::binary) << ranks[r];
  }
  return dir + "/t";
}

inline ExecutionGraph import(const std::vector<std::string>& ranks, ChakraImportOptions o = {}) {
  std::vector<chakra::Trace> traces;
  for (size_t r = 0; r < ranks.size(); ++r)
    traces.push_back(chakra::parse_trace(ranks[r], "rank" + std::to_string(r) + ".et"));
  return chakra_to_execution_graph(traces, o);
}

// Node field 8 (inputs, an IOInfo) with its values string, to append to N::attrs.
inline std::string inputs_values(const std::string& values) {
  return bytes_field(8, bytes_field(1, values));
}

}  // namespace orrery::chakra_encoding
