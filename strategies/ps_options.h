// How a parameter server is deployed (the `strategy.ps` mapping of a scenario): where its shards
// run, how variables are spread over them, what one request costs, and when workers may start
// forward. docs/strategies.md ("PS/Worker as deployed") gives the model and the sources.
//
// YAML keys (all optional):
//   placement: dedicated   # dedicated: shards on the first `strategy.ps_servers` servers, whose
//                          # GPUs stay idle; colocated: one shard on every worker server's CPU,
//                          # sharing its NIC with the workers there
//   shards: 0              # PS processes; 0: one per PS server
//   policy: greedy         # greedy | round_robin | partitioned
//   pulls: all             # all | per_layer
//   rpc_overhead: 73us     # software time of one request, round trip
//   rpc_bandwidth: 0.9GB/s # bytes/s one RPC thread streams a request; 0: unlimited
//   copies: true           # host staging and serialization copies
//   cores: 0               # a shard's cores (sums, updates, RPC threads); 0: its socket's
#pragma once

#include <string>

namespace orrery {

class YamlMap;

enum class PsPlacement { kDedicated, kColocated };

// Which shard holds which variable.
enum class PsPolicy {
  // Largest variable first onto the least-loaded shard, by bytes: TensorFlow's
  // GreedyLoadBalancingStrategy with byte_size_load_fn.
  kGreedy,
  // Variables in creation (forward) order, shard after shard: tf.train.replica_device_setter's
  // default.
  kRoundRobin,
  // Every variable cut into one slice per shard: TensorFlow's fixed_size_partitioner, and
  // MXNet's key-value store for arrays above its big-array bound.
  kPartitioned,
};

// When a worker may run forward.
enum class PsPulls {
  kAll,       // after every pull of the step is on the GPU (TensorFlow's synchronous PS)
  kPerLayer,  // each forward op as soon as its own variables are (Poseidon-style overlap)
};

struct PsOptions {
  PsPlacement placement = PsPlacement::kDedicated;
  int shards = 0;  // 0: one shard per PS server (dedicated) or per worker server (colocated)
  PsPolicy policy = PsPolicy::kGreedy;
  PsPulls pulls = PsPulls::kAll;
  // Seconds of software (framework, RPC stack, kernel TCP) per pull or push, round trip; half
  // runs on the worker's CPU and half on the PS's, each end one request at a time per
  // connection. Default: a gRPC unary call between two processes (docs/strategies.md).
  double rpc_overhead = 73e-6;
  // Bytes per second one RPC thread serializes, frames and hands to the kernel's TCP stack, or
  // takes back: with `copies` (gRPC), each request's bytes pass through the sending and the
  // receiving end's thread of that request (a shard serves worker i on thread i mod cores), so
  // a shard moves at most cores x this, whatever the NIC gives. 0: unlimited. Default:
  // TensorFlow's gRPC between two processes, 0.9 GB/s (tensorflow/tensorflow#6116); gRPC's
  // maintainers put one connection at about 1 GB/s, one core's worth (grpc/grpc-java#7839).
  double rpc_bandwidth = 0.9e9;
  // true: a GPU tensor crosses PCIe to host memory before it is sent and after it arrives, and
  // each end copies it once (serialization, socket buffers) at its CPU's memory bandwidth.
  // false: flows go straight between the GPU and the PS CPU (GPUDirect RDMA, no copies).
  bool copies = true;
  // Cores a shard has: its sums' and updates' flops are divided by it, and it serves requests on
  // that many RPC threads. 0: the cores of the shard's CPU socket host (in generated platforms,
  // one per GPU the socket drives, at least one).
  int cores = 0;
};

const char* ps_placement_name(PsPlacement p);  // "dedicated", "colocated"
const char* ps_policy_name(PsPolicy p);        // "greedy", "round_robin", "partitioned"
const char* ps_pulls_name(PsPulls p);          // "all", "per_layer"

// Reads the `strategy.ps` mapping (empty: the defaults). Unknown keys and bad values are
// InputErrors naming the file, line and key.
PsOptions parse_ps_options(const YamlMap& m);

}  // namespace orrery
