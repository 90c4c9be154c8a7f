// A graph of transfers that all start at once, each on a stream of its own: what the platform
// tests replay to see links shared by max-min fairness. Devices are the named SimGrid hosts.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/execution_graph.h"

namespace orrery::testing {

inline ExecutionGraph concurrent_transfers(
    const std::vector<std::pair<std::string, std::string>>& flows, double bytes) {
  ExecutionGraph g;
  std::map<std::string, int> dev;
  auto device = [&](const std::string& h) {
    if (!dev.count(h)) {
      dev[h] = static_cast<int>(g.devices.size());
      Device d;
      d.name = d.host = d.launch_host = h;
      g.devices.push_back(d);
    }
    return dev[h];
  };
  int stream = 0;
  for (const auto& [a, b] : flows) {
    Op op;
    op.name = a + "_to_" + b;
    op.kind = OpKind::kTransfer;
    op.src = device(a);
    op.dst = device(b);
    op.device = op.src;
    op.stream = {StreamClass::kComm, stream++};
    op.transfer_bytes = bytes;
    g.ops.push_back(op);
  }
  return g;
}

}  // namespace orrery::testing
