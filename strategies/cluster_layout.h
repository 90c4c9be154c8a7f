// The platform as strategies see it: servers, each with its GPUs and CPU sockets.
#pragma once

#include <string>
#include <vector>

#include "platforms/topology.h"

namespace orrery {

struct ClusterGpu {
  std::string host;         // SimGrid host
  std::string launch_host;  // the CPU that drives it
  int server = 0;
};

struct ClusterServer {
  std::vector<int> gpus;          // indices into ClusterLayout::gpus
  std::vector<std::string> cpus;  // CPU socket hosts
  std::vector<int> cpu_cores;     // cores of each socket host, parallel to cpus
  // Servers of one domain plug their NICs into the same switches (a fat-tree leaf, a
  // rail-optimized scalable unit, the one switch): traffic among them stays off the spine.
  // Numbered from 0 in server order; SimGrid XML platforms: all 0 (not known).
  int domain = 0;
};

struct ClusterLayout {
  std::vector<ClusterGpu> gpus;
  std::vector<ClusterServer> servers;
};

// Reads a topology made by build_topology (hosts n<S>_gpu<i> and n<S>_cpu<k>).
ClusterLayout cluster_layout(const Topology& topo);
// For SimGrid XML platforms: the listed GPU hosts, each its own launcher. When every name has
// Orrery's form n<S>_<rest> (platforms Orrery exported), hosts sharing n<S> form one server;
// otherwise each GPU is its own server.
ClusterLayout cluster_layout_from_hosts(const std::vector<std::string>& gpu_hosts);

}  // namespace orrery
