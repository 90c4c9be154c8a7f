// How a large model is spread over GPUs: the degrees of tensor (TP), pipeline (PP), data (DP),
// context (CP) and expert (EP) parallelism, the micro-batching, the pipeline schedule, the
// sharding of the data-parallel replicas (ZeRO / FSDP) and activation recomputation, as
// Megatron-LM and DeepSpeed users state them. A plain value: the LLM strategy builds the
// per-device graphs from it and the memory model (strategies/llm_memory.h) sizes each GPU's
// share.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "workloads/attention_impl.h"
#include "workloads/llm_config.h"

namespace orrery {

enum class PipelineSchedule {
  kGpipe,        // every micro-batch's forward, then every backward (Huang et al., GPipe)
  k1f1b,         // one forward, one backward in steady state (PipeDream-Flush, Megatron's default)
  kInterleaved,  // 1F1B over `virtual_stages` model chunks per GPU (Narayanan et al., SC'21)
  // Zero-bubble schedules (strategies/pipeline_schedule.h): backward split into input- and
  // weight-gradient passes. ZB-H1: 1F1B's memory; ZB-V: two chunks per GPU in a V; DualPipe:
  // two mirrored copies of the model, micro-batches fed from both ends.
  kZbH1,
  kZbV,
  kDualPipe,
};
// "gpipe", "1f1b", "interleaved", "zb-h1", "zb-v", "dualpipe"
const char* pipeline_schedule_name(PipelineSchedule s);
bool parse_pipeline_schedule(const std::string& s, PipelineSchedule* out);
// The names as an error message lists them: "gpipe, 1f1b or interleaved" (likewise below).
std::string pipeline_schedule_choices();

enum class Recompute {
  kNone,
  kSelective,  // the attention core (softmax, dropout, scores x values) recomputed in backward
  kFull,       // each layer's forward recomputed from its input in backward
};
const char* recompute_name(Recompute r);  // "none", "selective", "full"
bool parse_recompute(const std::string& s, Recompute* out);
std::string recompute_choices();

// What selective recomputation recomputes in backward (Megatron-Core's --recompute-modules),
// as bit flags: the attention core; the whole MLP from its input; its activation function
// alone; the norms (their outputs, the projections' inputs, not kept); MLA's up-projections
// (queries, keys and values rebuilt from the latents).
enum RecomputeModule : unsigned {
  kRecomputeCoreAttention = 1,
  kRecomputeMlp = 2,
  kRecomputeActivation = 4,
  kRecomputeNorm = 8,
  kRecomputeMlaUpProj = 16,
};
// "core_attn", "mlp", "moe_act", "layernorm", "mla_up_proj" (Megatron's names).
bool parse_recompute_module(const std::string& s, unsigned* bit);
std::string recompute_module_choices();

// bf16/fp16: mixed precision with fp32 master weights; fp8, fp8-cs, mxfp8, nvfp4: bf16 mixed
// precision with the linear layers' GEMMs in a low-precision recipe (strategies/llm_precision.h).
enum class Precision { kBf16, kFp16, kFp32, kFp8, kFp8Cs, kMxfp8, kNvfp4 };
// "bf16", "fp16", "fp32", "fp8", "fp8-cs", "mxfp8", "nvfp4"
const char* precision_name(Precision p);
// The element type of activations, weights and the ops outside the recipe's GEMMs.
DType precision_dtype(Precision p);
bool parse_precision(const std::string& s, Precision* out);
std::string precision_choices();

// How MoE tokens reach their experts: NCCL's all-to-all over the expert-parallel group (every
// routed copy of a token sent to its expert's GPU), or DeepEP's kernels (DeepSeek-AI, DeepEP;
// "DeepSeek-V3 Technical Report", section 3.2.2): a token crosses the network once per
// destination server, at most moe_node_limit of them, and is forwarded to its experts over
// NVLink there.
enum class MoeDispatcher { kAllToAll, kDeepEp };
const char* moe_dispatcher_name(MoeDispatcher d);  // "alltoall", "deepep"
bool parse_moe_dispatcher(const std::string& s, MoeDispatcher* out);

struct ParallelPlan {
  int tp = 1;  // tensor-parallel degree: one layer's GEMMs split over tp GPUs
  int pp = 1;  // pipeline stages
  int dp = 1;  // data-parallel replicas
  int cp = 1;  // context parallel: each sequence split over cp GPUs
  int ep = 1;  // expert parallel (MoE): experts spread over ep GPUs of the data-parallel group
  // Expert tensor parallelism (Megatron-Core's MoE parallel folding): 0 or tp, each expert split
  // over the layer's TP group as above; 1, experts whole, the expert-parallel groups folded over
  // the TP and data-parallel GPUs together (ep divides tp x dp x cp), each TP rank dispatching
  // its 1/tp of the tokens.
  int etp = 0;
  bool sequence_parallel = false;  // Megatron's: norms and dropouts split over the TP group
  // Megatron's --tp-comm-overlap (Transformer Engine's userbuffers): each sequence-parallel
  // all-gather and reduce-scatter runs in chunks beside the GEMM it feeds or drains.
  bool tp_comm_overlap = false;
  // Pipeline sends as Megatron-LM makes them (batched isend/irecv, then wait): a stage starts its
  // next pass once its sends are done. false: sends run beside the next pass.
  bool pp_sync = false;
  int micro_batch = 1;   // sequences per micro-batch per replica
  int global_batch = 0;  // sequences per iteration over all replicas (0: micro_batch x dp)
  int64_t seq_len = 0;   // tokens per sequence (0: the model's)
  PipelineSchedule schedule = PipelineSchedule::k1f1b;
  int virtual_stages = 1;  // interleaved: model chunks per pipeline GPU
  // Megatron-LM's --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-
  // split: the embedding and the loss each count as one layer when the layers are split over
  // the pipeline's chunks, so the first and the last chunk hold one transformer layer fewer.
  bool account_for_embedding_and_loss = false;
  int zero = 0;  // 0: all-reduce DP; 1, 2, 3: ZeRO stages (3 is FSDP's full shard)
  Recompute recompute = Recompute::kNone;
  unsigned recompute_modules = kRecomputeCoreAttention;  // under Recompute::kSelective
  int recompute_layers = 0;  // under Recompute::kFull: the first n layers of each chunk (0: all)
  // Activation offloading (Megatron's --cpu-offloading-num-layers): the first n layers of each
  // chunk send their saved activations to host memory after their forward and fetch them
  // before their backward, over the GPU's host link (PCIe, or Grace's NVLink-C2C).
  int offload_layers = 0;
  // ZeRO-Offload (Ren et al., "ZeRO-Offload: Democratizing Billion-Scale Model Training", USENIX
  // ATC 2021): FP32 master weights and Adam states in host memory, Adam on the CPU; gradients
  // go down to the host and updated 16-bit weights come back over the host link.
  bool offload_optimizer = false;
  // Host memory bandwidth one GPU's CPU Adam streams at (an assumption: a two-socket DDR5
  // server's ~400 GB/s shared by 8 GPUs' processes), 30 bytes per parameter (FP32 weight,
  // gradient and both moments read, weight and moments written, the 16-bit copy written).
  double offload_host_bandwidth = 50e9;
  Precision precision = Precision::kBf16;
  bool flash_attention = true;  // attention without materialized s x s scores
  // The fused attention kernel when flash_attention (workloads/attention_impl.h).
  AttentionImpl attention_impl = AttentionImpl::kAuto;
  // MoE: each expert's capacity over its even share of the routed tokens (GShard's capacity
  // factor): tokens beyond it are dropped, experts short of it padded, so expert GEMMs and the
  // dispatch and combine all-to-alls carry capacity_factor x the routed tokens.
  double capacity_factor = 1.0;
  // Token-dropless routing (Megatron-Core's default): experts take every token routed to them,
  // so the expert-parallel rank with the most routed tokens sets the pace; capacity_factor is
  // then unused. false: GShard's capacity as above.
  bool dropless = true;
  // Dropless load imbalance over the expert-parallel ranks: the busiest rank's routed tokens
  // over the mean (1: balanced, as benchmarks force it), or `expert_load`, a measured histogram
  // of tokens per expert (any scale; contiguous experts / ep per rank), which sets it.
  double moe_imbalance = 1.0;
  std::vector<double> expert_load;
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;
  int moe_node_limit = 0;  // DeepEP: servers a token may be routed to (0: no limit)
  // LoRA fine-tuning when > 0 (Hu et al., "LoRA: Low-Rank Adaptation of Large Language
  // Models", ICLR 2022): every linear layer of the blocks keeps its weights frozen (no weight
  // gradient, no gradients or optimizer states for them) and trains a rank lora_rank adapter
  // beside it (x A B: two small GEMMs each way). 0: all weights train (pre-training or full
  // fine-tuning on packed sequences, the same work).
  int lora_rank = 0;
  // Data parallelism: layers' gradients fused in backward order into buckets of at least this
  // many bytes, each reduced once its last layer is done (0: one bucket per layer).
  double grad_bucket_bytes = 0;

