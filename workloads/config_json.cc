#include "workloads/config_json.h"

#include "common/errors.h"

namespace orrery {

nlohmann::json parse_config_json(const std::string& text, const std::string& origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(origin + ": not JSON: " + e.what());
  }
  if (!j.is_object()) throw InputError(origin + ": expected a JSON object (a config.json)");
  return j;
}

}  // namespace orrery
