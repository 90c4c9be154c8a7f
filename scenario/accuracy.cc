#include "scenario/accuracy.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "common/csv.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "common/quantile.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kColumns = {"case",   "date",      "kind",     "framework",
                                           "gpu",    "gpus",      "scenario", "set",
                                           "metric", "published", "per_step"};
const std::set<std::string> kMetrics = {"iteration_s", "tokens_per_gpu_s", "samples_s"};

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

// A finite number > 0, or an InputError naming the row and column.
double positive(const std::string& text, const std::string& where, const std::string& column) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v <= 0)
    throw InputError(where + ": " + column + " \"" + text + "\" is not a number above 0");
  return v;
}

std::vector<PublishedCase> read_file(const fs::path& path) {
  const std::string name = path.filename().string();
  const std::string text = read_input_file(path.string(), "published measurements", 1 << 20);
  std::istringstream in(text);
  std::string line, source;
  std::vector<std::string> header;
  std::vector<PublishedCase> cases;
  bool in_source = false;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = path.string() + ":" + std::to_string(n);
    if (trim(line).empty()) continue;
    if (line[0] == '#') {
      const std::string body = trim(line.substr(1));
      if (body.rfind("source:", 0) == 0) {
        source = trim(body.substr(7));
        in_source = true;
      } else if (in_source && !body.empty() && line.size() > 2 && line[1] == ' ' &&
                 line[2] == ' ') {
        source += " " + body;  // an indented continuation of the source
      } else {
        in_source = false;
      }
      continue;
    }
    in_source = false;
    std::vector<std::string> fields;
    if (!split_csv_line(line, &fields)) throw InputError(where + ": a quote is left open");
    if (header.empty()) {
      header = fields;
      for (const auto& c : kColumns)
        if (std::find(header.begin(), header.end(), c) == header.end())
          throw InputError(where + ": the header has no \"" + c + "\" column");
      continue;
    }
    if (fields.size() != header.size())
      throw InputError(where + ": " + std::to_string(fields.size()) + " fields, the header has " +
                       std::to_string(header.size()));
    std::map<std::string, std::string> f;
    for (size_t i = 0; i < header.size(); ++i) f[header[i]] = trim(fields[i]);
    PublishedCase c;
    c.file = name;
    c.line = n;
    c.source = source;
    c.id = f["case"];
    c.scenario = f["scenario"];
    c.metric = f["metric"];
    c.date = f["date"];
    c.kind = f["kind"];
    c.framework = f["framework"];
    c.gpu = f["gpu"];
    for (const char* required : {"case", "scenario", "kind", "gpu"})
      if (f[required].empty()) throw InputError(where + ": " + required + " is empty");
    if (!kMetrics.count(c.metric))
      throw InputError(where + ": metric \"" + c.metric +
                       "\" is not iteration_s, tokens_per_gpu_s or samples_s");
    c.published = positive(f["published"], where, "published");
    c.gpus = static_cast<int>(positive(f["gpus"], where, "gpus"));
    if (c.metric == "samples_s") c.per_step = positive(f["per_step"], where, "per_step");
    std::istringstream sets(f["set"]);
    for (std::string kv; std::getline(sets, kv, ';');)
      if (!trim(kv).empty()) {
        if (kv.find('=') == std::string::npos)
          throw InputError(where + ": set \"" + trim(kv) + "\" is not key=value");
        c.overrides.push_back(trim(kv));
      }
    cases.push_back(std::move(c));
  }
  if (source.empty() && !cases.empty())
    throw InputError(path.string() + ": no \"# source:\" line names where the figures come from");
  return cases;
}

double median_of(std::vector<double> v) { return quantile(std::move(v), 0.5); }

}  // namespace

