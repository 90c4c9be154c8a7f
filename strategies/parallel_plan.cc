#include "strategies/parallel_plan.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/errors.h"
#include "common/input_limits.h"
#include "strategies/pipeline_schedule.h"

namespace orrery {
namespace {

template <typename E, size_t N>
bool parse_named(const std::string& s, const std::pair<const char*, E> (&names)[N], E* out) {
  for (const auto& [name, value] : names)
    if (s == name) {
      *out = value;
      return true;
    }
  return false;
}

constexpr std::pair<const char*, PipelineSchedule> kSchedules[] = {
    {"gpipe", PipelineSchedule::kGpipe},
    {"1f1b", PipelineSchedule::k1f1b},
    {"interleaved", PipelineSchedule::kInterleaved},
    {"zb-h1", PipelineSchedule::kZbH1},
    {"zb-v", PipelineSchedule::kZbV},
    {"dualpipe", PipelineSchedule::kDualPipe}};
constexpr std::pair<const char*, MoeDispatcher> kDispatchers[] = {
    {"alltoall", MoeDispatcher::kAllToAll}, {"deepep", MoeDispatcher::kDeepEp}};
constexpr std::pair<const char*, Recompute> kRecompute[] = {
    {"none", Recompute::kNone}, {"selective", Recompute::kSelective}, {"full", Recompute::kFull}};
constexpr std::pair<const char*, Precision> kPrecision[] = {
    {"bf16", Precision::kBf16},  {"fp16", Precision::kFp16},    {"fp32", Precision::kFp32},
    {"fp8", Precision::kFp8},    {"fp8-cs", Precision::kFp8Cs}, {"mxfp8", Precision::kMxfp8},
    {"nvfp4", Precision::kNvfp4}};

template <typename E, size_t N>
std::string choices(const std::pair<const char*, E> (&names)[N]) {
  std::string out;
  for (size_t i = 0; i < N; ++i)
    out += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(names[i].first);
  return out;
}

std::string num(int64_t v) { return std::to_string(v); }

}  // namespace

const char* pipeline_schedule_name(PipelineSchedule s) {
  for (const auto& [name, value] : kSchedules)
    if (value == s) return name;
  return "?";
}
bool parse_pipeline_schedule(const std::string& s, PipelineSchedule* out) {
  return parse_named(s, kSchedules, out);
}
std::string pipeline_schedule_choices() { return choices(kSchedules); }
namespace {
constexpr std::pair<const char*, unsigned> kRecomputeModules[] = {
    {"core_attn", kRecomputeCoreAttention},
    {"mlp", kRecomputeMlp},
    {"moe_act", kRecomputeActivation},
    {"layernorm", kRecomputeNorm},
    {"mla_up_proj", kRecomputeMlaUpProj}};
}  // namespace

bool parse_recompute_module(const std::string& s, unsigned* bit) {
  return parse_named(s, kRecomputeModules, bit);
}
std::string recompute_module_choices() { return choices(kRecomputeModules); }

const char* moe_dispatcher_name(MoeDispatcher d) {
  for (const auto& [name, value] : kDispatchers)
    if (value == d) return name;
  return "?";
}
bool parse_moe_dispatcher(const std::string& s, MoeDispatcher* out) {
  return parse_named(s, kDispatchers, out);
}

double ParallelPlan::routed_factor() const {
  if (!dropless) return capacity_factor;
  if (ep < 2) return 1.0;
  if (expert_load.empty()) return moe_imbalance;
  const size_t per_rank = expert_load.size() / static_cast<size_t>(ep);
  double total = 0, busiest = 0;
  for (size_t r = 0; r < static_cast<size_t>(ep); ++r) {
    double rank = 0;
    for (size_t e = r * per_rank; e < (r + 1) * per_rank; ++e) rank += expert_load[e];
    total += rank;
    busiest = std::max(busiest, rank);
  }
  return total > 0 ? busiest * ep / total : 1.0;
}

const char* recompute_name(Recompute r) {
  for (const auto& [name, value] : kRecompute)
    if (value == r) return name;
  return "?";
}
bool parse_recompute(const std::string& s, Recompute* out) {
  return parse_named(s, kRecompute, out);
}
std::string recompute_choices() { return choices(kRecompute); }
const char* precision_name(Precision p) {
  for (const auto& [name, value] : kPrecision)
    if (value == p) return name;
  return "?";
}
bool parse_precision(const std::string& s, Precision* out) {
  return parse_named(s, kPrecision, out);
}
std::string precision_choices() { return choices(kPrecision); }
DType precision_dtype(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return DType::kFP32;
    case Precision::kFp16:
      return DType::kFP16;
    default:  // bf16, and the bf16 around the low-precision GEMMs of the fp8 to nvfp4 recipes
      break;
  }
  return DType::kBF16;
}

