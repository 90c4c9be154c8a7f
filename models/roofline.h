// The roofline time of a kernel: it is limited either by arithmetic or by memory traffic,
//   t = max(FLOPs / (peak x e), bytes / (bandwidth x e)),
// as the DLRM performance model (section III-B1, element-wise and memory kernels) writes it, with
// the efficiency e of PAI (section II-B: 70% of peak FLOP/s and of
// bandwidth). Which term wins is the op's bound.
#pragma once

namespace orrery {

struct RooflineTime {
  double compute_s = 0.0;  // flops / (peak x efficiency)
  double memory_s = 0.0;   // bytes / (bandwidth x efficiency)
  double seconds = 0.0;    // the larger of the two
  bool memory_bound = false;
};

// peak_flops and bandwidth must be positive; efficiency in (0, 1].
RooflineTime roofline(double flops, double bytes, double peak_flops, double bandwidth,
                      double efficiency);

}  // namespace orrery
