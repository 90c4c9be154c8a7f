#include "models/mixed_precision.h"

#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/suggest.h"
#include "models/op_class.h"
#include "workloads/op_counts.h"

namespace orrery {
namespace {

bool is_float(DType t) {
  return t == DType::kFP32 || t == DType::kFP16 || t == DType::kBF16 || t == DType::kTF32 ||
         t == DType::kFP8 || t == DType::kFP4;
}

Shape out_shape(const ModelOp& op) {
  if (!op.output.empty()) return op.output;
  return op.inputs.empty() ? Shape{} : op.inputs[0];
}

// An optimizer update reads the weight gradient its producer wrote beside the data gradient
// (batch norm's backward writes dx and dgamma, dbeta): that tensor is shaped like the parameter.
bool reads_weight_gradient(const ModelOp& consumer) {
  return op_class(consumer.type) == OpClass::kOptimizer && !consumer.inputs.empty();
}

// The tensor that flows from `producer` to `consumer`, which a cast on that edge converts.
Shape edge_shape(const ModelOp& producer, const ModelOp& consumer) {
  return reads_weight_gradient(consumer) ? consumer.inputs[0] : out_shape(producer);
}

// Kahn's order over deps; InputError on a cycle or a bad index.
std::vector<int> topo_order(const ModelGraph& g, const std::vector<std::vector<int>>& users) {
  const int n = static_cast<int>(g.ops.size());
  std::vector<int> indeg(n, 0), order;
  for (int i = 0; i < n; ++i) indeg[i] = static_cast<int>(g.ops[i].deps.size());
  for (int i = 0; i < n; ++i)
    if (indeg[i] == 0) order.push_back(i);
  for (size_t k = 0; k < order.size(); ++k)
    for (int u : users[order[k]])
      if (--indeg[u] == 0) order.push_back(u);
  if (static_cast<int>(order.size()) != n)
    throw InputError("model \"" + g.name + "\": dependency cycle; mixed precision needs a DAG");
  return order;
}

// Op with dtype `t` and its counts recomputed, for pricing one way or the other.
ModelOp with_dtype(const ModelOp& op, DType t) {
  ModelOp o = op;
  if (o.dtype == t) return o;
  double old_size = dtype_bytes(o.dtype);
  o.dtype = t;
  if (is_known_op_type(o.type)) {
    OpCounts c = count_op(o);
    o.flops = c.flops;
    o.bytes = c.bytes;
  } else {
    o.bytes *= dtype_bytes(t) / old_size;
  }
  return o;
}

class Assigner {
 public:
  Assigner(const ModelGraph& g, const MixedPrecisionOptions& opt)
      : g_(g), opt_(opt), n_(static_cast<int>(g.ops.size())), users_(n_) {
    for (int i = 0; i < n_; ++i)
      for (int d : g.ops[i].deps) {
        if (d < 0 || d >= n_)
          throw InputError("model \"" + g.name + "\": op \"" + g.ops[i].name +
                           "\" depends on op index " + std::to_string(d) + ", out of range");
        users_[d].push_back(i);
      }
    order_ = topo_order(g, users_);
  }

  // AMP's list rules: which ops may run in low precision.
  std::vector<bool> amp() const {
    const AmpLists& l = opt_.lists;
    std::vector<bool> tainted(n_, false), low(n_, false);
    for (int i : order_) {
      const std::string& t = g_.ops[i].type;
      if (l.deny.count(t)) tainted[i] = true;
      if (l.infer.count(t) || l.clear.count(t))
        for (int d : g_.ops[i].deps) tainted[i] = tainted[i] || tainted[d];
      if (!eligible(i)) continue;
      if (l.allow.count(t)) low[i] = true;
      if (l.infer.count(t) && !tainted[i]) low[i] = true;
    }
    // Clear ops follow their neighbours: the largest set in which each clear op has ancestors,
    // and all its ancestors and descendants are low.
    std::vector<int> clear;
    for (int i = 0; i < n_; ++i)
      if (eligible(i) && l.clear.count(g_.ops[i].type)) {
        clear.push_back(i);
        low[i] = true;
      }
    for (bool changed = true; changed;) {
      changed = false;
      for (int i : clear) {
        if (!low[i]) continue;
        bool ok = !g_.ops[i].deps.empty();
        for (int d : g_.ops[i].deps) ok = ok && low[d];
        for (int u : users_[i]) ok = ok && low[u];
        if (!ok) {
          low[i] = false;
          changed = true;
        }
      }
    }
    return low;
  }

