#include "strategies/llm_strategy.h"

#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "common/errors.h"
#include "strategies/graph_builder.h"

namespace orrery {
namespace {

// Comm streams: each kind of traffic on its own, as Megatron's communicators are.
constexpr Stream kTpStream{StreamClass::kComm, 0};
constexpr Stream kDpStream{StreamClass::kComm, 1};
constexpr Stream kSendFwd{StreamClass::kComm, 2};
constexpr Stream kSendBwd{StreamClass::kComm, 3};
constexpr double kActivationBytes = 2.0;  // 16-bit activations and gradients

struct Item {
  bool forward = true;
  int micro = 0;
};

// The order a stage runs its micro-batches' forward and backward passes.
std::vector<Item> schedule_of(PipelineSchedule s, int stages, int stage, int micro) {
  std::vector<Item> out;
  if (s == PipelineSchedule::kGpipe) {
    for (int i = 0; i < micro; ++i) out.push_back({true, i});
    for (int i = 0; i < micro; ++i) out.push_back({false, i});
    return out;
  }
  // 1F1B: warm up with the forwards that fill the pipeline below this stage, then alternate,
  // then drain the backwards.
  const int warm = std::min(stages - stage - 1, micro);
  for (int i = 0; i < warm; ++i) out.push_back({true, i});
  for (int i = 0; i + warm < micro; ++i) {
    out.push_back({true, warm + i});
    out.push_back({false, i});
  }
  for (int i = micro - warm; i < micro; ++i) out.push_back({false, i});
  return out;
}

class Builder {
 public:
  Builder(const LlmConfig& m, const ParallelPlan& p, const std::vector<ClusterGpu>& gpus,
          const LlmCosts& costs, const CollectiveOptions& coll)
      : m_(m), p_(p), costs_(costs), coll_(coll), b_(replica_) {
    for (const auto& g : gpus) dev_.push_back(b_.gpu(g));
    layers_ = stage_layers(p, m);
    micro_ = p.micro_batches();
    const double tokens = p.micro_batch * static_cast<double>(p.sequence(m));
    tp_bytes_ = tokens * static_cast<double>(m.hidden) * kActivationBytes;
    send_bytes_ = tp_bytes_ / p.tp;  // Megatron's scatter-gather: each TP rank sends its share
    const LlmParams params = llm_params(m);
    layer_grad_bytes_ = (params.attention / p.tp + params.norms + params.router +
                         params.expert * static_cast<double>(m.experts) / p.tp) *
                        kActivationBytes;
  }

  LlmStep build() {
    const int pp = p_.pp, dp = p_.dp, tp = p_.tp;
    // Entry and exit ops of every (replica, stage, pass, micro-batch), per TP rank.
    for (int d = 0; d < dp; ++d)
      for (int s = 0; s < pp; ++s) {
        std::vector<int> last(tp, -1);
        for (const Item& it : schedule_of(p_.schedule, pp, s, micro_)) {
          Pass& pass = passes_[{d, s, it.forward, it.micro}];
          pass.entry.assign(tp, -1);
          if (it.forward)
            forward(d, s, it.micro, &last, &pass);
          else
            backward(d, s, it.micro, &last, &pass);
        }
        tail_[{d, s}] = last;
      }
    link_stages();
    data_parallel();
    LlmStep out;
    out.tokens = static_cast<double>(p_.micro_batch) * micro_ * dp * p_.sequence(m_);
    out.model_flops = llm_training_flops_per_token(m_, p_.sequence(m_)) * out.tokens;
    out.graph = b_.take();
    return out;
  }

 private:
  struct Pass {
    std::vector<int> entry;  // per TP rank: the pass's first op (gets the cross-stage dep)
    std::vector<int> exit;   // per TP rank: its last op
  };

  int device(int t, int d, int s) const { return dev_[llm_rank(p_, t, 0, d, s)]; }

  std::string name(int d, int s, int t, int micro, const std::string& what) const {
    return "d" + std::to_string(d) + ".s" + std::to_string(s) + ".t" + std::to_string(t) + ".mb" +
           std::to_string(micro) + "." + what;
  }

  // One compute op per TP rank, each after that rank's previous op.
  void compute(int d, int s, int micro, const std::string& what, const BlockCost& cost,
               const char* phase, std::vector<int>* last, Pass* pass) {
    for (int t = 0; t < p_.tp; ++t) {
      std::vector<int> deps;
      if ((*last)[t] >= 0) deps.push_back((*last)[t]);
      const int op = b_.compute(name(d, s, t, micro, what), device(t, d, s), Stream{}, cost.seconds,
                                cost.flops, cost.bytes, phase, std::move(deps));
      if (pass->entry[t] < 0) pass->entry[t] = op;
      (*last)[t] = op;
    }
  }

