// Parameters held by CPUs.
//
// PS/Worker as deployed (PAI section II-A; docs/strategies.md): variables live on PS shards,
// CPU processes on dedicated servers or on the worker servers themselves. Every pull and push of
// a variable is a request with a fixed software cost at both ends; with `copies`, a GPU tensor
// crosses PCIe to host memory, each end copies it once (serialization, socket buffers) and
// streams it through the request's RPC thread at the stack's rate (rpc_bandwidth) before or after
// the network flow, as TensorFlow's gRPC transport does. The PS sums the workers'
// gradients and applies the optimizer on its CPU; copies, sums and updates of one socket queue on
// its memory bus, so shards on one CPU share its memory bandwidth. A colocated shard's flows and
// its server's workers' flows cross the same NIC. A worker starts forward once every pull of the
// step is on its GPU (TensorFlow's synchronous PS), or per layer when `pulls: per_layer`.
//
// 1wng is the single-server case without requests: the server's own CPU holds the parameters,
// weights and gradients cross the PCIe tree the replicas share.
#include <algorithm>
#include <map>
#include <numeric>

#include "common/errors.h"
#include "strategies/input_stage.h"
#include "strategies/model_index.h"
#include "strategies/ps_placement.h"
#include "strategies/strategy_parts.h"

namespace orrery {
namespace {

// The RPC threads of CPU devices, each a comm queue that serves one request at a time: a worker
// sends and answers on one thread per direction; a shard serves worker i on thread i mod cores.
// Requests on different threads run in parallel, sharing the CPU's cores.
class RpcThreads {
 public:
  Stream of(int device, const std::string& thread) {
    auto [it, fresh] = index_.emplace(std::make_pair(device, thread), 0);
    if (fresh) it->second = next_[device]++;
    return {StreamClass::kComm, it->second};
  }

