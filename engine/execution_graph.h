// ExecutionGraph: the per-device op graph the replay engine runs.
// Plain data; built by workloads/ and strategies, checked by graph_check.h, replayed by replay.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace orrery {

// What a stream is for. Streams of one device overlap in time; ops on one stream run one at
// a time in FIFO order of readiness.
enum class StreamClass : uint8_t { kCompute = 0, kComm = 1, kCopyH2D = 2, kCopyD2H = 3, kHost = 4 };
inline constexpr int kNumStreamClasses = 5;

const char* stream_class_name(StreamClass c);
// Parses "compute", "comm", "copy_h2d", "copy_d2h", "host"; returns false if unknown.
bool parse_stream_class(const std::string& s, StreamClass* out);

// A FIFO queue on a device: its class, plus an index so a device may own several queues of one
// class (e.g. two communication channels, "comm:1").
struct Stream {
  StreamClass cls = StreamClass::kCompute;
  int index = 0;
  bool operator==(const Stream& o) const { return cls == o.cls && index == o.index; }
};
std::string stream_name(const Stream& s);
// Parses "comm" or "comm:2"; returns false when the class is unknown or the index malformed.
bool parse_stream(const std::string& s, Stream* out);

enum class OpKind : uint8_t {
  kCompute = 0,     // an Exec on the device's host (or its launch host on the host stream)
  kTransfer = 1,    // a point-to-point flow from src to dst device over the platform's route
  kCollective = 2,  // ExecutionGraph::collectives[op.collective], expanded into flows at run time
};

enum class CollectiveType : uint8_t {
  kAllReduce = 0,
  kAllGather = 1,      // also AllGatherv (per-rank counts)
  kReduceScatter = 2,  // also ReduceScatterv
  kBroadcast = 3,
  kReduce = 4,
  kAllToAll = 5,
  kSendRecv =
      6,  // every rank sends the buffer to the next rank in ring order (nccl-tests sendrecv)
};
const char* collective_type_name(CollectiveType t);  // "allreduce", "allgather", ..., "sendrecv"
bool parse_collective_type(const std::string& s, CollectiveType* out);

enum class CollectiveAlgo : uint8_t {
  kAuto = 0,  // chosen at run time, NCCL-like, by size and topology (engine/collective_algos.h)
  kRing = 1,  // ring; Broadcast/Reduce: a pipelined chain in ring order
  kTree = 2,  // binary tree, pipelined in chunks
  kHierarchical = 3,  // ring inside each node, ring across nodes per local rank, ring inside again
  kDirect = 4,        // every rank to every rank at once (AllToAll, SendRecv)
  // In-network reduction (engine/collective_plan.h): NVLink SHARP inside an NVSwitch server
  // (NCCL's NVLS) and SHARP in the InfiniBand switches across servers (NCCL's CollNet).
  kNvls = 5,
  kCollNet = 6,
  // NVLS inside each server and a ring between the servers per local rank (NCCL's NVLS_TREE):
  // reduce-scatter in the switch, all-reduce of each GPU's shard over its NIC, all-gather in
  // the switch.
  kNvlsTree = 7,
  // Parallel Aggregated Trees (NCCL's PAT), AllGather and ReduceScatter with one rank per node:
  // log2(n) steps, each to the rank 2^k away, of 2^k blocks (all-gather) or the reverse.
  kPat = 8,
};
const char* collective_algo_name(CollectiveAlgo a);  // "auto", "ring", "tree", ...
bool parse_collective_algo(const std::string& s, CollectiveAlgo* out);

// How a collective's bytes and steps are charged (engine/collective_plan.h).
enum class CollectiveProtocol : uint8_t {
  // Bytes over links only: one ring in rank order, no software latency, every byte payload.
  // The model of hand-built graphs and the upper bound of what links allow.
  kIdeal = 0,
  kAuto = 1,  // NCCL's tuner picks the algorithm and the protocol by size and topology
  kLL = 2,    // NCCL's low-latency protocol: 8-byte stores, half of them flags
  kLL128 = 3,
  kSimple = 4,
};
const char* collective_protocol_name(CollectiveProtocol p);  // "ideal", "auto", "LL", ...
// Case-insensitive: "ll128" and "LL128" both parse.
bool parse_collective_protocol(const std::string& s, CollectiveProtocol* out);

