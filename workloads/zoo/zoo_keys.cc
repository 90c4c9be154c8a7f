#include "workloads/zoo/zoo_keys.h"

#include <cmath>
#include <sstream>

#include "common/input_limits.h"
#include "common/suggest.h"

namespace orrery::zoo {

std::string join_ints(const std::vector<int64_t>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

namespace {

bool parse_int64(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end == '\0') {
    *out = v;
    return true;
  }
  // Large sizes are often written 1e6 or 1.4e7: accept a number that is a whole value.
  double d = std::strtod(s.c_str(), &end);
  if (*end != '\0' || !std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9e18) return false;
  *out = static_cast<int64_t>(d);
  return true;
}

}  // namespace

void ZooKeys::record(const std::string& key, const std::string& fallback,
                     const std::string& meaning, const std::string& value) {
  docs_.push_back({key, fallback, meaning});
  values_[key] = value;
}

int64_t ZooKeys::integer(const std::string& key, int64_t fallback, const std::string& meaning,
                         int64_t min, int64_t max) {
  if (auto d = defaults_.find(key); d != defaults_.end() && !parse_int64(d->second, &fallback))
    keys_.fail(key, "expected an integer, got \"" + d->second + "\"");
  int64_t v = fallback;
  if (keys_.has(key)) {
    std::string s = keys_.str(key, "");
    if (!parse_int64(s, &v)) keys_.fail(key, "expected an integer, got \"" + s + "\"");
  }
  if (v < min) keys_.fail(key, "must be >= " + std::to_string(min) + ", got " + std::to_string(v));
  if (v > max)
    keys_.fail(key, "must be <= " + std::to_string(max) + ", got " + std::to_string(v) +
                        " (larger values overflow the tensor sizes)");
  record(key, std::to_string(fallback), meaning, std::to_string(v));
  return v;
}

bool ZooKeys::boolean(const std::string& key, bool fallback, const std::string& meaning) {
  bool v = keys_.boolean(key, fallback);
  record(key, fallback ? "true" : "false", meaning, v ? "true" : "false");
  return v;
}

std::string ZooKeys::choice(const std::string& key, const std::string& fallback,
                            const std::vector<std::string>& options, const std::string& meaning) {
  std::string v = keys_.str(key, fallback);
  std::string list;
  bool ok = false;
  for (const auto& o : options) {
    list += (list.empty() ? "" : ", ") + o;
    ok = ok || o == v;
  }
  if (!ok)
    keys_.fail(key, "expected one of " + list + ", got \"" + v + "\"" + did_you_mean(v, options));
  record(key, fallback, meaning + " (" + list + ")", v);
  return v;
}

std::vector<int64_t> ZooKeys::int_list(const std::string& key, const std::vector<int64_t>& fallback,
                                       const std::string& meaning) {
  std::vector<int64_t> v = fallback;
  if (keys_.has(key)) {
    YAML::Node n = keys_.raw(key);
    std::vector<std::string> items;
    if (n.IsSequence()) {
      for (const auto& item : n) {
        if (!item.IsScalar()) keys_.fail(key, "expected a list of integers");
        items.push_back(item.Scalar());
      }
    } else if (n.IsScalar()) {
      std::stringstream ss(n.Scalar());
      for (std::string part; std::getline(ss, part, '-');) items.push_back(part);
    } else {
      keys_.fail(key, "expected integers such as 512-512-64 or [512, 512, 64]");
    }
    v.clear();
    for (const auto& s : items) {
      int64_t x = 0;
      if (!parse_int64(s, &x) || x < 1)
        keys_.fail(key, "expected integers >= 1 such as 512-512-64, got \"" + s + "\"");
      v.push_back(x);
    }
    if (v.empty()) keys_.fail(key, "must not be empty");
  }
  record(key, join_ints(fallback), meaning, join_ints(v));
  return v;
}

LayerBuilder ZooKeys::builder(const std::string& model, int64_t default_batch,
                              const std::string& default_optimizer) {
  int64_t batch = integer("batch", default_batch, "samples per replica per step", 1,
                          static_cast<int64_t>(limits::kBatch.hi));
  std::string dt = choice("dtype", "fp32", {"fp32", "fp16", "bf16"},
                          "element type of activations, weights and gradients");
  std::string opt = choice("optimizer", default_optimizer, {"sgd", "momentum", "adam"},
                           "optimizer update per parameter tensor");
  DType dtype = DType::kFP32;
  parse_dtype(dt, &dtype);
  Optimizer o = Optimizer::kSgd;
  parse_optimizer(opt, &o);
  return LayerBuilder(model, batch, dtype, o);
}

}  // namespace orrery::zoo
