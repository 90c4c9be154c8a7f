#include "strategies/llm_strategy.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "common/errors.h"
#include "strategies/graph_builder.h"
#include "strategies/llm_memory.h"
#include "strategies/pipeline_schedule.h"
#include "strategies/strategy_parts.h"

namespace orrery {
namespace {

// Comm streams: each kind of traffic on its own, as Megatron's communicators are, numbered from
// the most blocking (the replay charges exposed time to the lowest-numbered queue running).
constexpr Stream kTpStream{StreamClass::kComm, kLlmTpQueue};
constexpr Stream kEpStream{StreamClass::kComm, kLlmEpQueue};
constexpr Stream kCpStream{StreamClass::kComm, kLlmCpQueue};
constexpr Stream kSendFwd{StreamClass::kComm, kLlmSendFwdQueue};
constexpr Stream kSendBwd{StreamClass::kComm, kLlmSendBwdQueue};
constexpr Stream kDpStream{StreamClass::kComm, kLlmDpQueue};
constexpr double kActivationBytes = 2.0;  // 16-bit activations, gradients and gathered weights

// A block with work in it (a test's costs may give seconds without kernels).
bool any(const BlockCost& c) { return c.seconds > 0 || c.kernels > 0; }

using Item = PipelinePass;
using PassKey = std::tuple<int, PassKind, int, int>;  // (stage, kind, micro, chunk)

class Builder {
 public:
  Builder(const LlmConfig& m, const ParallelPlan& p, const std::vector<ClusterGpu>& gpus,
          const LlmCosts& costs, const CollectiveOptions& coll, const LlmBuildOptions& build)
      : m_(m), p_(p), costs_(costs), coll_(coll), build_(build), b_(replica_) {
    for (const auto& g : gpus) dev_.push_back(b_.gpu(g));
    shards_ = p.dp * p.cp;
    lanes_ = shards_ * p.tp;
    // Overlap needs the blocks' GEMMs apart: dense layers without context parallelism, op by op.
    overlap_ = p.tp_comm_overlap && p.tp >= 2 && p.sequence_parallel && p.ep < 2 && p.cp < 2;
    fuse_ =
        build.fuse_passes && build.tp_analytical && p.ep < 2 && p.cp < 2 && p.offload_layers == 0;
    chunks_ = p.chunks_per_stage();
    chunk_layers_ = chunk_layers(p, m);
    micro_ = p.micro_batches();
    split_ = splits_weight_gradients(p.schedule);
    for (int mb = 0; mb < micro_; ++mb) paths_.push_back(pipeline_path(p, mb, micro_));
    // ZB-V's list schedule orders the passes by their priced durations (units when unpriced).
    PassTimes times;
    const double f = (costs.attention_fwd + costs.mlp_fwd).seconds;
    const double w = (costs.attention_wgrad + costs.mlp_wgrad).seconds;
    const double b = (costs.attention_bwd + costs.mlp_bwd).seconds - w;
    if (f > 0 && b > 0 && w > 0) times = {f, b, w};
    orders_ = pipeline_schedule(p, micro_, chunk_layers_, times);
    // The micro-batch whose gradient pass comes last on each chunk: its gradients are final.
    final_.assign(p.pp, std::vector<int>(chunks_, -1));
    for (int s = 0; s < p.pp; ++s)
      for (const Item& it : orders_[s])
        if (it.kind == (split_ ? PassKind::kWeight : PassKind::kBackward))
          final_[s][it.chunk] = it.micro;
    // A GPU's tokens: its 1/cp share of each sequence (2 x cp chunks, two each, balanced).
    const double tokens = p.micro_batch * static_cast<double>(p.sequence(m)) / p.cp;
    tp_bytes_ = tokens * static_cast<double>(m.hidden) * kActivationBytes;
    send_bytes_ = tp_bytes_ / p.tp;  // Megatron's scatter-gather: each TP rank sends its share
    // Routed tokens that leave the GPU for the other ep - 1 ranks' experts.
    // Folded over TP, a GPU dispatches its 1/tp of the tokens.
    fold_ = p.folded_experts() ? 1.0 / p.tp : 1.0;
    a2a_bytes_ =
        tp_bytes_ * fold_ * static_cast<double>(m.top_k) * p.routed_factor() * (p.ep - 1) / p.ep;
    for (const auto& g : gpus) server_.push_back(g.server);
    // The keys and values of a GPU's chunk (its TP share of the KV heads), 16-bit.
    kv_bytes_ =
        tokens * 2.0 * static_cast<double>(m.kv_heads) * m.head_dim() / p.tp * kActivationBytes;
    const LayerShare share = layer_share(m, p);
    // A layer's weights and gradients on one GPU: the dense part, reduced and gathered over all
    // dp x cp replicas, and its local experts', over the replicas holding the same experts
    // (dp x cp / ep of them: expert data parallelism). LoRA: the adapters' gradients alone.
    layer_bytes_ = share.dense * kActivationBytes;
    expert_bytes_ = share.experts * kActivationBytes;
    grad_bytes_ = layer_bytes_;
    expert_grad_bytes_ = expert_bytes_;
    if (p.lora_rank > 0) {
      grad_bytes_ = lora_layer_parameters(m, p) * kActivationBytes;
      expert_grad_bytes_ = 0;
    }
    expert_shards_ = p.folded_experts() ? lanes_ / p.ep : shards_ / p.ep;
    // Selective recomputation's modules, run again before the attention's and the MLP's
    // backward.
    if (p.recompute == Recompute::kSelective) {
      const unsigned mod = p.recompute_modules;
      if (mod & kRecomputeCoreAttention) selective_attn_ += costs.attention_core_fwd;
      if (mod & kRecomputeNorm) selective_attn_ += costs.norm_fwd;
      if (mod & kRecomputeMlaUpProj) selective_attn_ += costs.mla_up_fwd;
      if (mod & kRecomputeMlp)
        selective_mlp_ += costs.mlp_fwd;
      else if (mod & kRecomputeActivation)
        selective_mlp_ += costs.mlp_act_fwd;
    }
    // Offloading: each GPU's CPU, the saved activations of a layer, the optimizer's shard.
    if (p.offload_layers > 0 || p.offload_optimizer) {
      for (const auto& g : gpus) host_.push_back(b_.cpu(g.launch_host, g.server));
      offload_bytes_ = layer_activation_bytes(m, p);
      for (const auto& stage : llm_memory(m, p))
        shard_params_.push_back(stage.trainable / (p.zero >= 1 ? shards_ : 1));
    }
    // Ops per simulated lane: about 12 per layer and pass (compute, collectives, recomputation),
    // plus the sends; growing the vector by doubling would copy every op several times.
    const double live_lanes =
        (build.all_replicas ? lanes_ : p.cp * p.tp) / (build.one_tp_rank ? p.tp : 1);
    b_.reserve(static_cast<size_t>(live_lanes * micro_ * 2 * (m.layers + 2) * 12 + 1024));
  }

