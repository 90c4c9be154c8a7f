// Parameters held by CPUs. PS/Worker (PAI section II-A): variables are
// sharded over parameter-server hosts, largest first onto the least-loaded PS (TensorFlow's
// greedy load balancing by size); each worker pulls a variable before the forward op that reads
// it and pushes its gradient as soon as backward produces it; the PS aggregates every worker's
// gradient and updates the variable. 1wng is the same with the server's own CPU as the only
// PS, so weights and gradients cross the PCIe tree the replicas share.
#include <algorithm>
#include <numeric>

#include "common/errors.h"
#include "strategies/input_stage.h"
#include "strategies/model_index.h"
#include "strategies/strategy_parts.h"

namespace orrery {
namespace {

// Variable index -> PS index, largest variable first onto the least-loaded PS.
std::vector<int> shard_by_size(const std::vector<Variable>& vars, int num_ps) {
  std::vector<int> order(vars.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return vars[a].pull_bytes > vars[b].pull_bytes; });
  std::vector<double> load(num_ps, 0.0);
  std::vector<int> ps_of(vars.size());
  for (int v : order) {
    int p = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    ps_of[v] = p;
    load[p] += vars[v].pull_bytes;
  }
  return ps_of;
}

}  // namespace

void build_parameter_server(GraphBuilder& b, const PricedReplica& r, const ClusterLayout& layout,
                            const StrategyOptions& opt, const std::vector<int>& workers,
                            const std::vector<int>& ps_servers, bool local) {
  const ModelGraph& m = *r.model;
  const int n = static_cast<int>(workers.size());
  std::vector<int> dev(n);
  for (int i = 0; i < n; ++i) dev[i] = b.gpu(layout.gpus[workers[i]]);
  std::vector<int> ps;
  for (int s : ps_servers) ps.push_back(b.cpu(layout.servers[s].cpus.at(0), s));

  const auto vars = model_variables(m);
  const auto ps_of = shard_by_size(vars, static_cast<int>(ps.size()));
  // Pulls are issued in the order forward needs the variables, so the first layers can start
  // while later weights are still in flight; pushes follow backward.
  std::vector<size_t> pull_order(vars.size());
  std::iota(pull_order.begin(), pull_order.end(), 0);
  auto first_use = [&](size_t v) {
    return vars[v].forward.empty() ? static_cast<int>(m.ops.size()) : vars[v].forward.front();
  };
  std::stable_sort(pull_order.begin(), pull_order.end(),
                   [&](size_t a, size_t b) { return first_use(a) < first_use(b); });
  std::vector<char> is_update(m.ops.size(), 0);
  for (const auto& v : vars)
    for (int j : v.updates) is_update[j] = 1;

  // Over PCIe (1wng) the copies use the GPU's copy engines; over the network, each worker holds
  // one connection per PS and direction, so traffic to different PS hosts runs concurrently.
  auto pull_stream = [&](int ps_index) {
    return local ? Stream{StreamClass::kCopyH2D, 1} : Stream{StreamClass::kComm, 2 * ps_index};
  };
  auto push_stream = [&](int ps_index) {
    return local ? Stream{StreamClass::kCopyD2H, 0} : Stream{StreamClass::kComm, 2 * ps_index + 1};
  };

  InputStage input(b, layout, opt, opt.input_bytes >= 0 ? opt.input_bytes : model_input_bytes(m));
  std::vector<std::vector<int>> gate(n);
  std::vector<int> last_update(vars.size(), -1);
  for (int it = 0; it < opt.iterations; ++it) {
    const std::string ip = iteration_prefix(opt, it);
    std::vector<std::vector<int>> pushes(vars.size());
    for (int i = 0; i < n; ++i) {
      const std::string prefix = ip + "w" + std::to_string(i) + "/";
      std::vector<int> deps = gate[i];
      int copy = input.batch(workers[i], dev[i], it, prefix);
      if (copy >= 0) deps.push_back(copy);
      PlacedReplica rep =
          b.place(dev[i], prefix, deps, [&](size_t j) { return is_update[j] != 0; });
      for (size_t v : pull_order) {
        const Variable& var = vars[v];
        std::vector<int> after_update;
        if (last_update[v] >= 0) after_update.push_back(last_update[v]);
        int pull = b.transfer(prefix + var.layer + ".pull", dev[i], pull_stream(ps_of[v]),
                              ps[ps_of[v]], dev[i], var.pull_bytes, "comm", after_update);
        for (int j : var.forward) b.add_dep(rep.ops[j], pull);
      }
      for (size_t v = 0; v < vars.size(); ++v) {
        const Variable& var = vars[v];
        int p = ps[ps_of[v]];
        std::vector<int> grads;
        for (int j : var.grads) grads.push_back(rep.ops[j]);
        pushes[v].push_back(b.transfer(prefix + var.layer + ".push", dev[i], push_stream(ps_of[v]),
                                       dev[i], p, var.grad_bytes, "comm", grads));
      }
      gate[i] = rep.sinks;
    }
    // The PS sums the workers' gradients and applies the update: about one flop per element
    // per worker plus the optimizer, streaming every gradient and the weights through memory.
    for (size_t v = 0; v < vars.size(); ++v) {
      const Variable& var = vars[v];
      const double elems = var.sparse ? var.grad_bytes / 4.0 : var.params;
      int p = ps[ps_of[v]];
      int threads =
          std::max<int>(1, static_cast<int>(layout.servers[ps_servers[ps_of[v]]].gpus.size()));
      last_update[v] = b.compute(ip + "ps/" + var.layer + ".update", p,
                                 {StreamClass::kCompute, static_cast<int>(v % threads)}, -1.0,
                                 elems * (n + 2), 4.0 * elems * (n + 3), "optimizer", pushes[v]);
    }
  }
}

}  // namespace orrery
