// Checkpoints of a training campaign: what one costs to write and to read back through a
// storage system, and how often to take one (Young's and Daly's optimum intervals).
#pragma once

namespace orrery {

// A filesystem or object store as a training job sees it: the aggregate rates of the whole
// system and the rates one server can reach (its NICs, its client), bytes per second.
struct Storage {
  double write_bw = 0;
  double read_bw = 0;
  double node_write_bw = 0;
  double node_read_bw = 0;
};

struct CheckpointPlan {
  double bytes = 0;       // the whole checkpoint: every shard of weights and optimizer states
  int nodes = 1;          // servers writing their shards at once
  int gpus_per_node = 1;  // GPUs of a server that write a shard each
  // Asynchronous: each GPU copies its shard to host memory (the pause) and the host writes it
  // while training goes on; synchronous: training waits for the write.
  bool async = false;
  double host_copy_bw = 0;  // bytes/s from one GPU to its host memory (async)
  // What a checkpoint pauses beyond moving its bytes: stopping at a step boundary, gathering
  // every rank's state and metadata, the barriers around it.
  double overhead_s = 0;
};

struct CheckpointCost {
  double blocking_s = 0;  // training pauses this long per checkpoint
  double write_s = 0;     // until the checkpoint is on storage (async: after the pause)
  double read_s = 0;      // reading it back at a restart
};

// Every server writes (reads) its share at once: the slower of the system's aggregate rate
// and one server's rate decides. Synchronous checkpoints block for the write; asynchronous ones
// for one GPU's shard over its host copy bandwidth, and write in the background; both pause the
// overhead besides.
CheckpointCost checkpoint_cost(const CheckpointPlan& plan, const Storage& storage);

// The interval of work between checkpoints that minimizes expected lost time, for checkpoints
// of `delta` seconds and a mean time between failures `mtbf`:
//  - Young, "A first order approximation to the optimum checkpoint interval", CACM 17(9), 1974:
//    sqrt(2 delta M);
//  - Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
//    Future Generation Computer Systems 22(3), 2006: sqrt(2 delta M) (1 + sqrt(delta / 2M) / 3
//    + (delta / 2M) / 9) - delta for delta < 2M, else M.
double young_interval(double delta, double mtbf);
double daly_interval(double delta, double mtbf);

}  // namespace orrery