  int gpus() const { return tp * pp * dp * cp; }
  int expert_tp() const { return etp > 0 ? etp : tp; }
  bool folded_experts() const { return expert_tp() != tp; }
  // The busiest expert-parallel rank's routed tokens over the even share: the capacity factor,
  // or under dropless routing the imbalance (1 without expert parallelism).
  double routed_factor() const;
  // Model chunks each pipeline GPU runs: virtual_stages when interleaved, two for ZB-V and
  // DualPipe, else one.
  int chunks_per_stage() const {
    if (schedule == PipelineSchedule::kInterleaved) return virtual_stages;
    return schedule == PipelineSchedule::kZbV || schedule == PipelineSchedule::kDualPipe ? 2 : 1;
  }
  // Pieces the model is cut into along its layers: pp x chunks, except DualPipe's pp (each GPU
  // holds two of them, s and pp - 1 - s).
  int model_pieces() const {
    return schedule == PipelineSchedule::kDualPipe ? pp : pp * chunks_per_stage();
  }
  // Micro-batches each replica runs per iteration (gradient accumulation steps).
  int micro_batches() const;
  int64_t sequence(const LlmConfig& m) const { return seq_len > 0 ? seq_len : m.seq_len; }
  // The vocabulary as Megatron-LM lays it out: padded to a multiple of 128 x tp
  // (make_vocab_size_divisible_by x tensor_model_parallel_size), so each rank's slice of the
  // embedding and output layer is a multiple of 128 (GPT-3's 50,257 becomes 50,304 at tp 1).
  int64_t padded_vocab(const LlmConfig& m) const {
    const int64_t unit = 128 * static_cast<int64_t>(tp);
    return (m.vocab + unit - 1) / unit * unit;
  }
};

// Throws InputError naming `origin` and the key for values no plan has (a degree below 1, a
// ZeRO stage outside 0-3), InfeasibleError (common/errors.h) when the plan cannot run `model`
// on `gpus` GPUs: tp not dividing heads, kv heads or the FFN width; pp above the layer
// count; interleaving whose chunks do not divide the layers or whose micro-batches are not a
// multiple of pp; ep on a dense model or not dividing the experts or dp x cp; cp not dividing
// the sequence in 2 x cp chunks; a global batch that is not a multiple of micro_batch x dp;
// sequence parallelism without tp;
// tp x pp x dp x cp different from `gpus` (when gpus > 0).
// `where` names a key for messages ("s.yaml:7: strategy.tp"); the second form names every
// key as "origin: key".
using PlanKeyWhere = std::function<std::string(const std::string& key)>;
void check_parallel_plan(const ParallelPlan& plan, const LlmConfig& model, int gpus,
                         const PlanKeyWhere& where);
void check_parallel_plan(const ParallelPlan& plan, const LlmConfig& model, int gpus,
                         const std::string& origin);

// Layers on each pipeline stage, the first stage first: an even split, the remainder on the
// middle stages so the stages holding the embedding and the output head carry fewer (or,
// with account_for_embedding_and_loss, the sums of chunk_layers).
std::vector<int> stage_layers(const ParallelPlan& plan, const LlmConfig& model);
// Layers of each model chunk of each stage ([stage][chunk]; one chunk per stage unless
// interleaved, ZB-V or DualPipe): the model's pieces (model_pieces) in the places
// pipeline_path gives them. The pieces split the layers evenly (the remainder on the middle
// stages when there is one piece per stage), or with account_for_embedding_and_loss,
// (layers + 2) / pieces per piece less one on the first (the embedding) and the last (the
// loss), which may leave them none.
std::vector<std::vector<int>> chunk_layers(const ParallelPlan& plan, const LlmConfig& model);

}  // namespace orrery
