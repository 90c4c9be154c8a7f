#include "models/pricing.h"

namespace orrery {

OpPrices price_ops(const ModelGraph& g, const DeviceSpec& dev, const CostModel& cost) {
  OpPrices p;
  p.seconds.reserve(g.ops.size());
  p.sources.reserve(g.ops.size());
  for (const auto& op : g.ops) {
    OpEstimate e = cost.estimate(op, dev);
    p.seconds.push_back(e.seconds);
    p.sources.push_back(e.source);
    ++p.count[static_cast<int>(e.source)];
    p.total_s += e.seconds;
  }
  return p;
}

}  // namespace orrery