std::vector<PublishedCase> read_published_cases(const std::string& dir) {
  if (!fs::is_directory(dir))
    throw InputError(dir + ": not a directory of published measurements (*.csv)");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".csv") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<PublishedCase> all;
  std::map<std::string, std::string> seen;  // case -> where
  for (const auto& p : files)
    for (auto& c : read_file(p)) {
      const std::string where = p.string() + ":" + std::to_string(c.line);
      auto [it, fresh] = seen.emplace(c.id, where);
      if (!fresh)
        throw InputError(where + ": case \"" + c.id + "\" is named already at " + it->second);
      all.push_back(std::move(c));
    }
  return all;
}

double case_prediction(const PublishedCase& c, double iteration_s, double tokens_per_gpu_s) {
  if (c.metric == "tokens_per_gpu_s") return tokens_per_gpu_s;
  if (c.metric == "samples_s") return iteration_s > 0 ? c.per_step / iteration_s : 0.0;
  return iteration_s;
}

double case_error(const PublishedCase& c, double predicted) {
  if (c.metric == "iteration_s") return predicted > 0 ? c.published / predicted - 1 : 0.0;
  return predicted / c.published - 1;
}

std::string gpu_generation(const std::string& gpu) {
  std::string g;
  for (char ch : gpu) g += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  auto has = [&](const char* s) { return g.find(s) != std::string::npos; };
  if (has("B200") || has("B300") || has("GB200") || has("GB300") || has("B100")) return "Blackwell";
  if (has("H100") || has("H200") || has("H800") || has("H20") || has("GH200")) return "Hopper";
  if (has("L40") || has("L4") || has("4090")) return "Ada";
  if (has("A100") || has("A800") || has("A10") || has("A30") || has("A40") || has("3090"))
    return "Ampere";
  if (has("T4") || has("2080")) return "Turing";
  if (has("V100") || has("TITAN V")) return "Volta";
  if (has("P100") || has("P4") || has("P40") || has("XP") || has("PASCAL") || has("1080"))
    return "Pascal";
  return "other";
}

std::string scale_band(int gpus) {
  if (gpus <= 1) return "1";
  if (gpus <= 8) return "2-8";
  if (gpus <= 64) return "9-64";
  if (gpus <= 512) return "65-512";
  return "513+";
}

std::vector<ErrorGroup> group_errors(const std::vector<PublishedCase>& cases,
                                     const std::vector<double>& errors) {
  using Key = std::pair<std::string, std::string>;
  std::vector<std::pair<std::string, std::function<std::string(const PublishedCase&)>>> dims = {
      {"kind", [](const PublishedCase& c) { return c.kind; }},
      {"framework", [](const PublishedCase& c) { return c.framework; }},
      {"generation", [](const PublishedCase& c) { return gpu_generation(c.gpu); }},
      {"scale", [](const PublishedCase& c) { return scale_band(c.gpus); }},
      {"source", [](const PublishedCase& c) { return c.file; }},
  };
  std::vector<std::pair<Key, std::vector<double>>> groups = {{{"all", "all"}, errors}};
  // Scale bands in GPU order, the other groups by name.
  const std::vector<std::string> bands = {"1", "2-8", "9-64", "65-512", "513+"};
  for (const auto& [dim, name_of] : dims) {
    std::map<std::string, std::vector<double>> by;
    for (size_t i = 0; i < cases.size(); ++i) by[name_of(cases[i])].push_back(errors[i]);
    if (dim == "scale") {
      for (const auto& band : bands)
        if (by.count(band)) groups.push_back({{dim, band}, by[band]});
      continue;
    }
    for (auto& [name, e] : by) groups.push_back({{dim, name}, std::move(e)});
  }
  std::vector<ErrorGroup> out;
  for (const auto& [key, e] : groups) {
    if (e.empty()) continue;
    std::vector<double> abs;
    for (double x : e) abs.push_back(std::fabs(x));
    out.push_back({key.first, key.second, static_cast<int>(e.size()), median_of(abs),
                   quantile(abs, 0.9), median_of(e)});
  }
  return out;
}

}  // namespace orrery