  // Transformer Engine's FP8 GEMMs: of the ops amp runs in low precision, the matmuls of linear
  // layers (a layer whose forward matmul owns weights: its fprop, dgrad and wgrad GEMMs).
  std::vector<bool> fp8_gemms(const std::vector<bool>& low) const {
    std::set<std::string> linear_layers;
    for (const ModelOp& op : g_.ops)
      if (op.type == "matmul" && op.params > 0 && !op.layer.empty()) linear_layers.insert(op.layer);
    std::vector<bool> fp8(n_, false);
    for (int i = 0; i < n_; ++i) {
      const ModelOp& op = g_.ops[i];
      fp8[i] = low[i] && op.type == "matmul" &&
               (op.params > 0 || (!op.layer.empty() && linear_layers.count(op.layer) > 0));
    }
    return fp8;
  }

  // Campo's cost-aware refinement of a numerically safe assignment.
  std::vector<bool> cost_aware(std::vector<bool> low, const CastCost& cast) const {
    const std::vector<bool> safe = low;
    std::vector<double> gain(n_, 0.0);
    for (int i = 0; i < n_; ++i)
      if (safe[i]) {
        const ModelOp& op = g_.ops[i];
        gain[i] = opt_.cost->estimate(with_dtype(op, DType::kFP32), *opt_.device).seconds -
                  opt_.cost->estimate(with_dtype(op, opt_.low), *opt_.device).seconds;
      }
    for (int pass = 0; pass < 16; ++pass) {
      bool changed = false;
      for (int i : order_) {
        if (!safe[i]) continue;
        // Casts each choice needs on the op's edges, given its neighbours' current choices.
        double if_low = 0, if_full = 0;
        auto edge = [&](int other, double elems) {
          if (!is_float(g_.ops[other].dtype)) return;
          (low[other] ? if_full : if_low) += cast(elems);
        };
        for (int d : g_.ops[i].deps)
          edge(d, static_cast<double>(numel(edge_shape(g_.ops[d], g_.ops[i]))));
        for (int u : users_[i])
          edge(u, static_cast<double>(numel(edge_shape(g_.ops[i], g_.ops[u]))));
        const ModelOp& op = g_.ops[i];
        if (op.deps.empty() && !op.inputs.empty())
          if_low += cast(static_cast<double>(numel(op.inputs[0])));
        if (op.params > 0) if_low += cast(op.params);
        bool want = gain[i] > if_low - if_full;
        if (want != low[i]) {
          low[i] = want;
          changed = true;
        }
      }
      if (!changed) break;
    }
    return low;
  }

 private:
  bool eligible(int i) const { return g_.ops[i].dtype == DType::kFP32; }

  const ModelGraph& g_;
  const MixedPrecisionOptions& opt_;
  int n_;
  std::vector<std::vector<int>> users_;
  std::vector<int> order_;
};

// Rewrites `g` with op i in low precision where low[i], inserting casts.
class Rewriter {
 public:
  // `gemm`: the type of the GEMMs marked in run()'s `fp8`; block scales of `scale_bytes` per
  // `scale_block` elements come with each cast into it (0: one scale per tensor, whose amax
  // history an fp8_scale op updates after each such GEMM).
  Rewriter(const ModelGraph& g, DType low_type, DType gemm = DType::kFP8, int scale_block = 0,
           double scale_bytes = 0)
      : g_(g), low_(low_type), gemm_(gemm), scale_block_(scale_block), scale_bytes_(scale_bytes) {}

