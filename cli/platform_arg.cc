#include "cli/platform_arg.h"

#include <filesystem>

#include "common/errors.h"
#include "common/yaml_reader.h"
#include "scenario/scenario.h"

namespace fs = std::filesystem;

namespace orrery {

bool is_xml_platform(const std::string& arg) {
  return fs::path(arg).extension() == ".xml" && fs::exists(arg);
}

PlatformSpec load_platform_arg(const std::string& platform,
                               const std::vector<std::string>& overrides) {
  YAML::Node node;
  std::string origin;
  if (fs::exists(platform)) {
    if (is_xml_platform(platform))
      throw InputError(platform +
                       ": a SimGrid XML file has no platform description to show or export; "
                       "name a preset or a YAML platform");
    const YAML::Node root = load_yaml_file(platform);  // const: lookups add no keys
    node = root.IsMap() && root["platform"] ? root["platform"] : root;
    origin = platform;
  } else {
    platform_preset_yaml(platform);  // an unknown name fails here, listing the presets
    node = YAML::Node(YAML::NodeType::Map);
    node["preset"] = platform;
    origin = "preset " + platform;
  }
  for (std::string o : overrides) {
    if (o.rfind("platform.", 0) == 0) o = o.substr(9);
    apply_override(node, o);
  }
  return parse_platform_spec(node, origin, "platform");
}

}  // namespace orrery
