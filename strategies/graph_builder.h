// GraphBuilder: the small vocabulary every strategy writes its ExecutionGraph with: devices,
// a replica's ops placed on one GPU, transfers, collectives.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/execution_graph.h"
#include "strategies/strategy.h"

namespace orrery {

// Where a replica's ops landed: op index of every model op (parallel to model.ops), the ops
// that start it (no deps inside the replica) and the ops that end it (no successors).
struct PlacedReplica {
  int device = -1;
  std::vector<int> ops;
  std::vector<int> sources;
  std::vector<int> sinks;
};

class GraphBuilder {
 public:
  explicit GraphBuilder(const PricedReplica& replica) : replica_(replica) {}

  // Adds a device once (by name) and returns its index.
  int device(const std::string& name, const std::string& host, const std::string& launch_host,
             const std::string& node);
  int gpu(const ClusterGpu& g);  // device named after its host, node = server
  int cpu(const std::string& host, int server);

  // Copies every op of the replica onto `device`, names prefixed with `prefix`; `skip(j)` leaves
  // model op j out (a strategy that moves the optimizer to a parameter server). Source ops also
  // depend on `gate`.
  template <typename Skip>
  PlacedReplica place(int device, const std::string& prefix, const std::vector<int>& gate,
                      Skip skip);
  PlacedReplica place(int device, const std::string& prefix, const std::vector<int>& gate) {
    return place(device, prefix, gate, [](size_t) { return false; });
  }

  int compute(const std::string& name, int device, Stream stream, double duration, double flops,
              double bytes, const std::string& phase, std::vector<int> deps);
  // `max_rate` > 0: the flow moves at most that many bytes/s (Op::max_rate).
  int transfer(const std::string& name, int queue_device, Stream stream, int src, int dst,
               double bytes, const std::string& phase, std::vector<int> deps, double max_rate = 0);
  int collective(const std::string& name, Collective c, const std::string& phase,
                 std::vector<int> deps);

  void reserve(size_t ops) { g_.ops.reserve(ops); }
  void add_dep(int op, int dep) { g_.ops[op].deps.push_back(dep); }
  void set_stream(int op, Stream s) { g_.ops[op].stream = s; }
  // `device` runs its ops for `mirrors` too (Device::mirrors, engine/execution_graph.h).
  void set_mirrors(int device, std::vector<int> mirrors) {
    g_.devices[device].mirrors = std::move(mirrors);
  }
  ExecutionGraph take();
  const ExecutionGraph& graph() const { return g_; }

 private:
  const PricedReplica& replica_;
  ExecutionGraph g_;
  std::map<std::string, int> device_index_;
};

template <typename Skip>
PlacedReplica GraphBuilder::place(int device, const std::string& prefix,
                                  const std::vector<int>& gate, Skip skip) {
  const ModelGraph& m = *replica_.model;
  PlacedReplica out;
  out.device = device;
  out.ops.assign(m.ops.size(), -1);
  std::vector<char> has_succ(m.ops.size(), 0);
  for (size_t j = 0; j < m.ops.size(); ++j) {
    if (skip(j)) continue;
    const ModelOp& mo = m.ops[j];
    std::vector<int> deps;
    for (int d : mo.deps)
      if (out.ops[d] >= 0) {
        deps.push_back(out.ops[d]);
        has_succ[d] = 1;
      }
    if (deps.empty()) {
      deps = gate;
      out.sources.push_back(static_cast<int>(g_.ops.size()));
    }
    int idx = compute(prefix + mo.name, device, Stream{}, replica_.seconds[j], mo.flops, mo.bytes,
                      phase_name(mo.phase), std::move(deps));
    // Memory-bound when the bytes take longer than the FLOPs at the device's peaks.
    const DeviceSpec* dev = replica_.device;
    if (dev && dev->mem_bw > 0) {
      double peak = dev->peak_flops(mo.dtype, dev->tensor_cores);
      g_.ops[idx].memory_bound = peak <= 0 || mo.bytes / dev->mem_bw > mo.flops / peak;
    }
    out.ops[j] = idx;
  }
  for (size_t j = 0; j < m.ops.size(); ++j)
    if (out.ops[j] >= 0 && !has_succ[j]) out.sinks.push_back(out.ops[j]);
  return out;
}

}  // namespace orrery
