// CSV side of models/profile_io.h.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "common/atomic_file.h"
#include "common/csv.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "models/profile_io.h"

namespace orrery {
namespace {

const char* const kColumns[] = {"op", "dtype", "device", "inputs", "output",  "attrs",   "time_s",
                                "n",  "m",     "t_n_s",  "t_m_s",  "samples", "stdev_s", "source"};
const char* const kRequired[] = {"op", "dtype", "device", "inputs", "output", "attrs", "time_s"};

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9e", v);
  return buf;
}

}  // namespace

ProfileDb parse_profile_csv(const std::string& text, const std::string& origin) {
  ProfileDb db;
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header, cells;
  std::map<std::string, size_t> col;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    std::string where = origin + ":" + std::to_string(lineno);
    if (!split_csv_line(line, &cells)) throw InputError(where + ": unterminated quoted field");
    for (auto& c : cells) c = trim(c);
    if (header.empty()) {
      header = cells;
      for (size_t i = 0; i < header.size(); ++i) {
        bool known = false;
        for (const char* k : kColumns) known = known || header[i] == k;
        if (!known) {
          std::string list;
          for (const char* k : kColumns) list += (list.empty() ? "" : ", ") + std::string(k);
          throw InputError(where + ": unknown column \"" + header[i] + "\" (expected: " + list +
                           ")");
        }
        if (!col.emplace(header[i], i).second)
          throw InputError(where + ": column \"" + header[i] + "\" appears twice");
      }
      for (const char* k : kRequired)
        if (!col.count(k))
          throw InputError(where + ": header lacks the required column \"" + std::string(k) + "\"");
      continue;
    }
    if (cells.size() != header.size())
      throw InputError(where + ": " + std::to_string(cells.size()) + " fields, header has " +
                       std::to_string(header.size()));
    auto get = [&](const char* k) { return col.count(k) ? cells[col[k]] : std::string(); };
    auto real = [&](const char* k, double fallback) {
      std::string s = get(k);
      if (s.empty()) return fallback;
      char* end = nullptr;
      double v = std::strtod(s.c_str(), &end);
      if (*end != '\0' || !std::isfinite(v))
        throw InputError(where + ": column " + k + ": expected a number, got \"" + s + "\"");
      return v;
    };
    auto integer = [&](const char* k) {
      std::string s = get(k);
      if (s.empty()) return int64_t{0};
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(s.c_str(), &end, 10);
      if (errno == ERANGE)
        throw InputError(where + ": column " + k + ": " + s + " does not fit a 64-bit integer");
      if (*end != '\0')
        throw InputError(where + ": column " + k + ": expected an integer, got \"" + s + "\"");
      return static_cast<int64_t>(v);
    };
    ProfileRow r;
    r.origin = where;
    r.op = get("op");
    r.dtype = get("dtype");
    r.device = get("device");
    r.inputs = get("inputs");
    r.output = get("output");
    r.attrs = get("attrs");
    r.time_s = real("time_s", 0.0);
    r.n = integer("n");
    r.m = integer("m");
    r.t_n_s = real("t_n_s", 0.0);
    r.t_m_s = real("t_m_s", 0.0);
    r.samples = integer("samples");
    r.stdev_s = real("stdev_s", 0.0);
    r.source = get("source");
    db.add(std::move(r));
  }
  if (header.empty()) throw InputError(origin + ": no header line (see docs/cost-models.md)");
  return db;
}

ProfileDb read_profile_csv(const std::string& path) {
  return parse_profile_csv(read_input_file(path, "profile CSV file"), path);
}

void write_profile_csv(const std::string& path, const ProfileDb& db,
                       const std::vector<std::string>& comments) {
  write_atomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp);
    for (const auto& c : comments) out << "# " << c << "\n";
    std::string head;
    for (const char* k : kColumns) head += (head.empty() ? "" : ",") + std::string(k);
    out << head << "\n";
    for (const auto& r : db.rows()) {
      out << csv_quote(r.op) << ',' << csv_quote(r.dtype) << ',' << csv_quote(r.device) << ','
          << csv_quote(r.inputs) << ',' << csv_quote(r.output) << ',' << csv_quote(r.attrs) << ','
          << num(r.time_s) << ',' << r.n << ',' << r.m << ',' << num(r.t_n_s) << ',' << num(r.t_m_s)
          << ',' << r.samples << ',' << num(r.stdev_s) << ',' << csv_quote(r.source) << "\n";
    }
    out.close();
    if (!out) throw std::runtime_error("write " + tmp + " failed");
  });
}

ProfileDb load_profile_db(const std::string& path) {
  require_regular_file(path, "profile database");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open profile database");
  char sig[8] = {};
  in.read(sig, sizeof sig);
  static const char kHdf5[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  if (in.gcount() == 8 && std::equal(sig, sig + 8, kHdf5)) return read_profile_h5(path);
  return read_profile_csv(path);
}

}  // namespace orrery
