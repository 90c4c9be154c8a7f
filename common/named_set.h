// Built-in items known by a name and aliases (device specs, software-stack profiles): lookups
// ignore case, spaces and underscores ("Tesla P4", "tesla_p4" and "Tesla-P4" are one name), an
// unknown name is an error listing the known ones with the nearest as a suggestion.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/errors.h"
#include "common/suggest.h"

namespace orrery {

// The lookup form of a name: lower case, spaces and underscores read as '-'.
std::string name_key(std::string s);

template <class T>
class NamedSet {
 public:
  // `kind` names the items in messages ("device", "framework"), `folder` where their files are.
  NamedSet(std::string kind, std::string folder)
      : kind_(std::move(kind)), folder_(std::move(folder)) {}

  // Adds `item` as `stem` (its file stem) answering to `aliases` too. Throws InputError naming
  // both files when a name or alias is already another item's.
  void add(const std::string& stem, T item, const std::vector<std::string>& aliases) {
    std::vector<std::string> keys{name_key(stem)};
    for (const auto& a : aliases) keys.push_back(name_key(a));
    for (const auto& key : keys) {
      auto [it, fresh] = lookup_.emplace(key, stem);
      if (!fresh && it->second != stem)
        throw InputError(folder_ + "/" + stem + ".yaml: name or alias \"" + key +
                         "\" is also used by " + folder_ + "/" + it->second + ".yaml");
    }
    names_[stem] = aliases;
    items_.emplace(stem, std::move(item));
  }

  // The stems, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> v;
    for (const auto& [stem, item] : items_) v.push_back(stem);
    return v;
  }

  // The item called `name` or answering to it. Throws InputError "unknown KIND "NAME" (did you
  // mean ...?) (known: ...`suffix`)".
  const T& get(const std::string& name, const std::string& suffix = "") const {
    auto it = lookup_.find(name_key(name));
    if (it != lookup_.end()) return items_.at(it->second);
    // Suggest among aliases too: a misspelt driver name is nearest another driver name.
    std::vector<std::string> all;
    for (const auto& [stem, aliases] : names_) {
      all.push_back(stem);
      all.insert(all.end(), aliases.begin(), aliases.end());
    }
    throw InputError("unknown " + kind_ + " \"" + name + "\"" + did_you_mean(name, all) +
                     " (known: " + join_names(names()) + suffix + ")");
  }

 private:
  std::string kind_, folder_;
  std::map<std::string, T> items_;                         // by stem
  std::map<std::string, std::vector<std::string>> names_;  // stem -> aliases
  std::map<std::string, std::string> lookup_;              // name_key of a name or alias -> stem
};

}  // namespace orrery