int ParallelPlan::micro_batches() const {
  if (global_batch <= 0) return 1;
  return global_batch / (micro_batch * dp);
}

void check_parallel_plan(const ParallelPlan& p, const LlmConfig& m, int gpus,
                         const std::string& origin) {
  check_parallel_plan(p, m, gpus,
                      [&origin](const std::string& key) { return origin + ": " + key; });
}

void check_parallel_plan(const ParallelPlan& p, const LlmConfig& m, int gpus,
                         const PlanKeyWhere& where) {
  // Values no plan can have are bad input; plans the model or the GPUs cannot run, infeasible.
  auto bad = [&](const std::string& key, const std::string& why) {
    throw InputError(where(key) + ": " + why);
  };
  auto fail = [&](const std::string& key, const std::string& why) {
    throw InfeasibleError(where(key) + ": " + why);
  };
  const struct {
    const char* key;
    int value;
  } degrees[] = {{"tp", p.tp},
                 {"pp", p.pp},
                 {"dp", p.dp},
                 {"cp", p.cp},
                 {"ep", p.ep},
                 {"micro_batch", p.micro_batch},
                 {"virtual_stages", p.virtual_stages}};
  for (const auto& d : degrees)
    if (d.value < 1) bad(d.key, "must be at least 1, got " + num(d.value));
  if (m.heads % p.tp != 0)
    fail("tp", "tp = " + num(p.tp) + " must divide the " + num(m.heads) + " attention heads of " +
                   m.name);
  if (m.kv_heads % p.tp != 0)
    fail("tp", "tp = " + num(p.tp) + " must divide the " + num(m.kv_heads) +
                   " key/value heads of " + m.name + " (each GPU holds whole KV groups)");
  if (m.ffn % p.tp != 0)
    fail("tp", "tp = " + num(p.tp) + " must divide the FFN width " + num(m.ffn) + " of " + m.name);
  if (p.pp > m.layers)
    fail("pp", "pp = " + num(p.pp) + " stages for " + num(m.layers) + " layers: at most " +
                   num(m.layers));
  if (p.schedule != PipelineSchedule::kInterleaved && p.virtual_stages != 1)
    fail("virtual_stages", "only the interleaved schedule runs several model chunks per GPU");
  const int chunks = p.model_pieces();
  if (p.account_for_embedding_and_loss) {
    if (p.pp < 2) fail("account_for_embedding_and_loss", "needs pp >= 2");
    // A chunk of one part is the embedding or the loss alone (NVIDIA's 405B NVFP4 recipe: 128
    // chunks of 126 + 2), as Megatron-LM allows.
    if ((m.layers + 2) % chunks != 0)
      fail("account_for_embedding_and_loss",
           num(chunks) + " pipeline chunks must divide the " + num(m.layers) +
               " layers + the embedding + the loss = " + num(m.layers + 2));
  }
  if (splits_weight_gradients(p.schedule) && p.pp < 2)
    fail("schedule", std::string(pipeline_schedule_name(p.schedule)) + " needs pp >= 2");
  if (p.schedule == PipelineSchedule::kZbV && !p.account_for_embedding_and_loss &&
      m.layers % (2 * p.pp) != 0)
    fail("schedule", "zb-v runs two chunks per GPU: 2 x pp = " + num(2 * p.pp) +
                         " must divide the " + num(m.layers) + " layers");
  if (p.schedule == PipelineSchedule::kDualPipe) {
    if (p.pp % 2 != 0)
      fail("pp", "dualpipe pairs stage s with stage pp - 1 - s: pp must be even, got " + num(p.pp));
    if (p.micro_batches() % 2 != 0 || p.micro_batches() < 2 * p.pp)
      fail("global_batch",
           "dualpipe feeds half the micro-batches from each end and needs at "
           "least 2 x pp = " +
               num(2 * p.pp) + " of them, an even number; got " + num(p.micro_batches()));
  }
  if (p.schedule == PipelineSchedule::kInterleaved) {
    if (p.pp < 2) fail("schedule", "interleaving needs pp >= 2");
    if (!p.account_for_embedding_and_loss && m.layers % chunks != 0)
      fail("virtual_stages", "pp x virtual_stages = " + num(chunks) + " chunks must divide the " +
                                 num(m.layers) +
                                 " layers (or count the embedding and the loss as layers: "
                                 "account_for_embedding_and_loss)");
    if (p.micro_batches() % p.pp != 0)
      fail("global_batch", "the interleaved schedule runs micro-batches in groups of pp = " +
                               num(p.pp) + "; " + num(p.micro_batches()) + " is not a multiple");
  }
  if (!m.moe() && p.ep > 1) fail("ep", "expert parallelism needs a mixture-of-experts model");
  if (!(p.grad_bucket_bytes >= 0 && p.grad_bucket_bytes < 1e15))
    bad("bucket", "must be a size of at least 0 bytes");
  if (!limits::kCapacityFactor.contains(p.capacity_factor))
    bad("capacity_factor", out_of_range(p.capacity_factor, limits::kCapacityFactor));
  if (!(p.moe_imbalance >= 1 && p.moe_imbalance <= 64))
    bad("moe_imbalance", "the busiest rank's tokens over the mean: from 1 to 64, got " +
                             std::to_string(p.moe_imbalance));
  if (!p.expert_load.empty()) {
    if (static_cast<int64_t>(p.expert_load.size()) != m.experts)
      fail("expert_load", "has " + num(static_cast<int64_t>(p.expert_load.size())) + " entries; " +
                              m.name + " has " + num(m.experts) + " experts");
    double sum = 0;
    for (double v : p.expert_load) {
      if (!(v >= 0 && v < 1e300)) bad("expert_load", "tokens per expert must be at least 0");
      sum += v;
    }
    if (!(sum > 0)) bad("expert_load", "routes no token: every entry is 0");
  }
  if (p.moe_node_limit < 0) bad("moe_node_limit", "must be at least 0 (0: no limit)");
  if (p.recompute_layers < 0) bad("recompute_layers", "must be at least 0 (0: every layer)");
  if (p.recompute_layers > 0 && p.recompute != Recompute::kFull)
    fail("recompute_layers", "recomputes layers in full: needs recompute: full");
  if ((p.recompute_modules & kRecomputeMlaUpProj) && !m.mla() &&
      p.recompute == Recompute::kSelective)
    fail("recompute_modules",
         "mla_up_proj needs multi-head latent attention (" + m.name + " has none)");
  if (p.offload_layers < 0) bad("offload_activations", "must be at least 0 layers");
  if (!(p.offload_host_bandwidth > 0 && p.offload_host_bandwidth < 1e15))
    bad("offload_host_bandwidth", "must be a bandwidth above 0");
  if (m.moe() && m.experts % p.ep != 0)
    fail("ep", "ep = " + num(p.ep) + " must divide the " + num(m.experts) + " experts");
  if (p.etp < 0) bad("etp", "must be 0 (= tp), 1 or tp");
  if (p.etp > 0 && p.etp != 1 && p.etp != p.tp)
    fail("etp", "expert tensor parallelism of " + num(p.etp) +
                    ": Orrery models experts split like the layer (tp = " + num(p.tp) +
                    ") or whole (1)");
  if (p.folded_experts()) {
    if (!m.moe()) fail("etp", "expert tensor parallelism needs a mixture-of-experts model");
    if (!p.sequence_parallel)
      fail("etp",
           "experts folded over the TP group dispatch each TP rank's share of the tokens: "
           "needs sequence_parallel: true (as Megatron-Core does)");
    if ((p.tp * p.dp * p.cp) % p.ep != 0)
      fail("ep", "ep = " + num(p.ep) + " must divide tp x dp x cp = " + num(p.tp * p.dp * p.cp) +
                     " (experts folded over the TP and data-parallel GPUs)");
  } else if ((p.dp * p.cp) % p.ep != 0) {
    fail("ep", "ep = " + num(p.ep) + " must divide dp x cp = " + num(p.dp * p.cp) +
                   " (experts are spread over the data-parallel GPUs; etp: 1 folds them over TP "
                   "too)");
  }
  const int64_t s = p.sequence(m);
  if (s < 1) bad("seq_len", "must be at least 1");
  if (p.cp > 1 && s % (2 * p.cp) != 0)
    fail("cp", "cp = " + num(p.cp) + " splits each sequence into 2 x cp chunks; " + num(s) +
                   " tokens do not divide");
  if (p.global_batch < 0) bad("global_batch", "must be positive");
  if (p.global_batch > 0 && p.global_batch % (p.micro_batch * p.dp) != 0)
    fail("global_batch",
         num(p.global_batch) +
             " sequences are not a multiple of micro_batch x dp = " + num(p.micro_batch * p.dp));
  if (p.sequence_parallel && p.tp < 2) fail("sequence_parallel", "needs tp >= 2");
  if (p.tp_comm_overlap && p.tp >= 2 && !p.sequence_parallel)
    fail("tp_comm_overlap",
         "needs sequence_parallel: true (Megatron overlaps the sequence-"
         "parallel all-gathers and reduce-scatters)");
  if (p.zero < 0 || p.zero > 3) bad("zero", "expected 0, 1, 2 or 3, got " + num(p.zero));
  if (gpus > 0 && p.gpus() != gpus)
    fail("tp x pp x dp x cp", num(p.tp) + " x " + num(p.pp) + " x " + num(p.dp) + " x " +
                                  num(p.cp) + " = " + num(p.gpus()) + " GPUs, the platform has " +
                                  num(gpus));
}

