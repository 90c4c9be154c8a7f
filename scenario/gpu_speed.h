// GPUs that run slower than their kind: stragglers, clock throttling, a mix of GPU generations
// approximated by one speed ratio. A speed factor f scales the time of every op on the GPU's
// compute streams by 1/f (fixed durations directly, ops priced later through their flops and
// bytes); communication and host work keep their times. In a synchronous job the slowest rank
// then gates every collective, as it does on a real cluster.
//
//   gpu_speeds: {n0_gpu3: 0.5, n1_gpu0: 0.8}   # by GPU host; 1 = as fast as the platform says
//   gpu_speed_variation: {stdev: 0.05, seed: 1} # each GPU's factor drawn from 1 + stdev * N(0, 1),
//                                               # kept within [0.05, 2]; seeded, the same draw on
//                                               # every machine; an explicit factor wins
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/yaml_reader.h"
#include "engine/execution_graph.h"

namespace orrery {

// The factors `root` asks for, per GPU host of `gpu_hosts` (the platform's GPUs in order; the
// variation draws in that order); empty when neither key is present. Throws InputError naming
// the key on an unknown host or a factor outside (0, 10].
std::map<std::string, double> read_gpu_speeds(const YamlMap& root,
                                              const std::vector<std::string>& gpu_hosts);

// Scales the compute-stream ops of devices whose host has a factor other than 1.
void apply_gpu_speeds(const std::map<std::string, double>& speeds, ExecutionGraph* g);

}  // namespace orrery
