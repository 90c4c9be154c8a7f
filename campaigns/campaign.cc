#include "campaigns/campaign.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "campaigns/checkpoint.h"
#include "common/quantile.h"
#include "common/seeded_draw.h"

namespace orrery {
namespace {

struct Rates {
  double total = 0;     // per second
  double hardware = 0;  // per second
};

Rates rates_of(const CampaignModel& m) {
  Rates r;
  for (const auto& c : m.causes) {
    r.total += c.per_hour / 3600;
    if (c.hardware) r.hardware += c.per_hour / 3600;
  }
  return r;
}

// What a hardware interruption meets in the spare pool. Servers in repair are Poisson in number
// (failures arrive as a Poisson process and each repair takes repair_s: an M/G/infinity queue),
// with residual repair times uniform on [0, repair_s]. With x of them already in repair and k
// spares, the job needs x - k + 1 of them back: the (x - k + 1)-th smallest of x uniform
// residuals, on average (x - k + 1) / (x + 1) of repair_s; with k = 0, its own server's
// whole repair.
struct SpareTerms {
  double p_none = 0;  // P(no spare free)
  // Each possible wait and its probability (the wait-free case aside).
  std::vector<std::pair<double, double>> waits;
};

SpareTerms spare_terms(const CampaignModel& m, const Rates& r) {
  SpareTerms s;
  if (m.spares < 0 || r.hardware <= 0 || m.repair_s <= 0) return s;
  const double a = r.hardware * m.repair_s;
  double p = std::exp(-a), cumulative = 0;
  for (int x = 0; x < 100000; ++x) {
    if (x >= m.spares && p > 0) {
      s.p_none += p;
      s.waits.push_back({p, m.repair_s * (x - m.spares + 1) / (x + 1)});
    }
    cumulative += p;
    if (x > a && 1 - cumulative < 1e-15) break;
    p *= a / (x + 1);
  }
  return s;
}

// E[e^{-lambda R}] over the restarts that interruptions start.
double restart_factor(const CampaignModel& m, const Rates& r, const SpareTerms& s) {
  if (r.total <= 0) return 1.0;
  const double plain = std::exp(-r.total * m.restart_s);
  double hardware = (1 - s.p_none) * plain;
  for (const auto& [p, wait] : s.waits) hardware += p * std::exp(-r.total * (m.restart_s + wait));
  const double hw_share = r.hardware / r.total;
  return (1 - hw_share) * plain + hw_share * hardware;
}

// Segments of work: whole intervals, then what is left.
int segment_count(double work, double interval) {
  if (work <= 0) return 0;
  return std::max(1, static_cast<int>(std::ceil(work / interval - 1e-9)));
}

double segment_work(double work, double interval, int i, int n) {
  return i + 1 < n ? interval : work - interval * (n - 1);
}

// expm1(x) / lambda with the lambda -> 0 limit.
double grown(double lambda, double s) { return lambda > 0 ? std::expm1(lambda * s) / lambda : s; }

// The expected wall time with `interval`; `continuous` takes work / interval segments of equal
// length (smooth in the interval, for the search).
double expected_wall(const CampaignModel& m, double interval, bool continuous) {
  const Rates r = rates_of(m);
  const double q = restart_factor(m, r, spare_terms(m, r));
  const double s = interval + m.checkpoint_s;
  if (continuous) {
    const double n = m.work_s / interval;
    const double fails = r.total > 0 ? n * std::expm1(r.total * s) : 0;
    return n * grown(r.total, s) / q + fails * m.durable_lag_s;
  }
  const int n = segment_count(m.work_s, interval);
  double wall = 0;
  for (int i = 0; i < n; ++i) {
    const double si = segment_work(m.work_s, interval, i, n) + m.checkpoint_s;
    wall += grown(r.total, si) / q + (r.total > 0 ? std::expm1(r.total * si) : 0) * m.durable_lag_s;
  }
  return wall;
}

}  // namespace

CampaignExpectation expect_campaign(const CampaignModel& m) {
  CampaignExpectation e;
  const Rates r = rates_of(m);
  const SpareTerms spare = spare_terms(m, r);
  const double q = restart_factor(m, r, spare);
  const int n = segment_count(m.work_s, m.interval_s);
  double work_failures = 0, plain = 0;  // plain: the segments and their lost work
  for (int i = 0; i < n; ++i) {
    const double si = segment_work(m.work_s, m.interval_s, i, n) + m.checkpoint_s;
    plain += grown(r.total, si);
    if (r.total > 0) work_failures += std::expm1(r.total * si);
  }
  e.checkpoints = n;
  e.checkpoint_s = n * m.checkpoint_s;
  // A restart episode (restarts started again by failures during them) lasts (1/q - 1)/lambda.
  e.restart_s = r.total > 0 ? work_failures * (1 / q - 1) / r.total : 0;
  e.lost_s = plain - m.work_s - e.checkpoint_s + work_failures * m.durable_lag_s;
  e.wall_s = m.work_s + e.checkpoint_s + e.restart_s + e.lost_s;
  e.goodput = e.wall_s > 0 ? m.work_s / e.wall_s : 0;
  e.interruptions = work_failures / q;
  for (const auto& c : m.causes)
    e.by_cause.push_back(
        {c.id, c.name, r.total > 0 ? e.interruptions * (c.per_hour / 3600) / r.total : 0});
  e.mtbf_s = r.total > 0 ? 1 / r.total : 0;
  e.no_spare_share = spare.p_none;
  return e;
}

double choose_interval(CampaignModel m, IntervalRule rule) {
  const Rates r = rates_of(m);
  double interval = m.work_s;
  if (r.total > 0 && m.work_s > 0) {
    const double mtbf = 1 / r.total;
    if (rule == IntervalRule::kYoung) interval = young_interval(m.checkpoint_s, mtbf);
    if (rule == IntervalRule::kDaly) interval = daly_interval(m.checkpoint_s, mtbf);
    if (rule == IntervalRule::kOptimal) {
      // Golden-section search on log(interval): the expected wall time is unimodal in it.
      double lo = std::log(std::max({1.0, m.durable_lag_s, m.checkpoint_s / 100}));
      double hi = std::log(std::max(m.work_s, std::exp(lo)));
      const double g = (std::sqrt(5.0) - 1) / 2;
      double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
      double fa = expected_wall(m, std::exp(a), true), fb = expected_wall(m, std::exp(b), true);
      for (int i = 0; i < 200 && hi - lo > 1e-9; ++i) {
        if (fa < fb) {
          hi = b, b = a, fb = fa;
          a = hi - g * (hi - lo);
          fa = expected_wall(m, std::exp(a), true);
        } else {
          lo = a, a = b, fa = fb;
          b = lo + g * (hi - lo);
          fb = expected_wall(m, std::exp(b), true);
        }
      }
      interval = std::exp((lo + hi) / 2);
    }
  }
  interval = std::max(interval, m.durable_lag_s);
  return std::min(std::max(interval, 1e-3), std::max(m.work_s, 1e-3));
}

MonteCarloSummary simulate_campaign(const CampaignModel& m, int runs, uint64_t seed) {
  MonteCarloSummary out;
  out.runs = runs;
  out.seed = seed;
  const Rates r = rates_of(m);
  std::vector<double> cumulative;  // the causes' rates, summed, to pick one
  for (const auto& c : m.causes)
    cumulative.push_back((cumulative.empty() ? 0 : cumulative.back()) + c.per_hour / 3600);
  std::mt19937_64 rng(seed);
  auto next_failure = [&] {
    return r.total > 0 ? -std::log1p(-draw_unit(rng)) / r.total : INFINITY;
  };
  auto pick_cause = [&] {
    const double x = draw_unit(rng) * r.total;
    size_t i = 0;
    while (i + 1 < cumulative.size() && cumulative[i] <= x) ++i;
    return i;
  };
  const int n = segment_count(m.work_s, m.interval_s);
  std::vector<double> walls;
  double interruptions = 0;
  for (int run = 0; run < runs; ++run) {
    double t = 0;
    std::vector<double> in_repair;  // when each failed server is back
    double durable_at = -INFINITY;  // the last checkpoint is on storage from then
    // The wait for a server, when a hardware interruption at `when` finds no spare.
    auto spare_wait = [&](double when) {
      if (m.spares < 0) return 0.0;
      in_repair.erase(std::remove_if(in_repair.begin(), in_repair.end(),
                                     [&](double back) { return back <= when; }),
                      in_repair.end());
      in_repair.push_back(when + m.repair_s);
      const int busy = static_cast<int>(in_repair.size());
      if (busy <= m.spares) return 0.0;
      std::vector<double> back = in_repair;
      std::nth_element(back.begin(), back.begin() + (busy - m.spares - 1), back.end());
      return back[busy - m.spares - 1] - when;
    };
    // An interruption of cause `c` at t: restart, again from the start when a failure comes
    // during it.
    auto restart = [&](size_t c) {
      for (;;) {
        ++interruptions;
        const double length = m.restart_s + (m.causes[c].hardware ? spare_wait(t) : 0.0);
        const double f = next_failure();
        if (f >= length) {
          t += length;
          return;
        }
        t += f;
        c = pick_cause();
      }
    };
    for (int i = 0; i < n;) {
      const double need = segment_work(m.work_s, m.interval_s, i, n) + m.checkpoint_s;
      const double f = next_failure();
      if (f >= need) {
        t += need;
        durable_at = t + m.durable_lag_s;
        ++i;
        continue;
      }
      t += f;
      // The checkpoint before was not yet on storage: its interval is lost too.
      if (t < durable_at && i > 0) --i;
      durable_at = -INFINITY;
      restart(pick_cause());
    }
    walls.push_back(t);
  }
  double sum = 0, sq = 0;
  for (double w : walls) sum += w;
  out.mean_wall_s = runs > 0 ? sum / runs : 0;
  for (double w : walls) sq += (w - out.mean_wall_s) * (w - out.mean_wall_s);
  out.ci95_s = runs > 1 ? 1.96 * std::sqrt(sq / (runs - 1) / runs) : 0;
  if (!walls.empty()) {
    out.p10_wall_s = quantile(walls, 0.1);
    out.p50_wall_s = quantile(walls, 0.5);
    out.p90_wall_s = quantile(walls, 0.9);
  }
  out.mean_interruptions = runs > 0 ? interruptions / runs : 0;
  return out;
}

}  // namespace orrery
