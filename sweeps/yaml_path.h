// Dotted key paths into a YAML tree ("platform.server.nic.bandwidth"), and the canonical text of
// a tree that identifies a sweep point. Sweeps address any scenario key this way, so every
// helper reports a bad path with the path and where it was written.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <new>
#include <string>
#include <vector>

namespace orrery {

// A YAML::Node that can live in containers that assign their elements (std::sort, erase).
// yaml-cpp's Node::operator= writes through to the node the left side refers to, so assigning
// one struct holding a Node over another silently rewrites the first one's YAML; this handle
// rebinds instead.
class NodeHandle {
 public:
  NodeHandle() = default;
  NodeHandle(const YAML::Node& node) : node_(node) {}  // NOLINT: a handle converts implicitly
  NodeHandle(const NodeHandle& other) : node_(other.node_) {}
  NodeHandle& operator=(const NodeHandle& other) {
    if (this != &other) {
      node_.~Node();
      new (&node_) YAML::Node(other.node_);
    }
    return *this;
  }
  const YAML::Node& get() const { return node_; }
  operator const YAML::Node&() const { return node_; }  // NOLINT

 private:
  YAML::Node node_;
};

// "a.b.c" -> {"a", "b", "c"}. Throws InputError("<where>: <what> \"a..b\": empty key in path").
std::vector<std::string> split_key_path(const std::string& path, const std::string& where,
                                        const std::string& what);

// Sets root[a][b][c] = value, creating missing mappings on the way. The value node is shared,
// not copied, so it keeps its position in the file for error messages. Throws InputError
// naming `where` and the path when a component on the way is a scalar or a list.
void set_at_path(YAML::Node root, const std::string& path, const YAML::Node& value,
                 const std::string& where);

// The node at `path`, or an invalid node (operator! true) when any component is absent.
YAML::Node get_at_path(const YAML::Node& root, const std::string& path);

// A value as one line of text: a scalar's text, anything else as flow YAML ("{a: 1, b: 2}").
std::string node_text(const YAML::Node& node);

// Canonical text of `root` with `overlay` (path -> value) applied on top and the root keys in
// `skip` left out: mapping keys sorted, tags and styles ignored, so two trees that a scenario
// reader cannot tell apart give the same text. The overlay paths must be valid for `root`
// (set_at_path would accept them).
std::string canonical_yaml(const YAML::Node& root,
                           const std::vector<std::pair<std::string, YAML::Node>>& overlay,
                           const std::vector<std::string>& skip);

// 64-bit FNV-1a: stable across runs, machines and builds, so it can key results on disk.
uint64_t fnv1a64(const std::string& bytes);
std::string hash_hex(uint64_t hash);  // 16 lowercase hex digits

}  // namespace orrery
