#include "platforms/platform_dot.h"

#include <cctype>
#include <map>
#include <sstream>

#include "common/units.h"

namespace orrery {
namespace {

struct Look {
  const char* shape;
  const char* fill;
};

std::string server_of(const std::string& node) {
  if (node.size() < 3 || node[0] != 'n') return "";
  auto us = node.find('_');
  if (us == std::string::npos || us < 2) return "";
  for (size_t i = 1; i < us; ++i)
    if (!std::isdigit(static_cast<unsigned char>(node[i]))) return "";
  return node.substr(0, us);
}

// Generated names (topology_writer.h) tell a router's kind.
Look router_look(const std::string& name) {
  auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
  if (server_of(name).empty()) return {"doubleoctagon", "#f4b183"};  // fabric switches
  if (has("nvswitch")) return {"octagon", "#b6e3a1"};
  if (has("nic")) return {"hexagon", "#f6c98b"};
  if (has("_sw")) return {"diamond", "#d9d9d9"};
  if (has("_rp")) return {"point", "#808080"};
  return {"ellipse", "#c6d9f1"};  // root complexes
}

const char* class_color(const std::string& c) {
  static const std::map<std::string, const char*> colors = {
      {"nvlink", "#3a9d23"},   {"pcie", "#555555"}, {"rc-dma", "#7f7f7f"},
      {"rc-p2p", "#c00000"},   {"qpi", "#1f4e9d"},  {"memory", "#1f4e9d"},
      {"ethernet", "#d97a00"}, {"roce", "#d97a00"}, {"infiniband", "#d97a00"},
      {"nvswitch", "#3a9d23"}, {"sharp", "#d97a00"}};
  auto it = colors.find(c);
  return it == colors.end() ? "#000000" : it->second;
}

}  // namespace

std::string topology_to_dot(const Topology& topo) {
  std::ostringstream o;
  o << "graph \"" << topo.name << "\" {\n"
    << "  graph [rankdir=TB, fontname=\"Helvetica\", label=\"" << topo.name
    << "\", labelloc=t, fontsize=18];\n"
    << "  node [fontname=\"Helvetica\", fontsize=10, style=filled];\n"
    << "  edge [fontname=\"Helvetica\", fontsize=8];\n";
  std::map<std::string, std::vector<std::string>> by_server;  // server prefix -> node lines
  auto place = [&](const std::string& name, const std::string& line) {
    by_server[server_of(name)].push_back(line);
  };
  for (const auto& h : topo.hosts) {
    // In-network reduction endpoints take their switch's colour.
    std::string fill = h.role == "gpu"       ? "#76b900"
                       : h.role == "nvls"    ? "#b6e3a1"
                       : h.role == "collnet" ? "#f4b183"
                                             : "#9dc3e6";
    auto model = h.properties.find("model");
    std::string label = h.name + (model == h.properties.end() ? "" : "\\n" + model->second);
    place(h.name,
          "\"" + h.name + "\" [shape=box, fillcolor=\"" + fill + "\", label=\"" + label + "\"];");
  }
  for (const auto& r : topo.routers) {
    Look look = router_look(r);
    std::string label = std::string(look.shape) == "point" ? "" : r;
    place(r, "\"" + r + "\" [shape=" + look.shape + ", fillcolor=\"" + look.fill + "\", label=\"" +
                 label + "\", width=" + (std::string(look.shape) == "point" ? "0.12" : "0.3") +
                 "];");
  }
  for (const auto& [server, lines] : by_server) {
    std::string indent = "  ";
    if (!server.empty()) {
      o << "  subgraph \"cluster_" << server << "\" {\n    label=\"server " << server.substr(1)
        << "\"; style=rounded; color=\"#999999\";\n";
      indent = "    ";
    }
    for (const auto& l : lines) o << indent << l << "\n";
    if (!server.empty()) o << "  }\n";
  }
  std::map<std::string, const TopoLink*> links;
  for (const auto& l : topo.links) links[l.name] = &l;
  for (const auto& e : topo.edges) {
    const TopoLink& l = *links.at(e.link);
    std::string bw = format_bandwidth(l.bandwidth);
    if (l.duplex && l.down_bandwidth() != l.bandwidth)
      bw += " / " + format_bandwidth(l.down_bandwidth());
    o << "  \"" << e.a << "\" -- \"" << e.b << "\" [color=\"" << class_color(l.link_class)
      << "\", label=\"" << l.link_class << "\\n"
      << bw << "\"";
    if (l.link_class == "nvlink") o << ", penwidth=2.5";
    if (!l.duplex) o << ", style=dashed";
    o << "];\n";
  }
  o << "}\n";
  return o.str();
}

}  // namespace orrery
