#include "workloads/chakra/chakra_collectives.h"

namespace orrery::chakra {

RankDeps append_ring_pass(ExecutionGraph& g, const std::vector<int>& ranks, double bytes,
                          const RankDeps& start_deps, const std::string& name, Stream stream,
                          const std::string& phase) {
  const int n = static_cast<int>(ranks.size());
  if (n <= 1) return start_deps;
  std::vector<int> prev(n, -1);
  for (int step = 0; step < n - 1; ++step) {
    std::vector<int> cur(n);
    for (int i = 0; i < n; ++i) {
      // A rank forwards the block it received in the previous step.
      std::vector<int> deps =
          step == 0 ? start_deps[i] : std::vector<int>{prev[i], prev[(i + n - 1) % n]};
      cur[i] = append_transfer(g, name + ".s" + std::to_string(step) + ".r" + std::to_string(i),
                               ranks[i], stream, ranks[i], ranks[(i + 1) % n], bytes / n, phase,
                               std::move(deps));
    }
    prev = cur;
  }
  RankDeps done(n);
  for (int i = 0; i < n; ++i) done[i] = {prev[i], prev[(i + n - 1) % n]};
  return done;
}

RankDeps append_all_to_all(ExecutionGraph& g, const std::vector<int>& ranks, double bytes,
                           const RankDeps& start_deps, const std::string& name, Stream stream,
                           const std::string& phase) {
  const int n = static_cast<int>(ranks.size());
  if (n <= 1) return start_deps;
  RankDeps done(n);
  for (int k = 1; k < n; ++k) {
    for (int i = 0; i < n; ++i) {
      const int j = (i + k) % n;
      int op =
          append_transfer(g, name + ".s" + std::to_string(k - 1) + ".r" + std::to_string(i),
                          ranks[i], stream, ranks[i], ranks[j], bytes / n, phase, start_deps[i]);
      done[i].push_back(op);  // rank i's own sends, then what it receives
      done[j].push_back(op);
    }
  }
  return done;
}

}  // namespace orrery::chakra
