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
const std::set<std::string> kScenarioMetrics = {"iteration_s", "tokens_per_gpu_s", "samples_s"};
const std::set<std::string> kCollectiveMetrics = {"busbw_gbs", "collective_us"};
const std::set<std::string> kKernelMetrics = {"matmul_tflops", "kernel_us"};

bool is_time_metric(const std::string& metric) {
  return metric == "iteration_s" || metric == "collective_us" || metric == "kernel_us";
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The command of a kernel or collective case ("orrery bench collective ..." or "orrery cost
// ..."), checked against its metric; empty for a scenario case.
std::vector<std::string> read_command(const std::string& scenario, const std::string& metric,
                                      bool has_overrides, const std::string& where) {
  std::vector<std::string> w = words(scenario);
  const bool command = !w.empty() && w[0] == "orrery";
  const bool collective = kCollectiveMetrics.count(metric) > 0;
  const bool kernel = kKernelMetrics.count(metric) > 0;
  if (!command) {
    if (collective || kernel)
      throw InputError(where + ": metric " + metric + " is checked by a command: scenario \"" +
                       scenario + "\" must read \"orrery " +
                       (collective ? "bench collective" : "cost") + " ...\"");
    return {};
  }
  w.erase(w.begin());
  const bool bench = w.size() >= 2 && w[0] == "bench" && w[1] == "collective";
  const bool cost = !w.empty() && w[0] == "cost";
  if (!(bench && collective) && !(cost && kernel))
    throw InputError(where + ": \"" + scenario + "\" with metric " + metric +
                     ": expected \"orrery bench collective ...\" with busbw_gbs or collective_us, "
                     "or \"orrery cost ...\" with matmul_tflops or kernel_us");
  if (has_overrides)
    throw InputError(where +
                     ": set applies to scenarios; give a command its options in the "
                     "scenario column");
  return w;
}

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
    if (!kScenarioMetrics.count(c.metric) && !kCollectiveMetrics.count(c.metric) &&
        !kKernelMetrics.count(c.metric))
      throw InputError(where + ": metric \"" + c.metric +
                       "\" is not iteration_s, tokens_per_gpu_s, samples_s, busbw_gbs, "
                       "collective_us, matmul_tflops or kernel_us");
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
    c.command = read_command(c.scenario, c.metric, !c.overrides.empty(), where);
    cases.push_back(std::move(c));
  }
  if (source.empty() && !cases.empty())
    throw InputError(path.string() + ": no \"# source:\" line names where the figures come from");
  return cases;
}

double median_of(std::vector<double> v) { return quantile(std::move(v), 0.5); }

// A number after `"key": ` in the one-line JSON `orrery cost --json` prints.
bool json_number(const std::string& json, const std::string& key, double* v) {
  const size_t at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return false;
  char* end = nullptr;
  const char* from = json.c_str() + at + key.size() + 3;
  *v = std::strtod(from, &end);
  return end != from && std::isfinite(*v);
}

std::string json_text(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\": \"");
  if (at == std::string::npos) return "";
  const size_t from = at + key.size() + 5;
  const size_t to = json.find('"', from);
  return to == std::string::npos ? "" : json.substr(from, to - from);
}

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

CaseCommand case_command(const PublishedCase& c) {
  CaseCommand out;
  out.args = c.command;
  if (kCollectiveMetrics.count(c.metric)) {
    out.args.push_back("--csv");
    out.kind = "collective";
    out.framework = "nccl-tests";
    for (size_t i = 0; i + 1 < c.command.size(); ++i)
      if (c.command[i] == "--loop" && c.command[i + 1] == "pytorch")
        out.framework = "torch-distributed";
  } else {
    out.args.push_back("--json");
    out.kind = "kernel";
    out.framework = "cublas";
  }
  return out;
}

double command_prediction(const PublishedCase& c, const std::string& output, std::string* detail) {
  const std::string what = c.file + ":" + std::to_string(c.line) + " (" + c.id + "): ";
  if (kKernelMetrics.count(c.metric)) {
    double seconds = 0, flops = 0;
    if (!json_number(output, "seconds", &seconds) || !json_number(output, "flops", &flops) ||
        seconds <= 0)
      throw InputError(what + "orrery cost printed no time: " + output.substr(0, 200));
    if (detail) {
      const std::string tile = json_text(output, "tile");
      *detail = json_text(output, "kernel") + (tile.empty() ? "" : " " + tile);
    }
    return c.metric == "kernel_us" ? seconds * 1e6 : flops / seconds / 1e12;
  }
  // The CSV of bench collective: a header, then one row per size; the case is the last size.
  std::istringstream in(output);
  std::vector<std::string> header, row, fields;
  for (std::string line; std::getline(in, line);) {
    if (trim(line).empty()) continue;
    if (!split_csv_line(line, &fields)) continue;
    if (header.empty())
      header = fields;
    else
      row = fields;
  }
  auto column = [&](const std::string& name) -> std::string {
    for (size_t i = 0; i < header.size() && i < row.size(); ++i)
      if (header[i] == name) return row[i];
    throw InputError(what + "bench collective printed no " + name + " column");
  };
  if (row.empty()) throw InputError(what + "bench collective printed no row");
  if (detail) *detail = column("algorithm") + " " + column("protocol");
  const std::string text = column(c.metric == "busbw_gbs" ? "busbw_GBps" : "time_us");
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(v))
    throw InputError(what + "bench collective printed \"" + text + "\", not a number");
  return v;
}

double case_error(const PublishedCase& c, double predicted) {
  if (is_time_metric(c.metric)) return predicted > 0 ? c.published / predicted - 1 : 0.0;
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
