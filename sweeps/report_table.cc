#include "sweeps/report_table.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <set>
#include <sstream>
#include <vector>

#include "common/units.h"
#include "sweeps/expression.h"
#include "sweeps/sweep_spec.h"

namespace orrery {
namespace {

std::string param(const RunRecord& r, const std::string& key) {
  auto it = r.params.find(key);
  return it == r.params.end() ? "" : it->second;
}

bool failed(const RunRecord& r) { return param(r, kParamStatus) == "failed"; }
bool infeasible(const RunRecord& r) { return param(r, kParamStatus) == "infeasible"; }

// Bookkeeping parameters that the table shows in their own columns (or not at all).
bool bookkeeping(const std::string& key) {
  return key == kParamIndex || key == kParamHash || key == kParamStatus || key == kParamError;
}

std::string shorten(const std::string& s, size_t width) {
  if (s.size() <= width) return s;
  return s.substr(0, width - 3) + "...";
}

// Keys keep their last, most telling components: "...server.nic.bandwidth".
std::string shorten_key(const std::string& s, size_t width) {
  if (s.size() <= width) return s;
  std::string tail = s;
  while (tail.size() + 3 > width && tail.find('.') != std::string::npos)
    tail = tail.substr(tail.find('.') + 1);
  if (tail.size() + 3 > width) tail = tail.substr(tail.size() - (width - 3));
  return "..." + tail;
}

// Long numbers (a plan's throughput) to 6 significant digits; anything else shortened.
std::string cell(const std::string& s, size_t width) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.size() > 8 && end && *end == '\0' && end != s.c_str()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
  }
  return shorten(s, width);
}

// The metrics of a point's likely range; the table shows them as one column.
constexpr const char* kLikelyPrefix = "likely.";

// "7.6 s-8.9 s", or "-" for a point no validated run is like.
std::string likely_text(const RunRecord& r) {
  const std::string low = param(r, "likely.low_s"), high = param(r, "likely.high_s");
  if (low.empty() || high.empty()) return "-";
  return format_time(std::strtod(low.c_str(), nullptr)) + "-" +
         format_time(std::strtod(high.c_str(), nullptr));
}

constexpr const char* kSensitivityPrefix = "sensitivity.";
constexpr const char* kCampaignPrefix = "campaign.";

// "54.8 d at 99.9%": a point's campaign, its expected wall time and goodput; "-" without one.
std::string campaign_text(const RunRecord& r) {
  const std::string days = param(r, "campaign.wall_days"), good = param(r, "campaign.goodput");
  if (days.empty() || good.empty()) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.1f d at %.1f%%", std::strtod(days.c_str(), nullptr),
                100 * std::strtod(good.c_str(), nullptr));
  return text;
}

// "kernels -12/+12%": of the inputs a point's sensitivity variants moved, the one whose two ends
// lie furthest apart, with the step's change at each end; "-" without variants.
std::string most_sensitive_text(const RunRecord& r, double iteration_s) {
  std::string best;
  double best_span = -1, fast = 0, slow = 0;
  for (const char* input : {"kernels", "links", "host", "overlap"}) {
    const std::string f = param(r, std::string(kSensitivityPrefix) + input + ".fast_s");
    const std::string w = param(r, std::string(kSensitivityPrefix) + input + ".slow_s");
    if (f.empty() || w.empty()) continue;
    const double a = std::strtod(f.c_str(), nullptr), b = std::strtod(w.c_str(), nullptr);
    if (b - a > best_span) best = input, best_span = b - a, fast = a, slow = b;
  }
  if (best.empty() || iteration_s <= 0) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%s %+.0f/%+.0f%%", best.c_str(), 100 * (fast / iteration_s - 1),
                100 * (slow / iteration_s - 1));
  return text;
}

// The shortest text that reads back as exactly `v`.
std::string number(double v) { return format_number(v); }

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string index_of(const RunRecord& r, size_t row) {
  std::string i = param(r, kParamIndex);
  return i.empty() ? std::to_string(row) : i;
}

}  // namespace

