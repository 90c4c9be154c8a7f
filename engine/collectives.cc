#include "engine/collectives.h"

namespace orrery {

std::vector<std::vector<int>> append_ring_allreduce(ExecutionGraph& g,
                                                    const std::vector<int>& ranks, double bytes,
                                                    const std::vector<std::vector<int>>& start_deps,
                                                    const std::string& name, Stream stream,
                                                    const std::string& phase) {
  const int n = static_cast<int>(ranks.size());
  if (n <= 1) return start_deps;
  const double chunk = bytes / n;
  std::vector<int> prev(n, -1);  // each rank's send of the previous step
  for (int step = 0; step < 2 * (n - 1); ++step) {
    std::vector<int> cur(n);
    for (int i = 0; i < n; ++i) {
      Op op;
      op.name = name + ".s" + std::to_string(step) + ".r" + std::to_string(i);
      op.device = ranks[i];
      op.stream = stream;
      op.kind = OpKind::kTransfer;
      op.src = ranks[i];
      op.dst = ranks[(i + 1) % n];
      op.transfer_bytes = chunk;
      op.phase = phase;
      if (step == 0) {
        op.deps = start_deps[i];
      } else {
        // A rank forwards what it received in the previous step, after its own previous send.
        op.deps = {prev[i], prev[(i + n - 1) % n]};
      }
      g.ops.push_back(std::move(op));
      cur[i] = static_cast<int>(g.ops.size()) - 1;
    }
    prev = cur;
  }
  std::vector<std::vector<int>> done(n);
  for (int i = 0; i < n; ++i) done[i] = {prev[i], prev[(i + n - 1) % n]};
  return done;
}

}  // namespace orrery
