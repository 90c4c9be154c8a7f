// Pipeline schedules: where each piece of the model runs (which stage, which of its chunks) and
// the order in which every stage runs its passes. GPipe, 1F1B and Megatron's interleaved 1F1B
// by their published rules; the zero-bubble schedules of Qi et al., "Zero Bubble Pipeline
// Parallelism" (ICLR 2024), which split each backward pass into B (the input gradient, on the
// critical path) and W (the weight gradient, free to fill bubbles): ZB-H1 by its rule, ZB-V
// (two chunks per stage in a V: down the stages, then back up) and DeepSeek's DualPipe
// (DeepSeek-AI, "DeepSeek-V3 Technical Report", 2024, section 3.2.1: micro-batches fed from
// both ends over two copies of the model) by list scheduling under their memory limits. The
// same orders drive the step's op graph (strategies/llm_strategy.h) and the activation memory
// held at each stage's peak (strategies/llm_memory.h).
#pragma once

#include <functional>
#include <vector>

#include "strategies/parallel_plan.h"

namespace orrery {

enum class PassKind {
  kForward,
  kBackward,  // the input gradient, and the weight gradient unless the schedule splits it off
  kWeight,    // the weight gradient alone (zero-bubble schedules)
};

struct PipelinePass {
  PassKind kind = PassKind::kForward;
  int micro = 0;
  int chunk = 0;  // which of the stage's model chunks
  // Runs beside the pass before it rather than after it (DualPipe's paired forward and
  // backward of two micro-batches: one's communication hides behind the other's compute).
  bool beside_previous = false;
};

struct ChunkPlace {
  int stage = 0;
  int chunk = 0;
  bool operator==(const ChunkPlace& o) const { return stage == o.stage && chunk == o.chunk; }
};

// True for the schedules whose backward passes leave the weight gradients to W passes.
bool splits_weight_gradients(PipelineSchedule s);

// The places micro-batch `micro` (of `micro_batches`) runs through forward, in model order:
// stage 0 to pp - 1 (chunk by chunk when interleaved); under ZB-V down chunk 0 and back up
// chunk 1; under DualPipe the first half of the micro-batches down chunk 0, the second half up
// chunk 1 (the mirrored copy: stage s holds pieces s and pp - 1 - s).
std::vector<ChunkPlace> pipeline_path(const ParallelPlan& plan, int micro, int micro_batches);

// One layer's pass durations, relative, for the list-scheduled schedule (ZB-V): the step
// graph's builder gives its priced blocks; the memory model, without prices, equal units.
struct PassTimes {
  double forward = 1, backward = 1, weight = 1;  // backward: the input gradient alone (B)
};

// Every stage's passes in the order it runs them, the first stage first. `layers[s][c]` are
// the layers of each chunk (chunk_layers), which weigh passes of the list-scheduled
// schedules: a pass over n layers takes n x its layer's time.
std::vector<std::vector<PipelinePass>> pipeline_schedule(
    const ParallelPlan& plan, int micro_batches, const std::vector<std::vector<int>>& layers,
    const PassTimes& times = {});

// The most activation bytes a stage holds over its order: a forward pass of a chunk of n
// layers adds chunk_bytes(n) (and `head_bytes` when the chunk holds the model's last piece,
// the output head's logits); its backward pass, or its W pass when the schedule splits weight
// gradients off, releases them. `passes`: the forward passes held at that peak.
struct HeldPeak {
  double bytes = 0;
  int passes = 0;
};
HeldPeak held_activation_peak(const ParallelPlan& plan, int stage,
                              const std::vector<PipelinePass>& order,
                              const std::vector<std::vector<int>>& layers, int micro_batches,
                              const std::function<double(int layers)>& chunk_bytes,
                              double head_bytes);

}  // namespace orrery
