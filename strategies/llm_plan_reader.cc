#include "strategies/llm_plan_reader.h"

#include <string>
#include <utility>

#include "common/errors.h"
#include "common/input_limits.h"

namespace orrery {

ParallelPlan read_llm_plan(const YamlMap& w, const YamlMap& s, MemoryOptions* memory) {
  ParallelPlan p;
  const std::string type = s.str("type", "llm");
  if (type != "llm")
    s.fail("type",
           "a language-model workload runs the llm strategy (its plan keys), got \"" + type + "\"");
  p.tp = s.integer("tp", 1);
  p.pp = s.integer("pp", 1);
  p.cp = s.integer("cp", 1);
  p.ep = s.integer("ep", 1);
  p.etp = s.integer("etp", 0, 0, 1 << 20);
  for (const auto& [key, degree] :
       {std::pair{"tp", p.tp}, std::pair{"pp", p.pp}, std::pair{"cp", p.cp}, std::pair{"ep", p.ep}})
    if (degree < 1) s.fail(key, "must be at least 1");
  p.sequence_parallel = s.boolean("sequence_parallel", false);
  p.tp_comm_overlap = s.boolean("tp_comm_overlap", false);
  p.pp_sync = s.boolean("pp_sync", false);
  const std::string schedule = s.str("schedule", "1f1b");
  if (!parse_pipeline_schedule(schedule, &p.schedule))
    s.fail("schedule", "expected " + pipeline_schedule_choices() + ", got \"" + schedule + "\"");
  p.virtual_stages = s.integer("virtual_stages", 1);
  p.account_for_embedding_and_loss = s.boolean("account_for_embedding_and_loss", false);
  p.zero = s.integer("zero", 0);
  const std::string training = s.str("training", "pretrain");
  if (training != "pretrain" && training != "sft" && training != "lora")
    s.fail("training", "expected pretrain, sft or lora, got \"" + training + "\"");
  p.lora_rank = s.integer("lora_rank", training == "lora" ? 32 : 0, 0, 65536);
  if (training == "lora" && p.lora_rank < 1)
    s.fail("lora_rank", "LoRA needs an adapter rank of at least 1");
  if (training != "lora" && s.has("lora_rank"))
    s.fail("lora_rank", "is for training: lora (got training: " + training + ")");
  const std::string recompute =
      s.str("recompute", s.has("recompute_modules") ? "selective" : "none");
  if (!parse_recompute(recompute, &p.recompute))
    s.fail("recompute", "expected " + recompute_choices() + ", got \"" + recompute + "\"");
  if (s.has("recompute_modules")) {
    if (p.recompute != Recompute::kSelective)
      s.fail("recompute_modules",
             "lists what selective recomputation recomputes; recompute is " + recompute);
    p.recompute_modules = 0;
    for (const std::string& name : s.str_list("recompute_modules")) {
      unsigned bit = 0;
      if (!parse_recompute_module(name, &bit))
        s.fail("recompute_modules",
               "expected " + recompute_module_choices() + ", got \"" + name + "\"");
      p.recompute_modules |= bit;
    }
  }
  p.recompute_layers = s.integer("recompute_layers", 0);
  p.offload_layers = s.integer("offload_activations", 0);
  p.offload_optimizer = s.boolean("offload_optimizer", false);
  p.offload_host_bandwidth = s.bandwidth("offload_host_bandwidth", p.offload_host_bandwidth);
  const std::string precision = s.str("precision", "bf16");
  if (!parse_precision(precision, &p.precision))
    s.fail("precision", "expected " + precision_choices() + ", got \"" + precision + "\"");
  p.flash_attention = s.boolean("flash_attention", true);
  const std::string impl = s.str("attention_impl", "auto");
  if (!parse_attention_impl(impl, &p.attention_impl))
    s.fail("attention_impl", "expected " + attention_impl_names() + ", got \"" + impl + "\"");
  if (p.attention_impl != AttentionImpl::kAuto && !p.flash_attention)
    s.fail("attention_impl", "names a fused attention kernel, but flash_attention is false");
  p.capacity_factor = s.number("capacity_factor", 1.0, limits::kCapacityFactor);
  p.dropless = !s.has("capacity_factor");
  p.moe_imbalance = s.number("moe_imbalance", 1.0);
  if (s.has("expert_load")) {
    if (!p.dropless)
      s.fail("expert_load", "describes dropless routing; capacity_factor is set as well");
    const YAML::Node load = s.raw("expert_load");
    if (!load.IsSequence() || load.size() == 0)
      s.fail("expert_load", "expected a list of tokens per expert, one entry per expert");
    for (const auto& v : load) {
      try {
        p.expert_load.push_back(v.as<double>());
      } catch (const YAML::Exception&) {
        s.fail("expert_load", "expected numbers (tokens per expert), got \"" + v.Scalar() + "\"");
      }
    }
  }
  const std::string dispatcher = s.str("moe_dispatcher", "alltoall");
  if (!parse_moe_dispatcher(dispatcher, &p.moe_dispatcher))
    s.fail("moe_dispatcher", "expected alltoall or deepep, got \"" + dispatcher + "\"");
  p.moe_node_limit = s.integer("moe_node_limit", 0);
  p.grad_bucket_bytes = s.size("bucket", 0.0, limits::kBytes);
  if (p.grad_bucket_bytes > 0) memory->bucket_bytes = p.grad_bucket_bytes;
  memory->reserved_bytes = s.size("reserved", memory->reserved_bytes, limits::kBytes);
  memory->fragmentation = s.number("fragmentation", memory->fragmentation);
  if (!(memory->fragmentation >= 0 && memory->fragmentation <= 1))
    s.fail("fragmentation",
           "the share of activations and buffers lost to the allocator: from 0 "
           "to 1, got " +
               std::to_string(memory->fragmentation));
  p.micro_batch = w.integer("micro_batch", 1);
  // Left out, they take the model's sequence length and micro_batch x dp; given, they must be
  // real (0 used to read as "left out").
  if (p.micro_batch < 1) w.fail("micro_batch", "must be at least 1");
  p.global_batch = w.integer("global_batch", 0);
  if (w.has("global_batch") && p.global_batch < 1) w.fail("global_batch", "must be at least 1");
  p.seq_len = w.integer("seq_len", 0);
  if (w.has("seq_len") && p.seq_len < 1) w.fail("seq_len", "must be at least 1 token");
  return p;
}

void set_data_parallel(const YamlMap& s, int gpus, ParallelPlan* p) {
  const int model_parallel = p->tp * p->pp * p->cp;
  if (gpus % model_parallel != 0)
    throw InfeasibleError(s.where("tp") + ": " + s.key_path("tp") + ": tp x pp x cp = " +
                          std::to_string(model_parallel) + " must divide the " +
                          std::to_string(gpus) + " GPUs (data parallelism takes the rest)");
  p->dp = gpus / model_parallel;
}

PlanKeyWhere plan_key_where(const YamlMap& w, const YamlMap& s) {
  return [&w, &s](const std::string& key) {
    for (const char* batch_key : {"seq_len", "global_batch", "micro_batch"})
      if (key == batch_key) return w.where(key) + ": " + w.key_path(key);
    // A key left out, or a product of several ("tp x pp x dp x cp"): the strategy's line.
    return s.where(key) + ": " + s.key_path(key);
  };
}

}  // namespace orrery
