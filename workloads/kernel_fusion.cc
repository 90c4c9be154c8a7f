#include "workloads/kernel_fusion.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace orrery {
namespace {

bool is_one_of(const std::string& t, std::initializer_list<const char*> types) {
  for (const char* x : types)
    if (t == x) return true;
  return false;
}

bool is_row_type(const std::string& t) {
  return is_one_of(t, {"softmax", "softmax_bwd", "layernorm", "layernorm_bwd"});
}

// Ops a fusing compiler folds together: element-wise arithmetic and activations, norms,
// softmax, dropout and casts (their backward ops too). GEMMs, convolutions, attention,
// pooling, embeddings, reductions into other shapes and optimizer updates stay kernels.
bool is_pointwise(const std::string& t) {
  return is_one_of(t, {"add",         "sub",           "mul",       "div",          "bias_add",
                       "relu",        "relu_bwd",      "dropout",   "dropout_bwd",  "sigmoid",
                       "sigmoid_bwd", "tanh",          "tanh_bwd",  "gelu",         "gelu_bwd",
                       "pow",         "elementwise",   "cast",      "softmax",      "softmax_bwd",
                       "layernorm",   "layernorm_bwd", "batchnorm", "batchnorm_bwd"});
}

// The kinds of ops merged into one so far: a merged op keeps one type for pricing, so the
// rules look at every type in it.
struct Node {
  ModelOp op;
  std::set<std::string> kinds;
  bool gone = false;
};

bool has(const Node& n, std::initializer_list<const char*> types) {
  for (const char* t : types)
    if (n.kinds.count(t)) return true;
  return false;
}

// Whether `rules` run producer `a` and its one consumer `b` as one kernel.
bool fuses(const Node& a, const Node& b, const FusionRules& r) {
  if (a.op.phase != b.op.phase) return false;
  const std::string& bt = b.op.type;
  if (r.elementwise && is_pointwise(a.op.type) && is_pointwise(bt)) return true;
  // A cast joins the element-wise kernel on either side of it (a GEMM still reads what the cast
  // wrote: a weight's cast stays a kernel).
  if (r.casts &&
      ((a.op.type == "cast" && is_pointwise(bt)) || (bt == "cast" && is_pointwise(a.op.type))))
    return true;
  if (r.bn_activation) {
    if (has(a, {"batchnorm"}) && !has(a, {"relu"}) && (bt == "relu" || bt == "add")) return true;
    if (a.op.type == "relu_bwd" && bt == "batchnorm_bwd") return true;
  }
  if (r.dropout_add_norm) {
    if (a.op.type == "dropout" && bt == "add") return true;
    if (has(a, {"dropout"}) && has(a, {"add"}) && bt == "layernorm") return true;
  }
  if (r.softmax_mask) {
    if (is_one_of(a.op.type, {"mul", "add", "div"}) && bt == "softmax") return true;
    if (has(a, {"softmax"}) && bt == "dropout") return true;
    if (a.op.type == "dropout_bwd" && bt == "softmax_bwd") return true;
    if (has(a, {"softmax_bwd"}) && is_one_of(bt, {"mul", "div"})) return true;
  }
  return false;
}

double tensor_bytes(const ModelOp& op) {
  return static_cast<double>(numel(op.output)) * static_cast<double>(dtype_bytes(op.dtype));
}

}  // namespace

ModelGraph fuse_kernels(const ModelGraph& g, const FusionRules& rules, FusionReport* report) {
  if (!rules.any()) return g;
  const size_t n = g.ops.size();
  std::vector<Node> nodes(n);
  std::vector<std::vector<int>> consumers(n);
  for (size_t i = 0; i < n; ++i) {
    nodes[i].op = g.ops[i];
    nodes[i].kinds = {g.ops[i].type};
    for (int d : g.ops[i].deps)
      if (consumers[d].empty() || consumers[d].back() != static_cast<int>(i))
        consumers[d].push_back(static_cast<int>(i));
  }
  // Where each op went: itself, or the op it was merged into.
  std::vector<int> into(n);
  for (size_t i = 0; i < n; ++i) into[i] = static_cast<int>(i);
  auto find = [&](int i) {
    while (into[i] != i) i = into[i];
    return i;
  };
  FusionReport r;
  // Producers in graph order: a chain a -> b -> c merges a into b, then (a+b) into c.
  for (size_t i = 0; i < n; ++i) {
    Node& a = nodes[i];
    if (a.gone || consumers[i].size() != 1) continue;
    const int j = consumers[i][0];
    Node& b = nodes[j];
    if (b.gone || !fuses(a, b, rules)) continue;
    // The intermediate tensor: written by a, read by b.
    const double saved = std::min(2 * tensor_bytes(a.op), a.op.bytes + b.op.bytes);
    ModelOp m = b.op;
    m.name = a.op.name + "+" + b.op.type;
    m.layer = a.op.layer;
    m.type = is_row_type(b.op.type) ? b.op.type : a.op.type;
    m.dtype = b.op.dtype;
    m.flops = a.op.flops + b.op.flops;
    m.bytes = a.op.bytes + b.op.bytes - saved;
    m.params = a.op.params + b.op.params;
    m.grads = a.op.grads + b.op.grads;
    if (a.op.grads > 0 && b.op.grads <= 0) m.grad_dtype = a.op.grad_dtype;
    m.sparse_grad = a.op.sparse_grad || b.op.sparse_grad;
    // The merged op keeps b's shapes (its output is b's) and needs what a and b needed.
    std::vector<int> deps;
    for (int d : b.op.deps)
      if (d != static_cast<int>(i)) deps.push_back(d);
    for (int d : a.op.deps) deps.push_back(d);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    m.deps = deps;
    b.op = std::move(m);
    b.kinds.insert(a.kinds.begin(), a.kinds.end());
    a.gone = true;
    into[i] = j;
    // a's producers now feed b.
    for (int d : a.op.deps) {
      auto& c = consumers[d];
      std::replace(c.begin(), c.end(), static_cast<int>(i), j);
      std::sort(c.begin(), c.end());
      c.erase(std::unique(c.begin(), c.end()), c.end());
    }
    ++r.fused;
    r.bytes_saved += saved;
  }
  ModelGraph out = g;
  out.ops.clear();
  std::vector<int> index(n, -1);
  for (size_t i = 0; i < n; ++i)
    if (!nodes[i].gone) {
      index[i] = static_cast<int>(out.ops.size());
      out.ops.push_back(nodes[i].op);
    }
  for (ModelOp& op : out.ops) {
    for (int& d : op.deps) d = index[find(d)];
    std::sort(op.deps.begin(), op.deps.end());
    op.deps.erase(std::unique(op.deps.begin(), op.deps.end()), op.deps.end());
  }
  if (report) *report = r;
  return out;
}

}  // namespace orrery
