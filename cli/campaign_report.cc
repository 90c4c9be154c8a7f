#include "cli/campaign_report.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "common/units.h"

namespace orrery {
namespace {

std::string days(double seconds) {
  char t[32];
  std::snprintf(t, sizeof t, "%.1f days", seconds / 86400);
  return t;
}

// 1.5e13 -> "15T", 3e11 -> "300B".
std::string tokens_text(double n) {
  const char* suffix[] = {"", "K", "M", "B", "T"};
  int i = 0;
  while (n >= 1000 && i < 4) n /= 1000, ++i;
  char t[32];
  std::snprintf(t, sizeof t, "%.4g%s", n, suffix[i]);
  return t;
}

std::string energy(double joules) {
  const double mwh = joules / 3.6e9;
  char t[32];
  std::snprintf(t, sizeof t, mwh >= 1000 ? "%.2f GWh" : "%.1f MWh", mwh >= 1000 ? mwh / 1000 : mwh);
  return t;
}

std::string rule_name(const CampaignSetup& s) {
  if (s.interval_s > 0) return "as given";
  switch (s.rule) {
    case IntervalRule::kYoung:
      return "Young's interval";
    case IntervalRule::kDaly:
      return "Daly's interval";
    case IntervalRule::kOptimal:
      return "the interval of least expected time";
  }
  return "";
}

}  // namespace

void print_campaign(const CampaignSetup& s, const CampaignFigures& f) {
  const CampaignExpectation& e = f.expected;
  std::printf("\nCampaign        ");
  if (f.tokens > 0) std::printf("%s tokens: ", tokens_text(f.tokens).c_str());
  std::printf("%s steps of %s = %s of training%s\n", format_grouped(f.steps).c_str(),
              format_time(f.step_s).c_str(), days(f.work_s).c_str(),
              s.duration_s > 0 ? (", what fits in " + days(s.duration_s)).c_str() : "");
  if (f.clock < 1)
    std::printf(
        "  power cap     %.0f W per GPU: clocks at %.1f%% (the step above is the capped one)\n",
        s.power.cap_w, 100 * f.clock);
  // The causes, largest first, the small ones together.
  std::vector<CauseCount> causes = e.by_cause;
  std::sort(causes.begin(), causes.end(), [](const CauseCount& a, const CauseCount& b) {
    return a.interruptions > b.interruptions;
  });
  std::string list;
  double rest = 0;
  for (size_t i = 0; i < causes.size(); ++i) {
    if (i < 5) {
      char t[128];
      std::snprintf(t, sizeof t, "%s%s %.1f", list.empty() ? "" : ", ", causes[i].name.c_str(),
                    causes[i].interruptions);
      list += t;
    } else {
      rest += causes[i].interruptions;
    }
  }
  if (rest > 0) {
    char t[64];
    std::snprintf(t, sizeof t, ", others %.1f", rest);
    list += t;
  }
  std::printf("  interrupted   %.1f times expected (the job's MTBF %.2f h; %s): %s\n",
              e.interruptions, e.mtbf_s / 3600, s.reliability.name.c_str(), list.c_str());
  std::printf("  checkpoints   every %s of work (%s): %s, %s pause%s, read back in %s; %s in all\n",
              format_time(f.interval_s).c_str(), rule_name(s).c_str(),
              format_size(f.checkpoint_bytes).c_str(), format_time(f.checkpoint.blocking_s).c_str(),
              s.async
                  ? (", written in the background in " + format_time(f.checkpoint.write_s)).c_str()
                  : "",
              format_time(f.checkpoint.read_s).c_str(), days(e.checkpoint_s).c_str());
  std::printf("  restarts      %s each (reading the checkpoint included)%s; %s in all\n",
              format_time(f.restart_s).c_str(),
              f.spares < 0
                  ? ", never short of a spare server"
                  : (", " + std::to_string(f.spares) + " spare server(s)" +
                     (e.no_spare_share > 0.0005
                          ? " (" + std::to_string(static_cast<int>(100 * e.no_spare_share + 0.5)) +
                                "% of hardware interruptions wait for one)"
                          : ""))
                        .c_str(),
              days(e.restart_s).c_str());
  std::printf("  lost work     %s done again\n", days(e.lost_s).c_str());
  std::printf("  wall time     %s expected, goodput %.1f%%\n", days(e.wall_s).c_str(),
              100 * e.goodput);
  if (e.no_spare_share > 0.1 && !f.monte_carlo)
    std::printf(
        "  note          %.0f%% of hardware interruptions wait for a spare: the expectation "
        "overstates such waits (campaign.monte_carlo draws them exactly)\n",
        100 * e.no_spare_share);
  if (f.monte_carlo) {
    const MonteCarloSummary& mc = *f.monte_carlo;
    std::printf(
        "  Monte Carlo   %d campaigns (seed %llu): %.2f +- %.2f days, 10th to 90th percentile "
        "%.1f to %.1f days, %.1f interruptions\n",
        mc.runs, static_cast<unsigned long long>(mc.seed), mc.mean_wall_s / 86400,
        mc.ci95_s / 86400, mc.p10_wall_s / 86400, mc.p90_wall_s / 86400, mc.mean_interruptions);
  }
  if (f.power.gpu_train_w > 0) {
    std::printf(
        "  power         %.0f W per GPU training, %.2f MW for the job with its servers and "
        "network (PUE %.2f): %.1f kWh a step\n",
        f.power.gpu_train_w, f.power.facility_train_w / 1e6, s.power.pue,
        f.power.facility_train_w * f.step_s / 3.6e6);
    std::printf("  energy        %s\n", energy(f.energy_j).c_str());
  } else {
    std::printf("  energy        not known: the GPU's spec gives no board power (tdp_w)\n");
  }
  if (s.gpu_hour > 0 || f.energy_cost > 0) {
    std::printf("  cost          %s", format_grouped(f.gpu_cost + f.energy_cost).c_str());
    if (s.gpu_hour > 0)
      std::printf(" = %s for GPU-hours at %.2f (spares included) + %s for energy at %.3f per kWh\n",
                  format_grouped(f.gpu_cost).c_str(), s.gpu_hour,
                  format_grouped(f.energy_cost).c_str(), s.kwh);
    else
      std::printf(" for energy at %.3f per kWh (no GPU-hour price: campaign.prices.gpu_hour)\n",
                  s.kwh);
  }
}

}  // namespace orrery
