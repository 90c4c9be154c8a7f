// Data parallel strategies: every GPU runs a whole replica on its own batch; gradients are
// all-reduced in buckets as backward produces them (overlapping the rest of backward), and
// each parameter's update waits for its bucket. PEARL (PAI section IV-C,
// Fig. 14) additionally partitions sparse embeddings over the GPUs: the looked-up rows are
// gathered with AllGatherv in forward and their gradients reduce-scattered in backward, while
// dense weights are all-reduced as usual.
#include <map>

#include "strategies/input_stage.h"
#include "strategies/model_index.h"
#include "strategies/strategy_parts.h"
#include "workloads/op_counts.h"

namespace orrery {
namespace {

// A bucket all-reduced on the hosts (StrategyOptions::host_allreduce): each GPU copies the
// bucket to its socket's memory; each socket sums its GPUs' copies (reads them, writes one);
// the sockets run a ring all-reduce (bytes over links, each step at most one TCP stream's rate)
// and each sums what it receives, (h - 1)
// / h of the bucket read twice and written once; then every GPU copies the result back. Returns
// each GPU's last op (the copy back).
std::vector<int> host_allreduce(GraphBuilder& b, const std::string& name,
                                const std::vector<int>& gpu, const std::vector<int>& cpu,
                                double bytes, const std::vector<std::vector<int>>& deps,
                                const StrategyOptions& opt, const PricedReplica& r) {
  const int n = static_cast<int>(gpu.size());
  std::map<int, std::vector<int>> copies;  // socket device -> its GPUs' copies to host
  for (int i = 0; i < n; ++i)
    copies[cpu[i]].push_back(b.transfer(name + ".g" + std::to_string(i) + ".d2h", gpu[i],
                                        {StreamClass::kCopyD2H, 0}, gpu[i], cpu[i], bytes, "comm",
                                        deps[i]));
  // Sockets are named by their order of appearance: ".sum0", ".reduce1"...
  std::vector<int> sockets;
  std::vector<int> summed;
  for (const auto& [socket, in] : copies) {
    const std::string index = std::to_string(sockets.size());
    sockets.push_back(socket);
    const double k = static_cast<double>(in.size());
    summed.push_back(in.size() > 1 ? b.compute(name + ".sum" + index, socket, kCpuMemoryBus, -1.0,
                                               (k - 1) * bytes / 4, (k + 1) * bytes, "comm", in)
                                   : in[0]);
  }
  std::map<int, int> done;  // socket device -> the bucket's result in its memory
  if (sockets.size() > 1) {
    Collective c = make_collective(CollectiveType::kAllReduce, sockets, bytes, opt, r);
    c.protocol = CollectiveProtocol::kIdeal;
    c.algo = CollectiveAlgo::kRing;
    c.sm_share = 0;
    c.max_rate = opt.host_stream_bandwidth;
    const int ring = b.collective(name + ".ring", c, "comm", summed);
    const double h = static_cast<double>(sockets.size());
    for (size_t q = 0; q < sockets.size(); ++q)
      done[sockets[q]] =
          b.compute(name + ".reduce" + std::to_string(q), sockets[q], kCpuMemoryBus, -1.0,
                    (h - 1) / h * bytes / 4, 3 * (h - 1) / h * bytes, "comm", {ring});
  } else {
    done[sockets[0]] = summed[0];
  }
  std::vector<int> back(n);
  for (int i = 0; i < n; ++i)
    back[i] = b.transfer(name + ".g" + std::to_string(i) + ".h2d", gpu[i],
                         {StreamClass::kCopyH2D, 0}, cpu[i], gpu[i], bytes, "comm", {done[cpu[i]]});
  return back;
}

// Bytes of an embedding op's pooled output (what the other partitions' GPUs need).
double embedding_output_bytes(const ModelOp& op) {
  return static_cast<double>(numel(op.output)) * dtype_bytes(op.dtype);
}

}  // namespace

void updates_wait_for_buckets(GraphBuilder& b, const ModelGraph& m,
                              const std::vector<std::vector<int>>& buckets,
                              const std::vector<PlacedReplica>& rep,
                              const std::vector<std::vector<int>>& done) {
  std::map<int, int> bucket_of;  // weight-gradient op -> bucket
  for (size_t k = 0; k < buckets.size(); ++k)
    for (int j : buckets[k]) bucket_of[j] = static_cast<int>(k);
  for (size_t j = 0; j < m.ops.size(); ++j) {
    if (m.ops[j].phase != Phase::kOptimizer) continue;
    for (int d : m.ops[j].deps) {
      auto it = bucket_of.find(d);
      if (it == bucket_of.end()) continue;
      for (size_t i = 0; i < rep.size(); ++i) b.add_dep(rep[i].ops[j], done[it->second][i]);
    }
  }
}

std::pair<int, std::string> mirror_group(const ClusterGpu& g) { return {g.server, g.launch_host}; }

void build_data_parallel(GraphBuilder& b, const PricedReplica& r, const ClusterLayout& layout,
                         const StrategyOptions& opt, const std::vector<int>& gpus, bool pearl) {
  const ModelGraph& m = *r.model;
  const int n = static_cast<int>(gpus.size());
  std::vector<int> dev(n), ranks(n);
  std::vector<int> cpu(n);
  for (int i = 0; i < n; ++i) {
    const ClusterGpu& g = layout.gpus[gpus[i]];
    ranks[i] = dev[i] = b.gpu(g);
    if (opt.host_allreduce) cpu[i] = b.cpu(g.launch_host, g.server);
  }
  InputStage input(b, layout, opt, opt.input_bytes >= 0 ? opt.input_bytes : model_input_bytes(m));
  // Replicas on one CPU socket of a server compute alike and load their batches from the same
  // CPU: the first stands for the others (Device::mirrors), which still take part in every
  // all-reduce with flows of their own; the same step, some four times fewer ops on an
  // eight-GPU server. Not for PEARL's embedding partitions or all-reduces on the hosts, where
  // each GPU moves its own bytes to its own CPU.
  std::vector<int> live;  // indices into gpus of the replicas built
  {
    std::map<std::pair<int, std::string>, int> first;  // mirror_group -> its first
    std::map<int, std::vector<int>> mirrors;
    for (int i = 0; i < n; ++i) {
      auto [it, fresh] = first.try_emplace(mirror_group(layout.gpus[gpus[i]]), i);
      if (fresh || pearl || opt.host_allreduce) {
        live.push_back(i);
      } else {
        mirrors[it->second].push_back(dev[i]);
      }
    }
    for (auto& [i, m] : mirrors) b.set_mirrors(dev[i], std::move(m));
  }

  const auto buckets = gradient_buckets(m, opt.bucket_bytes, pearl);
  int last_backward = -1;
  for (size_t j = 0; j < m.ops.size(); ++j)
    if (m.ops[j].phase == Phase::kBackward) last_backward = static_cast<int>(j);

  std::vector<std::vector<int>> gate(n);
  for (int it = 0; it < opt.iterations; ++it) {
    const std::string ip = iteration_prefix(opt, it);
    std::vector<PlacedReplica> rep(n);
    for (int i : live) {
      std::vector<int> deps = gate[i];
      int copy = input.batch(gpus[i], dev[i], it, ip + "g" + std::to_string(i) + "/");
      if (copy >= 0) deps.push_back(copy);
      rep[i] = b.place(dev[i], ip + "g" + std::to_string(i) + "/", deps);
    }

    if (pearl && n > 1) {
      for (size_t j = 0; j < m.ops.size(); ++j) {
        const ModelOp& op = m.ops[j];
        const bool fwd = op.type == "embedding_fwd";
        const bool bwd = op.type == "embedding_bwd" && op.sparse_grad;
        if (!fwd && !bwd) continue;
        const double block =
            embedding_output_bytes(fwd ? op : m.ops[op.deps.empty() ? j : op.deps[0]]);
        Collective c =
            make_collective(fwd ? CollectiveType::kAllGather : CollectiveType::kReduceScatter,
                            ranks, block * n, opt, r);
        c.counts.assign(n, block);
        std::vector<int> deps;
        if (fwd) {
          for (int i = 0; i < n; ++i) deps.push_back(rep[i].ops[j]);
        } else {
          for (int i = 0; i < n; ++i)
            for (int d : op.deps) deps.push_back(rep[i].ops[d]);
        }
        int coll = b.collective(ip + op.name + (fwd ? ".allgatherv" : ".reducescatter"), c, "comm",
                                std::move(deps));
        for (int i = 0; i < n; ++i) {
          if (bwd) {
            b.add_dep(rep[i].ops[j], coll);
            continue;
          }
          // Whatever consumes the looked-up rows waits for the other partitions' rows.
          for (size_t k = j + 1; k < m.ops.size(); ++k)
            for (int d : m.ops[k].deps)
              if (d == static_cast<int>(j)) b.add_dep(rep[i].ops[k], coll);
        }
      }
    }

    // What ends each bucket on each GPU: the all-reduce, or on the hosts the GPU's copy back.
    std::vector<std::vector<int>> done(buckets.size());
    if (n > 1) {
      for (size_t k = 0; k < buckets.size(); ++k) {
        double bytes = 0;
        std::vector<int> deps;
        for (int j : buckets[k]) {
          bytes += m.ops[j].grads * dtype_bytes(m.ops[j].grad_dtype);
          for (int i : live) deps.push_back(rep[i].ops[j]);
        }
        if (!opt.overlap && last_backward >= 0)
          for (int i : live) deps.push_back(rep[i].ops[last_backward]);
        if (opt.host_allreduce) {
          std::vector<std::vector<int>> per_gpu(n);
          for (int i = 0; i < n; ++i) {
            for (int j : buckets[k]) per_gpu[i].push_back(rep[i].ops[j]);
            if (!opt.overlap && last_backward >= 0) per_gpu[i].push_back(rep[i].ops[last_backward]);
          }
          done[k] = host_allreduce(b, ip + "allreduce.bucket" + std::to_string(k), dev, cpu, bytes,
                                   per_gpu, opt, r);
          continue;
        }
        done[k].assign(live.size(), b.collective(ip + "allreduce.bucket" + std::to_string(k),
                                                 make_collective(CollectiveType::kAllReduce, ranks,
                                                                 bytes, opt, r),
                                                 "comm", std::move(deps)));
      }
      std::vector<PlacedReplica> built;
      for (int i : live) built.push_back(rep[i]);
      updates_wait_for_buckets(b, m, buckets, built, done);
    }
    for (int i : live) gate[i] = rep[i].sinks;
  }
}

}  // namespace orrery
