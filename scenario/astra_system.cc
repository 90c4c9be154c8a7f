#include "scenario/astra_system.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/errors.h"
#include "common/input_file.h"
#include "common/json_fields.h"

namespace orrery {
namespace {

using nlohmann::json;

constexpr size_t kMaxSystemFileBytes = 1 << 20;

// The algorithm names of one "*-implementation" list, checked against `allowed`.
std::vector<std::string> algorithms(const json& doc, const char* key,
                                    const std::set<std::string>& allowed, const std::string& path) {
  std::vector<std::string> out;
  auto it = doc.find(key);
  if (it == doc.end()) return out;
  if (!it->is_array() || it->empty())
    throw InputError(path + ": " + key + ": expected a list of algorithms, one per dimension");
  for (size_t d = 0; d < it->size(); ++d) {
    const json& v = (*it)[d];
    const std::string name = v.is_string() ? v.get<std::string>() : describe_json(v);
    if (!v.is_string() || !allowed.count(name)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      throw InputError(path + ": " + key + "[" + std::to_string(d) + "]: \"" + name +
                       "\" has no counterpart in Orrery; expected one of " + list);
    }
    out.push_back(name);
  }
  return out;
}

}  // namespace

CollectiveOptions read_astra_system(const std::string& path) {
  const std::string text = read_input_file(path, "ASTRA-sim system file", kMaxSystemFileBytes);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(path + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object()) throw InputError(path + ": expected a JSON object of system settings");
  JsonFields f(doc, "system", path);
  f.only({"scheduling-policy", "endpoint-delay", "active-chunks-per-dimension",
          "preferred-dataset-splits", "all-reduce-implementation", "all-gather-implementation",
          "reduce-scatter-implementation", "all-to-all-implementation", "collective-optimization",
          "local-mem-bw", "boost-mode", "roofline-enabled", "peak-perf",
          "intra-dimension-scheduling", "inter-dimension-scheduling", "replay-mode",
          "track-local-mem", "local-reduction-delay", "L"});
  const std::set<std::string> rings = {"ring", "oneRing", "hierarchicalRing"};
  std::set<std::string> allreduce = rings;
  allreduce.insert("doubleBinaryTree");
  CollectiveOptions c;
  c.protocol = CollectiveProtocol::kIdeal;
  const auto ar = algorithms(doc, "all-reduce-implementation", allreduce, path);
  algorithms(doc, "all-gather-implementation", rings, path);
  algorithms(doc, "reduce-scatter-implementation", rings, path);
  algorithms(doc, "all-to-all-implementation", {"ring", "direct", "oneRing", "oneDirect"}, path);
  const bool tree = std::find(ar.begin(), ar.end(), "doubleBinaryTree") != ar.end();
  if (tree && ar.size() > 1)
    throw InputError(path +
                     ": all-reduce-implementation: doubleBinaryTree on one dimension of several "
                     "has no counterpart in Orrery (its tree spans every rank); give it alone");
  if (tree)
    c.algo = CollectiveAlgo::kTree;
  else
    c.algo = ar.size() > 1 ? CollectiveAlgo::kHierarchical : CollectiveAlgo::kRing;
  c.pipeline = static_cast<int>(f.integer("preferred-dataset-splits", 1, 1));
  c.pipeline = std::min(c.pipeline, 1024);
  return c;
}

}  // namespace orrery
