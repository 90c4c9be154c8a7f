#include "campaigns/checkpoint.h"

#include <algorithm>
#include <cmath>

namespace orrery {

CheckpointCost checkpoint_cost(const CheckpointPlan& plan, const Storage& storage) {
  const double nodes = std::max(1, plan.nodes);
  auto through = [&](double aggregate, double per_node) {
    return std::max(plan.bytes / aggregate, plan.bytes / nodes / per_node);
  };
  CheckpointCost c;
  c.write_s = through(storage.write_bw, storage.node_write_bw);
  c.read_s = through(storage.read_bw, storage.node_read_bw);
  const double shard = plan.bytes / (nodes * std::max(1, plan.gpus_per_node));
  c.blocking_s = plan.overhead_s + (plan.async ? shard / plan.host_copy_bw : c.write_s);
  return c;
}

double young_interval(double delta, double mtbf) { return std::sqrt(2 * delta * mtbf); }

double daly_interval(double delta, double mtbf) {
  if (delta >= 2 * mtbf) return mtbf;
  const double x = delta / (2 * mtbf);
  return std::sqrt(2 * delta * mtbf) * (1 + std::sqrt(x) / 3 + x / 9) - delta;
}

}  // namespace orrery
