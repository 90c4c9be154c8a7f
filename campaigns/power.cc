#include "campaigns/power.h"

#include <algorithm>
#include <cmath>

namespace orrery {

PowerFigures power_figures(const PowerSpec& s, const StepActivity& a) {
  PowerFigures p;
  p.gpu_idle_w = s.gpu_idle_fraction * s.gpu_tdp_w;
  const double active = std::min(1.0, a.compute_bound + s.memory_bound_draw * a.memory_bound +
                                          s.communication_draw * a.communication);
  p.gpu_train_w = p.gpu_idle_w + (s.gpu_tdp_w - p.gpu_idle_w) * active;
  if (s.cap_w > 0) p.gpu_train_w = std::min(p.gpu_train_w, s.cap_w);
  // GPUs at TDP are (1 - other_share) of the server: the rest is other_share / (1 - share) of
  // their TDP, drawn whatever the GPUs do.
  p.server_other_w = s.other_share / (1 - s.other_share) * s.gpus_per_node * s.gpu_tdp_w;
  // A port's traffic crosses `tiers` links (two transceivers each) and 2 tiers - 1 switch ports.
  const int tiers = std::max(1, s.fabric_tiers);
  p.network_w = s.nic_ports * (2 * tiers * s.transceiver_w + (2 * tiers - 1) * s.switch_port_w);
  const double shared = s.nodes * p.server_other_w + p.network_w;
  p.it_train_w = s.gpus * p.gpu_train_w + shared;
  p.it_paused_w = s.gpus * p.gpu_idle_w + shared;
  p.facility_train_w = s.pue * p.it_train_w;
  p.facility_paused_w = s.pue * p.it_paused_w;
  return p;
}

double capped_clock(double train_w, double idle_w, double cap_w) {
  if (cap_w <= 0 || train_w <= cap_w) return 1.0;
  if (cap_w <= idle_w) return 0.0;
  return std::cbrt((cap_w - idle_w) / (train_w - idle_w));
}

}  // namespace orrery
