// NVLink inside one server: the DGX-1 hybrid cube mesh (point-to-point links between GPU
// pairs), NVLink bridges between pairs of PCIe cards, or an NVSwitch fabric (every GPU's links into one non-blocking switch), at the links'
// achievable rate (platforms/link_rates.h).
//
// NVLink SHARP (NVLS): an NVSwitch of gen 3 or later reduces what the GPUs write to it and
// multicasts the result. The switch's reduction engine is a host, <prefix>nvls, joined to the
// NVSwitch by one link of class "nvswitch" that never binds (twice all the GPUs' NVLink
// together, no latency): a GPU's flow to or from it is limited by that GPU's own NVLink link,
// and the engine runs NVLS collectives as such flows.
#include <algorithm>
#include <string>

#include "common/input_limits.h"
#include "platforms/link_rates.h"
#include "platforms/topology_writer.h"

namespace orrery {

std::map<std::pair<int, int>, int> cube_mesh_pairs(int links_per_gpu) {
  // A cube with GPUs at its corners: faces {0,1,2,3} and {4,5,6,7} with both diagonals, plus
  // the four edges between them (NVIDIA DGX-1 whitepaper, "hybrid cube-mesh"). Each GPU has 4
  // neighbours.
  static const int kEdges[16][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {0, 3}, {1, 2}, {4, 5}, {4, 6},
                                    {5, 7}, {6, 7}, {4, 7}, {5, 6}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
  // V100 has 6 links: two of each GPU's neighbours get a second one, as `nvidia-smi topo -m`
  // shows on a DGX-1V (NV2 entries).
  static const int kDoubled[8][2] = {{0, 3}, {0, 4}, {1, 2}, {1, 5},
                                     {2, 3}, {4, 7}, {5, 6}, {6, 7}};
  std::map<std::pair<int, int>, int> pairs;
  for (const auto& e : kEdges) pairs[{e[0], e[1]}] = 1;
  if (links_per_gpu == 6)
    for (const auto& e : kDoubled) pairs[{e[0], e[1]}] = 2;
  return pairs;
}

void add_nvlink(const PlatformSpec& spec, ServerNodes& server, TopoWriter& w) {
  const NvlinkSpec& nv = server_spec(spec, server.index).nvlink;
  if (nv.topology == "cube-mesh") {
    for (const auto& [pair, count] : cube_mesh_pairs(nv.links_per_gpu)) {
      const auto [a, b] = pair;
      TopoLink l{server.prefix + "nvl" + std::to_string(a) + "_" + std::to_string(b),
                 count * nvlink_data_rate(nv), nv.latency, true, "nvlink"};
      w.connect(server.gpus[a], server.gpus[b], l);
      server.nvlink_pairs[pair] = {l.name, count};
    }
  } else if (nv.topology == "bridge") {
    // PCIe cards paired by NVLink bridges (A100 PCIe, H100 NVL, RTX): GPU 2k with 2k + 1, each
    // pair joined by all of a GPU's links.
    for (size_t a = 0; a + 1 < server.gpus.size(); a += 2) {
      const int i = static_cast<int>(a);
      TopoLink l{server.prefix + "nvl" + std::to_string(i) + "_" + std::to_string(i + 1),
                 nv.links_per_gpu * nvlink_data_rate(nv), nv.latency, true, "nvlink"};
      w.connect(server.gpus[a], server.gpus[a + 1], l);
      server.nvlink_pairs[{i, i + 1}] = {l.name, nv.links_per_gpu};
    }
  } else if (nv.topology == "nvswitch") {
    // The NVSwitch chips of one baseboard act as one non-blocking switch: each GPU's bandwidth
    // into it is all its links together.
    server.nvswitch = server.prefix + "nvswitch";
    w.router(server.nvswitch);
    const double per_gpu = nv.links_per_gpu * nvlink_data_rate(nv);
    for (const auto& gpu : server.gpus)
      w.connect(gpu, server.nvswitch, {gpu + "_nvlink", per_gpu, nv.latency, true, "nvlink"});
    if (nv.sharp) {
      server.nvls = nvls_host_name(server.prefix);
      server.nvls_link = server.nvls + "_link";
      // Speed is unused (nothing computes on it) but SimGrid wants one.
      w.host({server.nvls, 1e9, 1, "nvls", {{"server", std::to_string(server.index)}}});
      const double unlimited =
          std::min(2.0 * static_cast<double>(server.gpus.size()) * per_gpu, limits::kBandwidth.hi);
      w.connect(server.nvls, server.nvswitch, {server.nvls_link, unlimited, 0.0, true, "nvswitch"});
    }
  }
}

}  // namespace orrery