  LlmStep build() {
    sequence_.assign(p_.pp, {});
    std::vector<Lanes> lasts;  // each stage's last op per lane
    for (int s = 0; s < p_.pp; ++s) {
      std::vector<int> last(lanes_, -1);
      Lanes before_previous(lanes_, -1);  // each lane's last op before the previous pass
      for (const Item& it : orders_[s]) {
        const Lanes before = last;
        // A pass beside the previous one starts where that one started; a zero-cost op joins
        // the two after it.
        Lanes previous_end;
        if (it.beside_previous) {
          previous_end = last;
          last = before_previous;
        }
        before_previous = before;
        const PassKey key{s, it.kind, it.micro, it.chunk};
        order_[key] = static_cast<int>(sequence_[s].size());
        sequence_[s].push_back(key);
        Pass& pass = passes_[key];
        pass.entry.assign(lanes_, -1);
        if (it.kind == PassKind::kForward)
          forward(s, it, &last, &pass);
        else if (it.kind == PassKind::kBackward)
          backward(s, it, &last, &pass);
        else
          weight(s, it, &last, &pass);
        if (it.beside_previous)
          compute(s, it, "join", BlockCost{}, "backward", &last, &pass, &previous_end);
      }
      lasts.push_back(last);
    }
    for (int s = 0; s < p_.pp; ++s) optimizer(s, lasts[s], mirror(s, lasts));
    link_stages();
    LlmStep out;
    out.tokens = static_cast<double>(p_.micro_batch) * micro_ * p_.dp * p_.sequence(m_);
    out.model_flops = llm_training_flops_per_token(m_, p_.sequence(m_)) * out.tokens;
    // LoRA: the frozen weights' gradients are not computed, a third of the training FLOPs
    // (the adapters' own are negligible), as NeMo counts LoRA's model FLOPs.
    if (p_.lora_rank > 0) out.model_flops *= 2.0 / 3.0;
    out.graph = b_.take();
    if (build_.one_tp_rank && p_.tp > 1)
      for (int s = 0; s < p_.pp; ++s)
        for (int lane = 0; lane < lanes_; lane += p_.tp) {
          auto& mirrors = out.graph.devices[device(lane, s)].mirrors;
          for (int t = 1; t < p_.tp; ++t) mirrors.push_back(device(lane + t, s));
        }
    return out;
  }

 private:
  struct Pass {
    std::vector<int> entry;  // per lane: the pass's first op (gets the cross-stage dep)
    std::vector<int> exit;   // per lane: its last op
  };
  // Lane (d x cp + c) x tp + t is TP rank t of CP rank c of replica d: the data-parallel
  // gradient group is the dp x cp "shards" of a TP rank, as Megatron's.
  using Lanes = std::vector<int>;  // an op index per lane

  // Lanes whose ops are simulated: all, or replica 0's; of those only TP rank 0 with
  // `one_tp_rank`.
  bool live(int lane) const {
    if (build_.one_tp_rank && lane % p_.tp != 0) return false;
    return build_.all_replicas || lane < p_.cp * p_.tp;
  }

  // The plan's rank of a lane on stage s, and its device in the graph.
  int device_index(int lane, int s) const {
    const int shard = lane / p_.tp;
    return llm_rank(p_, lane % p_.tp, shard % p_.cp, shard / p_.cp, s);
  }
  int device(int lane, int s) const { return dev_[device_index(lane, s)]; }
  std::string name(int s, int lane, const Item& it, const std::string& what) const {
    const int shard = lane / p_.tp;
    return "s" + std::to_string(s) + ".d" + std::to_string(shard / p_.cp) +
           (p_.cp > 1 ? ".x" + std::to_string(shard % p_.cp) : "") + ".t" +
           std::to_string(lane % p_.tp) + ".mb" + std::to_string(it.micro) +
           (chunks_ > 1 ? ".c" + std::to_string(it.chunk) : "") + "." + what;
  }

  // One compute op per lane after the lane's last op (and `wait`, an op per lane, if given).
  void compute(int s, const Item& it, const std::string& what, const BlockCost& cost,
               const char* phase, Lanes* last, Pass* pass, const Lanes* wait = nullptr) {
    for (int lane = 0; lane < lanes_; ++lane) {
      if (!live(lane)) continue;
      std::vector<int> deps;
      if ((*last)[lane] >= 0) deps.push_back((*last)[lane]);
      if (wait && (*wait)[lane] >= 0) deps.push_back((*wait)[lane]);
      const int op = b_.compute(name(s, lane, it, what), device(lane, s), Stream{}, cost.seconds,
                                cost.flops, cost.bytes, phase, std::move(deps));
      if (pass->entry[lane] < 0) pass->entry[lane] = op;
      (*last)[lane] = op;
    }
  }