 private:
  std::map<std::pair<int, std::string>, int> index_;
  std::map<int, int> next_;
};

// The optimizer update of a variable as the model counts it (reads and writes of weights and
// optimizer state); plain SGD (read weights and gradient, write weights) when it counts none.
void update_work(const ModelGraph& m, const Variable& var, double* flops, double* bytes) {
  *flops = *bytes = 0;
  for (int j : var.updates) {
    *flops += m.ops[j].flops;
    *bytes += m.ops[j].bytes;
  }
  if (*flops <= 0 && *bytes <= 0) {
    *flops = 2 * var.params;
    *bytes = 12 * var.params;
  }
}

}  // namespace

void build_ps_worker(GraphBuilder& b, const PricedReplica& r, const ClusterLayout& layout,
                     const StrategyOptions& opt, const std::vector<int>& workers,
                     const std::vector<PsShard>& shards) {
  const ModelGraph& m = *r.model;
  const PsOptions& ps = opt.ps;
  const int n = static_cast<int>(workers.size());
  const int num_shards = static_cast<int>(shards.size());
  std::vector<int> gpu(n), cpu(n);
  for (int i = 0; i < n; ++i) {
    const ClusterGpu& g = layout.gpus[workers[i]];
    gpu[i] = b.gpu(g);
    cpu[i] = b.cpu(g.launch_host, g.server);
  }
  std::vector<int> ps_dev(num_shards);
  for (int k = 0; k < num_shards; ++k) ps_dev[k] = b.cpu(shards[k].host, shards[k].server);

  const auto vars = model_variables(m);
  const auto pieces = place_variables(vars, num_shards, ps.policy);
  auto piece_name = [&](size_t p) {
    const std::string& layer = vars[pieces[p].var].layer;
    return ps.policy == PsPolicy::kPartitioned ? layer + ".s" + std::to_string(pieces[p].shard)
                                               : layer;
  };
  // Pulls are requested in the order forward reads the variables.
  auto first_use = [&](size_t p) {
    const Variable& v = vars[pieces[p].var];
    return v.forward.empty() ? static_cast<int>(m.ops.size()) : v.forward.front();
  };
  std::vector<size_t> pull_order(pieces.size());
  std::iota(pull_order.begin(), pull_order.end(), 0);
  std::stable_sort(pull_order.begin(), pull_order.end(),
                   [&](size_t a, size_t c) { return first_use(a) < first_use(c); });
  std::vector<char> is_update(m.ops.size(), 0);
  for (const auto& v : vars)
    for (int j : v.updates) is_update[j] = 1;

  // On a worker's GPU, flows to and from shard k have their own queues (one connection per shard
  // and direction, in parallel); the staging copies share the GPU's two copy engines.
  auto pull_queue = [](int k) { return Stream{StreamClass::kComm, 2 * k}; };
  auto push_queue = [](int k) { return Stream{StreamClass::kComm, 2 * k + 1}; };
  const Stream h2d{StreamClass::kComm, 2 * num_shards};
  const Stream d2h{StreamClass::kComm, 2 * num_shards + 1};
  RpcThreads threads;
  auto server_thread = [&](int k, int i) {
    return "s" + std::to_string(k) + " thread " + std::to_string(i % shards[k].cores);
  };
  // Half a round trip of software at each end of a request.
  auto rpc = [&](const std::string& name, int device, Stream s, std::vector<int> deps) {
    return b.compute(name, device, s, ps.rpc_overhead / 2, 0, 0, "comm", std::move(deps));
  };
  // Work on a socket's memory bus, priced by the replay from the host's speed and memory
  // bandwidth; nothing to move takes no time.
  auto on_bus = [&](const std::string& name, int device, double flops, double bytes,
                    const char* phase, std::vector<int> deps) {
    const double duration = flops > 0 || bytes > 0 ? -1.0 : 0.0;
    return b.compute(name, device, kCpuMemoryBus, duration, flops, bytes, phase, std::move(deps));
  };
  // A copy reads and writes every byte.
  auto copy = [&](const std::string& name, int device, double bytes, std::vector<int> deps) {
    return on_bus(name, device, 0, 2 * bytes, "comm", std::move(deps));
  };
  // The RPC stack streaming a request's bytes on the request's thread
  // (PsOptions::rpc_bandwidth).
  auto stack = [&](const std::string& name, int device, Stream thread, double bytes, int dep) {
    if (ps.rpc_bandwidth <= 0 || bytes <= 0) return dep;
    return b.compute(name, device, thread, bytes / ps.rpc_bandwidth, 0, 0, "comm", {dep});
  };
  // A flow between two devices; none when both ends are one host (loopback is the copies).
  auto flow = [&](const std::string& name, int queue_device, Stream s, int src, int dst,
                  double bytes, int dep) {
    if (src == dst) return dep;
    return b.transfer(name, queue_device, s, src, dst, bytes, "comm", {dep});
  };

  InputStage input(b, layout, opt, opt.input_bytes >= 0 ? opt.input_bytes : model_input_bytes(m));
  std::vector<std::vector<int>> gate(n);
  std::vector<int> last_update(pieces.size(), -1);
  for (int it = 0; it < opt.iterations; ++it) {
    const std::string ip = iteration_prefix(opt, it);
    std::vector<std::vector<int>> arrived(pieces.size());  // per piece, each worker's push
    for (int i = 0; i < n; ++i) {
      const std::string prefix = ip + "w" + std::to_string(i) + "/";
      const std::string wi = "w" + std::to_string(i);
      std::vector<int> pulled(pieces.size(), -1);
      for (size_t p : pull_order) {
        const int k = pieces[p].shard;
        const double bytes = vars[pieces[p].var].pull_bytes * pieces[p].fraction;
        const std::string name = prefix + piece_name(p) + ".pull";
        const Stream ps_thread = threads.of(ps_dev[k], server_thread(k, i));
        const Stream thread = threads.of(cpu[i], wi + " pull");
        std::vector<int> after_update;
        if (last_update[p] >= 0) after_update.push_back(last_update[p]);
        int last = rpc(name + ".ps_rpc", ps_dev[k], ps_thread, after_update);
        if (ps.copies) {
          last = copy(name + ".ps_copy", ps_dev[k], bytes, {last});
          last = stack(name + ".ps_stack", ps_dev[k], ps_thread, bytes, last);
          last = flow(name, gpu[i], pull_queue(k), ps_dev[k], cpu[i], bytes, last);
          last = rpc(name + ".rpc", cpu[i], thread, {last});
          last = stack(name + ".stack", cpu[i], thread, bytes, last);
          last = copy(name + ".copy", cpu[i], bytes, {last});
          last = flow(name + ".h2d", gpu[i], h2d, cpu[i], gpu[i], bytes, last);
        } else {
          last = flow(name, gpu[i], pull_queue(k), ps_dev[k], gpu[i], bytes, last);
          last = rpc(name + ".rpc", cpu[i], thread, {last});
        }
        pulled[p] = last;
      }

      std::vector<int> deps = gate[i];
      int batch = input.batch(workers[i], gpu[i], it, prefix);
      if (batch >= 0) deps.push_back(batch);
      if (ps.pulls == PsPulls::kAll) deps.insert(deps.end(), pulled.begin(), pulled.end());
      PlacedReplica rep =
          b.place(gpu[i], prefix, deps, [&](size_t j) { return is_update[j] != 0; });
      if (ps.pulls == PsPulls::kPerLayer)
        for (size_t p = 0; p < pieces.size(); ++p)
          for (int j : vars[pieces[p].var].forward) b.add_dep(rep.ops[j], pulled[p]);

      // Pushes follow backward, each as soon as its gradient exists.
      for (size_t p = 0; p < pieces.size(); ++p) {
        const Variable& var = vars[pieces[p].var];
        const int k = pieces[p].shard;
        const double bytes = var.grad_bytes * pieces[p].fraction;
        const std::string name = prefix + piece_name(p) + ".push";
        const Stream ps_thread = threads.of(ps_dev[k], server_thread(k, i));
        const Stream thread = threads.of(cpu[i], wi + " push");
        std::vector<int> grads;
        for (int j : var.grads) grads.push_back(rep.ops[j]);
        int last;
        if (ps.copies) {
          last = b.transfer(name + ".d2h", gpu[i], d2h, gpu[i], cpu[i], bytes, "comm", grads);
          last = rpc(name + ".rpc", cpu[i], thread, {last});
          last = copy(name + ".copy", cpu[i], bytes, {last});
          last = stack(name + ".stack", cpu[i], thread, bytes, last);
          last = flow(name, gpu[i], push_queue(k), cpu[i], ps_dev[k], bytes, last);
          last = rpc(name + ".ps_rpc", ps_dev[k], ps_thread, {last});
          last = stack(name + ".ps_stack", ps_dev[k], ps_thread, bytes, last);
          last = copy(name + ".ps_copy", ps_dev[k], bytes, {last});
        } else {
          last = rpc(name + ".rpc", cpu[i], thread, grads);
          last = flow(name, gpu[i], push_queue(k), gpu[i], ps_dev[k], bytes, last);
          last = rpc(name + ".ps_rpc", ps_dev[k], ps_thread, {last});
        }
        arrived[p].push_back(last);
      }
      gate[i] = rep.sinks;
    }

    // The shard sums the n gradients (reads n, writes one, an add per element and worker) and
    // applies the optimizer, both on its cores and its socket's memory bus.
    for (size_t p = 0; p < pieces.size(); ++p) {
      const Variable& var = vars[pieces[p].var];
      const PsShard& shard = shards[pieces[p].shard];
      const double f = pieces[p].fraction;
      const double elems = (var.sparse ? var.grad_bytes / 4.0 : var.params) * f;
      const double grad_bytes = var.grad_bytes * f;
      const int dev = ps_dev[pieces[p].shard];
      const std::string name = ip + "ps/" + piece_name(p);
      int sum = on_bus(name + ".aggregate", dev, n * elems / shard.cores, (n + 1) * grad_bytes,
                       "optimizer", arrived[p]);
      double flops, bytes;
      update_work(m, var, &flops, &bytes);
      last_update[p] =
          on_bus(name + ".update", dev, flops * f / shard.cores, bytes * f, "optimizer", {sum});
    }
  }
}

void build_parameter_server(GraphBuilder& b, const PricedReplica& r, const ClusterLayout& layout,
                            const StrategyOptions& opt, const std::vector<int>& workers) {
  const ModelGraph& m = *r.model;
  const int n = static_cast<int>(workers.size());
  std::vector<int> dev(n);
  for (int i = 0; i < n; ++i) dev[i] = b.gpu(layout.gpus[workers[i]]);
  const int cpu = b.cpu(layout.servers[0].cpus.at(0), 0);

  const auto vars = model_variables(m);
  // Pulls are issued in the order forward needs the variables, so the first layers can start
  // while later weights are still in flight; pushes follow backward.
  std::vector<size_t> pull_order(vars.size());
  std::iota(pull_order.begin(), pull_order.end(), 0);
  auto first_use = [&](size_t v) {
    return vars[v].forward.empty() ? static_cast<int>(m.ops.size()) : vars[v].forward.front();
  };
  std::stable_sort(pull_order.begin(), pull_order.end(),
                   [&](size_t a, size_t c) { return first_use(a) < first_use(c); });
  std::vector<char> is_update(m.ops.size(), 0);
  for (const auto& v : vars)
    for (int j : v.updates) is_update[j] = 1;
  // The copies use the GPU's copy engines.
  const Stream pull_stream{StreamClass::kCopyH2D, 1};
  const Stream push_stream{StreamClass::kCopyD2H, 0};

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
        int pull = b.transfer(prefix + var.layer + ".pull", dev[i], pull_stream, cpu, dev[i],
                              var.pull_bytes, "comm", after_update);
        for (int j : var.forward) b.add_dep(rep.ops[j], pull);
      }
      for (size_t v = 0; v < vars.size(); ++v) {
        std::vector<int> grads;
        for (int j : vars[v].grads) grads.push_back(rep.ops[j]);
        pushes[v].push_back(b.transfer(prefix + vars[v].layer + ".push", dev[i], push_stream,
                                       dev[i], cpu, vars[v].grad_bytes, "comm", grads));
      }
      gate[i] = rep.sinks;
    }
    // The CPU sums the replicas' gradients and applies the update: about one flop per element
    // per replica plus the optimizer, streaming every gradient and the weights through memory.
    const int threads = std::max<int>(1, static_cast<int>(layout.servers[0].gpus.size()));
    for (size_t v = 0; v < vars.size(); ++v) {
      const Variable& var = vars[v];
      const double elems = var.sparse ? var.grad_bytes / 4.0 : var.params;
      last_update[v] = b.compute(ip + "ps/" + var.layer + ".update", cpu,
                                 {StreamClass::kCompute, static_cast<int>(v % threads)}, -1.0,
                                 elems * (n + 2), 4.0 * elems * (n + 3), "optimizer", pushes[v]);
    }
  }
}

}  // namespace orrery