  // The TP group's collective after each rank's last op (none without TP).
  void tp_collective(int d, int s, int micro, const std::string& what, CollectiveType type,
                     std::vector<int>* last, Pass* pass) {
    if (p_.tp < 2) return;
    Collective c = make(type, tp_bytes_);
    for (int t = 0; t < p_.tp; ++t) c.ranks.push_back(device(t, d, s));
    std::vector<int> deps;
    for (int t = 0; t < p_.tp; ++t)
      if ((*last)[t] >= 0) deps.push_back((*last)[t]);
    const int op = b_.collective(name(d, s, 0, micro, what), c, "comm", std::move(deps));
    b_.set_stream(op, kTpStream);
    for (int t = 0; t < p_.tp; ++t) {
      if (pass->entry[t] < 0) pass->entry[t] = op;
      (*last)[t] = op;
    }
  }

  // After a block: all-reduce, or reduce-scatter with sequence parallelism (its all-gather
  // comes before the next block).
  void after_block(int d, int s, int micro, const std::string& what, std::vector<int>* last,
                   Pass* pass) {
    tp_collective(
        d, s, micro, what + (p_.sequence_parallel ? ".rs" : ".ar"),
        p_.sequence_parallel ? CollectiveType::kReduceScatter : CollectiveType::kAllReduce, last,
        pass);
  }
  void before_block(int d, int s, int micro, const std::string& what, std::vector<int>* last,
                    Pass* pass) {
    if (p_.sequence_parallel)
      tp_collective(d, s, micro, what + ".ag", CollectiveType::kAllGather, last, pass);
  }

  void layer_forward(int d, int s, int micro, const std::string& l, std::vector<int>* last,
                     Pass* pass, const char* phase) {
    before_block(d, s, micro, l + ".attn", last, pass);
    compute(d, s, micro, l + ".attn", costs_.attention_fwd, phase, last, pass);
    after_block(d, s, micro, l + ".attn", last, pass);
    before_block(d, s, micro, l + ".mlp", last, pass);
    compute(d, s, micro, l + ".mlp", costs_.mlp_fwd, phase, last, pass);
    after_block(d, s, micro, l + ".mlp", last, pass);
  }

  void forward(int d, int s, int micro, std::vector<int>* last, Pass* pass) {
    if (s == 0) compute(d, s, micro, "embed", costs_.embedding_fwd, "forward", last, pass);
    for (int l = 0; l < layers_[s]; ++l)
      layer_forward(d, s, micro, "L" + std::to_string(l) + ".fwd", last, pass, "forward");
    if (s == p_.pp - 1) compute(d, s, micro, "head", costs_.head_fwd, "forward", last, pass);
    pass->exit = *last;
  }

  void backward(int d, int s, int micro, std::vector<int>* last, Pass* pass) {
    if (s == p_.pp - 1) compute(d, s, micro, "head.bwd", costs_.head_bwd, "backward", last, pass);
    const bool final_micro = micro == micro_ - 1;
    for (int l = layers_[s] - 1; l >= 0; --l) {
      const std::string L = "L" + std::to_string(l);
      if (p_.recompute == Recompute::kFull)
        layer_forward(d, s, micro, L + ".recompute", last, pass, "recompute");
      // Backward mirrors forward: each block's input gradient is all-reduced over the group
      // (reduce-scattered with sequence parallelism, after an all-gather of its input).
      before_block(d, s, micro, L + ".mlp.bwd", last, pass);
      compute(d, s, micro, L + ".mlp.bwd", costs_.mlp_bwd, "backward", last, pass);
      after_block(d, s, micro, L + ".mlp.bwd", last, pass);
      if (p_.recompute == Recompute::kSelective)
        compute(d, s, micro, L + ".core.recompute", costs_.attention_core_fwd, "recompute", last,
                pass);
      before_block(d, s, micro, L + ".attn.bwd", last, pass);
      compute(d, s, micro, L + ".attn.bwd", costs_.attention_bwd, "backward", last, pass);
      if (final_micro) grads_ready_[{d, s, l}] = *last;
      after_block(d, s, micro, L + ".attn.bwd", last, pass);
    }
    if (s == 0) compute(d, s, micro, "embed.bwd", costs_.embedding_bwd, "backward", last, pass);
    pass->exit = *last;
  }

  // Activations forward and gradients backward between neighbouring stages, TP rank to TP rank.
  void link_stages() {
    for (int d = 0; d < p_.dp; ++d)
      for (int s = 0; s + 1 < p_.pp; ++s)
        for (int mb = 0; mb < micro_; ++mb)
          for (int t = 0; t < p_.tp; ++t) {
            const Pass& f = passes_.at({d, s, true, mb});
            const Pass& next_f = passes_.at({d, s + 1, true, mb});
            int x =
                b_.transfer(name(d, s, t, mb, "send.act"), device(t, d, s), kSendFwd,
                            device(t, d, s), device(t, d, s + 1), send_bytes_, "comm", {f.exit[t]});
            b_.add_dep(next_f.entry[t], x);
            const Pass& bwd = passes_.at({d, s + 1, false, mb});
            const Pass& prev_b = passes_.at({d, s, false, mb});
            int g = b_.transfer(name(d, s + 1, t, mb, "send.grad"), device(t, d, s + 1), kSendBwd,
                                device(t, d, s + 1), device(t, d, s), send_bytes_, "comm",
                                {bwd.exit[t]});
            b_.add_dep(prev_b.entry[t], g);
          }
  }

