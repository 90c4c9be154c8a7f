#include "scenario/job_mix.h"

#include <cstdlib>
#include <random>

#include "common/input_limits.h"
#include "common/seeded_draw.h"
#include "common/units.h"
#include "strategies/job_placement.h"

namespace orrery {
namespace {

struct JobType {
  YamlMap map;
  std::string path;
  std::string name;
  std::string placement;  // the type's, else the mix's
  double share = 0.0;
  std::vector<int> sizes;  // drawn uniformly
  int min_iterations = 1, max_iterations = 1;
  double min_start = 0.0, max_start = 0.0;
};

// A scalar or a two-item list [min, max] of what `parse` reads.
template <typename Parse>
void read_range(const YamlMap& m, const std::string& key, const char* expected, Parse parse,
                double* lo, double* hi) {
  if (!m.has(key)) return;
  const YAML::Node n = m.raw(key);
  auto value = [&](const YAML::Node& item) {
    double v = 0;
    if (!item.IsScalar() || !parse(item.Scalar(), &v))
      m.fail(key, std::string("expected ") + expected + " or a range [min, max] of them");
    return v;
  };
  if (n.IsSequence()) {
    if (n.size() != 2) m.fail(key, "a range is two values, [min, max]");
    *lo = value(n[0]);
    *hi = value(n[1]);
    if (!(*lo <= *hi)) m.fail(key, "the range's min is above its max");
  } else {
    *lo = *hi = value(n);
  }
}

bool parse_count(const std::string& s, double* v) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  *v = std::stod(s);
  return *v >= 1;
}

JobType read_type(const YamlMap& m, const std::string& path, size_t index, int platform_gpus,
                  const std::string& mix_placement) {
  JobType t{m, path, m.str("name", "type" + std::to_string(index)), "", 0.0, {}, 1, 1, 0.0, 0.0};
  if (t.name.empty() || t.name.find('/') != std::string::npos)
    m.fail("name", "must be non-empty and without '/' (it prefixes the type's jobs)");
  t.share = m.number("share", 1.0, limits::kWeight);
  if (!m.has("gpus")) m.fail("gpus", "is required: a GPU count, or a list of counts");
  auto size = [&](const YAML::Node& item) {
    double v = 0;
    if (!item.IsScalar() || !parse_count(item.Scalar(), &v))
      m.fail("gpus", "expected a GPU count of at least 1, or a list of them such as [2, 4, 8]");
    if (v > platform_gpus)
      m.fail("gpus",
             item.Scalar() + " GPUs: more than the platform's " + std::to_string(platform_gpus));
    t.sizes.push_back(static_cast<int>(v));
  };
  const YAML::Node g = m.raw("gpus");
  if (g.IsSequence()) {
    for (const YAML::Node& item : g) size(item);
  } else {
    size(g);
  }
  if (t.sizes.empty()) m.fail("gpus", "the list of counts is empty");
  double lo = 1, hi = 1;
  read_range(m, "iterations", "an iteration count of at least 1", parse_count, &lo, &hi);
  t.min_iterations = static_cast<int>(lo);
  t.max_iterations = static_cast<int>(hi);
  // As a job's own start: a bare number other than 0 would be read in seconds, rarely what was
  // meant, so it needs its unit (common/yaml_reader.h).
  auto time_with_unit = [](const std::string& s, double* v) {
    if (!parse_time(s, v)) return false;
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    const bool bare = end != s.c_str() && *end == '\0';
    return !bare || *v == 0.0;
  };
  read_range(m, "start", "a time with its unit such as 20ms", time_with_unit, &t.min_start,
             &t.max_start);
  t.placement = m.str("placement", mix_placement);
  PlacementPolicy policy;
  if (!parse_placement_policy(t.placement, &policy))
    m.fail("placement",
           "expected packed, spread, topology, server or random, got \"" + t.placement + "\"");
  if (t.min_start < 0) m.fail("start", "must not be negative");
  // Read by the jobs built from the type (scenario/jobs.cc), which check them.
  for (const char* k : {"workload", "strategy", "precision", "cost_model", "framework"})
    if (m.has(k)) m.raw(k);
  if (!m.has("workload")) m.fail("workload", "is required, as for a job");
  m.reject_unknown_keys();
  return t;
}

}  // namespace

std::vector<JobEntryNode> draw_job_mix(const YamlMap& mix, int platform_gpus) {
  const int seed = mix.integer("seed", 1, 0, 2147483647);
  const double load = mix.number("load", 1.0, limits::kLoad);  // a share of the GPUs
  const std::string placement = mix.str("placement", "packed");
  PlacementPolicy policy;
  if (!parse_placement_policy(placement, &policy))
    mix.fail("placement",
             "expected packed, spread, topology, server or random, got \"" + placement + "\"");
  const YAML::Node list = mix.raw("types");
  if (!list.IsSequence() || list.size() == 0)
    mix.fail("types", "expected a list of job types, each with a share, gpus and a workload");
  std::vector<JobType> types;
  double total_share = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = mix.key_path("types") + "[" + std::to_string(i) + "]";
    if (!list[i].IsMap()) mix.fail("types", "[" + std::to_string(i) + "]: expected a mapping");
    types.push_back(
        read_type(YamlMap(list[i], mix.origin(), path), path, i, platform_gpus, placement));
    for (size_t j = 0; j < i; ++j)
      if (types[j].name == types[i].name)
        types[i].map.fail("name", "\"" + types[i].name + "\" names two types");
    total_share += types[i].share;
  }
  if (!(total_share > 0)) mix.fail("types", "every share is 0: no job can be drawn");
  mix.reject_unknown_keys();

  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  std::vector<JobEntryNode> out;
  std::vector<int> drawn(types.size(), 0);
  int asked = 0;
  while (asked < load * platform_gpus) {
    // Type by share: the first whose cumulative share passes a uniform draw (the last one with
    // a share when rounding leaves the draw above the sum).
    const double pick = draw_unit(rng) * total_share;
    size_t t = 0;
    for (double sum = 0; t < types.size(); ++t) {
      sum += types[t].share;
      if (pick < sum) break;
    }
    while (t >= types.size() || types[t].share == 0) --t;
    const JobType& type = types[t];
    const int gpus = type.sizes[draw_below(rng, type.sizes.size())];
    const int iterations =
        type.min_iterations +
        static_cast<int>(
            draw_below(rng, static_cast<uint64_t>(type.max_iterations - type.min_iterations + 1)));
    const double start = type.min_start + draw_unit(rng) * (type.max_start - type.min_start);
    YAML::Node job(YAML::NodeType::Map);
    job["name"] = type.name + "-" + std::to_string(drawn[t]++);
    job["gpus"] = gpus;
    job["placement"] = type.placement;
    // Each job its own random placement, fixed by the mix's seed.
    job["seed"] = static_cast<int>((static_cast<int64_t>(seed) + static_cast<int64_t>(out.size())) %
                                   2147483648LL);
    job["iterations"] = iterations;
    if (start > 0) job["start"] = format_exact(start) + "s";
    for (const char* k : {"workload", "strategy", "precision", "cost_model", "framework"})
      if (type.map.has(k)) job[k] = type.map.raw(k);
    out.push_back({job, type.path + " (job " + job["name"].Scalar() + ")"});
    asked += gpus;
    // The first job that does not fit waits at the head of the queue: nothing after it starts.
    if (asked > platform_gpus) break;
  }
  return out;
}

}  // namespace orrery
