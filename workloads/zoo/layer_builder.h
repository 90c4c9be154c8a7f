// LayerBuilder: how the model zoo writes a training step. A generator calls forward layer
// helpers (conv2d, linear, lstm...) in execution order; each helper appends its forward ops and
// records how to differentiate itself. finish() then replays that record in reverse to append
// the backward ops (data gradients and weight gradients, with the dependencies autograd would
// have), then one optimizer update per parameter tensor, and fills FLOPs and bytes from
// workloads/op_counts.h.
//
// Dependency rules of the result (what strategies rely on):
//  - a forward op depends on the ops that produced its inputs;
//  - the first backward op (the loss gradient) depends on the loss; every other backward op
//    depends on the ops that produced the gradient it consumes, so backward runs in reverse
//    layer order and independent branches stay independent;
//  - a tensor read by several ops gets its gradient summed by one "add" op (as autograd does);
//  - the weight-gradient op of a parameter carries `grads` (its element count): that is where
//    the gradient becomes available for communication; for a parameter used twice (tied
//    weights) the last contribution in backward order carries it;
//  - the optimizer update of a parameter depends on every op contributing to its gradient.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "workloads/model_graph.h"

namespace orrery::zoo {

// A tensor of the forward pass, by handle.
struct Tensor {
  int id = -1;
};

enum class Optimizer { kSgd, kMomentum, kAdam };
// "sgd", "momentum", "adam"; false if unknown.
bool parse_optimizer(const std::string& s, Optimizer* out);

class LayerBuilder {
 public:
  LayerBuilder(std::string model_name, int64_t batch, DType dtype, Optimizer optimizer);
  // The backward recipes hold `this`: a builder never moves.
  LayerBuilder(const LayerBuilder&) = delete;
  LayerBuilder& operator=(const LayerBuilder&) = delete;

  // Model input (images, dense features, token ids as activations...): produced by no op; it
  // needs no gradient. Its bytes count towards hyper["input_bytes"].
  Tensor input(const Shape& shape);
  const Shape& shape(Tensor t) const;
  int64_t batch() const { return g_.batch; }

  // A parameter tensor owned by `layer` ("weight", "bias"...). `sparse`: only looked-up rows
  // get gradients (embedding tables trained with sparse updates).
  int param(const std::string& layer, const std::string& name, const Shape& shape,
            bool sparse = false);

  // --- Layers. `layer` names the module (torchvision / Hugging Face naming where it exists).
  Tensor conv2d(const std::string& layer, Tensor x, int64_t out_channels, int64_t kernel_h,
                int64_t kernel_w, int64_t stride, int64_t pad_h, int64_t pad_w, bool bias);
  Tensor batchnorm(const std::string& layer, Tensor x);
  Tensor layernorm(const std::string& layer, Tensor x);
  Tensor relu(const std::string& layer, Tensor x);
  Tensor gelu(const std::string& layer, Tensor x);
  Tensor tanh(const std::string& layer, Tensor x);
  Tensor sigmoid(const std::string& layer, Tensor x);
  Tensor softmax(const std::string& layer, Tensor x);  // over the last axis
  Tensor dropout(const std::string& layer, Tensor x);
  Tensor scale(const std::string& layer, Tensor x);  // multiply by a constant
  Tensor mask(const std::string& layer, Tensor x);   // masked fill (causal attention)
  Tensor maxpool(const std::string& layer, Tensor x, int64_t kernel, int64_t stride, int64_t pad);
  Tensor avgpool(const std::string& layer, Tensor x, int64_t kernel, int64_t stride, int64_t pad);
  Tensor global_avgpool(const std::string& layer, Tensor x);  // [N,C,H,W] -> [N,C,1,1]
  // y = x W^T + b over the last axis of x. With `shared_weight` >= 0 the weight is that
  // existing [out, in] parameter (tied weights).
  Tensor linear(const std::string& layer, Tensor x, int64_t out_features, bool bias,
                int shared_weight = -1);
  // Batched a [B,M,K] x b [B,K,N] of two activations.
  Tensor bmm(const std::string& layer, Tensor a, Tensor b);
  // Fused (flash) attention over q [B,H,S,D] and k, v [B,KV,S,D] -> [B,H,S,D]: one `attention`
  // op forward and one `attention_bwd` op giving dq, dk and dv (workloads/op_counts.h).
  Tensor attention(const std::string& layer, Tensor q, Tensor k, Tensor v, bool causal);
  Tensor add(const std::string& layer, Tensor a, Tensor b);  // same shapes
  Tensor mul(const std::string& layer, Tensor a, Tensor b);  // same shapes
  // x + a constant of x's shape that is no parameter and needs no gradient (sinusoidal position
  // encodings): one add op; the gradient passes through to x with no kernel.
  Tensor add_constant(const std::string& layer, Tensor x);
  // Every pair: a [B,T,H] + b [B,S,H] -> [B,T,S,H] (additive attention's broadcast sum).
  Tensor pairwise_add(const std::string& layer, Tensor a, Tensor b);
  Tensor concat(const std::string& layer, const std::vector<Tensor>& xs, int axis);
  std::vector<Tensor> split(const std::string& layer, Tensor x, int axis,
                            const std::vector<int64_t>& sizes);  // views; backward concatenates
  Tensor view(Tensor x, const Shape& shape);  // reshape or transpose: no op, no copy
  // Copies selected elements of x into a new tensor (index select, triangle extraction); the
  // backward scatters them back.
  Tensor gather(const std::string& layer, Tensor x, const Shape& shape);
  // Mean over `axis` (pooling a sequence): one reduce op.
  Tensor mean(const std::string& layer, Tensor x, int axis);
  // Looks up table[indices]: `indices` is the [B, L] id shape. pooled: sum over L -> [B, dim];
  // else [B, L, dim]. `table` is a param() of shape [rows, dim]. ids_from_input: the ids are
  // part of the input batch (int64, counted in input_bytes), not generated on the device.
  Tensor embedding(const std::string& layer, int table, const Shape& indices, bool pooled,
                   bool ids_from_input = true);
  // One LSTM layer over x [S, B, in] -> [S, B, hidden], cuDNN style: one input GEMM for all
  // steps, then per step a recurrent GEMM and the gate element-wise ops; backward mirrors it,
  // with the weight gradients as one GEMM each after the last step.
  Tensor lstm(const std::string& layer, Tensor x, int64_t hidden, bool reverse = false);
  // Cross-entropy of logits [M, C] (mean); starts backward. May be called more than once
  // (auxiliary heads); the losses are summed.
  void cross_entropy(const std::string& layer, Tensor logits);

