#include "engine/platform_model.h"

#include <optional>
#include <set>
#include <simgrid/s4u.hpp>
#include <string_view>
#include <unordered_map>

#include "engine/leaf_routes.h"
#include "engine/xml_routes.h"
#include "platforms/simgrid_links.h"

namespace sg4 = simgrid::s4u;

namespace orrery {
namespace {

// A generated topology's hosts and links as build_simgrid_platform would make them
// (platforms/simgrid_platform.cc: create_host with the speed and cores, every property; the
// links of simgrid_links_of, shared, with the property "class"), and its routes as SimGrid
// would find them in that platform's Dijkstra zone.
class TopologyModel : public PlatformModel {
 public:
  TopologyModel(const Topology& topo, std::unique_ptr<LeafRoutes> leaf)
      : topo_(topo), leaf_(std::move(leaf)) {
    host_id_.reserve(topo.hosts.size());
    for (size_t h = 0; h < topo.hosts.size(); ++h)
      host_id_.emplace(topo.hosts[h].name, static_cast<int>(h));
    for (const TopoLink& l : topo.links) {
      spec_.emplace(l.name, &l);
      for (const SimgridLink& s : simgrid_links_of(l))
        links_.push_back(
            {s.name, s.bandwidth, s.latency, ModelLink::Sharing::kShared, l.link_class});
    }
    link_id_.reserve(links_.size());
    for (size_t l = 0; l < links_.size(); ++l)
      link_id_.emplace(links_[l].name, static_cast<int>(l));
    bypass_.reserve(topo.routes.size());
    for (const TopoRoute& r : topo.routes) {
      auto a = host_id_.find(r.src), b = host_id_.find(r.dst);
      if (a != host_id_.end() && b != host_id_.end())
        bypass_.emplace(key(a->second, b->second), &r);
    }
  }

  int host(const std::string& name) override {
    auto it = host_id_.find(name);
    return it == host_id_.end() ? -1 : it->second;
  }
  const std::string& host_name(int h) const override { return topo_.hosts[h].name; }
  double speed(int h) const override { return topo_.hosts[h].speed; }
  int cores(int h) const override { return topo_.hosts[h].cores; }
  const char* property(int h, const char* key) const override {
    const auto& p = topo_.hosts[h].properties;
    auto it = p.find(key);
    return it == p.end() ? nullptr : it->second.c_str();
  }
  const ModelLink& link(int l) const override { return links_[l]; }

  bool route(int a, int b, std::vector<int>* links, double* latency) override {
    links->clear();
    // SimGrid takes a host pair's bypass route whole, adding the latencies in its order.
    if (auto it = bypass_.find(key(a, b)); it != bypass_.end()) {
      double lat = 0;
      for (const TopoHop& hop : it->second->hops)
        for (const std::string& name : simgrid_hop(*spec_.at(hop.link), hop.reverse)) {
          const int l = link_id_.at(name);
          links->push_back(l);
          lat += links_[l].latency;
        }
      *latency = lat;
      return true;
    }
    if (!leaf_->route_names(host_name(a), host_name(b), &names_)) return false;
    for (const std::string* name : names_) links->push_back(link_id_.at(*name));
    // Added up in the reverse of the list, as SimGrid does (engine/leaf_routes.cc).
    double lat = 0;
    for (auto it = links->rbegin(); it != links->rend(); ++it) lat += links_[*it].latency;
    *latency = lat;
    return true;
  }

 private:
  static uint64_t key(int a, int b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }

  const Topology& topo_;
  std::unique_ptr<LeafRoutes> leaf_;
  // Names by view into the topology and links_, which outlive the maps.
  std::unordered_map<std::string_view, int> host_id_, link_id_;
  std::unordered_map<std::string_view, const TopoLink*> spec_;
  std::vector<ModelLink> links_;
  std::unordered_map<uint64_t, const TopoRoute*> bypass_;
  std::vector<const std::string*> names_;  // scratch of route()
};

// SimGrid's objects, asked as the replay always asked them: routes from the routers' where
// they hold (engine/leaf_routes.h), else SimGrid's own lookup, after asking an XML platform's
// graph whether a route exists at all (engine/xml_routes.h).
class SimgridModel : public PlatformModel {
 public:
  SimgridModel(const PlatformSource& source, const std::vector<GraphStep>& xml_steps,
               bool xml_complete) {
    if (source.xml_file.empty())
      leaf_.emplace(source.topology);
    else if (!xml_steps.empty())
      leaf_.emplace(xml_steps, std::set<std::pair<std::string, std::string>>{});
    if (!source.xml_file.empty()) xml_routes_.emplace(xml_steps, xml_complete);
  }

  int host(const std::string& name) override {
    sg4::Host* h = sg4::Host::by_name_or_null(name);
    if (!h) return -1;
    auto [it, fresh] = host_id_.try_emplace(h, static_cast<int>(hosts_.size()));
    if (fresh) hosts_.push_back(h);
    return it->second;
  }
  const std::string& host_name(int h) const override { return hosts_[h]->get_name(); }
  double speed(int h) const override { return hosts_[h]->get_speed(); }
  int cores(int h) const override { return hosts_[h]->get_core_count(); }
  const char* property(int h, const char* key) const override {
    return hosts_[h]->get_property(key);
  }
  const ModelLink& link(int l) const override { return links_[l]; }

  bool route(int a, int b, std::vector<int>* links, double* latency) override {
    std::vector<sg4::Link*> found;
    double lat = 0;
    if (!leaf_ || !leaf_->route(hosts_[a]->get_name(), hosts_[b]->get_name(), &found, &lat)) {
      // A platform file may leave two hosts without a route (engine/xml_routes.h).
      if (xml_routes_ && !xml_routes_->has_route(hosts_[a], hosts_[b])) return false;
      hosts_[a]->route_to(hosts_[b], found, &lat);
    }
    links->clear();
    for (sg4::Link* l : found) links->push_back(link_id(l));
    *latency = lat;
    return true;
  }

 private:
  int link_id(sg4::Link* l) {
    auto [it, fresh] = link_id_.try_emplace(l, static_cast<int>(links_.size()));
    if (fresh) {
      ModelLink m;
      m.name = l->get_name();
      m.bandwidth = l->get_bandwidth();
      m.latency = l->get_latency();
      switch (l->get_sharing_policy()) {
        case sg4::Link::SharingPolicy::SHARED:
          break;
        case sg4::Link::SharingPolicy::FATPIPE:
          m.sharing = ModelLink::Sharing::kFatpipe;
          break;
        default:
          m.sharing = ModelLink::Sharing::kOther;
      }
      const char* cls = l->get_property("class");
      if (cls) m.link_class = cls;
      links_.push_back(std::move(m));
    }
    return it->second;
  }

  std::optional<LeafRoutes> leaf_;
  std::optional<XmlRoutes> xml_routes_;
  std::vector<sg4::Host*> hosts_;
  std::unordered_map<const sg4::Host*, int> host_id_;
  std::vector<ModelLink> links_;
  std::unordered_map<const sg4::Link*, int> link_id_;
};

}  // namespace

std::unique_ptr<PlatformModel> topology_model(const Topology& topo) {
  if (topo.route_graph.empty() && topo.edges.empty()) return nullptr;
  auto leaf = std::make_unique<LeafRoutes>(topo);
  if (!leaf->one_tree()) return nullptr;
  return std::make_unique<TopologyModel>(topo, std::move(leaf));
}

std::unique_ptr<PlatformModel> simgrid_model(const PlatformSource& source,
                                             const std::vector<GraphStep>& xml_steps,
                                             bool xml_complete) {
  return std::make_unique<SimgridModel>(source, xml_steps, xml_complete);
}

}  // namespace orrery
