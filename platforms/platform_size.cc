// estimate_platform_size: what build_topology and SimGrid will hold for a spec, from its counts
// alone (engine/size_estimate.h), so a cluster of 10^7 servers is refused before it is built.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/size_guard.h"
#include "platforms/platform_spec.h"

namespace orrery {

SizeEstimate estimate_platform_size(const PlatformSpec& spec) {
  const ServerSpec& s = spec.server;
  // Doubles throughout: the counts are checked one by one, not their products.
  const double servers = spec.servers;
  const double gpus = s.gpus;
  const double sockets = std::max(1, s.cpu.sockets);
  const double nics = s.nic.count;
  const double nvls = s.nvlink.sharp ? 1 : 0;  // NVLS host, routed to from the GPUs only
  const double hosts = gpus + sockets + nvls;  // GPUs and one CPU host per socket
  // Root ports per socket (PCIe switches, or each GPU and NIC on its own port) are joined
  // pairwise by peer-to-peer links.
  const double ports = s.pcie.switches_per_socket > 0 ? s.pcie.switches_per_socket
                                                      : std::ceil((gpus + nics) / sockets);
  const double links = gpus * (1 + s.nvlink.links_per_gpu) + nvls + 2 * nics + 3 * sockets +
                       sockets * sockets + sockets * ports * ports / 2 + ports * sockets;
  // Every host pair inside a server has its own route.
  const double routes = (gpus + sockets) * (gpus + sockets) + nvls * 2 * gpus;
  SizeEstimate e;
  e.memory_bytes =
      servers * (hosts * kBytesPerHost + links * kBytesPerLink + routes * kBytesPerRoute) +
      servers * nics * kBytesPerLink;
  char basis[160];
  std::snprintf(basis, sizeof basis, "%.0f servers x (%.0f hosts, about %.0f links, %.0f routes)",
                servers, hosts, links, routes);
  e.basis = basis;
  return e;
}

}  // namespace orrery