  // Each layer's gradients reduced over the replicas once the last micro-batch's backward made
  // them, then the optimizer on every GPU (ZeRO-1: on its shard, then the weights gathered).
  void data_parallel() {
    const bool zero = p_.zero >= 1;
    for (int s = 0; s < p_.pp; ++s)
      for (int t = 0; t < p_.tp; ++t) {
        std::vector<int> reduced;
        if (p_.dp > 1)
          for (int l = layers_[s] - 1; l >= 0; --l) {
            Collective c = make(zero ? CollectiveType::kReduceScatter : CollectiveType::kAllReduce,
                                layer_grad_bytes_);
            std::vector<int> deps;
            for (int d = 0; d < p_.dp; ++d) {
              c.ranks.push_back(device(t, d, s));
              deps.push_back(grads_ready_.at({d, s, l})[t]);
            }
            const int op = b_.collective("s" + std::to_string(s) + ".t" + std::to_string(t) + ".L" +
                                             std::to_string(l) + (zero ? ".grad.rs" : ".grad.ar"),
                                         c, "comm", std::move(deps));
            b_.set_stream(op, kDpStream);
            reduced.push_back(op);
          }
        std::vector<int> updated;
        for (int d = 0; d < p_.dp; ++d) {
          std::vector<int> deps = reduced;
          deps.push_back(tail_.at({d, s})[t]);
          updated.push_back(b_.compute(name(d, s, t, 0, "optimizer"), device(t, d, s), Stream{},
                                       costs_.optimizer[s].seconds, costs_.optimizer[s].flops,
                                       costs_.optimizer[s].bytes, "optimizer", std::move(deps)));
        }
        if (zero && p_.dp > 1) {
          Collective c = make(CollectiveType::kAllGather, layer_grad_bytes_ * layers_[s]);
          for (int d = 0; d < p_.dp; ++d) c.ranks.push_back(device(t, d, s));
          const int op =
              b_.collective("s" + std::to_string(s) + ".t" + std::to_string(t) + ".weights.ag", c,
                            "comm", updated);
          b_.set_stream(op, kDpStream);
        }
      }
  }

  Collective make(CollectiveType type, double bytes) const {
    Collective c;
    c.type = type;
    c.algo = coll_.algo;
    c.protocol = coll_.protocol;
    c.pipeline = coll_.pipeline;
    c.chunks = coll_.chunks;
    c.analytical = coll_.analytical;
    c.bytes = bytes;
    return c;
  }

  const LlmConfig& m_;
  const ParallelPlan& p_;
  const LlmCosts& costs_;
  const CollectiveOptions& coll_;
  PricedReplica replica_;
  GraphBuilder b_;
  std::vector<int> dev_;
  std::vector<int> layers_;
  int micro_ = 1;
  double tp_bytes_ = 0, send_bytes_ = 0, layer_grad_bytes_ = 0;
  std::map<std::tuple<int, int, bool, int>, Pass> passes_;
  std::map<std::pair<int, int>, std::vector<int>> tail_;
  std::map<std::tuple<int, int, int>, std::vector<int>> grads_ready_;
};

}  // namespace

int llm_rank(const ParallelPlan& p, int tp, int cp, int dp, int pp) {
  return tp + p.tp * (cp + p.cp * (dp + p.dp * pp));
}

LlmStep build_llm_step(const LlmConfig& model, const ParallelPlan& plan,
                       const std::vector<ClusterGpu>& gpus, const LlmCosts& costs,
                       const CollectiveOptions& collectives) {
  auto refuse = [](const std::string& what) {
    throw InputError("strategy: " + what + " is not simulated yet (memory is: orrery llm memory)");
  };
  if (plan.schedule == PipelineSchedule::kInterleaved) refuse("the interleaved schedule");
  if (plan.cp > 1) refuse("context parallelism");
  if (plan.ep > 1) refuse("expert parallelism");
  if (plan.zero >= 2) refuse("ZeRO-" + std::to_string(plan.zero));
  if (static_cast<int>(gpus.size()) != plan.gpus())
    throw InputError("strategy: the plan needs " + std::to_string(plan.gpus()) +
                     " GPUs, the platform has " + std::to_string(gpus.size()));
  if (static_cast<int>(costs.optimizer.size()) != plan.pp)
    throw std::logic_error("build_llm_step: costs priced for another pipeline depth");
  return Builder(model, plan, gpus, costs, collectives).build();
}

}  // namespace orrery
