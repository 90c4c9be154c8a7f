#include "workloads/chakra/chakra_writer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "common/errors.h"
#include "et_def.pb.h"
#include "workloads/chakra/chakra_trace.h"

namespace orrery {
namespace {

using ChakraProtoMsg::AttributeProto;
using ChakraProtoMsg::Node;

void attr_int(Node* n, const char* name, int64_t v) {
  AttributeProto* a = n->add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

// A size: an integer when it is one (as Chakra's tools write sizes), else a double.
void attr_size(Node* n, const char* name, double v) {
  AttributeProto* a = n->add_attr();
  a->set_name(name);
  if (v >= 0 && v < 9.2e18 && v == std::floor(v)) {
    a->set_uint64_val(static_cast<uint64_t>(v));
  } else {
    a->set_double_val(v);
  }
}

// Chakra's comm_size of an ALL_TO_ALL is the whole buffer, each rank keeping 1/n of it; an
// engine all-to-all's bytes are what each rank sends to the others (chakra_import.h).
double chakra_comm_size(const Collective& c) {
  const double n = static_cast<double>(c.ranks.size());
  if (c.type != CollectiveType::kAllToAll || n < 2) return c.bytes;
  return c.bytes * n / (n - 1);
}

ChakraProtoMsg::CollectiveCommType comm_type(CollectiveType t) {
  switch (t) {
    case CollectiveType::kAllReduce:
      return ChakraProtoMsg::ALL_REDUCE;
    case CollectiveType::kAllGather:
      return ChakraProtoMsg::ALL_GATHER;
    case CollectiveType::kReduceScatter:
      return ChakraProtoMsg::REDUCE_SCATTER;
    case CollectiveType::kBroadcast:
      return ChakraProtoMsg::BROADCAST;
    case CollectiveType::kReduce:
      return ChakraProtoMsg::REDUCE;
    case CollectiveType::kAllToAll:
      return ChakraProtoMsg::ALL_TO_ALL;
    case CollectiveType::kSendRecv:
      // Chakra writes point-to-point traffic as send and receive nodes, not as a collective.
      throw InputError(
          "Chakra export: a send/recv collective has no Chakra collective type (Chakra "
          "writes point-to-point traffic as send and receive nodes)");
  }
  return ChakraProtoMsg::ALL_REDUCE;
}

class Writer {
 public:
  explicit Writer(const ExecutionGraph& g) : g_(g), ranks_(g.devices.size()) {}

  ChakraTraceSet run() {
    const int n = static_cast<int>(ranks_.size());
    std::vector<int> world(n);
    for (int i = 0; i < n; ++i) world[i] = i;
    placed_.resize(g_.ops.size());
    for (size_t i = 0; i < g_.ops.size(); ++i) place(static_cast<int>(i), world);
    for (size_t i = 0; i < g_.ops.size(); ++i) add_deps(static_cast<int>(i));
    ChakraProtoMsg::GlobalMetadata meta;
    meta.set_version("0.0.4");
    AttributeProto* ws = meta.add_attr();
    ws->set_name("world_size");
    ws->set_int64_val(n);
    const std::string head = chakra::length_prefixed(meta.SerializeAsString());
    for (int r = 0; r < n; ++r) {
      std::string bytes = head;
      for (const Node& node : ranks_[r]) bytes += chakra::length_prefixed(node.SerializeAsString());
      out_.ranks.push_back(std::move(bytes));
      out_.nodes += ranks_[r].size();
    }
    return std::move(out_);
  }

 private:
  // Where an op's nodes are: rank -> position in that rank's node list.
  using Placement = std::vector<std::pair<int, size_t>>;

  Node* add_node(int rank, uint64_t id, const std::string& name, ChakraProtoMsg::NodeType type) {
    ranks_[rank].emplace_back();
    Node* node = &ranks_[rank].back();
    node->set_id(id);
    node->set_name(name);
    node->set_type(type);
    return node;
  }

  void place(int i, const std::vector<int>& world) {
    const Op& op = g_.ops[i];
    Placement& at = placed_[i];
    if (op.kind == OpKind::kCompute) {
      ChakraProtoMsg::NodeType type = ChakraProtoMsg::COMP_NODE;
      if (op.stream.cls == StreamClass::kCopyH2D) type = ChakraProtoMsg::MEM_LOAD_NODE;
      if (op.stream.cls == StreamClass::kCopyD2H) type = ChakraProtoMsg::MEM_STORE_NODE;
      Node* node = add_node(op.device, i, op.name, type);
      at.push_back({op.device, ranks_[op.device].size() - 1});
      if (op.duration >= 0) {
        const double micros = std::round(op.duration * 1e6);
        // Beyond floating-point noise: 1e-4 s * 1e6 is not exactly 100.
        if (std::abs(micros - op.duration * 1e6) > 1e-6 * std::max(1.0, micros))
          ++out_.rounded_durations;
        node->set_duration_micros(static_cast<uint64_t>(micros));
      } else {
        if (op.flops > 0 && type == ChakraProtoMsg::COMP_NODE) attr_size(node, "num_ops", op.flops);
        if (op.bytes > 0) attr_size(node, "tensor_size", op.bytes);
      }
      if (op.stream.cls == StreamClass::kHost) {
        AttributeProto* a = node->add_attr();
        a->set_name("is_cpu_op");
        a->set_bool_val(true);
      }
    } else if (op.kind == OpKind::kTransfer) {
      if (op.src == op.dst)
        throw InputError("op \"" + op.name + "\": a transfer from device " +
                         std::to_string(op.src) +
                         " to itself has no Chakra form (send and receive on one rank)");
      Node* send = add_node(op.src, i, op.name, ChakraProtoMsg::COMM_SEND_NODE);
      attr_int(send, "comm_dst", op.dst);
      attr_size(send, "comm_size", op.transfer_bytes);
      attr_int(send, "comm_tag", i);
      at.push_back({op.src, ranks_[op.src].size() - 1});
      Node* recv = add_node(op.dst, i, op.name, ChakraProtoMsg::COMM_RECV_NODE);
      attr_int(recv, "comm_src", op.src);
      attr_size(recv, "comm_size", op.transfer_bytes);
      attr_int(recv, "comm_tag", i);
      at.push_back({op.dst, ranks_[op.dst].size() - 1});
    } else {
      const Collective& c = g_.collectives[op.collective];
      std::string group;
      if (c.ranks != world) {
        auto it = group_names_.find(c.ranks);
        if (it == group_names_.end()) {
          it = group_names_.emplace(c.ranks, "group" + std::to_string(group_names_.size())).first;
          out_.comm_groups[it->second] = c.ranks;
        }
        group = it->second;
      }
      for (int r : c.ranks) {
        Node* node = add_node(r, i, op.name, ChakraProtoMsg::COMM_COLL_NODE);
        attr_int(node, "comm_type", comm_type(c.type));
        attr_size(node, "comm_size", chakra_comm_size(c));
        if (!group.empty()) {
          AttributeProto* a = node->add_attr();
          a->set_name("pg_name");
          a->set_string_val(group);
        }
        at.push_back({r, ranks_[r].size() - 1});
      }
    }
  }

  // The node of op `i` on `rank`, or nullptr when the op has none there.
  const std::pair<int, size_t>* node_on(int i, int rank) const {
    for (const auto& p : placed_[i])
      if (p.first == rank) return &p;
    return nullptr;
  }

  Node& node_at(const std::pair<int, size_t>& p) { return ranks_[p.first][p.second]; }

  // The id on `rank` of a node that completes with op `dep`: its own node, or the receive of a
  // zero-byte transfer from a rank where it has one.
  uint64_t dep_id(int dep, int rank, bool* ctrl) {
    if (node_on(dep, rank) != nullptr) {
      *ctrl = false;
      return static_cast<uint64_t>(dep);
    }
    *ctrl = true;
    auto key = std::make_pair(dep, rank);
    if (auto it = syncs_.find(key); it != syncs_.end()) return it->second;
    const uint64_t id = g_.ops.size() + out_.sync_pairs++;
    const int from = placed_[dep].front().first;
    const std::string name = "sync:" + g_.ops[dep].name + "->rank" + std::to_string(rank);
    Node* send = add_node(from, id, name, ChakraProtoMsg::COMM_SEND_NODE);
    send->add_data_deps(static_cast<uint64_t>(dep));
    attr_int(send, "comm_dst", rank);
    attr_size(send, "comm_size", 0);
    attr_int(send, "comm_tag", static_cast<int64_t>(id));
    Node* recv = add_node(rank, id, name, ChakraProtoMsg::COMM_RECV_NODE);
    attr_int(recv, "comm_src", from);
    attr_size(recv, "comm_size", 0);
    attr_int(recv, "comm_tag", static_cast<int64_t>(id));
    syncs_.emplace(key, id);
    return id;
  }

  void add_deps(int i) {
    for (int dep : g_.ops[i].deps) {
      // The dependent node: on a rank where the depended-on op has a node if there is one.
      const std::pair<int, size_t>* target = nullptr;
      for (const auto& p : placed_[i])
        if (node_on(dep, p.first) != nullptr) {
          target = &p;
          break;
        }
      if (target == nullptr) target = &placed_[i].front();
      bool ctrl = false;
      const uint64_t id = dep_id(dep, target->first, &ctrl);
      Node& node = node_at(*target);  // after dep_id: it may have added nodes to this rank
      if (ctrl) {
        node.add_ctrl_deps(id);
      } else {
        node.add_data_deps(id);
      }
    }
  }

  const ExecutionGraph& g_;
  std::vector<std::vector<Node>> ranks_;  // deque-like use: positions stay valid, not pointers
  std::vector<Placement> placed_;
  std::map<std::vector<int>, std::string> group_names_;
  std::map<std::pair<int, int>, uint64_t> syncs_;  // (op, rank) -> sync node id
  ChakraTraceSet out_;
};

}  // namespace

ChakraTraceSet encode_chakra_traces(const ExecutionGraph& graph) { return Writer(graph).run(); }

}  // namespace orrery
