// Exact aggregation of alike traffic: k rings of one collective that move the same bytes in
// step (the channels of a ring, a hierarchical all-reduce's rings across servers, one per local
// rank, a tree all-reduce's channels across servers) run as their first ring alone, each of its
// flows standing for the k flows at its place in the rings. Exact in the arithmetic of max-min
// fairness; in floating point to the last bits, where a link's users are summed in another
// order than in the copies.
//
// Why it is exact. Put each place's k flows in one class, and each link in the class of the
// links the copies cross in its stead (link j of copy t's route with link j of ring 0's). Where
// every link of a class carries the same number of a flow class's flows, for every flow class
// (an equitable partition), and the links of a class are alike (bandwidth, sharing), progressive
// filling raises a class's flows together and saturates a class's links together: the max-min
// rates are equal within a class, and one flow per class on one link per class, counted as often
// as that link's users of the class, gets them. Flows that start together with the same bytes
// then end together, and the rings stay in step. The check below is that condition, counted on
// the copies' own routes. Traffic outside the aggregation keeps it exact only while it leaves
// the classes of more than one link alone, or loads their links alike; the replay counts the
// flows that cross such links while aggregated flows are in flight (asymmetric_alike_flows).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace orrery {

// What the aggregations so far made of the links (indices 0..n-1, grown on demand).
struct LinkClasses {
  std::vector<int> canonical;  // per link: its class's smallest link, -1 for none
  std::vector<int> size;       // per link that is a canonical one: its class's links
  int64_t merged_links = 0;    // links in classes of more than one (grows, never shrinks)

  void grow(size_t links);
  // Whether `link` is merged with others: in a class of more than one link.
  bool merged(int link) const;
};

// One place of the rings: routes[t] the links (indices) copy t's flow crosses there; routes[0]
// the first ring's, whose flow stands for all.
struct AlikePlace {
  std::vector<const std::vector<int>*> routes;
};

// Per place, the first ring's flow as aggregated: the canonical links of the classes it
// crosses, each once, in order of first crossing, and how many of the place's flows use each
// link of that class.
struct CountedLinks {
  std::vector<int> links;
  std::vector<int> counts;
};

// Aggregates `places` when the partition they define is equitable (see above), its links alike
// by `alike(a, b)`, and consistent with what `classes` holds: a class either new (its links in
// none) or exactly one made before. Then records the classes and fills `out` (one entry per
// place) and returns true; otherwise leaves both and returns false (the caller runs every
// ring).
// Links where `apart(l)` (the collective's other flows cross them, unaggregated) must stay in
// classes of their own.
bool aggregate_alike(const std::vector<AlikePlace>& places,
                     const std::function<bool(int, int)>& alike,
                     const std::function<bool(int)>& apart, LinkClasses* classes,
                     std::vector<CountedLinks>* out);

}  // namespace orrery
