#include "workloads/synthetic_dp.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "engine/size_estimate.h"

namespace orrery {

SizeEstimate estimate_data_parallel_size(const DataParallelPattern& p, double gpus) {
  const double n = gpus;
  const double layers = std::max(0, p.layers);
  SizeEstimate e;
  const double collectives = n > 1 ? layers : 0;
  e.ops = n * (2 * layers + 1) + (p.input_bytes > 0 ? n : 0) + collectives;
  const double flows =
      collectives * collective_flows(CollectiveType::kAllReduce, CollectiveAlgo::kRing, n, 1, 1);
  e.activities = e.ops - collectives + flows;
  // Each update op waits for every layer's all-reduce; each all-reduce for every GPU.
  const double deps = e.ops + 2 * n * layers;
  e.memory_bytes = e.ops * kBytesPerOp + deps * kBytesPerDep;
  char basis[128];
  std::snprintf(basis, sizeof basis, "%.0f GPUs x %.0f layers, %.3g all-reduce flows", n, layers,
                flows);
  e.basis = basis;
  return e;
}

ExecutionGraph make_data_parallel(const DataParallelPattern& p,
                                  const std::vector<GpuPlacement>& gpus) {
  check_size(estimate_data_parallel_size(p, static_cast<double>(gpus.size())), "workload",
             "the synthetic data-parallel workload");
  ExecutionGraph g;
  const int n = static_cast<int>(gpus.size());
  for (const auto& gp : gpus) g.devices.push_back({gp.host, gp.host, gp.launch_host, "", {}});
  std::map<std::string, int> cpu_device;
  if (p.input_bytes > 0)
    for (const auto& gp : gpus)
      if (!cpu_device.count(gp.launch_host)) {
        cpu_device[gp.launch_host] = static_cast<int>(g.devices.size());
        g.devices.push_back({gp.launch_host, gp.launch_host, gp.launch_host, "", {}});
      }

  // last[i]: the op after which GPU i's compute stream may go on.
  std::vector<int> last(n, -1);
  for (int i = 0; i < n; ++i) {
    if (p.input_bytes <= 0) continue;
    last[i] = append_transfer(g, "input.g" + std::to_string(i), i, {StreamClass::kCopyH2D, 0},
                              cpu_device[gpus[i].launch_host], i, p.input_bytes, "io", {});
  }
  auto deps_of = [](int op) { return op < 0 ? std::vector<int>{} : std::vector<int>{op}; };
  for (int l = 0; l < p.layers; ++l)
    for (int i = 0; i < n; ++i)
      last[i] = append_compute(g, "fwd" + std::to_string(l) + ".g" + std::to_string(i), i, {},
                               p.forward_time, "forward", deps_of(last[i]));

  std::vector<int> ranks(n);
  for (int i = 0; i < n; ++i) ranks[i] = i;
  std::vector<std::vector<int>> update_deps(n);
  for (int l = p.layers - 1; l >= 0; --l) {
    std::vector<std::vector<int>> grad_ready(n);
    for (int i = 0; i < n; ++i) {
      last[i] = append_compute(g, "bwd" + std::to_string(l) + ".g" + std::to_string(i), i, {},
                               p.forward_time * p.backward_factor, "backward", deps_of(last[i]));
      grad_ready[i] = {last[i]};
    }
    if (n == 1) {
      update_deps[0].push_back(grad_ready[0][0]);
      continue;
    }
    Collective c;
    c.type = CollectiveType::kAllReduce;
    c.algo = CollectiveAlgo::kRing;
    c.protocol = p.protocol;
    c.ranks = ranks;
    c.bytes = p.gradient_bytes;
    std::vector<int> deps;
    for (const auto& d : grad_ready) deps.push_back(d[0]);
    int done = append_collective(g, "allreduce" + std::to_string(l), c, "comm", std::move(deps));
    for (int i = 0; i < n; ++i) update_deps[i].push_back(done);
  }
  for (int i = 0; i < n; ++i) {
    auto deps = update_deps[i];
    deps.push_back(last[i]);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    append_compute(g, "update.g" + std::to_string(i), i, {}, p.update_time, "optimizer", deps);
  }
  return g;
}

}  // namespace orrery
