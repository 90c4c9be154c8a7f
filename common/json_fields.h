// Reading the members of one JSON object strictly, for the JSON file formats (op graphs, model
// graphs): every error names the file, the object and what was expected.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

namespace orrery {

// The type and (short) value of a JSON item, for "got ..." in messages.
std::string describe_json(const nlohmann::json& v);

class JsonFields {
 public:
  // `where` names the object ("ops[3] \"send\""), `origin` the file; both prefix messages.
  JsonFields(const nlohmann::json& obj, std::string where, const std::string& origin)
      : obj_(obj), where_(std::move(where)), origin_(origin) {}

  void set_where(std::string where) { where_ = std::move(where); }

  // Throws InputError "origin: where: what".
  [[noreturn]] void fail(const std::string& what) const;

  // Rejects members outside `allowed`: a misspelt key would otherwise be silently ignored.
  void only(std::initializer_list<const char*> allowed) const;

  const nlohmann::json* find(const char* key) const;
  bool has(const char* key) const { return find(key) != nullptr; }

  // Strings: optional (false when absent), required and non-empty, or with a fallback.
  bool text(const char* key, std::string* out) const;
  std::string required_text(const char* key) const;
  std::string text_or(const char* key, const std::string& fallback) const;

  // Finite numbers >= 0: optional (false when absent; `unit` names the unit in messages), or 0
  // when absent.
  bool amount(const char* key, const char* unit, double* out) const;
  double amount(const char* key) const;

  int64_t integer(const char* key, int64_t fallback, int64_t min) const;
  bool flag(const char* key) const;  // false when absent

 private:
  const nlohmann::json& obj_;
  std::string where_;
  const std::string& origin_;
};

}  // namespace orrery
