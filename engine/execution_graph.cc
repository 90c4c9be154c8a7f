#include "engine/execution_graph.h"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <iterator>

namespace orrery {

namespace {

constexpr const char* kStreamClassNames[kNumStreamClasses] = {"compute", "comm", "copy_h2d",
                                                              "copy_d2h", "host"};

// Indices beyond this are surely typos; the bound also keeps the parse free of overflow.
constexpr int kMaxStreamIndex = 9999;

}  // namespace

const char* stream_class_name(StreamClass c) {
  int i = static_cast<int>(c);
  return i >= 0 && i < kNumStreamClasses ? kStreamClassNames[i] : "unknown";
}

bool parse_stream_class(const std::string& s, StreamClass* out) {
  for (int i = 0; i < kNumStreamClasses; ++i) {
    if (s == kStreamClassNames[i]) {
      *out = static_cast<StreamClass>(i);
      return true;
    }
  }
  return false;
}

std::string stream_name(const Stream& s) {
  std::string name = stream_class_name(s.cls);
  // Index 0 is the only queue most devices have, so it keeps the bare class name.
  if (s.index != 0) name += ":" + std::to_string(s.index);
  return name;
}

bool parse_stream(const std::string& s, Stream* out) {
  std::size_t colon = s.find(':');
  Stream result;
  if (!parse_stream_class(s.substr(0, colon), &result.cls)) return false;
  if (colon != std::string::npos) {
    std::string digits = s.substr(colon + 1);
    if (digits.empty() || digits.size() > 4) return false;
    int index = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      index = index * 10 + (c - '0');
    }
    if (index > kMaxStreamIndex) return false;
    result.index = index;
  }
  *out = result;
  return true;
}

namespace {
constexpr const char* kCollectiveTypeNames[] = {
    "allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "sendrecv"};
constexpr const char* kCollectiveAlgoNames[] = {
    "auto", "ring", "tree", "hierarchical", "direct", "nvls", "collnet", "nvls_tree", "pat"};
constexpr const char* kCollectiveProtocolNames[] = {"ideal", "auto", "LL", "LL128", "Simple"};

template <typename Enum, size_t N>
bool parse_enum(const std::string& s, const char* const (&names)[N], Enum* out) {
  for (size_t i = 0; i < N; ++i) {
    if (s == names[i]) {
      *out = static_cast<Enum>(i);
      return true;
    }
  }
  return false;
}
}  // namespace

const char* collective_type_name(CollectiveType t) {
  auto i = static_cast<size_t>(t);
  return i < std::size(kCollectiveTypeNames) ? kCollectiveTypeNames[i] : "unknown";
}

bool parse_collective_type(const std::string& s, CollectiveType* out) {
  return parse_enum(s, kCollectiveTypeNames, out);
}

const char* collective_algo_name(CollectiveAlgo a) {
  auto i = static_cast<size_t>(a);
  return i < std::size(kCollectiveAlgoNames) ? kCollectiveAlgoNames[i] : "unknown";
}

bool parse_collective_algo(const std::string& s, CollectiveAlgo* out) {
  return parse_enum(s, kCollectiveAlgoNames, out);
}

const char* collective_protocol_name(CollectiveProtocol p) {
  auto i = static_cast<size_t>(p);
  return i < std::size(kCollectiveProtocolNames) ? kCollectiveProtocolNames[i] : "unknown";
}

bool parse_collective_protocol(const std::string& s, CollectiveProtocol* out) {
  for (size_t i = 0; i < std::size(kCollectiveProtocolNames); ++i) {
    const std::string name = kCollectiveProtocolNames[i];
    bool same = name.size() == s.size();
    for (size_t k = 0; same && k < s.size(); ++k)
      same = std::tolower(static_cast<unsigned char>(s[k])) ==
             std::tolower(static_cast<unsigned char>(name[k]));
    if (same) {
      *out = static_cast<CollectiveProtocol>(i);
      return true;
    }
  }
  return false;
}

int ExecutionGraph::find_device(const std::string& name) const {
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int ExecutionGraph::find_op(const std::string& name) const {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int append_compute(ExecutionGraph& g, const std::string& name, int device, Stream stream,
                   double duration, const std::string& phase, std::vector<int> deps, double flops,
                   double bytes) {
  Op op;
  op.name = name;
  op.device = device;
  op.stream = stream;
  op.duration = duration;
  op.flops = flops;
  op.bytes = bytes;
  op.phase = phase;
  op.deps = std::move(deps);
  g.ops.push_back(std::move(op));
  return static_cast<int>(g.ops.size()) - 1;
}

int append_transfer(ExecutionGraph& g, const std::string& name, int queue_device, Stream stream,
                    int src, int dst, double bytes, const std::string& phase,
                    std::vector<int> deps) {
  Op op;
  op.name = name;
  op.device = queue_device;
  op.stream = stream;
  op.kind = OpKind::kTransfer;
  op.src = src;
  op.dst = dst;
  op.transfer_bytes = bytes;
  op.phase = phase;
  op.deps = std::move(deps);
  g.ops.push_back(std::move(op));
  return static_cast<int>(g.ops.size()) - 1;
}

bool copies_flows_for_mirrors(const Collective& c, const std::vector<int>& mirror_of) {
  return std::none_of(c.ranks.begin(), c.ranks.end(), [&](int d) { return mirror_of[d] >= 0; });
}

int append_collective(ExecutionGraph& g, const std::string& name, Collective c,
                      const std::string& phase, std::vector<int> deps) {
  Op op;
  op.name = name;
  op.device = c.ranks.at(0);
  op.stream = {StreamClass::kComm, 0};
  op.kind = OpKind::kCollective;
  op.collective = static_cast<int>(g.collectives.size());
  op.phase = phase;
  op.deps = std::move(deps);
  g.collectives.push_back(std::move(c));
  g.ops.push_back(std::move(op));
  return static_cast<int>(g.ops.size()) - 1;
}

}  // namespace orrery
