// ASTRA-sim's network configuration (the analytical backend's YAML: one topology building block
// per dimension) as an Orrery platform, so a user's ASTRA-sim setup runs unchanged.
//
//   topology: [ Ring, Switch ]   # per dimension: Ring, FullyConnected or Switch
//   npus_count: [ 8, 4 ]         # NPUs per dimension; 32 in all
//   bandwidth: [ 300.0, 25.0 ]   # GB/s per link (ASTRA-sim's GB is 2^30 bytes)
//   latency: [ 500.0, 2000.0 ]   # ns per link (a Switch message crosses two links)
//
// NPU k has coordinates c_d = (k / (n_0 ... n_{d-1})) mod n_d, as in ASTRA-sim. The NPUs that
// differ only in c_d form one group of dimension d: a Switch group is a router with one link
// per NPU, a Ring group links c_d to c_d + 1 (mod n_d), FullyConnected links every pair. Every
// link is full duplex. NPU k is the GPU host n<k / n_0>_gpu<k mod n_0>: dimension 0 groups
// are Orrery's servers (so collectives run hierarchical across the other dimensions), and
// rank k of a Chakra trace runs on NPU k. Links of dimension 0 are of class nvlink, the rest
// of class network (docs/astra-sim.md).
#pragma once

#include <string>

#include "platforms/device_spec.h"
#include "platforms/topology.h"

namespace orrery {

struct AstraNetwork {
  Topology topology;
  std::string summary;  // "ASTRA-sim network Ring(8) x Switch(4): 32 NPUs"
};

// Reads the YAML file at `path`; GPU hosts get `gpu`'s speed and memory bandwidth. Throws
// InputError naming the file, line and key: unknown topology names, lists of unequal length,
// fewer than 2 NPUs in a dimension, bandwidths <= 0, negative latencies, more NPUs than the
// GPU limit.
AstraNetwork read_astra_network(const std::string& path, const DeviceSpec& gpu);

}  // namespace orrery
