#include "common/json_fields.h"

#include <algorithm>
#include <cmath>

#include "common/errors.h"
#include "common/suggest.h"

namespace orrery {

using nlohmann::json;

std::string describe_json(const json& v) {
  if (v.is_structured() || v.is_null()) return v.type_name();
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return std::string(v.type_name()) + " " + text;
}

void JsonFields::fail(const std::string& what) const {
  throw InputError(origin_ + ": " + (where_.empty() ? "" : where_ + ": ") + what);
}

void JsonFields::only(std::initializer_list<const char*> allowed) const {
  for (const auto& member : obj_.items()) {
    bool known = std::any_of(allowed.begin(), allowed.end(),
                             [&](const char* k) { return member.key() == k; });
    if (known) continue;
    const std::vector<std::string> names(allowed.begin(), allowed.end());
    fail("unknown key \"" + member.key() + "\"" + did_you_mean(member.key(), names) +
         " (expected one of: " + join_names(names) + ")");
  }
}

const json* JsonFields::find(const char* key) const {
  auto it = obj_.find(key);
  return it == obj_.end() ? nullptr : &*it;
}

bool JsonFields::text(const char* key, std::string* out) const {
  const json* v = find(key);
  if (v == nullptr) return false;
  if (!v->is_string())
    fail("\"" + std::string(key) + "\" must be a string, got " + describe_json(*v));
  *out = v->get<std::string>();
  return true;
}

std::string JsonFields::required_text(const char* key) const {
  std::string out;
  if (!text(key, &out)) fail("missing required key \"" + std::string(key) + "\"");
  if (out.empty()) fail("\"" + std::string(key) + "\" must not be empty");
  return out;
}

std::string JsonFields::text_or(const char* key, const std::string& fallback) const {
  std::string out;
  return text(key, &out) ? out : fallback;
}

bool JsonFields::amount(const char* key, const char* unit, double* out) const {
  const json* v = find(key);
  if (v == nullptr) return false;
  bool ok = v->is_number() && std::isfinite(v->get<double>()) && v->get<double>() >= 0;
  if (!ok) {
    fail("\"" + std::string(key) + "\" must be a number >= 0" +
         (*unit ? " (" + std::string(unit) + ")" : std::string()) + ", got " + describe_json(*v));
  }
  *out = v->get<double>();
  return true;
}

double JsonFields::amount(const char* key) const {
  double v = 0.0;
  amount(key, "", &v);
  return v;
}

int64_t JsonFields::integer(const char* key, int64_t fallback, int64_t min) const {
  const json* v = find(key);
  if (v == nullptr) return fallback;
  if (!v->is_number_integer() || v->get<int64_t>() < min)
    fail("\"" + std::string(key) + "\" must be an integer >= " + std::to_string(min) + ", got " +
         describe_json(*v));
  return v->get<int64_t>();
}

bool JsonFields::flag(const char* key) const {
  const json* v = find(key);
  if (v == nullptr) return false;
  if (!v->is_boolean())
    fail("\"" + std::string(key) + "\" must be true or false, got " + describe_json(*v));
  return v->get<bool>();
}

}  // namespace orrery
