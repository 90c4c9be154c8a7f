#include "strategies/graph_builder.h"

namespace orrery {

int GraphBuilder::device(const std::string& name, const std::string& host,
                         const std::string& launch_host, const std::string& node) {
  auto [it, fresh] = device_index_.emplace(name, static_cast<int>(g_.devices.size()));
  if (fresh) g_.devices.push_back({name, host, launch_host, node, {}});
  return it->second;
}

int GraphBuilder::gpu(const ClusterGpu& g) {
  return device(g.host, g.host, g.launch_host, "server" + std::to_string(g.server));
}

int GraphBuilder::cpu(const std::string& host, int server) {
  return device(host, host, host, "server" + std::to_string(server));
}

int GraphBuilder::compute(const std::string& name, int device, Stream stream, double duration,
                          double flops, double bytes, const std::string& phase,
                          std::vector<int> deps) {
  return append_compute(g_, name, device, stream, duration, phase, std::move(deps), flops, bytes);
}

int GraphBuilder::transfer(const std::string& name, int queue_device, Stream stream, int src,
                           int dst, double bytes, const std::string& phase, std::vector<int> deps,
                           double max_rate) {
  const int op =
      append_transfer(g_, name, queue_device, stream, src, dst, bytes, phase, std::move(deps));
  g_.ops[op].max_rate = max_rate;
  return op;
}

int GraphBuilder::collective(const std::string& name, Collective c, const std::string& phase,
                             std::vector<int> deps) {
  return append_collective(g_, name, std::move(c), phase, std::move(deps));
}

ExecutionGraph GraphBuilder::take() { return std::move(g_); }

}  // namespace orrery