  // `fp8`: ops (of the low ones) that run in the GEMM type, writing their output in low
  // precision.
  ModelGraph run(const std::vector<bool>& low, const std::vector<bool>& fp8,
                 MixedPrecisionReport* report) {
    const int n = static_cast<int>(g_.ops.size());
    ModelGraph out = g_;
    out.ops.clear();
    std::vector<int> pos(n, -1);  // original op -> index in out
    std::map<std::tuple<int, DType, bool>, int> shared;
    auto type_of = [&](int i) { return fp8[i] ? gemm_ : low[i] ? low_ : g_.ops[i].dtype; };
    // Deps on original ops are written as -(j + 1) first and resolved once all are placed.
    for (int i = 0; i < n; ++i) {
      ModelOp op = low[i] ? with_dtype(g_.ops[i], type_of(i)) : g_.ops[i];
      if (low[i]) ++report->low_ops;
      std::vector<int> deps;
      if (low[i] && op.deps.empty() && !op.inputs.empty())
        deps.push_back(
            add_cast(out, op.name + ":input", op.inputs[0], DType::kFP32, op, {}, report));
      if (low[i] && op.params > 0) {
        std::vector<int> wdeps;
        for (int d : op.deps) wdeps.push_back(-(d + 1));
        deps.push_back(add_cast(out, op.name + ":weights", Shape{static_cast<int64_t>(op.params)},
                                DType::kFP32, op, wdeps, report));
      }
      for (int d : op.deps) {
        // An FP8 GEMM accumulates in FP32 and writes its output in low precision.
        DType from = low[d] ? low_ : g_.ops[d].dtype;
        if (!is_float(from) || !is_float(op.dtype) || from == op.dtype) {
          deps.push_back(-(d + 1));
          continue;
        }
        // Casts of one producer's output are shared by its consumers of one dtype; a weight
        // gradient is another tensor and gets its own.
        auto key = std::make_tuple(d, op.dtype, reads_weight_gradient(op));
        auto it = shared.find(key);
        if (it == shared.end())
          it = shared
                   .emplace(key, add_cast(out, g_.ops[d].name + "->" + dtype_name(op.dtype),
                                          edge_shape(g_.ops[d], op), from, op, {-(d + 1)}, report))
                   .first;
        deps.push_back(it->second);
      }
      op.deps = std::move(deps);
      pos[i] = static_cast<int>(out.ops.size());
      out.ops.push_back(std::move(op));
      if (fp8[i]) {
        ++report->fp8_ops;
        if (scale_block_ == 0) add_scale_update(out, pos[i]);
      }
    }
    for (auto& op : out.ops)
      for (int& d : op.deps)
        if (d < 0) d = pos[-d - 1];
    return out;
  }

 private:
  int add_cast(ModelGraph& out, const std::string& what, const Shape& shape, DType from,
               const ModelOp& consumer, std::vector<int> deps, MixedPrecisionReport* report) {
    ModelOp c;
    c.name = "cast:" + what;
    c.type = "cast";
    c.phase = consumer.phase;
    c.layer = consumer.layer;
    c.dtype = consumer.dtype;
    c.inputs = {shape};
    c.output = shape;
    c.attrs["src_bytes"] = static_cast<int64_t>(dtype_bytes(from));
    OpCounts counts = count_op(c);
    c.flops = counts.flops;
    c.bytes = counts.bytes;
    if (c.dtype == gemm_ && scale_block_ > 0)
      c.bytes += static_cast<double>(numel(shape)) * scale_bytes_ / scale_block_;
    c.deps = std::move(deps);
    ++report->casts;
    report->cast_elements += static_cast<double>(numel(shape));
    out.ops.push_back(std::move(c));
    return static_cast<int>(out.ops.size()) - 1;
  }