// A collective over a group of devices. The engine expands it into point-to-point flows as the
// algorithm's steps become ready (memory bounded by the group, not by steps x ranks), or prices it
// with the alpha-beta model when `analytical` is set.
struct Collective {
  CollectiveType type = CollectiveType::kAllReduce;
  CollectiveAlgo algo = CollectiveAlgo::kAuto;
  std::vector<int> ranks;  // device indices, in ring order
  // AllReduce, Broadcast, Reduce: the buffer size. AllGather / ReduceScatter: the full (gathered)
  // buffer, i.e. the sum of the ranks' blocks. AllToAll: what each rank sends in total.
  double bytes = 0.0;
  std::vector<double> counts;  // optional per-rank block sizes (AllGatherv / ReduceScatterv)
  int root = 0;                // Broadcast / Reduce: index into ranks
  int chunks = 1;              // pipelining: each block moves as this many consecutive chunks
  // kIdeal keeps the bytes-only model; anything else runs NCCL's algorithms, channels,
  // protocols and latencies (engine/collective_plan.h).
  CollectiveProtocol protocol = CollectiveProtocol::kIdeal;
  // Multi-phase algorithms (hierarchical, NVLS, CollNet): chunks pipelined through the phases.
  // 0: one chunk per 4 MiB (NCCL's Simple buffer per channel), at most 16; protocol ideal: 1
  // unless given.
  int pipeline = 0;
  bool analytical = false;  // alpha-beta time instead of flows
  // Analytical only: the time of `repeat` such collectives run back to back, as one op. A
  // pass of a language model's layers fused into one op carries its tensor-parallel
  // collectives this way (strategies/llm_strategy.h).
  int repeat = 1;
  // Fraction of each participating GPU's compute capacity the collective holds while it runs
  // (AllReduce SM contention, Tianshu section 3.3: 16 of 80 SMs on a V100).
  double sm_share = 0.0;
  // The most bytes/s each of its flows moves, whatever the links give (the hosts' TCP streams
  // of an MPI or Gloo all-reduce); 0: the links alone.
  double max_rate = 0.0;
};

struct Op {
  std::string name;  // unique within the graph
  int device = -1;   // index into ExecutionGraph::devices; the device whose stream runs the op
  Stream stream;
  OpKind kind = OpKind::kCompute;

  // Cost of a compute op: a fixed duration in seconds when duration >= 0; otherwise the flops
  // and bytes are priced by a cost model before replay (models/).
  double duration = -1.0;
  double flops = 0.0;
  double bytes = 0.0;

  // Transfer ops only: the flow's endpoints and size in bytes.
  int src = -1;
  int dst = -1;
  double transfer_bytes = 0.0;
  // The most bytes/s the endpoints' software streams, whatever the links give (an RPC
  // connection's serialization and TCP stack); 0: the links alone.
  double max_rate = 0.0;

  // Collective ops: index into ExecutionGraph::collectives. The op runs on the comm queue of
  // `device` (normally the group's first rank) and counts as communication on every rank.
  int collective = -1;

  // Set by cost models: the op's time is bound by memory bandwidth rather than compute.
  bool memory_bound = false;

  // Free-form labels used by breakdowns: "forward", "backward", "optimizer", "comm", "io"...
  std::string phase;

  std::vector<int> deps;  // indices of ops that must complete before this one is ready
};

struct Device {
  std::string name;         // the name ops refer to
  std::string host;         // SimGrid host that runs its compute stream (default: name)
  std::string launch_host;  // SimGrid host that runs its host stream (default: host)
  std::string node;         // the server it sits in, for hierarchical collectives (default: host)
  // Devices that run this device's ops at the same times on alike hardware and are not
  // simulated on their own (a language model's tensor-parallel ranks with analytical TP
  // collectives, strategies/llm_strategy.h; data-parallel replicas on one CPU socket,
  // strategies/data_parallel.cc). The replay runs the ops once and loads every link and host as
  // the mirrors' own flows and execs would (engine/replay.cc), and reports each mirror with this
  // device's figures. A mirror has no ops and no mirrors of its own and mirrors one device; it
  // takes part in collectives: one with a mirror among its ranks moves each rank's own flows,
  // one without copies its flows for the mirrors. The devices with mirrors of a transfer or of a
  // collective whose flows are copied have as many.
  std::vector<int> mirrors;
};

struct ExecutionGraph {
  std::vector<Device> devices;
  std::vector<Op> ops;
  std::vector<Collective> collectives;

  // Index lookups (linear; used by loaders and tests, never on the replay hot path).
  int find_device(const std::string& name) const;
  int find_op(const std::string& name) const;
};

// Whether collective `c` copies its flows for its ranks' mirrors (Device::mirrors): none of its
// ranks is itself a mirror. `mirror_of`: per device the device it mirrors, -1 for none.
bool copies_flows_for_mirrors(const Collective& c, const std::vector<int>& mirror_of);

// Appends a compute op of `duration` seconds (negative: priced by the replay from `flops` and
// `bytes`, engine/replay.h) on `stream` of `device`, after `deps`; returns its op index.
int append_compute(ExecutionGraph& g, const std::string& name, int device, Stream stream,
                   double duration, const std::string& phase, std::vector<int> deps,
                   double flops = 0.0, double bytes = 0.0);
// Appends a transfer of `bytes` from device `src` to device `dst`, queued on `stream` of
// `queue_device`, after `deps`; returns its op index.
int append_transfer(ExecutionGraph& g, const std::string& name, int queue_device, Stream stream,
                    int src, int dst, double bytes, const std::string& phase,
                    std::vector<int> deps);
// Appends collective `c` and the op that runs it, queued on comm stream 0 of its first rank,
// after `deps`; returns the op's index.
int append_collective(ExecutionGraph& g, const std::string& name, Collective c,
                      const std::string& phase, std::vector<int> deps);

}  // namespace orrery
