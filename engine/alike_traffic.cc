#include "engine/alike_traffic.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace orrery {

void LinkClasses::grow(size_t links) {
  if (canonical.size() < links) {
    canonical.resize(links, -1);
    size.resize(links, 0);
  }
}

bool LinkClasses::merged(int link) const {
  const int c = static_cast<size_t>(link) < canonical.size() ? canonical[link] : -1;
  return c >= 0 && size[c] > 1;
}

namespace {

int find(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

}  // namespace

bool aggregate_alike(const std::vector<AlikePlace>& places,
                     const std::function<bool(int, int)>& alike,
                     const std::function<bool(int)>& apart, LinkClasses* classes,
                     std::vector<CountedLinks>* out) {
  // The links involved, numbered locally, and the classes as a union-find over them.
  std::unordered_map<int, int> local;
  std::vector<int> links, parent;
  auto id = [&](int l) {
    auto [it, fresh] = local.try_emplace(l, static_cast<int>(links.size()));
    if (fresh) {
      links.push_back(l);
      parent.push_back(it->second);
    }
    return it->second;
  };
  for (const AlikePlace& p : places) {
    const std::vector<int>& own = *p.routes[0];
    for (size_t t = 0; t < p.routes.size(); ++t) {
      const std::vector<int>& copy = *p.routes[t];
      if (copy.size() != own.size()) return false;
      for (size_t j = 0; j < own.size(); ++j) {
        if (!alike(own[j], copy[j])) return false;
        const int a = find(parent, id(own[j])), b = find(parent, id(copy[j]));
        if (a != b) parent[std::max(a, b)] = std::min(a, b);
      }
    }
  }
  const size_t n = links.size();
  std::vector<int> root(n), canon(n, -1), members(n, 0);
  for (size_t i = 0; i < n; ++i) {
    root[i] = find(parent, static_cast<int>(i));
    const int r = root[i];
    canon[r] = canon[r] < 0 ? links[i] : std::min(canon[r], links[i]);
    ++members[r];
  }

  // Consistent with the classes made before: each class new or one of them exactly.
  enum : char { kUnknown, kNew, kKnown };
  std::vector<char> state(n, kUnknown);
  const int most = n ? *std::max_element(links.begin(), links.end()) : -1;
  classes->grow(static_cast<size_t>(most) + 1);
  for (size_t i = 0; i < n; ++i) {
    const int r = root[i];
    if (members[r] > 1 && apart(links[i])) return false;
    const int g = classes->canonical[links[i]];
    const bool fresh = g < 0;
    if (!fresh && (g != canon[r] || classes->size[g] != members[r])) return false;
    const char s = fresh ? kNew : kKnown;
    if (state[r] != kUnknown && state[r] != s) return false;
    state[r] = s;
  }

  // Equitable: at each place, every link of a class the place's flows cross carries as many of
  // them as the others of its class.
  std::vector<CountedLinks> counted(places.size());
  std::vector<int> uses(n, 0), per_link(n, -1), touched_members(n, 0), listed(n, -1), touched;
  for (size_t p = 0; p < places.size(); ++p) {
    touched.clear();
    for (const std::vector<int>* route : places[p].routes)
      for (int l : *route) {
        const int i = local.at(l);
        if (uses[i]++ == 0) touched.push_back(i);
      }
    bool equitable = true;
    for (int i : touched) {
      const int r = root[i];
      if (per_link[r] < 0) per_link[r] = uses[i];
      equitable = equitable && per_link[r] == uses[i];
      ++touched_members[r];
    }
    for (int i : touched) equitable = equitable && touched_members[root[i]] == members[root[i]];
    if (equitable)
      for (int l : *places[p].routes[0]) {
        const int r = root[local.at(l)];
        if (listed[r] == static_cast<int>(p)) continue;
        listed[r] = static_cast<int>(p);
        counted[p].links.push_back(canon[r]);
        counted[p].counts.push_back(per_link[r]);
      }
    for (int i : touched) {
      uses[i] = 0;
      per_link[root[i]] = -1;
      touched_members[root[i]] = 0;
    }
    if (!equitable) return false;
  }

  for (size_t i = 0; i < n; ++i) {
    const int r = root[i];
    if (state[r] == kNew && members[r] > 1) ++classes->merged_links;
    classes->canonical[links[i]] = canon[r];
    classes->size[canon[r]] = members[r];
  }
  out->swap(counted);
  return true;
}

}  // namespace orrery
