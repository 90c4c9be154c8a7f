#include "sweeps/yaml_path.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "common/errors.h"

namespace orrery {

std::vector<std::string> split_key_path(const std::string& path, const std::string& where,
                                        const std::string& what) {
  std::vector<std::string> keys;
  size_t start = 0;
  for (;;) {
    size_t dot = path.find('.', start);
    std::string k = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (k.empty()) throw InputError(where + ": " + what + " \"" + path + "\": empty key in path");
    keys.push_back(k);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return keys;
}

void set_at_path(YAML::Node root, const std::string& path, const YAML::Node& value,
                 const std::string& where) {
  std::vector<std::string> keys = split_key_path(path, where, "key");
  // yaml-cpp nodes are handles into the tree: walk down by collecting handles, never by
  // reassigning one (that would overwrite the node it refers to).
  std::vector<YAML::Node> chain{root};
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    YAML::Node next = chain.back()[keys[i]];
    if (next && !next.IsNull() && !next.IsMap()) {
      std::string prefix;
      for (size_t j = 0; j <= i; ++j) prefix += (j ? "." : "") + keys[j];
      throw InputError(where + ": key \"" + path + "\": \"" + prefix +
                       "\" holds a value, not a mapping of keys, so it has no key \"" +
                       keys[i + 1] + "\"");
    }
    if (!next || next.IsNull()) chain.back()[keys[i]] = YAML::Node(YAML::NodeType::Map);
    chain.push_back(chain.back()[keys[i]]);
  }
  chain.back()[keys.back()] = value;
}

YAML::Node get_at_path(const YAML::Node& root, const std::string& path) {
  std::vector<YAML::Node> chain{root};
  std::stringstream ss(path);
  for (std::string k; std::getline(ss, k, '.');) {
    const YAML::Node& cur = chain.back();
    if (!cur || !cur.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    YAML::Node found(YAML::NodeType::Undefined);
    for (auto it = cur.begin(); it != cur.end(); ++it)
      if (it->first.Scalar() == k) found = it->second;
    if (!found.IsDefined()) return found;
    chain.push_back(found);
  }
  return chain.back();
}

std::string node_text(const YAML::Node& node) {
  if (!node || node.IsNull()) return "";
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << node;
  return e.c_str();
}

namespace {

// The overlay as a tree of keys, applied in order: a later assignment of a whole mapping
// replaces what earlier ones set below it; a later one below refines an earlier mapping.
struct Overlay {
  bool has_value = false;
  NodeHandle value;
  std::map<std::string, Overlay> below;
};

// `skip`: keys of `base` left out (the top level's sweep, plan and output sections).
void emit(YAML::Emitter& e, const YAML::Node& base, const Overlay* over,
          const std::vector<std::string>* skip = nullptr) {
  YAML::Node node = over && over->has_value ? over->value.get() : base;
  bool refined = over && !over->below.empty();
  if (!refined && (!node || node.IsNull())) {
    e << YAML::Null;
    return;
  }
  if (!refined && node.IsScalar()) {
    e << node.Scalar();
    return;
  }
  if (!refined && node.IsSequence()) {
    e << YAML::BeginSeq;
    for (const auto& item : node) emit(e, item, nullptr);
    e << YAML::EndSeq;
    return;
  }
  // A mapping (or nothing, refined by the overlay): keys in sorted order.
  std::map<std::string, std::pair<NodeHandle, const Overlay*>> entries;
  if (node && node.IsMap())
    for (auto it = node.begin(); it != node.end(); ++it) {
      std::string k = node_text(it->first);
      if (skip && std::find(skip->begin(), skip->end(), k) != skip->end()) continue;
      entries[k].first = it->second;
    }
  if (refined)
    for (const auto& [k, sub] : over->below) entries[k].second = &sub;
  e << YAML::BeginMap;
  for (const auto& [k, entry] : entries) {
    e << YAML::Key << k << YAML::Value;
    emit(e, entry.first.get(), entry.second);
  }
  e << YAML::EndMap;
}

}  // namespace

std::string canonical_yaml(const YAML::Node& root,
                           const std::vector<std::pair<std::string, YAML::Node>>& overlay,
                           const std::vector<std::string>& skip) {
  Overlay top;
  for (const auto& [path, value] : overlay) {
    Overlay* at = &top;
    std::stringstream ss(path);
    for (std::string k; std::getline(ss, k, '.');) at = &at->below[k];
    at->has_value = true;
    at->value = value;
    at->below.clear();
  }
  for (const auto& k : skip) top.below.erase(k);
  // The skipped sections are left out as the root is read, not by building a pruned copy:
  // assigning the root's nodes into a new node would merge yaml-cpp's memory pool of the root
  // into the copy's, and the pool would grow by the copy with every point (a sweep of 10,000
  // points spent most of its time there, and every point's child again).
  YAML::Emitter e;
  const YAML::Node base = root && root.IsMap() ? root : YAML::Node(YAML::NodeType::Map);
  emit(e, base, &top, &skip);
  return e.c_str();
}

uint64_t fnv1a64(const std::string& bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string hash_hex(uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

}  // namespace orrery
