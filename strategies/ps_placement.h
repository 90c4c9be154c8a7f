// Where a parameter server's shards run and which shard holds which variable (or slice of one).
// Plain functions of the layout and the options, so tests can check a placement without a
// simulation.
#pragma once

#include <string>
#include <vector>

#include "strategies/cluster_layout.h"
#include "strategies/model_index.h"
#include "strategies/ps_options.h"

namespace orrery {

// One PS process: the CPU socket it runs on and the cores it has there.
struct PsShard {
  int server = 0;
  int socket = 0;
  std::string host;  // the socket's CPU host
  int cores = 1;     // PsOptions::cores, or the socket's cores when that is 0
};

// `shards` processes over `servers` (indices into layout.servers), one server after another and,
// once every server has one, on their next socket: shard k runs on servers[k % S], socket
// (k / S) % sockets. Throws InputError when `servers` is empty or shards < 1.
std::vector<PsShard> place_ps_shards(const ClusterLayout& layout, const std::vector<int>& servers,
                                     int shards, int cores);

// A piece of a variable held by one shard: the whole variable, or its slice when partitioned.
struct PsPiece {
  int var = 0;            // index into the variables
  int shard = 0;          // index into the shards
  double fraction = 1.0;  // of the variable's bytes and elements
};

// Pieces in the order the variables are given, each variable's slices by shard. greedy and
// round_robin give one piece per variable (see PsPolicy); partitioned one per variable and
// shard, each 1/shards of it.
std::vector<PsPiece> place_variables(const std::vector<Variable>& vars, int shards,
                                     PsPolicy policy);

}  // namespace orrery