  // Records a hyper-parameter for listings.
  void hyper(const std::string& key, const std::string& value);

  // Appends backward and optimizer ops, fills FLOPs and bytes. Call once.
  ModelGraph finish();

 private:
  struct TensorInfo {
    Shape shape;
    std::vector<int> producers;  // forward ops that must finish before it can be read
    bool requires_grad = false;
    std::vector<std::vector<int>> grad_parts;  // gradient contributions (op sets), backward
    bool grad_done = false;
    std::vector<int> grad;  // the summed gradient, once grad_done
  };
  struct ParamInfo {
    std::string layer, name;
    Shape shape;
    bool sparse = false;
    bool owned = false;   // a forward op already counts it in `params`
    int64_t lookups = 0;  // sparse tables: ids looked up per step (bounds rows updated)
    std::vector<int> grad_ops;
  };

  int emit(const std::string& layer, const std::string& suffix, const std::string& type,
           Phase phase, std::vector<Shape> inputs, Shape output, std::vector<int> deps,
           std::map<std::string, int64_t> attrs = {});
  std::vector<int> deps_of(const std::vector<Tensor>& xs) const;
  Tensor make_tensor(Shape shape, std::vector<int> producers, bool requires_grad);
  void own(int param, int op);
  // The complete gradient of t (op indices), summing contributions with one add op; empty when
  // t does not influence the loss.
  std::vector<int> grad(Tensor t);
  void add_grad(Tensor t, std::vector<int> ops);
  void param_grad(int param, int op);
  bool needs_grad(Tensor t) const { return tensors_[t.id].requires_grad; }
  Tensor unary(const std::string& layer, const std::string& suffix, const std::string& fwd_type,
               const std::string& bwd_type, Tensor x);
  Tensor norm(const std::string& layer, const std::string& type, Tensor x, int64_t channels);
  Tensor pool(const std::string& layer, const std::string& type, Tensor x, int64_t kh, int64_t kw,
              int64_t stride, int64_t pad);

  ModelGraph g_;
  DType dtype_;
  Optimizer optimizer_;
  double input_bytes_ = 0.0;
  std::vector<TensorInfo> tensors_;
  std::vector<ParamInfo> params_;
  std::vector<std::function<void()>> tape_;  // backward recipes, in forward order
  std::map<std::string, int> name_count_;
  bool finished_ = false;
};

}  // namespace orrery::zoo
