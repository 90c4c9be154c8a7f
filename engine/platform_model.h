// What the replay reads of a platform: its hosts, its links and the route between two hosts, by
// id, as SimGrid 3.32 would answer. Two sources:
//  - a generated Topology read directly, without building a SimGrid platform at all: for 16,384
//    GPUs SimGrid's half a million links and 200,000 bypass routes took 1.3 s and, at 65,536
//    GPUs, 1.2 GiB of a 2.4 GiB run. Its routes are SimGrid's, link for link and latency bit
//    for bit (tests/platform_model_test.cc compares every host pair): a bypass route as
//    listed, any other a chain up and a chain down the route graph's one tree
//    (engine/leaf_routes.h). topology_model() refuses a topology whose graph is not one tree,
//    where SimGrid's Dijkstra would have to choose between paths;
//  - SimGrid's own objects once start_engine() loaded the platform (an XML file, or a topology
//    topology_model() refused).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "platforms/simgrid_platform.h"
#include "platforms/topology.h"

namespace orrery {

struct ModelLink {
  std::string name;  // SimGrid's (a split-duplex half ends in _UP or _DOWN)
  double bandwidth = 0;
  double latency = 0;
  enum class Sharing { kShared, kFatpipe, kOther } sharing = Sharing::kShared;
  std::string link_class;  // the property "class"; empty when absent
};

class PlatformModel {
 public:
  virtual ~PlatformModel() = default;
  // The host named `name`, -1 when the platform has none. Ids are stable.
  virtual int host(const std::string& name) = 0;
  virtual const std::string& host_name(int h) const = 0;
  virtual double speed(int h) const = 0;
  virtual int cores(int h) const = 0;
  // The host's property `key`, nullptr when it has none.
  virtual const char* property(int h, const char* key) const = 0;
  // The route from host a to host b: link ids in SimGrid's order and their latency summed as
  // SimGrid sums it. False when the platform has no route between them.
  virtual bool route(int a, int b, std::vector<int>* links, double* latency) = 0;
  virtual const ModelLink& link(int l) const = 0;
};

// The model of a generated topology, without SimGrid; nullptr when its route graph is not one
// tree (or it has none).
std::unique_ptr<PlatformModel> topology_model(const Topology& topo);

// The model of the platform SimGrid holds (after start_engine): `source`'s XML file, with
// `xml_steps` and `xml_complete` as start_engine gave them (they must outlive the model), or its
// generated topology.
std::unique_ptr<PlatformModel> simgrid_model(const PlatformSource& source,
                                             const std::vector<GraphStep>& xml_steps,
                                             bool xml_complete);

}  // namespace orrery