  // A collective per group of lanes, after each member's last op. `groups` lists lanes.
  // Blocking: it becomes the members' last op; otherwise its op per lane is returned.
  Lanes collective(int s, const Item& it, const std::string& what, CollectiveType type,
                   double bytes, const std::vector<std::vector<int>>& groups, Stream stream,
                   bool blocking, Lanes* last, Pass* pass, int repeat = 1,
                   const Lanes* wait = nullptr) {
    Lanes ops(lanes_, -1);
    for (const auto& group : groups) {
      bool any = false;
      for (int lane : group) any = any || live(lane);
      if (!any) continue;
      Collective c = make_collective(type, bytes, coll_);
      if (stream == kTpStream && build_.tp_analytical) c.analytical = true;
      c.repeat = repeat;
      std::vector<int> deps;
      for (int lane : group) {
        c.ranks.push_back(device(lane, s));
        if ((*last)[lane] >= 0) deps.push_back((*last)[lane]);
        if (wait && (*wait)[lane] >= 0) deps.push_back((*wait)[lane]);
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      const int op = b_.collective(name(s, group.front(), it, what), c, "comm", std::move(deps));
      b_.set_stream(op, stream);
      for (int lane : group) {
        if (!live(lane)) continue;
        ops[lane] = op;
        if (!blocking) continue;
        if (pass->entry[lane] < 0) pass->entry[lane] = op;
        (*last)[lane] = op;
      }
    }
    return ops;
  }

  std::vector<std::vector<int>> tp_groups() const {
    std::vector<std::vector<int>> g(shards_);
    for (int lane = 0; lane < lanes_; ++lane) g[lane / p_.tp].push_back(lane);
    return g;
  }
  // Lanes of the same TP rank in shards [first, first + size): the CP group of a replica
  // (size cp), the EP groups (size ep), the data-parallel group (size dp x cp).
  std::vector<std::vector<int>> replica_groups(int size) const {
    std::vector<std::vector<int>> g;
    for (int first = 0; first < shards_; first += size)
      for (int t = 0; t < p_.tp; ++t) {
        std::vector<int> group;
        for (int d = first; d < first + size; ++d) group.push_back(d * p_.tp + t);
        g.push_back(std::move(group));
      }
    return g;
  }

  // `share`: of the layers, those whose block has them (experts folded over TP keep their
  // tokens split: a MoE layer's MLP then has no TP collective).
  void tp_block_end(int s, const Item& it, const std::string& what, Lanes* last, Pass* pass,
                    double share = 1) {
    if (p_.tp < 2 || share <= 0) return;
    const bool sp = p_.sequence_parallel;
    collective(s, it, what + (sp ? ".rs" : ".ar"),
               sp ? CollectiveType::kReduceScatter : CollectiveType::kAllReduce, tp_bytes_ * share,
               tp_groups(), kTpStream, true, last, pass);
  }
  void tp_block_start(int s, const Item& it, const std::string& what, Lanes* last, Pass* pass,
                      double share = 1) {
    if (p_.tp < 2 || !p_.sequence_parallel || share <= 0) return;
    collective(s, it, what + ".ag", CollectiveType::kAllGather, tp_bytes_ * share, tp_groups(),
               kTpStream, true, last, pass);
  }
  double mlp_tp_share() const { return p_.folded_experts() ? 1 - m_.moe_share() : 1.0; }

  // Expert-parallel groups: ep consecutive shards of a TP rank, or folded over TP (etp 1), ep
  // consecutive lanes (TP innermost, then the shards, as Megatron-Core folds them).
  std::vector<std::vector<int>> ep_groups() const {
    if (!p_.folded_experts()) return replica_groups(p_.ep);
    std::vector<std::vector<int>> g;
    for (int first = 0; first < lanes_; first += p_.ep) {
      std::vector<int> group;
      for (int lane = first; lane < first + p_.ep; ++lane) group.push_back(lane);
      g.push_back(std::move(group));
    }
    return g;
  }
  // MoE dispatch (combine: `back`). NCCL: one all-to-all over each expert-parallel group.
  // DeepEP, when the group spans servers with as many of its GPUs on each: the copies bound for
  // other servers cross the network once per destination server (an all-to-all among the GPUs
  // of the same local rank), then the copies go to their experts over NVLink (an all-to-all
  // inside each server); combine runs the two the other way.
  void all_to_all(int s, const Item& it, const std::string& what, Lanes* last, Pass* pass,
                  bool back = false) {
    if (p_.ep < 2) return;
    const auto groups = ep_groups();
    std::vector<std::vector<int>> rails, nodes;
    double rail_bytes = 0, node_bytes = 0;
    if (p_.moe_dispatcher != MoeDispatcher::kDeepEp ||
        !deep_ep_groups(s, groups, &rails, &nodes, &rail_bytes, &node_bytes)) {
      collective(s, it, what, CollectiveType::kAllToAll, a2a_bytes_, groups, kEpStream, true, last,
                 pass);
      return;
    }
    auto inter = [&] {
      collective(s, it, what + ".inter", CollectiveType::kAllToAll, rail_bytes, rails, kEpStream,
                 true, last, pass);
    };
    auto intra = [&] {
      collective(s, it, what + ".intra", CollectiveType::kAllToAll, node_bytes, nodes, kEpStream,
                 true, last, pass);
    };
    if (back) {
      intra();
      inter();
    } else {
      inter();
      intra();
    }
  }

  // DeepEP's two legs for expert-parallel groups over n servers with g GPUs each: a token's
  // copies reach D distinct servers, D = n (1 - C(E - E/n, k) / C(E, k)) for k of E experts
  // spread evenly, at most moe_node_limit; each GPU sends its tokens to the D (n - 1) / n
  // other servers (among the GPUs of its local rank), and on arrival the k copies are spread
  // over the g GPUs of the server. False when a group does not split that way (one server,
  // uneven).
  bool deep_ep_groups(int s, const std::vector<std::vector<int>>& groups,
                      std::vector<std::vector<int>>* rails, std::vector<std::vector<int>>* nodes,
                      double* rail_bytes, double* node_bytes) const {
    int n = 0, g = 0;
    for (const auto& group : groups) {
      std::map<int, std::vector<int>> by_server;
      for (int lane : group) by_server[server_[device_index(lane, s)]].push_back(lane);
      const int servers = static_cast<int>(by_server.size());
      const int per = static_cast<int>(group.size()) / servers;
      if (servers < 2 || per * servers != static_cast<int>(group.size())) return false;
      for (const auto& [server, lanes] : by_server)
        if (static_cast<int>(lanes.size()) != per) return false;
      n = servers;
      g = per;
      for (const auto& [server, lanes] : by_server) nodes->push_back(lanes);
      for (int r = 0; r < per; ++r) {
        std::vector<int> rail;
        for (const auto& [server, lanes] : by_server) rail.push_back(lanes[r]);
        rails->push_back(rail);
      }
    }
    const double e = static_cast<double>(m_.experts), k = static_cast<double>(m_.top_k);
    const double local = e / n;
    double missed = 1;  // C(E - E/n, k) / C(E, k): no expert of a given server chosen
    for (int i = 0; i < m_.top_k; ++i) missed *= std::max(0.0, (e - local - i) / (e - i));
    double servers_hit = n * (1 - missed);
    if (p_.moe_node_limit > 0) servers_hit = std::min(servers_hit, 1.0 * p_.moe_node_limit);
    const double token = tp_bytes_ * fold_ * p_.routed_factor();
    *rail_bytes = token * servers_hit * (n - 1) / n;
    *node_bytes = token * k * (g - 1) / g;
    return true;
  }

  // Lanes of the same TP rank holding the same experts: shards e, e + ep, e + 2 ep... (the
  // expert-parallel groups are ep consecutive shards).
  std::vector<std::vector<int>> expert_dp_groups() const {
    std::vector<std::vector<int>> g;
    if (p_.folded_experts()) {  // lanes e, e + ep, e + 2 ep...
      for (int e = 0; e < p_.ep; ++e) {
        std::vector<int> group;
        for (int lane = e; lane < lanes_; lane += p_.ep) group.push_back(lane);
        g.push_back(std::move(group));
      }
      return g;
    }
    for (int e = 0; e < p_.ep; ++e)
      for (int t = 0; t < p_.tp; ++t) {
        std::vector<int> group;
        for (int d = e; d < shards_; d += p_.ep) group.push_back(d * p_.tp + t);
        g.push_back(std::move(group));
      }
    return g;
  }

  // A collective of a layer's dense part over the replicas and of its experts' part over the
  // expert data-parallel groups; an op per lane finishing both (-1 where none ran).
  Lanes data_parallel(int s, const Item& it, const std::string& what, CollectiveType type,
                      double dense, double experts, bool blocking, Lanes* last, Pass* pass) {
    Lanes ops(lanes_, -1);
    if (shards_ > 1 && dense > 0)
      ops = collective(s, it, what, type, dense, replica_groups(shards_), kDpStream, blocking, last,
                       pass);
    if (expert_shards_ > 1 && experts > 0) {
      const Lanes e = collective(s, it, what + ".experts", type, experts, expert_dp_groups(),
                                 kDpStream, blocking, last, pass, 1, &ops);
      for (int lane = 0; lane < lanes_; ++lane)
        if (e[lane] >= 0) ops[lane] = e[lane];
    }
    return ops;
  }

  // ZeRO-3 / FSDP: a layer's weights gathered over the replicas before use.
  Lanes gather_weights(int s, const Item& it, const std::string& what, Lanes* last, Pass* pass) {
    if (p_.zero < 3 || shards_ < 2) return Lanes(lanes_, -1);
    return data_parallel(s, it, what, CollectiveType::kAllGather, layer_bytes_, expert_bytes_,
                         false, last, pass);
  }

  // A block under tensor-parallel communication overlap (Megatron's --tp-comm-overlap): the
  // all-gather feeding its first GEMM runs in tp chunks, the first before the GEMM starts and
  // the others beside it; the reduce-scatter draining its last GEMM likewise, the last chunk
  // after it. What lies between waits for the whole all-gather.
  void overlapped_block(int s, const Item& it, const std::string& what, const BlockCost& block,
                        const BlockCost& first, const BlockCost& final, const char* phase,
                        Lanes* last, Pass* pass, const Lanes* wait) {
    const double tp = p_.tp;
    const double chunk = tp_bytes_ / tp, rest_bytes = tp_bytes_ * (tp - 1) / tp;
    collective(s, it, what + ".ag0", CollectiveType::kAllGather, chunk, tp_groups(), kTpStream,
               true, last, pass);
    const Lanes ag = collective(s, it, what + ".ag", CollectiveType::kAllGather, rest_bytes,
                                tp_groups(), kTpStream, false, last, pass);
    compute(s, it, what + ".in", first, phase, last, pass, wait);
    BlockCost middle = block - first - final;
    middle.seconds = std::max(0.0, middle.seconds);
    compute(s, it, what, middle, phase, last, pass, &ag);
    const Lanes rs = collective(s, it, what + ".rs", CollectiveType::kReduceScatter, rest_bytes,
                                tp_groups(), kTpStream, false, last, pass);
    compute(s, it, what + ".out", final, phase, last, pass);
    collective(s, it, what + ".rs0", CollectiveType::kReduceScatter, chunk, tp_groups(), kTpStream,
               true, last, pass, 1, &rs);
  }

  void layer_forward(int s, const Item& it, const std::string& l, Lanes* last, Pass* pass,
                     const char* phase, const Lanes* weights) {
    if (overlap_) {
      overlapped_block(s, it, l + ".attn", costs_.attention_fwd, costs_.attention_in_gemm,
                       costs_.attention_out_gemm, phase, last, pass, weights);
      overlapped_block(s, it, l + ".mlp", costs_.mlp_fwd, costs_.mlp_in_gemm, costs_.mlp_out_gemm,
                       phase, last, pass, nullptr);
      return;
    }
    tp_block_start(s, it, l + ".attn", last, pass);
    if (p_.cp > 1)
      context_parallel_attention(s, it, l + ".attn", phase, last, pass, weights);
    else
      compute(s, it, l + ".attn", costs_.attention_fwd, phase, last, pass, weights);
    tp_block_end(s, it, l + ".attn", last, pass);
    tp_block_start(s, it, l + ".mlp", last, pass, mlp_tp_share());
    all_to_all(s, it, l + ".dispatch", last, pass);
    compute(s, it, l + ".mlp", costs_.mlp_fwd, phase, last, pass);
    all_to_all(s, it, l + ".combine", last, pass, true);
    tp_block_end(s, it, l + ".mlp", last, pass, mlp_tp_share());
  }

  // Context parallelism's attention (Megatron's ring attention): each GPU projects its chunk's
  // queries, keys and values, then passes the keys and values around the CP group (an
  // all-gather) while it attends over its own chunk; attending over the others' waits for
  // them; the output projection follows.
  void context_parallel_attention(int s, const Item& it, const std::string& what, const char* phase,
                                  Lanes* last, Pass* pass, const Lanes* weights) {
    const double cp = p_.cp;
    const BlockCost& core = costs_.attention_core_fwd;
    compute(s, it, what + ".qkv", costs_.attention_qkv_fwd, phase, last, pass, weights);
    const Lanes kv = collective(s, it, what + ".kv.ag", CollectiveType::kAllGather, kv_bytes_ * cp,
                                replica_groups(p_.cp), kCpStream, false, last, pass);
    compute(s, it, what + ".local", core * (1 / cp), phase, last, pass);
    compute(s, it, what + ".remote", core * ((cp - 1) / cp), phase, last, pass, &kv);
    compute(s, it, what + ".out", costs_.attention_fwd - costs_.attention_qkv_fwd - core, phase,
            last, pass);
  }

  // The chunk holding the embedding (the first piece of the micro-batch's path) or the output
  // head (the last).
  bool first_chunk(int s, const Item& it) const {
    return paths_[it.micro].front() == ChunkPlace{s, it.chunk};
  }
  bool last_chunk(int s, const Item& it) const {
    return paths_[it.micro].back() == ChunkPlace{s, it.chunk};
  }
  bool final_micro(int s, const Item& it) const { return final_[s][it.chunk] == it.micro; }
  std::string layer_name(const Item& it, int l) const {
    return "L" + std::to_string(it.chunk * 1000 + l);
  }

  // Passes without data-parallel traffic inside them (no per-layer gradient reduction or
  // weight gather) run as one op per kind of work: their layers' compute, and their
  // tensor-parallel collectives as one analytical op repeated. The TP ranks of a replica run
  // identical ops in lockstep, so the pass takes the same time as op by op.
  bool fused(int s, const Item& it) const {
    if (!fuse_) return false;
    if (shards_ < 2) return true;
    // ZeRO-3 gathers each layer's weights in forward and backward.
    if (p_.zero >= 3) return false;
    if (it.kind == PassKind::kForward) return true;
    // A backward pass without its weight gradients reduces nothing.
    return split_ || (p_.zero < 2 && !final_micro(s, it));
  }

  // `blocks` tensor-parallel blocks' collectives (attention and MLP: two per layer).
  void tp_collectives(int s, const Item& it, const std::string& what, int blocks, Lanes* last,
                      Pass* pass) {
    if (p_.tp < 2 || blocks == 0) return;
    const bool sp = p_.sequence_parallel;
    std::vector<CollectiveType> kinds;
    if (sp)
      kinds = {CollectiveType::kAllGather, CollectiveType::kReduceScatter};
    else
      kinds = {CollectiveType::kAllReduce};
    for (CollectiveType type : kinds) {
      collective(s, it, what + "." + collective_type_name(type), type, tp_bytes_, tp_groups(),
                 kTpStream, true, last, pass, blocks);
    }
  }

  // A fused pass under tensor-parallel communication overlap: its blocks' all-gathers and
  // reduce-scatters less one chunk each run beside the pass's overlappable GEMMs, the chunks
  // before and after them as without overlap (overlapped_block, summed over the pass).
  void fused_overlapped(int s, const Item& it, const std::string& what, const BlockCost& pass_cost,
                        const BlockCost& gemms, int blocks, const char* phase, Lanes* last,
                        Pass* pass) {
    const double tp = p_.tp;
    const double chunk = tp_bytes_ / tp, rest_bytes = tp_bytes_ * (tp - 1) / tp;
    collective(s, it, what + ".ag0", CollectiveType::kAllGather, chunk, tp_groups(), kTpStream,
               true, last, pass, blocks);
    const Lanes ag = collective(s, it, what + ".ag", CollectiveType::kAllGather, rest_bytes,
                                tp_groups(), kTpStream, false, last, pass, blocks);
    const Lanes rs = collective(s, it, what + ".rs", CollectiveType::kReduceScatter, rest_bytes,
                                tp_groups(), kTpStream, false, last, pass, blocks);
    compute(s, it, what + ".gemm", gemms, phase, last, pass);
    BlockCost rest = pass_cost - gemms;
    rest.seconds = std::max(0.0, rest.seconds);
    compute(s, it, what, rest, phase, last, pass, &ag);
    collective(s, it, what + ".rs0", CollectiveType::kReduceScatter, chunk, tp_groups(), kTpStream,
               true, last, pass, blocks, &rs);
  }

  void fused_forward(int s, const Item& it, Lanes* last, Pass* pass) {
    const int n = chunk_layers_[s][it.chunk];
    BlockCost c;
    if (first_chunk(s, it)) c += costs_.embedding_fwd;
    c += costs_.attention_fwd * n;
    c += costs_.mlp_fwd * n;
    if (last_chunk(s, it)) c += costs_.head_fwd;
    if (overlap_ && n > 0) {
      fused_overlapped(s, it, "fwd", c, forward_gemms(n), 2 * n, "forward", last, pass);
      pass->exit = *last;
      return;
    }
    compute(s, it, "fwd", c, "forward", last, pass);
    tp_collectives(s, it, "fwd.tp", 2 * n, last, pass);
    pass->exit = *last;
  }

  // The overlappable GEMMs of n layers' forward.
  BlockCost forward_gemms(int n) const {
    BlockCost g;
    for (const BlockCost* b : {&costs_.attention_in_gemm, &costs_.attention_out_gemm,
                               &costs_.mlp_in_gemm, &costs_.mlp_out_gemm})
      g += *b * n;
    return g;
  }

  void fused_backward(int s, const Item& it, Lanes* last, Pass* pass) {
    const int n = chunk_layers_[s][it.chunk];
    BlockCost re, c;
    int blocks = 2 * n;
    const int full = full_recomputed(n);
    if (full > 0) {
      re += costs_.attention_fwd * full;
      re += costs_.mlp_fwd * full;
      blocks += 2 * full;
    } else if (p_.recompute == Recompute::kSelective) {
      re += (selective_attn_ + selective_mlp_) * n;
    }
    if (last_chunk(s, it)) c += costs_.head_bwd;
    c += mlp_bwd() * n;
    c += attention_bwd() * n;
    if (first_chunk(s, it)) c += costs_.embedding_bwd;
    if (overlap_ && n > 0) {
      // Full recomputation's forward collectives overlap its GEMMs the same way.
      if (full > 0)
        fused_overlapped(s, it, "recompute", re, forward_gemms(full), 2 * full, "recompute", last,
                         pass);
      else if (p_.recompute == Recompute::kSelective)
        compute(s, it, "recompute", re, "recompute", last, pass);
      BlockCost g;
      for (const BlockCost* b : {&costs_.attention_in_dgrad, &costs_.attention_out_dgrad,
                                 &costs_.mlp_in_dgrad, &costs_.mlp_out_dgrad})
        g += *b * n;
      fused_overlapped(s, it, "bwd", c, g, 2 * n, "backward", last, pass);
      pass->exit = *last;
      return;
    }
    if (any(re)) compute(s, it, "recompute", re, "recompute", last, pass);
    compute(s, it, "bwd", c, "backward", last, pass);
    tp_collectives(s, it, "bwd.tp", blocks, last, pass);
    pass->exit = *last;
  }

  // Layers of a chunk of n that full recomputation runs again: the first recompute_layers, or
  // all of them.
  int full_recomputed(int n) const {
    if (p_.recompute != Recompute::kFull) return 0;
    return p_.recompute_layers > 0 ? std::min(n, p_.recompute_layers) : n;
  }

  // Activation offloading: layer l's saved activations to its GPU's CPU after its forward (a
  // copy beside the compute), and back before its backward.
  void offload(int s, const Item& it, int l, const Lanes& after) {
    for (int lane = 0; lane < lanes_; ++lane) {
      if (!live(lane)) continue;
      const int gpu = device(lane, s), cpu = host_[device_index(lane, s)];
      const int op = b_.transfer(name(s, lane, it, layer_name(it, l) + ".offload"), gpu,
                                 Stream{StreamClass::kCopyD2H, 0}, gpu, cpu, offload_bytes_, "comm",
                                 {after[lane]});
      offloaded_[{s, it.micro, it.chunk, l, lane}] = op;
    }
  }
  Lanes reload(int s, const Item& it, int l) {
    Lanes ops(lanes_, -1);
    for (int lane = 0; lane < lanes_; ++lane) {
      if (!live(lane)) continue;
      const int gpu = device(lane, s), cpu = host_[device_index(lane, s)];
      ops[lane] = b_.transfer(name(s, lane, it, layer_name(it, l) + ".reload"), gpu,
                              Stream{StreamClass::kCopyH2D, 0}, cpu, gpu, offload_bytes_, "comm",
                              {offloaded_.at({s, it.micro, it.chunk, l, lane})});
    }
    return ops;
  }

  // A block's backward pass: without its weight-gradient GEMMs when W passes run them.
  BlockCost attention_bwd() const {
    return split_ ? costs_.attention_bwd - costs_.attention_wgrad : costs_.attention_bwd;
  }
  BlockCost mlp_bwd() const { return split_ ? costs_.mlp_bwd - costs_.mlp_wgrad : costs_.mlp_bwd; }

  // A zero-bubble W pass: the weight-gradient GEMMs of the chunk's layers, then their
  // gradients reduced over the replicas as a backward pass would reduce them.
  void weight(int s, const Item& it, Lanes* last, Pass* pass) {
    const int n = chunk_layers_[s][it.chunk];
    compute(s, it, "wgrad", (costs_.attention_wgrad + costs_.mlp_wgrad) * n, "backward", last,
            pass);
    const bool final = final_micro(s, it);
    for (int l = n - 1; l >= 0; --l)
      reduce_gradients(s, it, layer_name(it, l), final, l == 0, last, pass);
    pass->exit = *last;
  }

  void forward(int s, const Item& it, Lanes* last, Pass* pass) {
    if (fused(s, it)) return fused_forward(s, it, last, pass);
    if (first_chunk(s, it)) compute(s, it, "embed", costs_.embedding_fwd, "forward", last, pass);
    // ZeRO-3 prefetch: layer l + 1's gather is issued as layer l starts.
    const int n = chunk_layers_[s][it.chunk];
    Lanes next = n > 0 ? gather_weights(s, it, layer_name(it, 0) + ".fwd.ag", last, pass)
                       : Lanes(lanes_, -1);
    for (int l = 0; l < n; ++l) {
      const Lanes weights = next;
      if (l + 1 < n) next = gather_weights(s, it, layer_name(it, l + 1) + ".fwd.ag", last, pass);
      layer_forward(s, it, layer_name(it, l) + ".fwd", last, pass, "forward", &weights);
      if (l < p_.offload_layers) offload(s, it, l, *last);
    }
    if (last_chunk(s, it)) compute(s, it, "head", costs_.head_fwd, "forward", last, pass);
    pass->exit = *last;
  }

  void backward(int s, const Item& it, Lanes* last, Pass* pass) {
    if (fused(s, it)) return fused_backward(s, it, last, pass);
    if (last_chunk(s, it)) compute(s, it, "head.bwd", costs_.head_bwd, "backward", last, pass);
    // Under a zero-bubble schedule the W pass reduces the gradients.
    const bool final_micro = !split_ && this->final_micro(s, it);
    const int n = chunk_layers_[s][it.chunk];
    // n is 0 for a chunk holding only the embedding or the loss (Megatron's split).
    Lanes next = n > 0 ? gather_weights(s, it, layer_name(it, n - 1) + ".bwd.ag", last, pass)
                       : Lanes(lanes_, -1);
    // Offloaded layers' activations come back from the host as backward starts.
    std::vector<Lanes> reloads;
    for (int l = 0; l < std::min(n, p_.offload_layers); ++l) reloads.push_back(reload(s, it, l));
    const int full = full_recomputed(n);
    for (int l = n - 1; l >= 0; --l) {
      const std::string L = layer_name(it, l);
      const Lanes weights = next;
      if (l > 0) next = gather_weights(s, it, layer_name(it, l - 1) + ".bwd.ag", last, pass);
      if (l < static_cast<int>(reloads.size()))
        compute(s, it, L + ".reloaded", BlockCost{}, "backward", last, pass, &reloads[l]);
      if (l < full) layer_forward(s, it, L + ".recompute", last, pass, "recompute", &weights);
      // Backward mirrors forward: each block's input gradient is all-reduced over the group
      // (reduce-scattered with sequence parallelism, after an all-gather of its input).
      // Context parallelism: the keys and values come around the ring again for the attention's
      // backward, fetched while the MLP's runs.
      const Lanes kv = p_.cp > 1 ? collective(s, it, L + ".attn.bwd.kv.ag",
                                              CollectiveType::kAllGather, kv_bytes_ * p_.cp,
                                              replica_groups(p_.cp), kCpStream, false, last, pass)
                                 : Lanes(lanes_, -1);
      if (overlap_) {
        // Backward's first GEMM is the output layer's data gradient (after the all-gather of
        // the output's gradient), its last the input layer's (before the reduce-scatter).
        overlapped_block(s, it, L + ".mlp.bwd", mlp_bwd(), costs_.mlp_out_dgrad,
                         costs_.mlp_in_dgrad, "backward", last, pass, &weights);
        if (any(selective_mlp_))
          compute(s, it, L + ".mlp.recompute", selective_mlp_, "recompute", last, pass);
        if (any(selective_attn_))
          compute(s, it, L + ".attn.recompute", selective_attn_, "recompute", last, pass);
        overlapped_block(s, it, L + ".attn.bwd", attention_bwd(), costs_.attention_out_dgrad,
                         costs_.attention_in_dgrad, "backward", last, pass, nullptr);
        if (!split_) reduce_gradients(s, it, L, final_micro, l == 0, last, pass);
        continue;
      }
      tp_block_start(s, it, L + ".mlp.bwd", last, pass, mlp_tp_share());
      all_to_all(s, it, L + ".combine.bwd", last, pass, true);
      if (any(selective_mlp_))
        compute(s, it, L + ".mlp.recompute", selective_mlp_, "recompute", last, pass);
      compute(s, it, L + ".mlp.bwd", mlp_bwd(), "backward", last, pass, &weights);
      all_to_all(s, it, L + ".dispatch.bwd", last, pass);
      tp_block_end(s, it, L + ".mlp.bwd", last, pass, mlp_tp_share());
      if (any(selective_attn_))
        compute(s, it, L + ".attn.recompute", selective_attn_, "recompute", last, pass);
      tp_block_start(s, it, L + ".attn.bwd", last, pass);
      compute(s, it, L + ".attn.bwd", attention_bwd(), "backward", last, pass, &kv);
      if (p_.cp > 1) {
        // The keys' and values' gradients go back to their chunks' GPUs (a reduce-scatter)
        // beside the next layer's backward; the optimizer waits for them.
        const Lanes dkv =
            collective(s, it, L + ".attn.bwd.dkv.rs", CollectiveType::kReduceScatter,
                       kv_bytes_ * p_.cp, replica_groups(p_.cp), kCpStream, false, last, pass);
        for (int lane = 0; lane < lanes_; ++lane) reduced_[s].push_back(dkv[lane]);
      }
      if (!split_) reduce_gradients(s, it, L, final_micro, l == 0, last, pass);
      tp_block_end(s, it, L + ".attn.bwd", last, pass);
    }
    if (first_chunk(s, it))
      compute(s, it, "embed.bwd", costs_.embedding_bwd, "backward", last, pass);
    pass->exit = *last;
  }

  // A layer's gradients, reduced over the replicas as soon as backward made them, beside the
  // rest of backward: all-reduced (ZeRO-0) or reduce-scattered (ZeRO-1) after the last
  // micro-batch; reduce-scattered after every micro-batch under ZeRO-2 and ZeRO-3, whose GPUs
  // keep only their shard of the gradients.
  // Layers fill a bucket of at least plan.grad_bucket_bytes in backward order (one layer each
  // when 0), reduced once its last layer is done; a pass's last layer closes its bucket.
  void reduce_gradients(int s, const Item& it, const std::string& L, bool final_micro,
                        bool pass_end, Lanes* last, Pass* pass) {
    if (shards_ < 2) return;
    if (p_.zero < 2 && !final_micro) return;
    bucket_ += grad_bytes_;
    expert_bucket_ += expert_grad_bytes_;
    if (bucket_ + expert_bucket_ < p_.grad_bucket_bytes && !pass_end) return;
    const double dense = bucket_, experts = expert_bucket_;
    bucket_ = expert_bucket_ = 0;
    const CollectiveType type =
        p_.zero == 0 ? CollectiveType::kAllReduce : CollectiveType::kReduceScatter;
    const Lanes ops = data_parallel(s, it, L + (p_.zero == 0 ? ".grad.ar" : ".grad.rs"), type,
                                    dense, experts, false, last, pass);
    for (int lane = 0; lane < lanes_; ++lane) reduced_[s].push_back(ops[lane]);
  }

  // After the stage's passes and its gradients' reductions: Adam on every GPU's shard, then
  // (ZeRO-1 and -2) the updated weights gathered.
  void optimizer(int s, const Lanes& last, const Lanes& mirrored) {
    Item it;
    Lanes after(lanes_, -1);
    for (int lane = 0; lane < lanes_; ++lane) {
      if (!live(lane)) continue;
      std::vector<int> deps;
      if (last[lane] >= 0) deps.push_back(last[lane]);
      if (mirrored[lane] >= 0) deps.push_back(mirrored[lane]);
      for (size_t i = lane; i < reduced_[s].size(); i += lanes_) deps.push_back(reduced_[s][i]);
      const BlockCost& o = costs_.optimizer[s];
      if (p_.offload_optimizer) {
        // ZeRO-Offload: the gradients down to the host, Adam there at the host's memory
        // bandwidth, the 16-bit weights back.
        const int gpu = device(lane, s), cpu = host_[device_index(lane, s)];
        const double params = shard_params_[s];
        const int down =
            b_.transfer(name(s, lane, it, "grads.offload"), gpu, Stream{StreamClass::kCopyD2H, 0},
                        gpu, cpu, params * kActivationBytes, "comm", std::move(deps));
        const int adam = b_.compute(name(s, lane, it, "optimizer.cpu"), cpu, Stream{},
                                    params * 30 / p_.offload_host_bandwidth, 12 * params,
                                    30 * params, "optimizer", {down});
        after[lane] =
            b_.transfer(name(s, lane, it, "weights.reload"), gpu, Stream{StreamClass::kCopyH2D, 0},
                        cpu, gpu, params * kActivationBytes, "comm", {adam});
        continue;
      }
      after[lane] = b_.compute(name(s, lane, it, "optimizer"), device(lane, s), Stream{}, o.seconds,
                               o.flops, o.bytes, "optimizer", std::move(deps));
    }
    if ((p_.zero == 1 || p_.zero == 2) && shards_ > 1) {
      Pass scratch;
      scratch.entry.assign(lanes_, -1);
      int layers = 0;
      for (int c : chunk_layers_[s]) layers += c;
      data_parallel(s, it, "weights.ag", CollectiveType::kAllGather, grad_bytes_ * layers,
                    expert_grad_bytes_ * layers, true, &after, &scratch);
    }
  }

  // DualPipe: stage s and stage pp - 1 - s hold the same two pieces of the model, so their
  // gradients are summed (an all-reduce between the pair) before either updates its weights.
  // Returns the all-reduce's op per lane of stage s (none for other schedules).
  Lanes mirror(int s, const std::vector<Lanes>& lasts) {
    Lanes ops(lanes_, -1);
    const int other = p_.pp - 1 - s;
    if (p_.schedule != PipelineSchedule::kDualPipe || other == s) return ops;
    if (other < s) return mirrored_.at(other);
    int layers = 0;
    for (int c : chunk_layers_[s]) layers += c;
    for (int lane = 0; lane < lanes_; ++lane) {
      if (!live(lane)) continue;
      Collective c = make_collective(CollectiveType::kAllReduce,
                                     (grad_bytes_ + expert_grad_bytes_) * layers, coll_);
      c.ranks = {device(lane, s), device(lane, other)};
      std::vector<int> deps;
      for (int d : {lasts[s][lane], lasts[other][lane]})
        if (d >= 0) deps.push_back(d);
      const int op = b_.collective(name(s, lane, Item{}, "mirror.grad.ar"), c, "comm", deps);
      b_.set_stream(op, kDpStream);
      ops[lane] = op;
    }
    mirrored_[s] = ops;
    return ops;
  }

  // Where a pass's output goes: the next place of its micro-batch's path forward, the previous
  // one backward; a send unless the two places share the GPU (ZB-V's turn at the last stage).
  void link_stages() {
    for (int mb = 0; mb < micro_; ++mb) {
      const std::vector<ChunkPlace>& path = paths_[mb];
      for (size_t k = 0; k + 1 < path.size(); ++k) {
        const int s = path[k].stage, c = path[k].chunk;
        const int ns = path[k + 1].stage, nc = path[k + 1].chunk;
        const PassKey fk{s, PassKind::kForward, mb, c}, nbk{ns, PassKind::kBackward, mb, nc};
        const Pass& f = passes_.at(fk);
        const Pass& nf = passes_.at({ns, PassKind::kForward, mb, nc});
        const Pass& nb = passes_.at(nbk);
        const Pass& b = passes_.at({s, PassKind::kBackward, mb, c});
        const Item it{PassKind::kForward, mb, c};
        for (int lane = 0; lane < lanes_; ++lane) {
          if (!live(lane)) continue;
          if (ns == s) {
            b_.add_dep(nf.entry[lane], f.exit[lane]);
            b_.add_dep(b.entry[lane], nb.exit[lane]);
            continue;
          }
          const int here = device(lane, s), there = device(lane, ns);
          int x = b_.transfer(name(s, lane, it, "send.act"), here, kSendFwd, here, there,
                              send_bytes_, "comm", {f.exit[lane]});
          b_.add_dep(nf.entry[lane], x);
          int g = b_.transfer(name(ns, lane, it, "send.grad"), there, kSendBwd, there, here,
                              send_bytes_, "comm", {nb.exit[lane]});
          b_.add_dep(b.entry[lane], g);
          if (p_.pp_sync) {
            // Megatron's p2p: a stage waits for its sends before its next pass.
            if (const Pass* after = next_pass(fk)) b_.add_dep(after->entry[lane], x);
            if (const Pass* after = next_pass(nbk)) b_.add_dep(after->entry[lane], g);
          }
        }
      }
    }
  }

  // The pass its stage runs after `key`, or nullptr for its last.
  const Pass* next_pass(const PassKey& key) const {
    const int s = std::get<0>(key);
    const int i = order_.at(key) + 1;
    if (i >= static_cast<int>(sequence_[s].size())) return nullptr;
    return &passes_.at(sequence_[s][i]);
  }

  const LlmConfig& m_;
  const ParallelPlan& p_;
  const LlmCosts& costs_;
  const CollectiveOptions& coll_;
  const LlmBuildOptions& build_;
  PricedReplica replica_;
  GraphBuilder b_;
  std::vector<int> dev_;
  std::vector<int> server_;  // per GPU of the plan: its server
  std::vector<int> host_;    // per GPU of the plan: its CPU's device (offloading)
  double offload_bytes_ = 0;
  std::vector<double> shard_params_;  // per stage: parameters one GPU's optimizer updates
  std::map<std::tuple<int, int, int, int, int>, int> offloaded_;  // (s, micro, chunk, l, lane)
  BlockCost selective_attn_, selective_mlp_;
  int lanes_ = 1, chunks_ = 1, micro_ = 1, shards_ = 1;
  bool fuse_ = false;
  bool overlap_ = false;
  std::vector<std::vector<int>> chunk_layers_;  // [stage][chunk]
  double tp_bytes_ = 0, send_bytes_ = 0, a2a_bytes_ = 0, layer_bytes_ = 0, kv_bytes_ = 0;
  double grad_bytes_ = 0;  // gradients one layer reduces over the replicas
  double expert_bytes_ = 0, expert_grad_bytes_ = 0;  // its local experts' part
  double expert_bucket_ = 0;
  int expert_shards_ = 1;  // replicas holding the same experts (expert data parallelism)
  double fold_ = 1;        // the share of a replica's tokens one GPU dispatches
  double bucket_ = 0;      // gradient bytes waiting for their bucket's reduction
  std::map<PassKey, Pass> passes_;
  // Each stage's passes in the order it runs them, and each pass's place in it.
  std::vector<std::vector<PassKey>> sequence_;
  std::map<PassKey, int> order_;
  bool split_ = false;                          // W passes run the weight gradients
  std::vector<std::vector<ChunkPlace>> paths_;  // per micro-batch
  std::vector<std::vector<Item>> orders_;       // per stage
  std::vector<std::vector<int>> final_;         // [stage][chunk]: last micro-batch's gradients
  std::map<int, Lanes> mirrored_;               // DualPipe's gradient all-reduce per stage
  std::map<int, std::vector<int>> reduced_;     // per stage: gradient reductions, lane-major
};

}  // namespace

int llm_rank(const ParallelPlan& p, int tp, int cp, int dp, int pp) {
  return tp + p.tp * (cp + p.cp * (dp + p.dp * pp));
}

bool one_tp_rank_applies(const ParallelPlan& plan, bool tp_analytical, bool all_analytical) {
  if (!tp_analytical) return false;
  if (all_analytical) return true;
  const bool experts_across_tp =
      plan.ep > 1 && (plan.folded_experts() || plan.moe_dispatcher == MoeDispatcher::kDeepEp);
  return !experts_across_tp && plan.offload_layers == 0 && !plan.offload_optimizer;
}

LlmStep build_llm_step(const LlmConfig& model, const ParallelPlan& plan,
                       const std::vector<ClusterGpu>& gpus, const LlmCosts& costs,
                       const CollectiveOptions& collectives, const LlmBuildOptions& build) {
  if (static_cast<int>(gpus.size()) != plan.gpus())
    throw InputError("strategy: the plan needs " + std::to_string(plan.gpus()) +
                     " GPUs, the platform has " + std::to_string(gpus.size()));
  if (static_cast<int>(costs.optimizer.size()) != plan.pp)
    throw std::logic_error("build_llm_step: costs priced for another pipeline depth");
  return Builder(model, plan, gpus, costs, collectives, build).build();
}

}  // namespace orrery
