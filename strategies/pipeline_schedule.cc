#include "strategies/pipeline_schedule.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <tuple>

namespace orrery {
namespace {

using Order = std::vector<PipelinePass>;

// GPipe: every forward, then every backward.
Order gpipe(int micro) {
  Order out;
  for (int i = 0; i < micro; ++i) out.push_back({PassKind::kForward, i, 0});
  for (int i = 0; i < micro; ++i) out.push_back({PassKind::kBackward, i, 0});
  return out;
}

// 1F1B and Megatron's interleaved order of (micro-batch, chunk) pairs: pp micro-batches per
// chunk in turn, warming up with (pp - stage - 1) x 2 + (v - 1) x pp forwards (pp - stage - 1
// without interleaving), then one forward and one backward, then the remaining backwards.
Order one_f_one_b(const ParallelPlan& p, int stage, int micro) {
  const int pp = p.pp, v = p.chunks_per_stage();
  const int total = micro * v;
  auto item = [&](int k, PassKind kind) {
    int chunk = (k / pp) % v;
    if (kind != PassKind::kForward) chunk = v - 1 - chunk;
    return PipelinePass{kind, (k / (pp * v)) * pp + k % pp, chunk};
  };
  int warm = v == 1 ? pp - stage - 1 : (pp - stage - 1) * 2 + (v - 1) * pp;
  warm = std::min(warm, total);
  Order out;
  for (int k = 0; k < warm; ++k) out.push_back(item(k, PassKind::kForward));
  for (int k = 0; k + warm < total; ++k) {
    out.push_back(item(warm + k, PassKind::kForward));
    out.push_back(item(k, PassKind::kBackward));
  }
  for (int k = total - warm; k < total; ++k) out.push_back(item(k, PassKind::kBackward));
  return out;
}

// ZB-H1 (Qi et al., section 3.1): in step x stage i runs F of micro-batch x, B of
// x - (pp - 1 - i) and W of x - (pp - 1), each when it exists: the warm-up and the number of
// activations held are 1F1B's, while W passes wait pp - 1 - i steps behind their B and fill
// the cool-down's bubble.
Order zb_h1(int pp, int stage, int micro) {
  Order out;
  for (int x = 0; x < micro + pp - 1; ++x) {
    if (x < micro) out.push_back({PassKind::kForward, x, 0});
    const int b = x - (pp - 1 - stage), w = x - (pp - 1);
    if (b >= 0 && b < micro) out.push_back({PassKind::kBackward, b, 0});
    if (w >= 0 && w < micro) out.push_back({PassKind::kWeight, w, 0});
  }
  return out;
}

// DualPipe's order (DeepSeek-V3 report, Figure 5, and its reference implementation's eight
// steps). A GPU in the first half of the pipeline at distance r from its end takes chunk 0 as
// its "phase 0" (the micro-batches fed at stage 0), one in the second half chunk 1; with
// n = pp / 2, for r = min(s, pp - 1 - s):
//   1. (n - r - 1) x 2 forwards of phase 0;      2. r + 1 x (F0, F1);
//   3. n - r - 1 x (B1, W1, F1);                 4. m/2 - pp + r + 1 x (F0, B1, F1, B0);
//   5. n - r - 1 x (B1, F1, B0);                 6. r + 1 x (B1, B0), the second half of them
//   7. n - r - 1 x (W, B0), B0 split;               with W left for later;
//   8. the W left.
// A backward not split runs its W at once (B then W). In steps 4 and 5 each forward and the
// backward after it run as one overlapped pair (the reference's forward_backward_chunk), except
// the middle ranks' first.
Order dual_pipe(int pp, int stage, int micro) {
  const int n = pp / 2, half = micro / 2;
  const bool second = stage >= n;
  const int r = second ? pp - 1 - stage : stage;
  const int phase_chunk[2] = {second ? 1 : 0, second ? 0 : 1};
  int next_f[2] = {0, 0}, next_b[2] = {0, 0};
  std::vector<PipelinePass> weights;  // W passes left for later, oldest first
  Order out;
  auto micro_of = [&](int chunk, int k) { return chunk == 0 ? k : half + k; };
  auto f = [&](int phase) {
    const int c = phase_chunk[phase];
    out.push_back({PassKind::kForward, micro_of(c, next_f[phase]++), c});
  };
  auto b = [&](int phase, bool split) {
    const int c = phase_chunk[phase];
    const int mb = micro_of(c, next_b[phase]++);
    out.push_back({PassKind::kBackward, mb, c});
    if (split)
      weights.push_back({PassKind::kWeight, mb, c});
    else
      out.push_back({PassKind::kWeight, mb, c});
  };
  auto w = [&]() {
    out.push_back(weights.front());
    weights.erase(weights.begin());
  };
  // A forward and the backward beside it.
  auto fb = [&](int f_phase, int b_phase, bool overlap) {
    f(f_phase);
    b(b_phase, false);
    out[out.size() - 2].beside_previous = overlap;  // the B, before its W
  };
  for (int i = 0; i < (n - r - 1) * 2; ++i) f(0);
  for (int i = 0; i < r + 1; ++i) f(0), f(1);
  for (int i = 0; i < n - r - 1; ++i) b(1, true), w(), f(1);
  for (int i = 0; i < half - pp + r + 1; ++i) {
    fb(0, 1, i > 0 || r < n - 1);
    fb(1, 0, true);
  }
  for (int i = 0; i < n - r - 1; ++i) {
    b(1, false);
    fb(1, 0, true);
  }
  bool split = false;
  for (int i = 0; i < r + 1; ++i) {
    if (i == (r + 1) / 2 && r % 2 == 1) split = true;
    b(1, split);
    if (i == (r + 1) / 2 && r % 2 == 0) split = true;
    b(0, split);
  }
  for (int i = 0; i < n - r - 1; ++i) w(), b(0, true);
  while (!weights.empty()) w();
  return out;
}

// List scheduling of the V-shaped schedule in units of one layer's pass:
// each stage, whenever free, runs the ready B pass that became ready first, else the forward
// furthest along its path that fits under the stage's activation limit, else its oldest W
// (W passes fill what would be bubbles, as the zero-bubble schedules place them). Sends take no
// time here; the replay adds them.
std::vector<Order> list_schedule(const ParallelPlan& p, int micro,
                                 const std::vector<std::vector<int>>& layers,
                                 const PassTimes& times) {
  const int pp = p.pp;
  std::vector<std::vector<ChunkPlace>> paths;
  for (int mb = 0; mb < micro; ++mb) paths.push_back(pipeline_path(p, mb, micro));
  // A chunk's activations in layers (the memory limit's unit), and a pass's duration.
  auto units = [&](const ChunkPlace& c) {
    const int n = layers[c.stage][c.chunk];
    return n > 0 ? static_cast<double>(n) : 0.1;  // a chunk of the embedding or loss alone
  };
  auto duration = [&](const ChunkPlace& c, PassKind kind) {
    const double per = kind == PassKind::kForward    ? times.forward
                       : kind == PassKind::kBackward ? times.backward
                                                     : times.weight;
    return units(c) * per;
  };
  // Activation limit per stage: 1F1B's first stage (pp micro-batches of a stage's layers).
  std::vector<double> limit(pp);
  for (int s = 0; s < pp; ++s) limit[s] = std::max(pp * (layers[s][0] + layers[s][1]) * 1.0, 1.0);
  constexpr double kNever = std::numeric_limits<double>::infinity();
  // Per micro-batch and path position: when its F and its B are done (kNever: not yet run).
  std::vector<std::vector<double>> f_done(micro), b_done(micro);
  std::vector<std::vector<bool>> w_done(micro);
  for (int mb = 0; mb < micro; ++mb) {
    f_done[mb].assign(paths[mb].size(), kNever);
    b_done[mb].assign(paths[mb].size(), kNever);
    w_done[mb].assign(paths[mb].size(), false);
  }
  // Path positions each stage hosts, per micro-batch.
  std::vector<std::vector<std::pair<int, int>>> hosted(pp);  // (micro, position)
  for (int mb = 0; mb < micro; ++mb)
    for (int k = 0; k < static_cast<int>(paths[mb].size()); ++k)
      hosted[paths[mb][k].stage].push_back({mb, k});
  std::vector<double> now(pp, 0), held(pp, 0);
  std::vector<int> left(pp);
  for (int s = 0; s < pp; ++s) left[s] = static_cast<int>(hosted[s].size()) * 3;
  std::vector<Order> out(pp);

  struct Choice {
    PassKind kind = PassKind::kForward;
    int mb = -1, pos = -1;
    double ready = kNever;
  };
  // What stage s would run next and from when, under the priorities above.
  auto choose = [&](int s) {
    Choice best_b, best_f, best_w;
    for (const auto& [mb, k] : hosted[s]) {
      const int last = static_cast<int>(paths[mb].size()) - 1;
      if (f_done[mb][k] == kNever) {
        const double ready = k == 0 ? 0.0 : f_done[mb][k - 1];
        if (ready == kNever || held[s] + units(paths[mb][k]) > limit[s] + 1e-9) continue;
        // The forward furthest along, then the earliest micro-batch.
        if (best_f.mb < 0 ||
            std::make_tuple(std::max(ready, now[s]), -k, mb) <
                std::make_tuple(std::max(best_f.ready, now[s]), -best_f.pos, best_f.mb))
          best_f = {PassKind::kForward, mb, k, ready};
      } else if (b_done[mb][k] == kNever) {
        const double ready = k == last ? f_done[mb][k] : b_done[mb][k + 1];
        if (ready == kNever) continue;
        if (best_b.mb < 0 || std::make_pair(ready, mb) < std::make_pair(best_b.ready, best_b.mb))
          best_b = {PassKind::kBackward, mb, k, ready};
      } else if (!w_done[mb][k]) {
        if (best_w.mb < 0 ||
            std::make_pair(b_done[mb][k], mb) < std::make_pair(best_w.ready, best_w.mb))
          best_w = {PassKind::kWeight, mb, k, b_done[mb][k]};
      }
    }
    // Run what is ready now by priority; if nothing is, what becomes ready first (a W is
    // always ready, so it runs before the stage idles).
    for (const Choice* c : {&best_b, &best_f, &best_w})
      if (c->mb >= 0 && c->ready <= now[s]) return *c;
    Choice first;
    for (const Choice* c : {&best_b, &best_f})
      if (c->mb >= 0 && c->ready < first.ready) first = *c;
    return first;
  };

  for (;;) {
    int stage = -1;
    Choice pick;
    double start = kNever;
    for (int s = 0; s < pp; ++s) {
      if (left[s] == 0) continue;
      const Choice c = choose(s);
      if (c.mb < 0) continue;
      const double at = std::max(now[s], c.ready);
      if (at < start) {
        start = at;
        stage = s;
        pick = c;
      }
    }
    if (stage < 0) {
      for (int s = 0; s < pp; ++s)
        if (left[s] > 0) throw std::logic_error("pipeline_schedule: list scheduling stalled");
      return out;
    }
    const ChunkPlace& place = paths[pick.mb][pick.pos];
    const double u = units(place);
    now[stage] = start + duration(place, pick.kind);
    --left[stage];
    out[stage].push_back({pick.kind, pick.mb, place.chunk});
    if (pick.kind == PassKind::kForward) {
      f_done[pick.mb][pick.pos] = now[stage];
      held[stage] += u;
    } else if (pick.kind == PassKind::kBackward) {
      b_done[pick.mb][pick.pos] = now[stage];
    } else {
      w_done[pick.mb][pick.pos] = true;
      held[stage] -= u;
    }
  }
}

}  // namespace

bool splits_weight_gradients(PipelineSchedule s) {
  return s == PipelineSchedule::kZbH1 || s == PipelineSchedule::kZbV ||
         s == PipelineSchedule::kDualPipe;
}

std::vector<ChunkPlace> pipeline_path(const ParallelPlan& p, int micro, int micro_batches) {
  const int pp = p.pp;
  std::vector<ChunkPlace> path;
  switch (p.schedule) {
    case PipelineSchedule::kZbV:
      for (int s = 0; s < pp; ++s) path.push_back({s, 0});
      for (int s = pp - 1; s >= 0; --s) path.push_back({s, 1});
      break;
    case PipelineSchedule::kDualPipe:
      if (micro < (micro_batches + 1) / 2) {
        for (int s = 0; s < pp; ++s) path.push_back({s, 0});
      } else {
        for (int s = pp - 1; s >= 0; --s) path.push_back({s, 1});
      }
      break;
    default:
      for (int c = 0; c < p.chunks_per_stage(); ++c)
        for (int s = 0; s < pp; ++s) path.push_back({s, c});
  }
  return path;
}

std::vector<std::vector<PipelinePass>> pipeline_schedule(
    const ParallelPlan& p, int micro, const std::vector<std::vector<int>>& layers,
    const PassTimes& times) {
  switch (p.schedule) {
    case PipelineSchedule::kZbV:
      return list_schedule(p, micro, layers, times);
    default:
      break;
  }
  std::vector<Order> out;
  for (int s = 0; s < p.pp; ++s) {
    if (p.schedule == PipelineSchedule::kGpipe)
      out.push_back(gpipe(micro));
    else if (p.schedule == PipelineSchedule::kZbH1)
      out.push_back(zb_h1(p.pp, s, micro));
    else if (p.schedule == PipelineSchedule::kDualPipe)
      out.push_back(dual_pipe(p.pp, s, micro));
    else
      out.push_back(one_f_one_b(p, s, micro));
  }
  return out;
}

HeldPeak held_activation_peak(const ParallelPlan& p, int stage, const Order& order,
                              const std::vector<std::vector<int>>& layers, int micro,
                              const std::function<double(int layers)>& chunk_bytes,
                              double head_bytes) {
  const bool split = splits_weight_gradients(p.schedule);
  std::vector<ChunkPlace> head_at;  // per micro-batch: the place of the model's last piece
  for (int mb = 0; mb < micro; ++mb) head_at.push_back(pipeline_path(p, mb, micro).back());
  HeldPeak peak, now;
  for (const PipelinePass& pass : order) {
    const bool head = head_at[pass.micro] == ChunkPlace{stage, pass.chunk};
    const double bytes = chunk_bytes(layers[stage][pass.chunk]) + (head ? head_bytes : 0.0);
    if (pass.kind == PassKind::kForward) {
      now.bytes += bytes;
      ++now.passes;
      if (now.bytes > peak.bytes || (now.bytes == peak.bytes && now.passes > peak.passes))
        peak = now;
    } else if ((pass.kind == PassKind::kWeight) == split) {
      now.bytes -= bytes;
      --now.passes;
    }
  }
  return peak;
}

}  // namespace orrery
