#include "strategies/job_placement.h"

#include <algorithm>
#include <map>
#include <random>

#include "common/errors.h"
#include "common/seeded_draw.h"

namespace orrery {
namespace {

// The first n free GPUs in server order, then GPU order within a server.
std::vector<int> packed(const std::vector<std::vector<int>>& free_of, int n) {
  std::vector<int> out;
  for (const auto& gpus : free_of)
    for (int g : gpus)
      if (static_cast<int>(out.size()) < n) out.push_back(g);
  return out;
}

// The topology-aware choice among the free GPUs (`free_of[s]`: server s's free GPUs, in
// order): one server if one can hold the job (the fullest that can, so large holes stay
// open); else one switch domain (the fullest that can), whole free servers first and the rest
// from the fullest server that can give it; else packed. A server's GPUs are taken from its
// lowest index, so jobs spanning servers use the same local GPUs, and with them the same NICs
// (rail-aligned on rail-optimized fabrics).
// Of `servers`, the one with the fewest free GPUs that still has `need` (best fit, so that
// servers with more stay whole for larger jobs); -1 when none has.
int fullest_fitting(const std::vector<std::vector<int>>& free_of, const std::vector<int>& servers,
                    int need) {
  int best = -1;
  for (int s : servers) {
    const int f = static_cast<int>(free_of[s].size());
    if (f >= need && (best < 0 || f < static_cast<int>(free_of[best].size()))) best = s;
  }
  return best;
}

// The first n free GPUs of the best-fitting server; empty when no server has n free.
std::vector<int> in_one_server(const std::vector<std::vector<int>>& free_of, int n) {
  std::vector<int> all(free_of.size());
  for (size_t s = 0; s < all.size(); ++s) all[s] = static_cast<int>(s);
  const int s = fullest_fitting(free_of, all, n);
  if (s < 0) return {};
  return {free_of[s].begin(), free_of[s].begin() + n};
}

std::vector<int> topology_aware(const ClusterLayout& layout,
                                const std::vector<std::vector<int>>& free_of, int n) {
  auto fullest_fitting = [&](const std::vector<int>& servers, int need) {
    return orrery::fullest_fitting(free_of, servers, need);
  };
  if (std::vector<int> one = in_one_server(free_of, n); !one.empty()) return one;
  std::map<int, std::vector<int>> domains;
  for (size_t s = 0; s < layout.servers.size(); ++s)
    domains[layout.servers[s].domain].push_back(static_cast<int>(s));
  int best_domain = -1, best_free = 0;
  for (const auto& [d, servers] : domains) {
    int f = 0;
    for (int s : servers) f += static_cast<int>(free_of[s].size());
    if (f >= n && (best_domain < 0 || f < best_free)) best_domain = d, best_free = f;
  }
  std::vector<int> out;
  if (best_domain < 0) return out;  // the caller falls back to packed
  std::vector<int> partial;
  for (int s : domains[best_domain]) {
    const ClusterServer& server = layout.servers[s];
    const bool whole = !server.gpus.empty() && free_of[s].size() == server.gpus.size();
    if (whole && static_cast<int>(out.size() + free_of[s].size()) <= n) {
      out.insert(out.end(), free_of[s].begin(), free_of[s].end());
    } else {
      partial.push_back(s);
    }
  }
  while (static_cast<int>(out.size()) < n) {
    const int need = n - static_cast<int>(out.size());
    int s = fullest_fitting(partial, need);
    if (s < 0) {  // no single server has the rest: the one with most free GPUs gives what it has
      s = partial.front();
      for (int p : partial)
        if (free_of[p].size() > free_of[s].size()) s = p;
    }
    const int take = std::min<int>(need, static_cast<int>(free_of[s].size()));
    out.insert(out.end(), free_of[s].begin(), free_of[s].begin() + take);
    partial.erase(std::find(partial.begin(), partial.end(), s));
  }
  return out;
}

}  // namespace

bool parse_placement_policy(const std::string& text, PlacementPolicy* out) {
  if (text == "packed")
    *out = PlacementPolicy::kPacked;
  else if (text == "spread")
    *out = PlacementPolicy::kSpread;
  else if (text == "topology")
    *out = PlacementPolicy::kTopology;
  else if (text == "server")
    *out = PlacementPolicy::kServer;
  else if (text == "random")
    *out = PlacementPolicy::kRandom;
  else
    return false;
  return true;
}

const char* placement_policy_name(PlacementPolicy p) {
  switch (p) {
    case PlacementPolicy::kPacked:
      return "packed";
    case PlacementPolicy::kSpread:
      return "spread";
    case PlacementPolicy::kTopology:
      return "topology";
    case PlacementPolicy::kServer:
      return "server";
    case PlacementPolicy::kRandom:
      return "random";
    case PlacementPolicy::kExplicit:
      return "explicit";
  }
  return "?";
}

Placement place_jobs(const ClusterLayout& layout, const std::vector<PlacementRequest>& requests) {
  const int total = static_cast<int>(layout.gpus.size());
  std::vector<char> taken(total, 0);
  Placement out;
  out.gpus.resize(requests.size());
  int largest_waiting = 0;
  for (size_t j = 0; j < requests.size(); ++j) {
    const PlacementRequest& r = requests[j];
    const std::string where = "job \"" + r.job + "\"";
    std::vector<int>& mine = out.gpus[j];
    if (r.policy == PlacementPolicy::kExplicit) {
      if (r.explicit_gpus.empty()) throw InputError(where + ": an empty list of GPUs");
      for (int g : r.explicit_gpus) {
        if (g < 0 || g >= total)
          throw InputError(where + ": GPU " + std::to_string(g) + " is not one of the cluster's " +
                           std::to_string(total));
        if (taken[g])
          throw InputError(where + ": GPU " + std::to_string(g) + " (" + layout.gpus[g].host +
                           ") is already another job's");
        taken[g] = 1;
        mine.push_back(g);
      }
      continue;
    }
    if (r.gpus < 1) throw InputError(where + ": needs at least 1 GPU");
    if (r.gpus > total)
      throw InputError(where + ": needs " + std::to_string(r.gpus) + " GPUs; the cluster has " +
                       std::to_string(total));
    std::vector<int> free;
    for (int g = 0; g < total; ++g)
      if (!taken[g]) free.push_back(g);
    if (static_cast<int>(free.size()) < r.gpus) {
      out.unplaced.push_back(r.job + ": needs " + std::to_string(r.gpus) + " GPUs, " +
                             std::to_string(free.size()) + " free");
      largest_waiting = std::max(largest_waiting, r.gpus);
      continue;
    }
    // The free GPUs of each server, in server order.
    std::vector<std::vector<int>> free_of(layout.servers.size());
    for (int g : free) free_of[layout.gpus[g].server].push_back(g);
    if (r.policy == PlacementPolicy::kServer) {
      size_t largest = 0, most_free = 0;
      for (size_t s = 0; s < layout.servers.size(); ++s) {
        largest = std::max(largest, layout.servers[s].gpus.size());
        most_free = std::max(most_free, free_of[s].size());
      }
      if (static_cast<size_t>(r.gpus) > largest)
        throw InputError(where + ": needs " + std::to_string(r.gpus) +
                         " GPUs in one server (placement: server); the largest server has " +
                         std::to_string(largest));
      if (static_cast<size_t>(r.gpus) > most_free) {
        out.unplaced.push_back(r.job + ": needs " + std::to_string(r.gpus) +
                               " GPUs in one server, at most " + std::to_string(most_free) +
                               " free in any");
        largest_waiting = std::max(largest_waiting, r.gpus);
        continue;
      }
    }
    switch (r.policy) {
      case PlacementPolicy::kPacked:
        mine = packed(free_of, r.gpus);
        break;
      case PlacementPolicy::kSpread:
        for (size_t round = 0; static_cast<int>(mine.size()) < r.gpus; ++round)
          for (const auto& gpus : free_of)
            if (round < gpus.size() && static_cast<int>(mine.size()) < r.gpus)
              mine.push_back(gpus[round]);
        break;
      case PlacementPolicy::kTopology:
        mine = topology_aware(layout, free_of, r.gpus);
        if (mine.empty()) mine = packed(free_of, r.gpus);  // no domain holds it
        break;
      case PlacementPolicy::kServer:
        mine = in_one_server(free_of, r.gpus);
        break;
      case PlacementPolicy::kRandom: {
        std::mt19937_64 rng(r.seed);
        for (int i = 0; i < r.gpus; ++i) {
          const size_t pick = i + draw_below(rng, free.size() - i);
          std::swap(free[i], free[pick]);
          mine.push_back(free[i]);
        }
        break;
      }
      case PlacementPolicy::kExplicit:
        break;
    }
    for (int g : mine) taken[g] = 1;
  }
  for (int g = 0; g < total; ++g) out.free_gpus += taken[g] ? 0 : 1;
  if (largest_waiting > 0) out.fragmented_gpus = out.free_gpus;
  return out;
}

ClusterLayout sub_layout(const ClusterLayout& layout, const std::vector<int>& gpus) {
  ClusterLayout out;
  std::map<int, int> server_of;  // layout's server -> out's
  for (int g : gpus) {
    ClusterGpu gpu = layout.gpus.at(g);
    auto [it, fresh] = server_of.emplace(gpu.server, static_cast<int>(out.servers.size()));
    if (fresh) {
      const ClusterServer& s = layout.servers.at(gpu.server);
      out.servers.push_back({{}, s.cpus, s.cpu_cores, s.domain});
    }
    gpu.server = it->second;
    out.servers[it->second].gpus.push_back(static_cast<int>(out.gpus.size()));
    out.gpus.push_back(gpu);
  }
  return out;
}

}  // namespace orrery
