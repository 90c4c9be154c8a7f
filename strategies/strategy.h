// Distribution strategies (PAI, section II-A and Table II): turning one
// replica's priced ModelGraph into an ExecutionGraph over the platform's devices, with the
// communication each architecture needs (PCIe weight/gradient copies, PS pulls and pushes,
// all-reduce buckets, PEARL's partitioned embeddings) left to the simulation.
#pragma once

#include <string>
#include <vector>

#include "engine/execution_graph.h"
#include "platforms/device_spec.h"
#include "strategies/cluster_layout.h"
#include "strategies/ps_options.h"
#include "workloads/model_graph.h"

namespace orrery {

enum class StrategyType { k1w1g, k1wng, kPsWorker, kAllReduce, kPearl, kBytePs };
// "1w1g", "1wng", "ps_worker", "allreduce", "pearl", "byteps"
const char* strategy_name(StrategyType t);
bool parse_strategy(const std::string& s, StrategyType* out);

struct CollectiveOptions {
  CollectiveAlgo algo = CollectiveAlgo::kAuto;
  // auto: NCCL's algorithms, protocols and latencies as its tuner picks them; ideal: bytes over
  // links only (engine/collective_plan.h).
  CollectiveProtocol protocol = CollectiveProtocol::kAuto;
  int pipeline = 0;  // multi-phase algorithms: chunks through the phases (0: by size)
  int chunks = 1;
  bool analytical = false;  // alpha-beta instead of flows
};

struct StrategyOptions {
  StrategyType type = StrategyType::kAllReduce;
  int gpus = 0;  // worker GPUs to use (0: all the strategy can use)

  // allreduce / pearl: gradients fused into buckets of at least this many bytes, all-reduced
  // as backward produces them (Horovod / PyTorch DDP tensor fusion; DDP's default is 25 MiB).
  double bucket_bytes = 25.0 * 1024 * 1024;
  bool overlap = true;  // false: every bucket waits for the end of backward
  // allreduce: true runs each bucket's all-reduce on the hosts, as Horovod does without GPU
  // operations (MPI or Gloo over TCP): the bucket is copied to host memory, summed over the
  // workers of each CPU socket, all-reduced in a ring between the sockets (bytes over links,
  // the sums at the sockets' memory bandwidth) and copied back to every GPU.
  bool host_allreduce = false;
  // What one CPU core pushes through the kernel's TCP stack for one stream, bytes/s: each ring
  // step of a host all-reduce moves at most this. Default: Gloo between two 40 GbE machines with
  // a core per process, about 1.07 GB/s (facebookincubator/gloo issue 248).
  double host_stream_bandwidth = 1.07e9;
  CollectiveOptions collectives;
  // AllReduce SM contention (Tianshu section 3.3): a collective holds
  // sms_used of each GPU's SMs while it runs (16 of 80 on a V100 by default).
  bool sm_contention = true;
  int sms_used = 16;

  int ps_servers = 1;  // ps_worker, placement dedicated: servers given to parameter servers
  PsOptions ps;        // ps_worker: placement, shards, variable policy, request costs

  // Input I/O (T_d of PAI): the batch copied host -> GPU each iteration; < 0 derives it from
  // the model's first input. An optional CPU input-pipeline stage per batch (Cachew,
  // docs/references.md) runs ahead of the GPUs, `prefetch` batches deep.
  double input_bytes = -1;
  double input_pipeline_time = 0;
  int prefetch = 1;

  // Per-kernel launch ops on each GPU's CPU thread (models/host_overhead.h): PyTorch's eager
  // mode. false: the step runs as one CUDA graph (no per-kernel host time).
  bool host_overheads = true;
  int iterations = 1;  // consecutive training steps to simulate
};

// What a strategy needs to know about one replica: the model, each op's duration on the
// target GPU, and the device spec (for SM counts and memory-bound classification).
struct PricedReplica {
  const ModelGraph* model = nullptr;
  std::vector<double> seconds;  // parallel to model->ops
  const DeviceSpec* device = nullptr;
};

// Builds the per-device graph. Throws InputError when the platform cannot host the strategy
// (e.g. ps_worker on one server, 1wng asked for more GPUs than a server has).
ExecutionGraph build_strategy(const PricedReplica& replica, const ClusterLayout& layout,
                              const StrategyOptions& options);

// Bytes one replica's input batch takes: the model's first forward op's first input.
double model_input_bytes(const ModelGraph& model);

}  // namespace orrery