void write_report_table(std::ostream& out, const LoadedResults& results,
                        const SweepFileStatus& status, const ReportOptions& options) {
  const auto& runs = results.runs;
  std::string scenario_name;
  if (!runs.empty()) scenario_name = runs[0].name.substr(0, runs[0].name.rfind('/'));
  out << "Results    " << runs.size() << " run(s)"
      << (scenario_name.empty() ? "" : " of " + scenario_name) << ", orrery "
      << results.meta.orrery_version << "\n";
  out << "Platform   " << results.meta.platform_description << "\n";
  if (status.present) {
    out << "Sweep      " << status.points_done << "/" << status.points_total << " points done, "
        << status.points_failed << " failed"
        << (status.complete ? "" : "  (INCOMPLETE: run the sweep again to resume)") << "\n";
  }
  out << "\n";

  // Parameters that tell the runs apart (all of them with --all-params).
  std::vector<std::string> columns;
  {
    std::set<std::string> keys;
    for (const auto& r : runs)
      for (const auto& [k, v] : r.params)
        if (!bookkeeping(k) && k.rfind(kLikelyPrefix, 0) != 0 &&
            k.rfind(kSensitivityPrefix, 0) != 0 && k.rfind(kCampaignPrefix, 0) != 0)
          keys.insert(k);
    for (const auto& k : keys) {
      std::set<std::string> values;
      for (const auto& r : runs) values.insert(param(r, k));
      if (options.all_params || values.size() > 1) columns.push_back(k);
    }
  }
  std::vector<std::string> head = {"#"};
  for (const auto& c : columns) head.push_back(shorten_key(c, options.max_width));
  // The likely range beside the iteration time, where some point has one (scenario/error_band.h).
  const bool likely = std::any_of(runs.begin(), runs.end(), [](const RunRecord& r) {
    return !param(r, "likely.low_s").empty();
  });
  // The input that moves the step most, where the points ran their sensitivity variants.
  const bool sensitive = std::any_of(runs.begin(), runs.end(), [](const RunRecord& r) {
    return !param(r, "sensitivity.kernels.fast_s").empty();
  });
  // A campaign's expected wall time and goodput, where the points ran one.
  const bool campaign = std::any_of(runs.begin(), runs.end(), [](const RunRecord& r) {
    return !param(r, "campaign.wall_days").empty();
  });
  head.insert(head.end(), {"status", "iteration"});
  if (likely) head.push_back("likely");
  if (sensitive) head.push_back("moved most by");
  if (campaign) head.push_back("campaign");
  for (const char* h : {"iter/s", "compute", "comm", "io", "idle"}) head.push_back(h);
  // The PAI analytical estimate, where the points have one (model workloads).
  const bool analytic = std::any_of(
      runs.begin(), runs.end(), [](const RunRecord& r) { return r.result.analytical_seconds > 0; });
  if (analytic) head.push_back("analytic");
  const size_t numbers =
      6 + (analytic ? 1 : 0) + (likely ? 1 : 0) + (sensitive ? 1 : 0) + (campaign ? 1 : 0);
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunRecord& r = runs[i];
    const RunSummary& s = results.summaries[i];
    std::vector<std::string> row = {index_of(r, i)};
    for (const auto& c : columns) row.push_back(cell(param(r, c), options.max_width));
    if (failed(r) || infeasible(r)) {
      row.push_back(failed(r) ? "FAILED" : "infeasible");
      for (size_t k = 0; k < numbers; ++k) row.push_back("-");
    } else {
      char rate[32];
      std::snprintf(rate, sizeof rate, "%.4g",
                    s.iteration_time_s > 0 ? 1.0 / s.iteration_time_s : 0.0);
      row.insert(row.end(), {"ok", format_time(s.iteration_time_s)});
      if (likely) row.push_back(likely_text(r));
      if (sensitive) row.push_back(most_sensitive_text(r, s.iteration_time_s));
      if (campaign) row.push_back(campaign_text(r));
      row.insert(row.end(), {rate, format_time(s.compute_s), format_time(s.comm_s),
                             format_time(s.io_s), format_time(s.idle_s)});
      if (analytic)
        row.push_back(r.result.analytical_seconds > 0 ? format_time(r.result.analytical_seconds)
                                                      : "-");
    }
    rows.push_back(std::move(row));
  }
  std::vector<size_t> width(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (size_t c = 0; c < cells.size(); ++c) {
      // Text columns to the left, numbers (the last ones and the index) to the right.
      bool right = c == 0 || c + numbers >= cells.size();
      std::string pad(width[c] - cells[c].size(), ' ');
      text += (c ? "  " : "") + (right ? pad + cells[c] : cells[c] + pad);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  };
  line(head);
  for (const auto& row : rows) line(row);

  int shown = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!failed(runs[i])) continue;
    if (shown++ == 0) out << "\nFailed points:\n";
    out << "  " << index_of(runs[i], i) << ": " << param(runs[i], kParamError) << "\n";
  }
  shown = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!infeasible(runs[i])) continue;
    if (shown++ == 0) out << "\nInfeasible points (plans the GPUs cannot run):\n";
    out << "  " << index_of(runs[i], i) << ": " << param(runs[i], kParamError) << "\n";
  }
}

void write_report_csv(std::ostream& out, const LoadedResults& results) {
  std::set<std::string> keys;
  for (const auto& r : results.runs)
    for (const auto& [k, v] : r.params)
      if (!bookkeeping(k)) keys.insert(k);
  // The /runs columns under their names in the file (docs/hdf5-layout.md), in its order; the
  // PAI estimate only when some run has one (it is computed on request).
  const bool analytical =
      std::any_of(results.runs.begin(), results.runs.end(),
                  [](const RunRecord& r) { return r.result.analytical_seconds > 0; });
  std::vector<std::string> head = {"index", "name"};
  head.insert(head.end(), keys.begin(), keys.end());
  for (const char* h :
       {"status", "error", "iteration_time_s", "iterations_per_s", "compute_s", "comm_s", "io_s",
        "host_s", "idle_s", "exposed_comm_s", "memory_bound_s", "activities", "wall_s"})
    head.push_back(h);
  if (analytical) head.push_back("analytical_s");
  for (size_t c = 0; c < head.size(); ++c) out << (c ? "," : "") << csv_field(head[c]);
  out << "\n";
  for (size_t i = 0; i < results.runs.size(); ++i) {
    const RunRecord& r = results.runs[i];
    const RunSummary& s = results.summaries[i];
    std::vector<std::string> row = {index_of(r, i), r.name};
    for (const auto& k : keys) row.push_back(param(r, k));
    bool bad = failed(r) || infeasible(r);
    row.push_back(failed(r) ? "failed" : bad ? "infeasible" : "ok");
    row.push_back(param(r, kParamError));
    if (bad) {
      row.resize(head.size());
    } else {
      row.insert(row.end(),
                 {number(s.iteration_time_s),
                  number(s.iteration_time_s > 0 ? 1.0 / s.iteration_time_s : 0.0),
                  number(s.compute_s), number(s.comm_s), number(s.io_s), number(s.host_s),
                  number(s.idle_s), number(s.exposed_comm_s), number(s.memory_bound_s),
                  std::to_string(r.result.activities), number(r.result.wall_seconds)});
      if (analytical)
        row.push_back(r.result.analytical_seconds > 0 ? number(r.result.analytical_seconds) : "");
    }
    for (size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << csv_field(row[c]);
    out << "\n";
  }
}

}  // namespace orrery
