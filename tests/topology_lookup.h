// The platform tests' ways into a generated topology: a preset with YAML keys merged over it,
// and a host or a link by name.
#pragma once

#include <string>

#include "common/yaml_reader.h"
#include "platforms/platform_spec.h"

namespace orrery::testing {

// `extra`: YAML lines merged over the preset ("servers: 2\n").
inline Topology preset(const std::string& name, const std::string& extra = "") {
  std::string yaml = "preset: " + name + "\n" + extra;
  return build_topology(parse_platform_spec(load_yaml_text(yaml, "t.yaml"), "t.yaml", "platform"));
}

inline const TopoHost* find_host(const Topology& t, const std::string& name) {
  for (const auto& h : t.hosts)
    if (h.name == name) return &h;
  return nullptr;
}

inline const TopoLink* find_link(const Topology& t, const std::string& name) {
  for (const auto& l : t.links)
    if (l.name == name) return &l;
  return nullptr;
}

}  // namespace orrery::testing
