#include "scenario/error_band.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "common/csv.h"
#include "common/data_dir.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "common/quantile.h"

namespace orrery {

std::vector<ValidationRecord> read_validation_records(const std::string& path) {
  const std::string text = read_input_file(path, "validation errors", 1 << 22);
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header;
  std::map<std::string, size_t> col;
  std::vector<ValidationRecord> out;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(n);
    std::vector<std::string> f;
    if (!split_csv_line(line, &f)) throw InputError(where + ": a quote is left open");
    if (header.empty()) {
      header = f;
      for (size_t i = 0; i < f.size(); ++i) col[f[i]] = i;
      for (const char* c : {"kind", "framework", "generation", "scale", "error"})
        if (!col.count(c)) throw InputError(where + ": the header has no \"" + c + "\" column");
      continue;
    }
    if (f.size() != header.size())
      throw InputError(where + ": " + std::to_string(f.size()) + " fields, the header has " +
                       std::to_string(header.size()));
    ValidationRecord r;
    r.kind = f[col["kind"]];
    r.framework = f[col["framework"]];
    r.generation = f[col["generation"]];
    r.scale = f[col["scale"]];
    const std::string& e = f[col["error"]];
    char* end = nullptr;
    r.error = std::strtod(e.c_str(), &end);
    if (e.empty() || *end != '\0' || !std::isfinite(r.error) || r.error <= -1)
      throw InputError(where + ": error \"" + e + "\" is not a number above -1");
    out.push_back(std::move(r));
  }
  return out;
}

const std::vector<ValidationRecord>& shipped_validation_records() {
  // Read once per file: every scenario load asks (each sweep point, each sensitivity variant),
  // and a sweep's children inherit what the parent read.
  static std::string read_from;
  static std::vector<ValidationRecord> records;
  const std::string data = shipped_data_dir();
  const std::string path = data.empty() ? "" : data + "/scenarios/validation/accuracy.csv";
  if (path != read_from) {
    records = !path.empty() && std::filesystem::is_regular_file(path)
                  ? read_validation_records(path)
                  : std::vector<ValidationRecord>{};
    read_from = path;
  }
  return records;
}

ErrorBand error_band(const std::vector<ValidationRecord>& records, const RunTraits& t) {
  struct Level {
    bool framework, generation, scale;
  };
  const Level levels[] = {{true, true, true},
                          {true, true, false},
                          {false, true, false},
                          {true, false, false},
                          {false, false, false}};
  for (const Level& l : levels) {
    std::vector<double> e;
    for (const auto& r : records)
      if (r.kind == t.kind && (!l.framework || r.framework == t.framework) &&
          (!l.generation || r.generation == t.generation) && (!l.scale || r.scale == t.scale))
        e.push_back(r.error);
    if (static_cast<int>(e.size()) < kMinRuns) continue;
    ErrorBand b;
    b.known = true;
    b.runs = static_cast<int>(e.size());
    std::vector<double> abs;
    for (double x : e) abs.push_back(std::fabs(x));
    b.median_abs = quantile(abs, 0.5);
    b.low = quantile(e, 0.1);
    b.high = quantile(e, 0.9);
    b.group = t.kind + " runs";
    if (l.framework) b.group += " under " + t.framework;
    if (l.generation) b.group += " on " + t.generation + " GPUs";
    if (l.scale) b.group += " at " + t.scale + " GPUs";
    return b;
  }
  return {};
}

}  // namespace orrery