  // Delayed scaling: after an FP8 GEMM, the amax histories of its input, weight and gradient
  // tensors (1024 entries each, Transformer Engine's default) roll and their scales are
  // recomputed, a reduction over 3 x 1024 FP32 values.
  void add_scale_update(ModelGraph& out, int gemm) {
    const ModelOp& g = out.ops[gemm];
    ModelOp s;
    s.name = "fp8_scale:" + g.name;
    s.type = "reduce";
    s.phase = g.phase;
    s.layer = g.layer;
    s.dtype = DType::kFP32;
    s.inputs = {Shape{3, 1024}};
    s.output = Shape{3};
    OpCounts counts = count_op(s);
    s.flops = counts.flops;
    s.bytes = counts.bytes;
    s.deps = {gemm};
    out.ops.push_back(std::move(s));
  }

  const ModelGraph& g_;
  DType low_;
  DType gemm_;
  int scale_block_;
  double scale_bytes_;
};

AmpLists make_defaults() {
  AmpLists l;
  l.allow = {"matmul", "bmm", "conv2d", "conv2d_bwd_data", "conv2d_bwd_filter"};
  l.deny = {"softmax", "softmax_bwd", "cross_entropy", "cross_entropy_bwd",
            "reduce",  "layernorm",   "layernorm_bwd", "pow"};
  l.infer = {"add",       "sub",           "mul",     "div",        "bias_add", "elementwise",
             "sigmoid",   "sigmoid_bwd",   "tanh",    "tanh_bwd",   "gelu",     "gelu_bwd",
             "batchnorm", "batchnorm_bwd", "avgpool", "avgpool_bwd"};
  l.clear = {"relu",        "relu_bwd", "maxpool", "maxpool_bwd", "dropout",
             "dropout_bwd", "concat",   "split",   "transpose",   "memcpy"};
  return l;
}

}  // namespace

AmpLists AmpLists::defaults() {
  static const AmpLists l = make_defaults();
  return l;
}

const char* precision_policy_name(PrecisionPolicy p) {
  switch (p) {
    case PrecisionPolicy::kFP32:
      return "fp32";
    case PrecisionPolicy::kAMP:
      return "amp";
    case PrecisionPolicy::kCostAware:
      return "cost-aware";
    case PrecisionPolicy::kFP8:
      return "fp8";
    case PrecisionPolicy::kMXFP8:
      return "mxfp8";
    case PrecisionPolicy::kNVFP4:
      return "nvfp4";
  }
  return "?";
}

bool low_precision_gemms(PrecisionPolicy p) {
  return p == PrecisionPolicy::kFP8 || p == PrecisionPolicy::kMXFP8 || p == PrecisionPolicy::kNVFP4;
}

bool parse_precision_policy(const std::string& s, PrecisionPolicy* out) {
  for (auto p : {PrecisionPolicy::kFP32, PrecisionPolicy::kAMP, PrecisionPolicy::kCostAware,
                 PrecisionPolicy::kFP8, PrecisionPolicy::kMXFP8, PrecisionPolicy::kNVFP4})
    if (s == precision_policy_name(p)) {
      *out = p;
      return true;
    }
  return false;
}

CastCost default_cast_cost(const DeviceSpec& dev, const CostModelOptions& options) {
  double eff = options.efficiency_of(OpClass::kMemory);
  return {(4.0 + 2.0) / (dev.mem_bw * eff), dev.host.per_op()};
}

MixedPrecisionOptions parse_precision_options(const YAML::Node& node, const std::string& origin,
                                              const std::string& key_path) {
  MixedPrecisionOptions o;
  auto policy = [&](const std::string& s, const std::string& where) {
    if (!parse_precision_policy(s, &o.policy))
      throw InputError(where + ": " + key_path +
                       ": expected fp32, amp, cost-aware, fp8, mxfp8 or nvfp4, got \"" + s + "\"");
  };
  if (node && node.IsScalar()) {
    policy(node.Scalar(), origin + ":" + std::to_string(node.Mark().line + 1));
    // Transformer Engine keeps what is not FP8 in bf16.
    if (low_precision_gemms(o.policy)) o.low = DType::kBF16;
    return o;
  }
  YamlMap m(node, origin, key_path);
  policy(m.required_str("policy"), m.where("policy"));
  std::string low = m.str("low", low_precision_gemms(o.policy) ? "bf16" : "fp16");
  if (!parse_dtype(low, &o.low) || (o.low != DType::kFP16 && o.low != DType::kBF16))
    m.fail("low", "expected fp16 or bf16, got \"" + low + "\"");
  for (auto [key, list] : {std::pair<const char*, std::set<std::string>*>{"allow", &o.lists.allow},
                           {"deny", &o.lists.deny},
                           {"infer", &o.lists.infer},
                           {"clear", &o.lists.clear}}) {
    if (!m.has(key)) continue;
    list->clear();
    for (const auto& t : m.str_list(key)) {
      if (!is_known_op_type(t))
        m.fail(key, "unknown op type \"" + t + "\"" + did_you_mean(t, known_op_types()) +
                        " (known: " + join_names(known_op_types()) + ")");
      list->insert(t);
    }
  }
  o.cast_per_element_s = m.time("cast_per_element", o.cast_per_element_s, limits::kOpDuration);
  o.cast_fixed_s = m.time("cast_fixed", o.cast_fixed_s, limits::kOpDuration);
  m.reject_unknown_keys();
  return o;
}

ModelGraph apply_mixed_precision(const ModelGraph& g, const MixedPrecisionOptions& options,
                                 MixedPrecisionReport* report) {
  MixedPrecisionReport local;
  if (!report) report = &local;
  *report = {};
  if (options.policy == PrecisionPolicy::kFP32) return g;
  if (options.low != DType::kFP16 && options.low != DType::kBF16)
    throw InputError("precision: low precision must be fp16 or bf16");
  Assigner assign(g, options);
  std::vector<bool> low = assign.amp();
  if (options.policy == PrecisionPolicy::kCostAware) {
    if (!options.device || !options.cost)
      throw InputError("precision: cost-aware needs a device and a cost model");
    CastCost cast = default_cast_cost(*options.device, options.cost->options());
    if (options.cast_per_element_s >= 0) cast.per_element_s = options.cast_per_element_s;
    if (options.cast_fixed_s >= 0) cast.fixed_s = options.cast_fixed_s;
    low = assign.cost_aware(std::move(low), cast);
  }
  std::vector<bool> fp8(low.size(), false);
  if (!low_precision_gemms(options.policy)) return Rewriter(g, options.low).run(low, fp8, report);
  const std::string name = precision_policy_name(options.policy);
  if (!options.device) throw InputError("precision: " + name + " needs the device");
  const DeviceSpec& dev = *options.device;
  if (options.policy == PrecisionPolicy::kFP8) {
    if (dev.has_tensor_core_path(DType::kFP8))
      fp8 = assign.fp8_gemms(low);
    else
      report->fp8_fallback = dev.name + " has no FP8 Tensor Cores (fp8_tc): its GEMMs run in " +
                             dtype_name(options.low) + " as with amp";
    return Rewriter(g, options.low).run(low, fp8, report);
  }
  if (!dev.blackwell_tensor_cores()) {
    report->fp8_fallback = dev.name + " has no block-scaled (" + name +
                           ") Tensor Cores (Blackwell and later): its GEMMs run in " +
                           dtype_name(options.low) + " as with amp";
    return Rewriter(g, options.low).run(low, fp8, report);
  }
  fp8 = assign.fp8_gemms(low);
  const bool nv = options.policy == PrecisionPolicy::kNVFP4;
  return Rewriter(g, options.low, nv ? DType::kFP4 : DType::kFP8, nv ? 16 : 32, 1.0)
      .run(low, fp8, report);
}

}  // namespace orrery
