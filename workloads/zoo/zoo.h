// The model zoo: generators of single-replica training steps (forward, backward with data and
// weight gradients, optimizer updates) for the models the source papers measure. Each model's
// hyper-parameters are scenario keys with defaults; docs/workloads.md lists them with sources.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/yaml_reader.h"
#include "workloads/model_graph.h"

namespace orrery {

// Registered model names, sorted.
std::vector<std::string> zoo_model_names();
bool is_zoo_model(const std::string& name);

// Builds `name` with hyper-parameters from `keys` (missing keys take their defaults). Keys are
// strict: an unknown key, a wrong type or an out-of-range value is an InputError naming the key
// (and, through YamlMap, the file and line); an unknown model is an InputError listing the known
// ones. FLOPs and bytes are filled (workloads/op_counts.h).
// `defaults` replaces the defaults of the keys it names (the sizes a Hugging Face config gives,
// workloads/zoo/hf_config.h); `keys` still wins over them.
ModelGraph make_zoo_model(const std::string& name, const YamlMap& keys,
                          const std::map<std::string, std::string>& defaults = {});

struct ZooKeyDoc {
  std::string key;
  std::string default_value;
  std::string meaning;
};
struct ZooModelInfo {
  std::string name;
  std::string description;  // one line, with the source of its architecture
  std::vector<ZooKeyDoc> keys;
};
// The description and keys of a model (throws InputError for unknown names).
ZooModelInfo zoo_model_info(const std::string& name);

}  // namespace orrery
