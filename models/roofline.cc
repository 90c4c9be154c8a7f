#include "models/roofline.h"

#include <stdexcept>

namespace orrery {

RooflineTime roofline(double flops, double bytes, double peak_flops, double bandwidth,
                      double efficiency) {
  if (!(peak_flops > 0) || !(bandwidth > 0) || !(efficiency > 0) || efficiency > 1)
    throw std::invalid_argument("roofline: peak, bandwidth and efficiency must be positive");
  RooflineTime r;
  r.compute_s = flops / (peak_flops * efficiency);
  r.memory_s = bytes / (bandwidth * efficiency);
  r.memory_bound = r.memory_s > r.compute_s;
  r.seconds = r.memory_bound ? r.memory_s : r.compute_s;
  return r;
}

}  // namespace orrery
