// Writing an ExecutionGraph as Chakra execution traces: one trace per device (rank i = device
// i), each a GlobalMetadata then Nodes, encoded with the classes generated from et_def.proto.
// What load_chakra_traces reads back is the same graph, up to the limits below.
//
// Op mapping (the importer's, chakra_import.h, in reverse):
//  - compute op: COMP_NODE on its device (MEM_LOAD_NODE / MEM_STORE_NODE on the copy_h2d /
//    copy_d2h stream; is_cpu_op = true on the host stream). A fixed duration becomes
//    duration_micros, rounded to the nearest microsecond (Chakra's unit); an op left to the cost
//    model (duration < 0) carries num_ops = flops and tensor_size = bytes instead.
//  - transfer op: a COMM_SEND_NODE on the source device (comm_dst, comm_size, comm_tag) and a
//    COMM_RECV_NODE on the destination (comm_src, the same comm_tag). Every transfer has its own
//    tag, so pairs match whatever the order of the files.
//  - collective op: a COMM_COLL_NODE on every rank of the group (comm_type, comm_size). A group
//    other than all devices in order 0..n-1 gets a pg_name ("group<k>"), listed in
//    ChakraTraceSet::comm_groups (ASTRA-sim's comm-group JSON, load_chakra_comm_groups).
//  - dependencies: data_deps on the same rank's node of the op depended on. A dependency on an
//    op with no node on the rank (compute on another device, say) travels as a zero-byte
//    send/receive pair ("sync" nodes, ctrl_deps on the receiving side): Chakra has no
//    cross-rank dependency otherwise.
// Node ids are op indices (sync nodes follow, from ops.size()); node names are op names.
//
// Not carried (Chakra has no field for them): device and host names, stream indices and the
// queue of a transfer (the importer queues it on its source's comm stream), a collective's
// algorithm, chunks, per-rank counts, root (the importer roots at the group's first rank),
// analytical mode and SM share, op phases, and durations below a microsecond.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "engine/execution_graph.h"

namespace orrery {

struct ChakraTraceSet {
  // ranks[i]: the trace of device i, a length-prefixed message stream (what NAME.<i>.et holds).
  std::vector<std::string> ranks;
  // pg_name -> ranks (ring order), for the collectives over fewer or reordered devices. Empty
  // when every collective spans all devices in order.
  std::map<std::string, std::vector<int>> comm_groups;
  size_t nodes = 0;              // over all ranks, sync nodes included
  size_t sync_pairs = 0;         // zero-byte send/receive pairs added for cross-rank dependencies
  size_t rounded_durations = 0;  // durations that were not whole microseconds
};

// Encodes `graph`, which must pass check_graph (engine/graph_check.h). Throws InputError for
// what Chakra cannot express: a transfer from a device to itself.
ChakraTraceSet encode_chakra_traces(const ExecutionGraph& graph);

}  // namespace orrery
