#include "workloads/fixed_rate_graph.h"

namespace orrery {

ExecutionGraph fixed_rate_graph(const ModelGraph& g, const std::string& host,
                                   double flops_per_second) {
  ExecutionGraph e;
  Device d;
  d.name = d.host = d.launch_host = d.node = host;
  e.devices.push_back(d);
  e.ops.reserve(g.ops.size());
  for (const ModelOp& m : g.ops) {
    Op op;
    op.name = m.name;
    op.device = 0;
    op.duration = m.flops / flops_per_second;
    op.flops = m.flops;
    op.bytes = m.bytes;
    op.phase = phase_name(m.phase);
    op.deps = m.deps;
    e.ops.push_back(std::move(op));
  }
  return e;
}

}  // namespace orrery
