// Chakra execution traces (one file per rank) as an ExecutionGraph with one device per rank.
//
// Node mapping:
//  - COMP_NODE: a compute op on the rank's compute stream (its host stream when the node has
//    is_cpu_op = true). Cost: duration_micros when > 0, else flops = num_ops and bytes =
//    tensor_size priced by the cost model; prefer_num_ops reverses that preference.
//  - MEM_LOAD_NODE / MEM_STORE_NODE: a compute op on the copy_h2d / copy_d2h stream, with
//    duration_micros when > 0, else bytes = tensor_size (memory traffic, priced by the cost
//    model). They move no bytes over the network.
//  - COMM_SEND_NODE / COMM_RECV_NODE: the k-th send from rank s to rank d with tag t (comm_dst,
//    comm_tag; file order) is matched with the k-th receive on rank d from s with tag t
//    (comm_src, comm_tag). A node without comm_dst / comm_src (Chakra's PyTorch converter
//    writes none) takes the other rank of its pg_name's process group when that has two ranks. Each
//    pair becomes one transfer op of comm_size bytes on s's comm stream, starting once both the
//    send's and the receive's dependencies are done (rendezvous); both nodes' dependents wait for
//    it.
//  - COMM_COLL_NODE: the k-th collective (file order) of process group pg_name on every rank of
//    that group is one collective instance, expanded into flows on the ranks' comm streams:
//    ALL_REDUCE ring (two ring passes), ALL_GATHER and REDUCE_SCATTER(_BLOCK) ring passes,
//    ALL_TO_ALL pairwise exchange, BARRIER a zero-byte ring pass; comm_size is the whole buffer
//    (chakra_collectives.h), of which, for ALL_TO_ALL, each rank sends 1/n to each peer and
//    keeps its own 1/n (also as engine collectives: bytes = comm_size x (n-1)/n). REDUCE, GATHER,
//    SCATTER and BROADCAST are rejected, unless engine_collectives hands collectives to the engine
//    (see the option).
//  - METADATA_NODE, STORAGE_NODE, BATCH_NODE, CHECKPOINT_NODE: no op (a fixed-duration op on the
//    host stream when duration_micros > 0); dependencies pass through.
//  - INVALID_NODE or a type outside the enum: InputError.
// data_deps and ctrl_deps are both honoured; they name node ids of the same rank's file. Traces
// from Chakra's PyTorch converter (GlobalMetadata attribute schema "<version>-chakra.<version>")
// are the exception: their ctrl_deps are PyTorch's call tree, not an order, and are ignored, as
// ASTRA-sim's feeder ignores them; their data_deps carry the execution order.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/execution_graph.h"
#include "workloads/chakra/chakra_trace.h"

namespace orrery {

struct ChakraImportOptions {
  // SimGrid host of rank i (e.g. the i-th GPU of a platform). Empty: devices and hosts are
  // named "rank<i>". Otherwise it needs at least one host per rank.
  std::vector<std::string> device_hosts;
  // Optional, parallel to device_hosts: the server each rank's GPU sits in (ranks of one server
  // share it, so engine collectives run their hierarchical and multi-channel algorithms), and
  // the CPU host that launches its kernels. Empty: each rank is its own server and launcher.
  std::vector<std::string> device_nodes;
  std::vector<std::string> device_launch_hosts;
  // Process groups: pg_name -> ranks. A collective whose pg_name is absent or empty spans all
  // ranks; so does any pg_name while this map is empty. With a non-empty map an unknown pg_name
  // is an error. Same content as ASTRA-sim's comm-group JSON (load_chakra_comm_groups). Left
  // empty, the traces' own table is used: the "## process_group:init ##" node that PyTorch
  // writes and Chakra's converter keeps (chakra_process_groups.h).
  std::map<std::string, std::vector<int>> comm_groups;
  bool prefer_num_ops = false;
  // Emit each collective as one engine collective op (ExecutionGraph::collectives, algorithm
  // chosen by the engine, also REDUCE and BROADCAST rooted at the group's first rank) instead of
  // the importer's own flows above.
  bool engine_collectives = false;
  // How engine collectives are charged: NCCL's plans (auto, the default of scenarios) or bytes
  // only (ideal, this struct's default for hand-made imports).
  CollectiveProtocol protocol = CollectiveProtocol::kIdeal;
  // Engine collectives only: algorithm, chunks, pipeline (Collective's fields) and alpha-beta
  // time instead of flows.
  CollectiveAlgo algo = CollectiveAlgo::kAuto;
  int chunks = 1;
  int pipeline = 0;
  bool analytical = false;
};

// The rank files named by `files_or_prefix`:
//  - several paths: those files, rank i = the i-th;
//  - one existing file: a single rank;
//  - one directory: every NAME.<rank>.et (or .et.gz) in it, ranks 0..n-1 without gaps;
//  - otherwise a prefix as ASTRA-sim takes it: PREFIX.0.et, PREFIX.1.et, ... (or .et.gz) until
//    the first missing rank.
// Throws InputError when nothing matches or ranks have gaps.
std::vector<std::string> resolve_chakra_files(const std::vector<std::string>& files_or_prefix);

// Reads and decodes the rank files (resolve_chakra_files), checking a GlobalMetadata rank count
// against the number of files.
std::vector<chakra::Trace> read_chakra_traces(const std::vector<std::string>& files_or_prefix);

// Reads, decodes and converts. Throws InputError naming the file and node on malformed traces,
// unknown node or collective types, dependencies on missing nodes, dependency cycles, unmatched
// sends or receives, and collectives that not every rank of their group reaches.
ExecutionGraph load_chakra_traces(const std::vector<std::string>& files_or_prefix,
                                  const std::vector<std::string>& device_hosts);
ExecutionGraph load_chakra_traces(const std::vector<std::string>& files_or_prefix,
                                  const ChakraImportOptions& options);
// The conversion alone, from decoded traces (rank i = traces[i]).
ExecutionGraph chakra_to_execution_graph(const std::vector<chakra::Trace>& traces,
                                         const ChakraImportOptions& options);

// ASTRA-sim's communicator-group file: {"<pg_name>": [rank, ...], ...}.
std::map<std::string, std::vector<int>> load_chakra_comm_groups(const std::string& path);

}  // namespace orrery
