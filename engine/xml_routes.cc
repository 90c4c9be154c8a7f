#include "engine/xml_routes.h"

#include <set>
#include <stdexcept>
#include <utility>

namespace orrery {

bool XmlRoutes::has_route(simgrid::s4u::Host* a, simgrid::s4u::Host* b) {
  if (a == b) return true;
  if (!complete_) {
    std::vector<simgrid::s4u::Link*> links;
    double latency = 0;
    try {
      a->route_to(b, links, &latency);
    } catch (const std::exception&) {
      return false;  // Floyd zones say so with an exception
    }
    return !links.empty();
  }
  const std::string& from = a->get_name();
  auto it = reachable_.find(from);
  if (it == reachable_.end()) {
    if (next_.empty())
      for (const GraphStep& s : steps_) next_[s.src].push_back(s.dst);
    std::unordered_set<std::string> seen{from};
    std::vector<std::string> frontier{from};
    while (!frontier.empty()) {
      const std::string node = std::move(frontier.back());
      frontier.pop_back();
      auto next = next_.find(node);
      if (next == next_.end()) continue;
      for (const std::string& n : next->second)
        if (seen.insert(n).second) frontier.push_back(n);
    }
    it = reachable_.emplace(from, std::move(seen)).first;
  }
  return it->second.count(b->get_name()) > 0;
}

std::vector<std::pair<int, int>> device_pairs_to_route(const ExecutionGraph& graph) {
  std::set<std::pair<int, int>> pairs;
  for (const Op& op : graph.ops)
    if (op.kind == OpKind::kTransfer && op.src != op.dst) pairs.insert({op.src, op.dst});
  for (const Collective& c : graph.collectives) {
    const size_t n = c.ranks.size();
    for (size_t i = 0; i < n; ++i) {
      const int a = c.ranks[i], b = c.ranks[(i + 1) % n];
      if (a == b) continue;
      pairs.insert({a, b});
      pairs.insert({b, a});
    }
    for (size_t i = 1; i < n; ++i) {
      if (c.ranks[0] == c.ranks[i]) continue;
      pairs.insert({c.ranks[0], c.ranks[i]});
      pairs.insert({c.ranks[i], c.ranks[0]});
    }
  }
  return {pairs.begin(), pairs.end()};
}

std::string no_route_message(const std::string& file, const std::string& from,
                             const std::string& to, const std::string& from_device,
                             const std::string& to_device) {
  return file + ": no route from host \"" + from + "\" to host \"" + to +
         "\", which the workload sends between (devices \"" + from_device + "\" and \"" +
         to_device + "\"): declare a <route> between them, or link them into the zone's graph";
}

}  // namespace orrery
