// A three-op training graph small enough to price by hand: a 64x128 by 128x10 matmul, a relu
// on its 64x10 output, and the weight gradient (a 128x64 by 64x10 matmul, 1,280 gradient
// elements). Counts filled (fill_op_counts).
#pragma once

#include "workloads/model_graph.h"
#include "workloads/op_counts.h"

namespace orrery::testing {

inline ModelGraph tiny_model_graph() {
  ModelGraph g;
  g.name = "tiny";
  g.batch = 64;
  ModelOp mm;
  mm.name = "fc";
  mm.type = "matmul";
  mm.inputs = {{64, 128}, {128, 10}};
  mm.output = {64, 10};
  ModelOp relu;
  relu.name = "relu";
  relu.type = "relu";
  relu.inputs = {{64, 10}};
  ModelOp grad;
  grad.name = "dw";
  grad.type = "matmul";
  grad.phase = Phase::kBackward;
  grad.inputs = {{128, 64}, {64, 10}};
  grad.output = {128, 10};
  grad.grads = 1280;
  g.ops = {mm, relu, grad};
  fill_op_counts(g);
  return g;
}

}  // namespace orrery::testing
