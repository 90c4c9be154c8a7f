// Placing several jobs on one cluster's GPUs, in the order given, each on GPUs no earlier job
// holds. Policies:
//  - packed: the free GPUs in server order, filling a server before the next (fewest servers,
//    most traffic kept inside NVLink domains);
//  - spread: one free GPU from each server in turn (most servers, most inter-server traffic);
//  - topology: inside one server if one can hold the job, else inside one switch domain (a
//    fat-tree leaf, a rail-optimized unit: ClusterServer::domain), whole servers first, the
//    same local GPUs (and NICs: rail-aligned) on each; best fit at each level; else packed;
//  - server: inside one server (best fit) or not at all: a job one process drives (1wng);
//  - random: free GPUs drawn uniformly with a seed (the same seed gives the same placement);
//  - explicit: the GPUs the job lists, by host name or index.
// A job that needs more GPUs than are free (server: than any one server has free) is not placed;
// the GPUs left free then are the cluster's fragmentation (idle while a job waits).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strategies/cluster_layout.h"

namespace orrery {

enum class PlacementPolicy { kPacked, kSpread, kTopology, kServer, kRandom, kExplicit };
// "packed", "spread", "topology", "server", "random"; false for anything else.
bool parse_placement_policy(const std::string& text, PlacementPolicy* out);
const char* placement_policy_name(PlacementPolicy p);

struct PlacementRequest {
  std::string job;
  int gpus = 0;  // how many (not kExplicit)
  PlacementPolicy policy = PlacementPolicy::kPacked;
  std::vector<int> explicit_gpus;  // kExplicit: indices into ClusterLayout::gpus, in rank order
  uint64_t seed = 0;               // kRandom
};

struct Placement {
  // Per request: the GPUs (indices into ClusterLayout::gpus) in rank order; empty when the job
  // did not fit.
  std::vector<std::vector<int>> gpus;
  std::vector<std::string> unplaced;  // the jobs that did not fit, and why
  int free_gpus = 0;                  // GPUs no placed job holds
  // free_gpus while some job waits for more than that: GPUs idle because no placement fits
  // (0 when every job was placed).
  int fragmented_gpus = 0;
};

// Throws InputError (naming the job) on an explicit GPU out of range or already taken, a GPU
// count below 1, or more GPUs than the cluster has.
Placement place_jobs(const ClusterLayout& layout, const std::vector<PlacementRequest>& requests);

// The part of `layout` that `gpus` (indices into layout.gpus) make up: those GPUs in that order,
// the servers holding them (renumbered in order of first use) with all their CPUs.
ClusterLayout sub_layout(const ClusterLayout& layout, const std::vector<int>& gpus);

}  // namespace orrery
