#include "workloads/op_counts.h"

#include <algorithm>
#include <functional>
#include <map>

#include "common/errors.h"
#include "workloads/attention_impl.h"

namespace orrery {
namespace {

using Counter = std::function<OpCounts(const ModelOp&)>;

[[noreturn]] void bad(const ModelOp& op, const std::string& what) {
  throw InputError("op \"" + op.name + "\" (" + op.type + "): " + what);
}

std::string dims(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

const Shape& in(const ModelOp& op, size_t i, size_t rank) {
  if (op.inputs.size() <= i)
    bad(op, "expected at least " + std::to_string(i + 1) + " input shapes");
  if (rank && op.inputs[i].size() != rank)
    bad(op, "input " + std::to_string(i) + " must have rank " + std::to_string(rank) + ", got " +
                dims(op.inputs[i]));
  for (int64_t d : op.inputs[i])
    if (d < 0) bad(op, "input " + std::to_string(i) + " has a negative dimension");
  return op.inputs[i];
}

double ds(const ModelOp& op) { return dtype_bytes(op.dtype); }

double n_of(const Shape& s) { return static_cast<double>(numel(s)); }

// Elements written: the output, or (output not given) a tensor shaped like the first input.
double out_elems(const ModelOp& op) {
  if (!op.output.empty()) return n_of(op.output);
  return op.inputs.empty() ? 0.0 : n_of(op.inputs[0]);
}

double in_elems(const ModelOp& op) {
  double n = 0;
  for (const auto& s : op.inputs) n += n_of(s);
  return n;
}

// Element-wise: `k` FLOPs per output element; reads every input, writes the output, plus
// `extra_bytes_per_elem` bytes per output element (dropout's mask).
Counter elementwise(double k, double extra_bytes_per_elem = 0) {
  return [k, extra_bytes_per_elem](const ModelOp& op) {
    double out = out_elems(op);
    return OpCounts{k * out, (in_elems(op) + out) * ds(op) + extra_bytes_per_elem * out};
  };
}

// Fixed FLOPs per element of the first input and `passes` passes of memory traffic over it
// (layer/batch norm read their input twice: statistics, then normalize; then write once).
Counter per_element(double k, double passes) {
  return [k, passes](const ModelOp& op) {
    double n = n_of(in(op, 0, 0));
    return OpCounts{k * n, passes * n * ds(op)};
  };
}

void check_rank4_output(const ModelOp& op, const char* what) {
  if (op.output.size() != 4)
    bad(op, std::string("output (") + what + ") must have rank 4, got " + dims(op.output));
}

int64_t groups_of(const ModelOp& op) {
  int64_t g = op_attr(op, "groups", 1);
  if (g < 1) bad(op, "attr groups must be at least 1");
  return g;
}

OpCounts conv2d(const ModelOp& op) {
  const Shape& x = in(op, 0, 4);
  const Shape& w = in(op, 1, 4);
  check_rank4_output(op, "y [N,K,P,Q]");
  int64_t g = groups_of(op);
  if (x[1] != w[1] * g || op.output[0] != x[0] || op.output[1] != w[0])
    bad(op, "shapes x " + dims(x) + ", w " + dims(w) + ", y " + dims(op.output) +
                " break x [N,C,H,W], w [K,C/groups,R,S], y [N,K,P,Q] (groups " + std::to_string(g) +
                ")");
  // Each output element is a dot product over C/groups x R x S inputs.
  double macs = n_of(op.output) * w[1] * w[2] * w[3];
  return {2 * macs, (n_of(x) + n_of(w) + n_of(op.output)) * ds(op)};
}

OpCounts conv2d_bwd_data(const ModelOp& op) {
  const Shape& dy = in(op, 0, 4);
  const Shape& w = in(op, 1, 4);
  check_rank4_output(op, "dx [N,C,H,W]");
  int64_t g = groups_of(op);
  if (dy[1] != w[0] || op.output[0] != dy[0] || op.output[1] != w[1] * g)
    bad(op, "shapes dy " + dims(dy) + ", w " + dims(w) + ", dx " + dims(op.output) +
                " break dy [N,K,P,Q], w [K,C/groups,R,S], dx [N,C,H,W]");
  // The transposed convolution does the forward's multiply-adds: N*K*P*Q * C/groups*R*S.
  double macs = n_of(dy) * w[1] * w[2] * w[3];
  return {2 * macs, (n_of(dy) + n_of(w) + n_of(op.output)) * ds(op)};
}

OpCounts conv2d_bwd_filter(const ModelOp& op) {
  const Shape& x = in(op, 0, 4);
  const Shape& dy = in(op, 1, 4);
  check_rank4_output(op, "dw [K,C/groups,R,S]");
  const Shape& dw = op.output;
  int64_t g = groups_of(op);
  if (x[0] != dy[0] || dy[1] != dw[0] || x[1] != dw[1] * g)
    bad(op, "shapes x " + dims(x) + ", dy " + dims(dy) + ", dw " + dims(dw) +
                " break x [N,C,H,W], dy [N,K,P,Q], dw [K,C/groups,R,S]");
  double macs = n_of(dy) * dw[1] * dw[2] * dw[3];
  return {2 * macs, (n_of(x) + n_of(dy) + n_of(dw)) * ds(op)};
}

OpCounts matmul(const ModelOp& op) {
  const Shape& a = in(op, 0, 0);
  const Shape& b = in(op, 1, 0);
  if (a.size() < 2 || b.size() < 2) bad(op, "matmul inputs must have rank >= 2");
  const Shape& y = op.output;
  if (y.size() < 2) bad(op, "matmul needs an output shape of rank >= 2");
  int64_t k = a.back();
  if (b[b.size() - 2] != k || y.back() != b.back() || y[y.size() - 2] != a[a.size() - 2])
    bad(op, "shapes a " + dims(a) + ", b " + dims(b) + ", y " + dims(y) +
                " break a [..., M, K], b [..., K, N], y [..., M, N]");
  // numel(y) covers the batch dimensions of bmm and of broadcast matmuls.
  return {2 * n_of(y) * k, (n_of(a) + n_of(b) + n_of(y)) * ds(op)};
}

// Indices are int64 (PyTorch's default); the heuristic embedding model in
// models/embedding_model.h follows its kernel's int32 instead.
constexpr double kIndexBytes = 8;

OpCounts embedding_fwd(const ModelOp& op) {
  const Shape& table = in(op, 0, 2);
  const Shape& idx = in(op, 1, 0);
  if (idx.size() != 2 && idx.size() != 3)
    bad(op, "indices must be [B, L] or [T, B, L], got " + dims(idx));
  double lookups = n_of(idx);
  double dim = static_cast<double>(table[1]);
  double out = op.output.empty() ? n_of(idx) / idx.back() * dim : n_of(op.output);
  // Gathered rows, the indices, and the pooled output; one add per gathered element.
  return {lookups * dim, (lookups * dim + out) * ds(op) + lookups * kIndexBytes};
}

OpCounts embedding_bwd(const ModelOp& op) {
  const Shape& dy = in(op, 0, 0);
  const Shape& idx = in(op, 1, 0);
  if (dy.empty()) bad(op, "dy must have rank >= 1");
  double lookups = n_of(idx);
  double dim = static_cast<double>(dy.back());
  // Read dy, then read-modify-write one table row per lookup (scatter-add).
  return {lookups * dim, (n_of(dy) + 2 * lookups * dim) * ds(op) + lookups * kIndexBytes};
}

OpCounts cast(const ModelOp& op) {
  double n = n_of(in(op, 0, 0));
  double src = static_cast<double>(op_attr(op, "src_bytes", 4));
  if (src <= 0) bad(op, "attr src_bytes must be positive");
  return {n, n * (src + ds(op))};
}

OpCounts pool(const ModelOp& op) {
  const Shape& x = in(op, 0, 4);
  check_rank4_output(op, "y [N,C,P,Q]");
  double window = static_cast<double>(op_attr(op, "kernel_h", 1) * op_attr(op, "kernel_w", 1));
  double out = n_of(op.output);
  return {out * window, (n_of(x) + out) * ds(op)};
}

// Forward: S = q k^T and O = P v, 2 x 2 D FLOPs per computed pair, and the exponentials and
// scaling of the online softmax (counted as 5 per pair, as softmax is); q, k, v read and o
// written once (the scores stay on chip). Backward recomputes S and runs dV, dP, dQ and dK:
// 5 products, the softmax again, reads q, k, v, o, do and writes dq, dk, dv.
Counter attention(bool backward) {
  return [backward](const ModelOp& op) {
    const AttentionDims a = attention_dims(op);
    const double pairs = a.batch * a.heads * a.pairs();
    const double q = a.batch * a.heads * a.seq * a.head_dim;
    const double kv = a.batch * a.kv_heads * a.seq_kv * a.head_dim;
    const double products = backward ? 5 : 2;
    return OpCounts{pairs * (products * 2 * a.head_dim + 5),
                    (backward ? 4 * q + 4 * kv : 2 * q + 2 * kv) * ds(op)};
  };
}

// Optimizer updates in place over fp32 master weights: `k` FLOPs per parameter and `tensors`
// fp32 tensors streamed (read or written) per parameter.
Counter update(double k, double tensors) {
  return [k, tensors](const ModelOp& op) {
    double n = n_of(in(op, 0, 0));
    return OpCounts{k * n, tensors * n * 4.0};
  };
}

const std::map<std::string, Counter>& counters() {
  static const std::map<std::string, Counter> table = {
      {"conv2d", conv2d},
      {"conv2d_bwd_data", conv2d_bwd_data},
      {"conv2d_bwd_filter", conv2d_bwd_filter},
      {"matmul", matmul},
      {"bmm", matmul},
      {"embedding_fwd", embedding_fwd},
      {"embedding_bwd", embedding_bwd},
      {"cast", cast},
      {"attention", attention(false)},
      {"attention_bwd", attention(true)},
      {"maxpool", pool},
      {"avgpool", pool},
      // Backward pooling, per element of x: maxpool reads dy and the argmax indices and writes
      // dx (3 passes); avgpool reads dy and writes dx (2 passes).
      {"maxpool_bwd", per_element(1, 3)},
      {"avgpool_bwd", per_element(1, 2)},
      {"add", elementwise(1)},
      {"sub", elementwise(1)},
      {"mul", elementwise(1)},
      {"div", elementwise(1)},
      {"bias_add", elementwise(1)},
      {"relu", elementwise(1)},
      {"relu_bwd", elementwise(1)},
      // Dropout draws a random number and scales (2 FLOPs) and also writes a 1-byte mask.
      {"dropout", elementwise(2, 1)},
      {"dropout_bwd", elementwise(1)},
      {"sigmoid", elementwise(4)},
      {"sigmoid_bwd", elementwise(2)},
      {"tanh", elementwise(4)},
      {"tanh_bwd", elementwise(2)},
      {"gelu", elementwise(8)},
      {"pow", elementwise(4)},
      {"gelu_bwd", elementwise(12)},
      {"elementwise", elementwise(1)},
      // A fused softmax reads its input once and writes once (max, exp-sum and normalize in
      // registers); backward reads y and dy and writes dx.
      {"softmax", per_element(5, 2)},
      {"softmax_bwd", per_element(3, 3)},
      {"cross_entropy", per_element(4, 1)},
      {"cross_entropy_bwd", per_element(2, 2)},
      // A fused layer norm keeps its row on chip between the statistics and the normalization
      // (registers for a warp's row, shared memory or L2 for a block's): one read, one write.
      {"layernorm", per_element(8, 2)},
      {"layernorm_bwd", per_element(12, 4)},
      {"batchnorm", per_element(8, 3)},
      {"batchnorm_bwd", per_element(12, 4)},
      {"reduce", per_element(1, 1)},
      {"concat", elementwise(0)},
      {"split", elementwise(0)},
      {"transpose", elementwise(0)},
      {"memcpy", elementwise(0)},
      {"sgd_update", update(2, 3)},
      {"momentum_update", update(4, 5)},
      {"adam_update", update(12, 7)},
  };
  return table;
}

}  // namespace

double AttentionDims::pairs() const {
  const double s = seq, kv = seq_kv;
  // Query i (0..s-1) sits at position kv - s + i and sees keys 0..that position when causal.
  const double first = causal ? kv - s + 1 : kv;  // keys the first query sees
  auto seen = [&](double keys_first, double n) {  // sum over n queries of min(window, keys)
    const double last = keys_first + (causal ? n - 1 : 0);
    if (window <= 0 || window >= last) return causal ? n * (keys_first + last) / 2 : n * keys_first;
    if (window <= keys_first) return n * window;
    // Queries up to the one that sees `window` keys grow by one key each, the rest see window.
    const double growing = window - keys_first;
    return growing * (keys_first + window - 1) / 2 + (n - growing) * window;
  };
  return seen(first, s);
}

bool is_attention(const std::string& t) { return t == "attention" || t == "attention_bwd"; }

AttentionDims attention_dims(const ModelOp& op) {
  const Shape& q = in(op, 0, 4);
  const Shape& k = in(op, 1, 4);
  const Shape& v = in(op, 2, 4);
  if (k != v) bad(op, "k and v must have the same shape, got " + dims(k) + " and " + dims(v));
  if (q[0] != k[0] || q[3] != k[3])
    bad(op, "q " + dims(q) + " and k " + dims(k) + " must share batch and head_dim");
  if (k[1] < 1 || q[1] % k[1] != 0)
    bad(op, "the query heads (" + std::to_string(q[1]) +
                ") must be a multiple of the key/value "
                "heads (" +
                std::to_string(k[1]) + ")");
  AttentionDims a;
  a.batch = static_cast<double>(q[0]);
  a.heads = static_cast<double>(q[1]);
  a.kv_heads = static_cast<double>(k[1]);
  a.seq = static_cast<double>(q[2]);
  a.seq_kv = static_cast<double>(k[2]);
  a.head_dim = static_cast<double>(q[3]);
  a.causal = op_attr(op, "causal", 0) != 0;
  a.window = static_cast<double>(op_attr(op, "window", 0));
  if (a.window < 0) bad(op, "attr window must not be negative");
  a.impl = attention_impl(op);
  if (a.causal && a.seq > a.seq_kv)
    bad(op, "causal attention needs no more queries (" + std::to_string(q[2]) + ") than keys (" +
                std::to_string(k[2]) + ")");
  return a;
}

const std::vector<std::string>& known_op_types() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [k, f] : counters()) v.push_back(k);
    return v;
  }();
  return names;
}

bool is_known_op_type(const std::string& type) { return counters().count(type) > 0; }

OpCounts count_op(const ModelOp& op) {
  auto it = counters().find(op.type);
  if (it == counters().end())
    bad(op, "unknown op type (see workloads/op_counts.h for the known ones)");
  return it->second(op);
}

void fill_op_counts(ModelGraph& g) {
  for (auto& op : g.ops) {
    if (op.flops != 0 || op.bytes != 0) continue;
    OpCounts c = count_op(op);
    op.flops = c.flops;
    op.bytes = c.bytes;
  }
}

}  // namespace orrery
