// A scenario's language-model workload: a built-in model or a config.json, trained under the
// strategy's parallel plan on every GPU of the platform, ops priced on the scenario's device
// (strategies/llm_strategy.h), with the plan's per-GPU memory checked against the device.
//
//   workload: {type: llm, model: llama2_70b | file: config.json, seq_len: 4096,
//              global_batch: 512, micro_batch: 1, train_tokens: 2T}
//   strategy: {tp: 8, pp: 4, cp: 1, sequence_parallel: true, schedule: 1f1b,
//              zero: 1, recompute: selective, precision: bf16, flash_attention: true,
//              capacity_factor: 1.0 | moe_imbalance: 1.0, moe_dispatcher: alltoall,
//              etp: 1, training: pretrain | sft | lora, offload_activations: 0,
//              recompute_modules: [core_attn], bucket: 0 (one per layer) | 100MiB,
//              reserved: 1GiB, collectives: {...}, replicas: all | one,
//              tp_collectives: flow | analytical}       (dp = GPUs / (tp x pp x cp))
#pragma once

#include <string>
#include <vector>

#include "common/yaml_reader.h"
#include "engine/execution_graph.h"
#include "platforms/device_spec.h"
#include "strategies/cluster_layout.h"
#include "strategies/parallel_plan.h"
#include "workloads/llm_config.h"

namespace orrery {

// What a run reports beside the iteration time for a language model.
struct LlmRunInfo {
  double tokens = 0;       // per iteration
  double model_flops = 0;  // per iteration (Megatron-LM's count, no recomputation)
  int gpus = 0;
  // The device's dense peak in the plan's precision: its GEMMs' under a low-precision recipe
  // (FP8 for fp8, fp8-cs and mxfp8, FP4 for nvfp4), so MFU stays below 100%.
  double peak_flops_per_gpu = 0;
  std::string peak_precision = "bf16";  // dtype_name of that peak
  double peak_memory = 0;               // bytes, the fullest GPU
  double memory_capacity = 0;           // bytes
  std::vector<double> stage_memory;     // bytes per GPU of each pipeline stage, the first first
  bool fits = true;
  std::string memory;       // the verdict: "fits: ..." or "out of memory: ... would fit with ..."
  double train_tokens = 0;  // workload.train_tokens: a training run's tokens (0: not asked)
  double parameters = 0;    // the model's, all of them
  // A checkpoint of the whole model: every parameter's weights and optimizer states in the
  // plan's precision (mixed precision with Adam: 2 + 12 bytes per parameter), gradients and
  // activations not saved.
  double checkpoint_bytes = 0;
  ParallelPlan plan;  // as the GPU runs it (a recipe it lacks falls back to bf16)
};

struct LlmWorkload {
  ExecutionGraph graph;
  std::string summary;  // one line: model, plan, device
  LlmRunInfo info;
  std::string framework;  // the software-stack profile's name
};

// A token count under `key`: a number, or one with a K, M, B or T suffix ("300B", "2T"); 0 when
// the key is absent. InputError naming the key otherwise.
double read_tokens(const YamlMap& w, const char* key);

// The model of a workload mapping: `model` (a built-in name) or `file` (a config.json, relative
// to `base_dir`). Throws InputError naming the key.
LlmConfig read_llm_model(const YamlMap& workload, const std::string& base_dir);

// Reads every workload and strategy key as build_llm_workload does and throws InfeasibleError
// with the memory verdict when the plan does not fit `gpus` GPUs like `device`: the check a
// sweep makes before it builds the platform.
void check_llm_fits(const YamlMap& root, const YamlMap& workload, const DeviceSpec& device,
                    int gpus, const std::string& base_dir);

// `root` is the scenario, `workload` its workload mapping; ops priced on `device` by the
// scenario's cost model. Throws InputError naming the key for a bad model, plan or batch. A
// plan that does not fit is built all the same; its verdict is in LlmRunInfo.
LlmWorkload build_llm_workload(const YamlMap& root, const YamlMap& workload,
                               const ClusterLayout& layout, const DeviceSpec& device,
                               const std::string& base_dir);

}  // namespace orrery
