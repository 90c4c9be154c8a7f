// BytePS (Jiang et al., OSDI 2020; docs/strategies.md): data parallelism whose gradient sums run
// on summation servers, CPU processes on servers of their own or on the worker servers. Per
// gradient bucket, the GPUs of each worker server reduce-scatter it over NCCL; each GPU copies
// its shard to host memory and pushes one slice of it to every summation server; a server sums
// the slices of every worker server and answers every GPU's pull; each GPU copies its shard
// back and the server's GPUs all-gather the bucket before their updates. A worker server's NIC
// thus carries the bucket once out and once in, where a ring all-reduce carries 2(n-1)/n of it
// each way. Pushes and pulls are TCP streams of ps-lite, one core's worth each
// (StrategyOptions::host_stream_bandwidth).
#include <map>

#include "strategies/input_stage.h"
#include "strategies/model_index.h"
#include "strategies/strategy_parts.h"

namespace orrery {

void build_byteps(GraphBuilder& b, const PricedReplica& r, const ClusterLayout& layout,
                  const StrategyOptions& opt, const std::vector<int>& workers,
                  const std::vector<PsShard>& servers) {
  const ModelGraph& m = *r.model;
  const int n = static_cast<int>(workers.size());
  const int num_servers = static_cast<int>(servers.size());
  std::vector<int> gpu(n), cpu(n);
  std::map<int, std::vector<int>> local;  // worker server -> positions of its GPUs
  for (int i = 0; i < n; ++i) {
    const ClusterGpu& g = layout.gpus[workers[i]];
    gpu[i] = b.gpu(g);
    cpu[i] = b.cpu(g.launch_host, g.server);
    local[g.server].push_back(i);
  }
  std::vector<int> srv(num_servers);
  for (int s = 0; s < num_servers; ++s) srv[s] = b.cpu(servers[s].host, servers[s].server);
  const double machines = static_cast<double>(local.size());

  InputStage input(b, layout, opt, opt.input_bytes >= 0 ? opt.input_bytes : model_input_bytes(m));
  const auto buckets = gradient_buckets(m, opt.bucket_bytes, false);

  // A flow between two devices; none when both ends are one host (loopback).
  auto flow = [&](const std::string& name, int queue_device, Stream s, int src, int dst,
                  double bytes, std::vector<int> deps) {
    if (src == dst) return deps.empty() ? -1 : deps.back();
    return b.transfer(name, queue_device, s, src, dst, bytes, "comm", std::move(deps),
                      opt.host_stream_bandwidth);
  };

  std::vector<std::vector<int>> gate(n);
  for (int it = 0; it < opt.iterations; ++it) {
    const std::string ip = iteration_prefix(opt, it);
    std::vector<PlacedReplica> rep(n);
    for (int i = 0; i < n; ++i) {
      const std::string prefix = ip + "g" + std::to_string(i) + "/";
      std::vector<int> deps = gate[i];
      int batch = input.batch(workers[i], gpu[i], it, prefix);
      if (batch >= 0) deps.push_back(batch);
      rep[i] = b.place(gpu[i], prefix, deps);
    }
    std::vector<std::vector<int>> done(buckets.size(), std::vector<int>(n, -1));
    for (size_t k = 0; k < buckets.size(); ++k) {
      const std::string name = ip + "byteps.bucket" + std::to_string(k);
      double bytes = 0;
      for (int j : buckets[k]) bytes += m.ops[j].grads * dtype_bytes(m.ops[j].grad_dtype);
      // Each GPU's shard after its server's reduce-scatter.
      std::vector<int> shard_ready(n, -1);
      std::vector<double> shard(n, bytes);
      for (const auto& [server, pos] : local) {
        std::vector<int> deps;
        for (int i : pos)
          for (int j : buckets[k]) deps.push_back(rep[i].ops[j]);
        const double g = static_cast<double>(pos.size());
        if (pos.size() > 1) {
          std::vector<int> ranks;
          for (int i : pos) ranks.push_back(gpu[i]);
          const int rs = b.collective(
              name + ".rs" + std::to_string(server),
              make_collective(CollectiveType::kReduceScatter, ranks, bytes, opt, r), "comm", deps);
          for (int i : pos) shard_ready[i] = rs;
        } else {
          shard_ready[pos[0]] = b.compute(name + ".ready" + std::to_string(server), gpu[pos[0]],
                                          {StreamClass::kComm, 0}, 0, 0, 0, "comm", deps);
        }
        for (int i : pos) shard[i] = bytes / g;
      }
      // Copies to host and pushes of a slice per summation server.
      std::vector<std::vector<int>> pushed(num_servers);
      std::vector<int> on_host(n);
      for (int i = 0; i < n; ++i) {
        const std::string gi = name + ".g" + std::to_string(i);
        on_host[i] = b.transfer(gi + ".d2h", gpu[i], {StreamClass::kCopyD2H, 0}, gpu[i], cpu[i],
                                shard[i], "comm", {shard_ready[i]});
        for (int s = 0; s < num_servers; ++s)
          pushed[s].push_back(flow(gi + ".push" + std::to_string(s), gpu[i],
                                   {StreamClass::kComm, 1 + 2 * s}, cpu[i], srv[s],
                                   shard[i] / num_servers, {on_host[i]}));
      }
      // Each summation server adds the machines' slices: every worker server sent bytes / S.
      std::vector<int> summed(num_servers);
      for (int s = 0; s < num_servers; ++s) {
        const double slice = bytes / num_servers;
        summed[s] =
            b.compute(name + ".sum" + std::to_string(s), srv[s], kCpuMemoryBus, -1.0,
                      (machines - 1) * slice / 4, (machines + 1) * slice, "comm", pushed[s]);
      }
      // Pulls, copies back and the all-gather inside each worker server.
      std::vector<int> back(n);
      for (int i = 0; i < n; ++i) {
        const std::string gi = name + ".g" + std::to_string(i);
        std::vector<int> pulled;
        for (int s = 0; s < num_servers; ++s)
          pulled.push_back(flow(gi + ".pull" + std::to_string(s), gpu[i],
                                {StreamClass::kComm, 2 + 2 * s}, srv[s], cpu[i],
                                shard[i] / num_servers, {summed[s]}));
        back[i] = b.transfer(gi + ".h2d", gpu[i], {StreamClass::kCopyH2D, 0}, cpu[i], gpu[i],
                             shard[i], "comm", pulled);
      }
      for (const auto& [server, pos] : local) {
        if (pos.size() < 2) {
          done[k][pos[0]] = back[pos[0]];
          continue;
        }
        std::vector<int> ranks, deps;
        for (int i : pos) {
          ranks.push_back(gpu[i]);
          deps.push_back(back[i]);
        }
        const int ag = b.collective(
            name + ".ag" + std::to_string(server),
            make_collective(CollectiveType::kAllGather, ranks, bytes, opt, r), "comm", deps);
        for (int i : pos) done[k][i] = ag;
      }
    }
    updates_wait_for_buckets(b, m, buckets, rep, done);
    for (int i = 0; i < n; ++i) gate[i] = rep[i].sinks;
  }
}

}  // namespace orrery
