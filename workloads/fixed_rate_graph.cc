#include "workloads/fixed_rate_graph.h"

namespace orrery {

ExecutionGraph fixed_rate_graph(const ModelGraph& g, const std::string& host,
                                   double flops_per_second) {
  ExecutionGraph e;
  Device d;
  d.name = d.host = d.launch_host = d.node = host;
  e.devices.push_back(d);
  e.ops.reserve(g.ops.size());
  for (const ModelOp& m : g.ops)
    append_compute(e, m.name, 0, {}, m.flops / flops_per_second, phase_name(m.phase), m.deps,
                   m.flops, m.bytes);
  return e;
}

}  // namespace orrery
