#include "workloads/zoo/layer_builder.h"

#include <algorithm>
#include <stdexcept>

#include "common/errors.h"
#include "common/input_limits.h"
#include "workloads/op_counts.h"

namespace orrery::zoo {

bool parse_optimizer(const std::string& s, Optimizer* out) {
  if (s == "sgd") {
    *out = Optimizer::kSgd;
  } else if (s == "momentum") {
    *out = Optimizer::kMomentum;
  } else if (s == "adam") {
    *out = Optimizer::kAdam;
  } else {
    return false;
  }
  return true;
}

namespace {

const char* update_type(Optimizer o) {
  switch (o) {
    case Optimizer::kSgd:
      return "sgd_update";
    case Optimizer::kMomentum:
      return "momentum_update";
    case Optimizer::kAdam:
      return "adam_update";
  }
  return "sgd_update";
}

// Generator bugs (bad shapes) are programming errors, not user input: the keys are validated
// before any layer is built.
[[noreturn]] void bug(const std::string& layer, const std::string& what) {
  throw std::logic_error("zoo layer \"" + layer + "\": " + what);
}

std::vector<int> merged(std::vector<int> a, const std::vector<int>& b) {
  for (int x : b)
    if (std::find(a.begin(), a.end(), x) == a.end()) a.push_back(x);
  return a;
}

Shape with_last(Shape s, int64_t last) {
  s.back() = last;
  return s;
}

}  // namespace

LayerBuilder::LayerBuilder(std::string model_name, int64_t batch, DType dtype, Optimizer optimizer)
    : dtype_(dtype), optimizer_(optimizer) {
  g_.name = std::move(model_name);
  g_.batch = batch;
}

Tensor LayerBuilder::input(const Shape& s) {
  input_bytes_ += static_cast<double>(numel(s)) * dtype_bytes(dtype_);
  return make_tensor(s, {}, false);
}

const Shape& LayerBuilder::shape(Tensor t) const { return tensors_.at(t.id).shape; }

int LayerBuilder::param(const std::string& layer, const std::string& name, const Shape& s,
                        bool sparse) {
  ParamInfo p;
  p.layer = layer;
  p.name = name;
  p.shape = s;
  p.sparse = sparse;
  params_.push_back(std::move(p));
  return static_cast<int>(params_.size()) - 1;
}

void LayerBuilder::hyper(const std::string& key, const std::string& value) {
  g_.hyper[key] = value;
}

int LayerBuilder::emit(const std::string& layer, const std::string& suffix, const std::string& type,
                       Phase phase, std::vector<Shape> inputs, Shape output, std::vector<int> deps,
                       std::map<std::string, int64_t> attrs) {
  // Layer and table counts multiply the ops; stop a runaway model early, not at out-of-memory.
  if (g_.ops.size() >= limits::kMaxReplicaOps && run_limits().size_limits)
    throw InputError("model " + g_.name + ": one replica would have more than " +
                     std::to_string(static_cast<long long>(limits::kMaxReplicaOps)) +
                     " ops (check its layers, sequence length and tables); lift the limit with "
                     "--no-size-limit");
  ModelOp op;
  std::string base = layer.empty() ? suffix : layer + "." + suffix;
  int& seen = name_count_[base];
  op.name = seen == 0 ? base : base + "#" + std::to_string(seen + 1);
  ++seen;
  op.type = type;
  op.phase = phase;
  op.layer = layer;
  op.dtype = phase == Phase::kOptimizer ? DType::kFP32 : dtype_;
  op.inputs = std::move(inputs);
  op.output = std::move(output);
  op.attrs = std::move(attrs);
  op.deps = std::move(deps);
  g_.ops.push_back(std::move(op));
  return static_cast<int>(g_.ops.size()) - 1;
}

std::vector<int> LayerBuilder::deps_of(const std::vector<Tensor>& xs) const {
  std::vector<int> d;
  for (Tensor x : xs) d = merged(std::move(d), tensors_.at(x.id).producers);
  return d;
}

Tensor LayerBuilder::make_tensor(Shape s, std::vector<int> producers, bool requires_grad) {
  TensorInfo t;
  t.shape = std::move(s);
  t.producers = std::move(producers);
  t.requires_grad = requires_grad;
  tensors_.push_back(std::move(t));
  return Tensor{static_cast<int>(tensors_.size()) - 1};
}

void LayerBuilder::own(int p, int op) {
  ParamInfo& info = params_.at(p);
  if (info.owned) return;
  info.owned = true;
  g_.ops[op].params += static_cast<double>(numel(info.shape));
}

std::vector<int> LayerBuilder::grad(Tensor t) {
  TensorInfo& info = tensors_.at(t.id);
  if (info.grad_done) return info.grad;
  info.grad_done = true;
  std::vector<std::vector<int>> parts = info.grad_parts;
  if (parts.size() == 1) {
    info.grad = parts[0];
  } else if (parts.size() > 1) {
    // Autograd sums the gradients of a tensor read by several ops before passing it on.
    std::vector<int> deps;
    for (const auto& p : parts) deps = merged(std::move(deps), p);
    std::vector<Shape> ins(parts.size(), info.shape);
    Shape out = info.shape;
    const std::string layer = g_.ops[deps.front()].layer;
    int op = emit(layer, "grad_sum", "add", Phase::kBackward, std::move(ins), out, deps);
    tensors_[t.id].grad = {op};
  }
  return tensors_[t.id].grad;
}

void LayerBuilder::add_grad(Tensor t, std::vector<int> ops) {
  TensorInfo& info = tensors_.at(t.id);
  if (!info.requires_grad || ops.empty()) return;
  if (info.grad_done) throw std::logic_error("zoo: gradient contribution after use");
  info.grad_parts.push_back(std::move(ops));
}

void LayerBuilder::param_grad(int p, int op) { params_.at(p).grad_ops.push_back(op); }

Tensor LayerBuilder::conv2d(const std::string& layer, Tensor x, int64_t k, int64_t kh, int64_t kw,
                            int64_t stride, int64_t ph, int64_t pw, bool bias) {
  const Shape xs = shape(x);
  if (xs.size() != 4) bug(layer, "conv2d input must be [N,C,H,W]");
  const int64_t p = (xs[2] + 2 * ph - kh) / stride + 1;
  const int64_t q = (xs[3] + 2 * pw - kw) / stride + 1;
  if (p <= 0 || q <= 0) bug(layer, "conv2d input smaller than its kernel");
  const Shape ws{k, xs[1], kh, kw};
  const Shape ys{xs[0], k, p, q};
  const int w = param(layer, "weight", ws);
  const int b = bias ? param(layer, "bias", {k}) : -1;
  std::vector<Shape> ins{xs, ws};
  if (bias) ins.push_back({k});
  const std::map<std::string, int64_t> attrs{{"kernel_h", kh},     {"kernel_w", kw},
                                             {"stride_h", stride}, {"stride_w", stride},
                                             {"pad_h", ph},        {"pad_w", pw}};
  int op = emit(layer, "conv", "conv2d", Phase::kForward, ins, ys, deps_of({x}), attrs);
  own(w, op);
  if (b >= 0) own(b, op);
  Tensor y = make_tensor(ys, {op}, true);
  tape_.push_back([=] {
    std::vector<int> dy = grad(y);
    if (dy.empty()) return;
    if (needs_grad(x)) {
      add_grad(x, {emit(layer, "bwd_data", "conv2d_bwd_data", Phase::kBackward, {ys, ws}, xs, dy,
                        attrs)});
    }
    param_grad(w, emit(layer, "bwd_filter", "conv2d_bwd_filter", Phase::kBackward, {xs, ys}, ws, dy,
                       attrs));
    if (b >= 0) param_grad(b, emit(layer, "bwd_bias", "reduce", Phase::kBackward, {ys}, {k}, dy));
  });
  return y;
}

Tensor LayerBuilder::norm(const std::string& layer, const std::string& type, Tensor x,
                          int64_t channels) {
  const Shape xs = shape(x);
  const int gamma = param(layer, "weight", {channels});
  const int beta = param(layer, "bias", {channels});
  int op =
      emit(layer, type == "batchnorm" ? "bn" : "ln", type, Phase::kForward, {xs}, xs, deps_of({x}));
  own(gamma, op);
  own(beta, op);
  Tensor y = make_tensor(xs, {op}, true);
  tape_.push_back([=] {
    std::vector<int> dy = grad(y);
    if (dy.empty()) return;
    // One kernel yields dx, dgamma and dbeta (cuDNN / ATen native_*_backward).
    int b = emit(layer, "bwd", type + "_bwd", Phase::kBackward, {xs, xs}, xs, dy);
    param_grad(gamma, b);
    param_grad(beta, b);
    add_grad(x, {b});
  });
  return y;
}

Tensor LayerBuilder::batchnorm(const std::string& layer, Tensor x) {
  if (shape(x).size() != 4) bug(layer, "batchnorm input must be [N,C,H,W]");
  return norm(layer, "batchnorm", x, shape(x)[1]);
}

Tensor LayerBuilder::layernorm(const std::string& layer, Tensor x) {
  return norm(layer, "layernorm", x, shape(x).back());
}

Tensor LayerBuilder::unary(const std::string& layer, const std::string& suffix,
                           const std::string& fwd_type, const std::string& bwd_type, Tensor x) {
  const Shape xs = shape(x);
  int op = emit(layer, suffix, fwd_type, Phase::kForward, {xs}, xs, deps_of({x}));
  Tensor y = make_tensor(xs, {op}, needs_grad(x));
  tape_.push_back([=] {
    if (!needs_grad(x)) return;
    std::vector<int> dy = grad(y);
    if (dy.empty()) return;
    add_grad(x, {emit(layer, suffix + "_bwd", bwd_type, Phase::kBackward, {xs, xs}, xs, dy)});
  });
  return y;
}

Tensor LayerBuilder::relu(const std::string& layer, Tensor x) {
  return unary(layer, "relu", "relu", "relu_bwd", x);
}
Tensor LayerBuilder::gelu(const std::string& layer, Tensor x) {
  return unary(layer, "gelu", "gelu", "gelu_bwd", x);
}
Tensor LayerBuilder::tanh(const std::string& layer, Tensor x) {
  return unary(layer, "tanh", "tanh", "tanh_bwd", x);
}
Tensor LayerBuilder::sigmoid(const std::string& layer, Tensor x) {
  return unary(layer, "sigmoid", "sigmoid", "sigmoid_bwd", x);
}
Tensor LayerBuilder::softmax(const std::string& layer, Tensor x) {
  return unary(layer, "softmax", "softmax", "softmax_bwd", x);
}
Tensor LayerBuilder::dropout(const std::string& layer, Tensor x) {
  return unary(layer, "dropout", "dropout", "dropout_bwd", x);
}
Tensor LayerBuilder::scale(const std::string& layer, Tensor x) {
  return unary(layer, "scale", "mul", "mul", x);
}
Tensor LayerBuilder::mask(const std::string& layer, Tensor x) {
  return unary(layer, "mask", "elementwise", "elementwise", x);
}

Tensor LayerBuilder::pool(const std::string& layer, const std::string& type, Tensor x, int64_t kh,
                          int64_t kw, int64_t stride, int64_t pad) {
  const Shape xs = shape(x);
  if (xs.size() != 4) bug(layer, type + " input must be [N,C,H,W]");
  const Shape ys{xs[0], xs[1], (xs[2] + 2 * pad - kh) / stride + 1,
                 (xs[3] + 2 * pad - kw) / stride + 1};
  if (ys[2] <= 0 || ys[3] <= 0) bug(layer, type + " input smaller than its window");
  const std::map<std::string, int64_t> attrs{{"kernel_h", kh},     {"kernel_w", kw},
                                             {"stride_h", stride}, {"stride_w", stride},
                                             {"pad_h", pad},       {"pad_w", pad}};
  int op = emit(layer, type, type, Phase::kForward, {xs}, ys, deps_of({x}), attrs);
  Tensor y = make_tensor(ys, {op}, needs_grad(x));
  tape_.push_back([=] {
    if (!needs_grad(x)) return;
    std::vector<int> dy = grad(y);
    if (dy.empty()) return;
    add_grad(
        x, {emit(layer, type + "_bwd", type + "_bwd", Phase::kBackward, {xs, ys}, xs, dy, attrs)});
  });
  return y;
}

Tensor LayerBuilder::maxpool(const std::string& layer, Tensor x, int64_t k, int64_t s, int64_t p) {
  return pool(layer, "maxpool", x, k, k, s, p);
}
Tensor LayerBuilder::avgpool(const std::string& layer, Tensor x, int64_t k, int64_t s, int64_t p) {
  return pool(layer, "avgpool", x, k, k, s, p);
}
Tensor LayerBuilder::global_avgpool(const std::string& layer, Tensor x) {
  const Shape& xs = shape(x);
  if (xs.size() != 4) bug(layer, "avgpool input must be [N,C,H,W]");
  return pool(layer, "avgpool", x, xs[2], xs[3], 1, 0);
}

Tensor LayerBuilder::linear(const std::string& layer, Tensor x, int64_t out, bool bias,
                            int shared) {
  const Shape xs = shape(x);
  const int64_t in = xs.back();
  const int64_t m = numel(xs) / in;
  const int w = shared >= 0 ? shared : param(layer, "weight", {out, in});
  if (params_.at(w).shape != Shape{out, in}) bug(layer, "shared weight has the wrong shape");
  const int b = bias ? param(layer, "bias", {out}) : -1;
  std::vector<Shape> ins{{m, in}, {in, out}};
  if (b >= 0) ins.push_back({out});
  const Shape ys = with_last(xs, out);
  int op = emit(layer, "fc", "matmul", Phase::kForward, ins, {m, out}, deps_of({x}));
  own(w, op);
  if (b >= 0) own(b, op);
  Tensor y = make_tensor(ys, {op}, true);
  tape_.push_back([=] {
    std::vector<int> dy = grad(y);
    if (dy.empty()) return;
    if (needs_grad(x)) {
      add_grad(x, {emit(layer, "bwd_data", "matmul", Phase::kBackward, {{m, out}, {out, in}},
                        {m, in}, dy)});
    }
    param_grad(w, emit(layer, "bwd_weight", "matmul", Phase::kBackward, {{out, m}, {m, in}},
                       {out, in}, dy));
    if (b >= 0) {
      param_grad(b, emit(layer, "bwd_bias", "reduce", Phase::kBackward, {{m, out}}, {out}, dy));
    }
  });
  return y;
}

Tensor LayerBuilder::bmm(const std::string& layer, Tensor a, Tensor b) {
  const Shape as = shape(a);
  const Shape bs = shape(b);
  if (as.size() != 3 || bs.size() != 3 || as[0] != bs[0] || as[2] != bs[1])
    bug(layer, "bmm needs [B,M,K] x [B,K,N]");
  const int64_t bt = as[0], m = as[1], k = as[2], n = bs[2];
  const Shape ys{bt, m, n};
  int op = emit(layer, "bmm", "bmm", Phase::kForward, {as, bs}, ys, deps_of({a, b}));
  Tensor y = make_tensor(ys, {op}, needs_grad(a) || needs_grad(b));
  tape_.push_back([=] {
    if (!needs_grad(a) && !needs_grad(b)) return;
    std::vector<int> dy = grad(y);
    if (dy.empty()) return;
    if (needs_grad(a))
      add_grad(a, {emit(layer, "bmm_bwd_a", "bmm", Phase::kBackward, {ys, {bt, n, k}}, as, dy)});
    if (needs_grad(b))
      add_grad(b, {emit(layer, "bmm_bwd_b", "bmm", Phase::kBackward, {{bt, k, m}, ys}, bs, dy)});
  });
  return y;
}

Tensor LayerBuilder::attention(const std::string& layer, Tensor q, Tensor k, Tensor v,
                               bool causal) {
  const Shape qs = shape(q), ks = shape(k);
  if (qs.size() != 4 || ks.size() != 4 || shape(v) != ks || qs[0] != ks[0] || qs[3] != ks[3] ||
      ks[1] < 1 || qs[1] % ks[1] != 0)
    bug(layer, "attention needs q [B,H,S,D] and k, v [B,KV,S,D] with KV dividing H");
  const std::map<std::string, int64_t> attrs{{"causal", causal ? 1 : 0}};
  int op = emit(layer, "attention", "attention", Phase::kForward, {qs, ks, ks}, qs,
                deps_of({q, k, v}), attrs);
  Tensor y = make_tensor(qs, {op}, needs_grad(q) || needs_grad(k) || needs_grad(v));
  tape_.push_back([=] {
    if (!needs_grad(q) && !needs_grad(k) && !needs_grad(v)) return;
    std::vector<int> dy = grad(y);
    if (dy.empty()) return;
    // One kernel recomputes the scores and writes dq, dk and dv together.
    const int bwd = emit(layer, "attention_bwd", "attention_bwd", Phase::kBackward, {qs, ks, ks},
                         qs, dy, attrs);
    for (Tensor t : {q, k, v})
      if (needs_grad(t)) add_grad(t, {bwd});
  });
  return y;
}

Tensor LayerBuilder::add(const std::string& layer, Tensor a, Tensor b) {
  const Shape as = shape(a);
  if (shape(b) != as) bug(layer, "add needs equal shapes");
  int op = emit(layer, "add", "add", Phase::kForward, {as, as}, as, deps_of({a, b}));
  Tensor y = make_tensor(as, {op}, needs_grad(a) || needs_grad(b));
  tape_.push_back([=] {
    // The gradient passes through unchanged to both operands: no kernel.
    std::vector<int> dy = grad(y);
    add_grad(a, dy);
    add_grad(b, dy);
  });
  return y;
}

Tensor LayerBuilder::add_constant(const std::string& layer, Tensor x) {
  const Shape xs = shape(x);
  int op = emit(layer, "add", "add", Phase::kForward, {xs, xs}, xs, deps_of({x}));
  Tensor y = make_tensor(xs, {op}, needs_grad(x));
  tape_.push_back([=] { add_grad(x, grad(y)); });
  return y;
}

Tensor LayerBuilder::mul(const std::string& layer, Tensor a, Tensor b) {
  const Shape as = shape(a);
  if (shape(b) != as) bug(layer, "mul needs equal shapes");
  int op = emit(layer, "mul", "mul", Phase::kForward, {as, as}, as, deps_of({a, b}));
  Tensor y = make_tensor(as, {op}, needs_grad(a) || needs_grad(b));
  tape_.push_back([=] {
    std::vector<int> dy = grad(y);
    if (dy.empty()) return;
    if (needs_grad(a))
      add_grad(a, {emit(layer, "mul_bwd", "mul", Phase::kBackward, {as, as}, as, dy)});
    if (needs_grad(b))
      add_grad(b, {emit(layer, "mul_bwd", "mul", Phase::kBackward, {as, as}, as, dy)});
  });
  return y;
}

Tensor LayerBuilder::pairwise_add(const std::string& layer, Tensor a, Tensor b) {
  const Shape as = shape(a);
  const Shape bs = shape(b);
  if (as.size() != 3 || bs.size() != 3 || as[0] != bs[0] || as[2] != bs[2])
    bug(layer, "pairwise_add needs [B,T,H] and [B,S,H]");
  const Shape ys{as[0], as[1], bs[1], as[2]};
  int op = emit(layer, "pairwise_add", "add", Phase::kForward, {as, bs}, ys, deps_of({a, b}));
  Tensor y = make_tensor(ys, {op}, needs_grad(a) || needs_grad(b));
  tape_.push_back([=] {
    std::vector<int> dy = grad(y);
    if (dy.empty()) return;
    // Each operand's gradient sums dy over the other operand's axis.
    if (needs_grad(a))
      add_grad(a, {emit(layer, "pairwise_add_bwd", "reduce", Phase::kBackward, {ys}, as, dy)});
    if (needs_grad(b))
      add_grad(b, {emit(layer, "pairwise_add_bwd", "reduce", Phase::kBackward, {ys}, bs, dy)});
  });
  return y;
}

Tensor LayerBuilder::concat(const std::string& layer, const std::vector<Tensor>& xs, int axis) {
  Shape ys = shape(xs.at(0));
  const size_t ax = static_cast<size_t>(axis);
  if (ax >= ys.size()) bug(layer, "concat axis out of range");
  std::vector<Shape> ins;
  bool any_grad = false;
  ys[ax] = 0;
  for (Tensor x : xs) {
    ins.push_back(shape(x));
    ys[ax] += shape(x)[ax];
    any_grad = any_grad || needs_grad(x);
  }
  int op = emit(layer, "concat", "concat", Phase::kForward, ins, ys, deps_of(xs));
  Tensor y = make_tensor(ys, {op}, any_grad);
  tape_.push_back([=] {
    if (!any_grad) return;
    std::vector<int> dy = grad(y);
    if (dy.empty()) return;
    int s = emit(layer, "concat_bwd", "split", Phase::kBackward, {ys}, ys, dy);
    for (Tensor x : xs) add_grad(x, {s});
  });
  return y;
}

std::vector<Tensor> LayerBuilder::split(const std::string& layer, Tensor x, int axis,
                                        const std::vector<int64_t>& sizes) {
  const Shape xs = shape(x);
  const size_t ax = static_cast<size_t>(axis);
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (ax >= xs.size() || total != xs[ax]) bug(layer, "split sizes do not add up");
  std::vector<Tensor> parts;
  for (int64_t s : sizes) {
    Shape ps = xs;
    ps[ax] = s;
    parts.push_back(make_tensor(ps, tensors_[x.id].producers, needs_grad(x)));
  }
  tape_.push_back([=] {
    if (!needs_grad(x)) return;
    std::vector<int> deps;
    std::vector<Shape> ins;
    for (Tensor p : parts) {
      std::vector<int> dp = grad(p);
      if (dp.empty()) continue;
      deps = merged(std::move(deps), dp);
      ins.push_back(shape(p));
    }
    if (deps.empty()) return;
    add_grad(x, {emit(layer, "split_bwd", "concat", Phase::kBackward, ins, xs, deps)});
  });
  return parts;
}

Tensor LayerBuilder::view(Tensor x, const Shape& s) {
  if (numel(s) != numel(shape(x))) bug("view", "element count changes");
  Tensor y = make_tensor(s, tensors_[x.id].producers, needs_grad(x));
  tape_.push_back([=] { add_grad(x, grad(y)); });
  return y;
}

Tensor LayerBuilder::gather(const std::string& layer, Tensor x, const Shape& ys) {
  const Shape xs = shape(x);
  int op = emit(layer, "gather", "memcpy", Phase::kForward, {ys}, ys, deps_of({x}));
  Tensor y = make_tensor(ys, {op}, needs_grad(x));
  tape_.push_back([=] {
    if (!needs_grad(x)) return;
    std::vector<int> dy = grad(y);
    if (dy.empty()) return;
    add_grad(x, {emit(layer, "gather_bwd", "memcpy", Phase::kBackward, {ys}, xs, dy)});
  });
  return y;
}

Tensor LayerBuilder::mean(const std::string& layer, Tensor x, int axis) {
  const Shape xs = shape(x);
  const size_t ax = static_cast<size_t>(axis);
  if (ax >= xs.size()) bug(layer, "mean axis out of range");
  Shape ys = xs;
  ys.erase(ys.begin() + axis);
  int op = emit(layer, "mean", "reduce", Phase::kForward, {xs}, ys, deps_of({x}));
  Tensor y = make_tensor(ys, {op}, needs_grad(x));
  tape_.push_back([=] {
    if (!needs_grad(x)) return;
    std::vector<int> dy = grad(y);
    if (dy.empty()) return;
    // Broadcasts dy back over the axis, divided by its length.
    add_grad(x, {emit(layer, "mean_bwd", "elementwise", Phase::kBackward, {ys}, xs, dy)});
  });
  return y;
}

Tensor LayerBuilder::embedding(const std::string& layer, int table, const Shape& indices,
                               bool pooled, bool ids_from_input) {
  if (ids_from_input) input_bytes_ += static_cast<double>(numel(indices)) * 8;
  const Shape ts = params_.at(table).shape;
  if (ts.size() != 2 || indices.size() != 2) bug(layer, "embedding needs [rows,dim], [B,L]");
  const Shape ys = pooled ? Shape{indices[0], ts[1]} : Shape{indices[0], indices[1], ts[1]};
  int op = emit(layer, "lookup", "embedding_fwd", Phase::kForward, {ts, indices}, ys, {},
                {{"pooled", pooled ? 1 : 0}});
  own(table, op);
  params_[table].lookups += numel(indices);
  Tensor y = make_tensor(ys, {op}, true);
  tape_.push_back([=] {
    std::vector<int> dy = grad(y);
    if (dy.empty()) return;
    param_grad(table,
               emit(layer, "lookup_bwd", "embedding_bwd", Phase::kBackward, {ys, indices}, ts, dy));
  });
  return y;
}

Tensor LayerBuilder::lstm(const std::string& layer, Tensor x, int64_t h, bool reverse) {
  const Shape xs = shape(x);
  if (xs.size() != 3) bug(layer, "lstm input must be [S,B,in]");
  const int64_t steps = xs[0], b = xs[1], in = xs[2], sb = steps * b;
  const int w_ih = param(layer, "weight_ih", {4 * h, in});
  const int w_hh = param(layer, "weight_hh", {4 * h, h});
  const int b_ih = param(layer, "bias_ih", {4 * h});
  const int b_hh = param(layer, "bias_hh", {4 * h});
  // Step t of the recurrence processes time index t (forward) or steps-1-t (reverse); only the
  // op names differ, the dependency chain is the same.
  auto step_name = [=](int64_t t, const char* what) {
    return "t" + std::to_string(reverse ? steps - 1 - t : t) + "." + what;
  };
  int xg = emit(layer, "x_gemm", "matmul", Phase::kForward, {{sb, in}, {in, 4 * h}, {4 * h}},
                {sb, 4 * h}, deps_of({x}));
  own(w_ih, xg);
  own(b_ih, xg);
  own(b_hh, xg);
  std::vector<int> cells;
  int prev = xg;
  for (int64_t t = 0; t < steps; ++t) {
    int hg = emit(layer, step_name(t, "h_gemm"), "matmul", Phase::kForward, {{b, h}, {h, 4 * h}},
                  {b, 4 * h}, {prev});
    if (t == 0) own(w_hh, hg);
    int gates = emit(layer, step_name(t, "gates"), "add", Phase::kForward, {{b, 4 * h}, {b, 4 * h}},
                     {b, 4 * h}, {xg, hg});
    int sg = emit(layer, step_name(t, "sigmoid"), "sigmoid", Phase::kForward, {{b, 3 * h}},
                  {b, 3 * h}, {gates});
    int tg = emit(layer, step_name(t, "tanh"), "tanh", Phase::kForward, {{b, h}}, {b, h}, {gates});
    // c' = f*c + i*g and h' = o*tanh(c'), fused as cuDNN does.
    std::vector<int> cell_deps{sg, tg};
    if (t > 0) cell_deps.push_back(prev);
    prev = emit(layer, step_name(t, "cell"), "elementwise", Phase::kForward,
                {{b, 3 * h}, {b, h}, {b, h}}, {b, 2 * h}, cell_deps);
    cells.push_back(prev);
  }
  Tensor y = make_tensor({steps, b, h}, cells, true);
  tape_.push_back([=] {
    std::vector<int> dy = grad(y);
    if (dy.empty()) return;
    std::vector<int> after = dy;  // what step t's backward waits for
    std::vector<int> gate_grads;
    for (int64_t t = steps - 1; t >= 0; --t) {
      int cb = emit(layer, step_name(t, "cell_bwd"), "elementwise", Phase::kBackward,
                    {{b, h}, {b, h}, {b, 4 * h}, {b, h}}, {b, 4 * h}, after);
      int sb_op = emit(layer, step_name(t, "sigmoid_bwd"), "sigmoid_bwd", Phase::kBackward,
                       {{b, 3 * h}, {b, 3 * h}}, {b, 3 * h}, {cb});
      int tb_op = emit(layer, step_name(t, "tanh_bwd"), "tanh_bwd", Phase::kBackward,
                       {{b, h}, {b, h}}, {b, h}, {cb});
      gate_grads = {sb_op, tb_op};
      after = gate_grads;
      if (t > 0) {
        int hb = emit(layer, step_name(t, "h_gemm_bwd"), "matmul", Phase::kBackward,
                      {{b, 4 * h}, {4 * h, h}}, {b, h}, gate_grads);
        after = {hb, cb};
      }
    }
    // All steps' gate gradients are in one [S*B, 4h] buffer once step 0 is done.
    if (needs_grad(x)) {
      add_grad(x, {emit(layer, "bwd_data", "matmul", Phase::kBackward, {{sb, 4 * h}, {4 * h, in}},
                        {sb, in}, gate_grads)});
    }
    param_grad(w_ih, emit(layer, "bwd_weight_ih", "matmul", Phase::kBackward,
                          {{4 * h, sb}, {sb, in}}, {4 * h, in}, gate_grads));
    param_grad(w_hh, emit(layer, "bwd_weight_hh", "matmul", Phase::kBackward,
                          {{4 * h, sb}, {sb, h}}, {4 * h, h}, gate_grads));
    int rb =
        emit(layer, "bwd_bias", "reduce", Phase::kBackward, {{sb, 4 * h}}, {4 * h}, gate_grads);
    param_grad(b_ih, rb);
    param_grad(b_hh, rb);
  });
  return y;
}

void LayerBuilder::cross_entropy(const std::string& layer, Tensor logits) {
  const Shape ls = shape(logits);
  int op = emit(layer, "loss", "cross_entropy", Phase::kForward, {ls}, {1}, deps_of({logits}));
  tape_.push_back([=] {
    add_grad(logits,
             {emit(layer, "loss_bwd", "cross_entropy_bwd", Phase::kBackward, {ls}, ls, {op})});
  });
}

ModelGraph LayerBuilder::finish() {
  if (finished_) throw std::logic_error("LayerBuilder::finish called twice");
  finished_ = true;
  for (auto it = tape_.rbegin(); it != tape_.rend(); ++it) (*it)();
  tape_.clear();

  // Updates in the order gradients become available, so a FIFO stream can apply each one as
  // soon as its gradient is ready.
  std::vector<int> order;
  for (size_t p = 0; p < params_.size(); ++p)
    if (!params_[p].grad_ops.empty()) order.push_back(static_cast<int>(p));
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return params_[a].grad_ops.back() < params_[b].grad_ops.back();
  });
  for (int p : order) {
    const ParamInfo& info = params_[p];
    ModelOp& last = g_.ops[info.grad_ops.back()];
    last.grads += static_cast<double>(numel(info.shape));
    last.grad_dtype = dtype_;
    last.sparse_grad = last.sparse_grad || info.sparse;
    Shape update = info.shape;
    std::map<std::string, int64_t> attrs;
    if (info.sparse) {
      // A sparse update touches at most the rows looked up this step.
      update[0] = std::min(info.shape[0], info.lookups);
      attrs["rows"] = info.shape[0];
    }
    emit(info.layer, info.name + ".update", update_type(optimizer_), Phase::kOptimizer, {update},
         update, info.grad_ops, attrs);
  }
  g_.hyper["input_bytes"] = std::to_string(static_cast<int64_t>(input_bytes_));
  fill_op_counts(g_);
  return std::move(g_);
}

}  // namespace orrery::zoo