namespace {

// `layers` over `n` pieces, the remainder on the middle ones, then the last, then the first:
// the ends hold the embedding and head.
std::vector<int> even_split(int layers, int n) {
  std::vector<int> out(n, layers / n);
  int extra = layers % n;
  std::vector<int> order;
  for (int s = 1; s + 1 < n; ++s) order.push_back(s);
  if (n > 1) order.push_back(n - 1);
  order.push_back(0);
  for (size_t i = 0; extra > 0; ++i, --extra) ++out[order[i % order.size()]];
  return out;
}

// Which piece of the model a stage's chunk holds.
int piece_at(const ParallelPlan& p, int stage, int chunk) {
  switch (p.schedule) {
    case PipelineSchedule::kZbV:
      return chunk == 0 ? stage : 2 * p.pp - 1 - stage;
    case PipelineSchedule::kDualPipe:
      return chunk == 0 ? stage : p.pp - 1 - stage;
    default:
      return chunk * p.pp + stage;
  }
}

}  // namespace

std::vector<std::vector<int>> chunk_layers(const ParallelPlan& plan, const LlmConfig& model) {
  const int n = plan.model_pieces();
  std::vector<int> pieces;
  if (plan.account_for_embedding_and_loss) {
    pieces.assign(n, static_cast<int>((model.layers + 2) / n));
    --pieces.front();
    --pieces.back();
  } else {
    pieces = even_split(static_cast<int>(model.layers), n);
  }
  const int v = plan.chunks_per_stage();
  std::vector<std::vector<int>> out(plan.pp, std::vector<int>(v));
  for (int s = 0; s < plan.pp; ++s)
    for (int c = 0; c < v; ++c) out[s][c] = pieces[piece_at(plan, s, c)];
  return out;
}

std::vector<int> stage_layers(const ParallelPlan& plan, const LlmConfig& model) {
  std::vector<int> out;
  for (const auto& chunks : chunk_layers(plan, model)) {
    int sum = 0;
    for (int c : chunks) sum += c;
    out.push_back(sum);
  }
  return out;
}

}  // namespace orrery
