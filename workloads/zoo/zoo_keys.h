// Strict reading of a zoo model's hyper-parameter keys, recording each key's default and
// meaning so listings (`orrery workload list`, docs) come from the generators themselves.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/yaml_reader.h"
#include "workloads/zoo/layer_builder.h"
#include "workloads/zoo/zoo.h"

namespace orrery::zoo {

class ZooKeys {
 public:
  explicit ZooKeys(const YamlMap& keys, std::map<std::string, std::string> defaults = {})
      : keys_(keys), defaults_(std::move(defaults)) {}

  // An integer in [min, max]. The default max keeps products of a few dimensions (and the
  // FLOP counts of ops) far from int64 and double overflow.
  int64_t integer(const std::string& key, int64_t fallback, const std::string& meaning,
                  int64_t min = 1, int64_t max = kMaxDimension);
  static constexpr int64_t kMaxDimension = 1000000000;
  // Keys that multiply the ops of a replica (layers, tables): the deepest published models
  // have a few hundred layers, DLRM-class models a few thousand tables.
  static constexpr int64_t kMaxRepeats = 10000;
  bool boolean(const std::string& key, bool fallback, const std::string& meaning);
  std::string choice(const std::string& key, const std::string& fallback,
                     const std::vector<std::string>& options, const std::string& meaning);
  // A list of integers >= 1, written "512-512-64" (DLRM's own notation) or as a YAML list.
  std::vector<int64_t> int_list(const std::string& key, const std::vector<int64_t>& fallback,
                                const std::string& meaning);

  // The keys every model has: batch (samples per replica), dtype, optimizer.
  LayerBuilder builder(const std::string& model, int64_t default_batch,
                       const std::string& default_optimizer);

  // InputError naming the key (for checks across keys).
  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    keys_.fail(key, message);
  }

  // Rejects keys no generator read (call after reading, before building).
  void done() const { keys_.reject_unknown_keys(); }

  const std::vector<ZooKeyDoc>& docs() const { return docs_; }
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  void record(const std::string& key, const std::string& fallback, const std::string& meaning,
              const std::string& value);

  const YamlMap& keys_;
  std::map<std::string, std::string> defaults_;  // replace the generators' integer defaults
  std::vector<ZooKeyDoc> docs_;
  std::map<std::string, std::string> values_;
};

std::string join_ints(const std::vector<int64_t>& v, const char* sep = "-");

}  // namespace orrery::zoo
