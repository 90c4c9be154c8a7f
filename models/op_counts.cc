#include "models/op_counts.h"

#include <algorithm>
#include <functional>
#include <map>

#include "engine/errors.h"

namespace orrery {
namespace {

using Counter = std::function<OpCounts(const ModelOp&)>;

[[noreturn]] void bad(const ModelOp& op, const std::string& what) {
  throw InputError("op \"" + op.name + "\" (" + op.type + "): " + what);
}

const Shape& in(const ModelOp& op, size_t i, size_t rank) {
  if (op.inputs.size() <= i)
    bad(op, "expected at least " + std::to_string(i + 1) + " input shapes");
  if (rank && op.inputs[i].size() != rank)
    bad(op, "input " + std::to_string(i) + " must have rank " + std::to_string(rank));
  return op.inputs[i];
}

double ds(const ModelOp& op) { return dtype_bytes(op.dtype); }

double io_elems(const ModelOp& op) {
  double n = static_cast<double>(numel(op.output));
  for (const auto& s : op.inputs) n += static_cast<double>(numel(s));
  return n;
}

// Element-wise: `k` FLOPs per output element; reads every input, writes the output.
Counter elementwise(double k) {
  return [k](const ModelOp& op) {
    double out = op.output.empty() && !op.inputs.empty() ? numel(op.inputs[0]) : numel(op.output);
    double n = io_elems(op) + (op.output.empty() ? out : 0);
    return OpCounts{k * out, n * ds(op)};
  };
}

// Fixed FLOPs per element of the first input and `passes` passes of memory traffic over it
// (normalizations read their input twice: statistics, then normalize).
Counter per_element(double k, double passes) {
  return [k, passes](const ModelOp& op) {
    double n = static_cast<double>(numel(in(op, 0, 0)));
    return OpCounts{k * n, passes * n * ds(op)};
  };
}

OpCounts conv2d(const ModelOp& op) {
  const Shape& x = in(op, 0, 4);
  const Shape& w = in(op, 1, 4);
  if (op.output.size() != 4) bad(op, "output must have rank 4");
  double macs = static_cast<double>(numel(op.output)) * w[1] * w[2] * w[3];
  return {2 * macs, (numel(x) + numel(w) + numel(op.output)) * ds(op)};
}

OpCounts conv2d_bwd_data(const ModelOp& op) {
  const Shape& dy = in(op, 0, 4);
  const Shape& w = in(op, 1, 4);
  double macs = static_cast<double>(numel(dy)) * w[1] * w[2] * w[3];
  return {2 * macs, (numel(dy) + numel(w) + numel(op.output)) * ds(op)};
}

OpCounts conv2d_bwd_filter(const ModelOp& op) {
  const Shape& x = in(op, 0, 4);
  const Shape& dy = in(op, 1, 4);
  const Shape& dw = op.output;
  if (dw.size() != 4) bad(op, "output (the filter gradient) must have rank 4");
  double macs = static_cast<double>(numel(dy)) * dw[1] * dw[2] * dw[3];
  return {2 * macs, (numel(x) + numel(dy) + numel(dw)) * ds(op)};
}

OpCounts matmul(const ModelOp& op) {
  const Shape& a = in(op, 0, 0);
  const Shape& b = in(op, 1, 0);
  if (a.size() < 2 || b.size() < 2) bad(op, "matmul inputs must have rank >= 2");
  if (op.output.empty()) bad(op, "matmul needs an output shape");
  double k = static_cast<double>(a.back());
  return {2 * static_cast<double>(numel(op.output)) * k, io_elems(op) * ds(op)};
}

OpCounts embedding_fwd(const ModelOp& op) {
  const Shape& table = in(op, 0, 2);
  const Shape& idx = in(op, 1, 0);
  double lookups = static_cast<double>(numel(idx));
  double dim = static_cast<double>(table[1]);
  // Gathered rows, the indices (int64) and the pooled output.
  return {lookups * dim, lookups * dim * ds(op) + lookups * 8 + numel(op.output) * ds(op)};
}

OpCounts embedding_bwd(const ModelOp& op) {
  const Shape& dy = in(op, 0, 0);
  const Shape& idx = in(op, 1, 0);
  double lookups = static_cast<double>(numel(idx));
  double dim = static_cast<double>(dy.back());
  // Read dy, then read-modify-write one table row per lookup (scatter-add).
  return {lookups * dim, numel(dy) * ds(op) + 2 * lookups * dim * ds(op) + lookups * 8};
}

OpCounts cast(const ModelOp& op) {
  double n = static_cast<double>(numel(in(op, 0, 0)));
  auto it = op.attrs.find("src_bytes");
  double src = it == op.attrs.end() ? 4.0 : static_cast<double>(it->second);
  return {n, n * (src + ds(op))};
}

OpCounts pool(const ModelOp& op) {
  const Shape& x = in(op, 0, 4);
  auto k = [&](const char* key) {
    auto it = op.attrs.find(key);
    return it == op.attrs.end() ? 1.0 : static_cast<double>(it->second);
  };
  double out = static_cast<double>(numel(op.output));
  return {out * k("kernel_h") * k("kernel_w"), (numel(x) + out) * ds(op)};
}

// Optimizer updates in place over fp32 master weights: `k` FLOPs per parameter and `tensors`
// fp32 tensors streamed (read or written) per parameter.
Counter update(double k, double tensors) {
  return [k, tensors](const ModelOp& op) {
    double n = static_cast<double>(numel(in(op, 0, 0)));
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
      {"maxpool", pool},
      {"avgpool", pool},
      {"maxpool_bwd", per_element(1, 3)},
      {"avgpool_bwd", per_element(1, 2)},
      {"add", elementwise(1)},
      {"sub", elementwise(1)},
      {"mul", elementwise(1)},
      {"div", elementwise(1)},
      {"bias_add", elementwise(1)},
      {"relu", elementwise(1)},
      {"relu_bwd", elementwise(1)},
      {"dropout", elementwise(2)},
      {"dropout_bwd", elementwise(1)},
      {"sigmoid", elementwise(4)},
      {"sigmoid_bwd", elementwise(2)},
      {"tanh", elementwise(4)},
      {"tanh_bwd", elementwise(2)},
      {"gelu", elementwise(8)},
      {"gelu_bwd", elementwise(12)},
      {"elementwise", elementwise(1)},
      {"softmax", per_element(5, 2)},
      {"softmax_bwd", per_element(3, 3)},
      {"cross_entropy", per_element(4, 1)},
      {"cross_entropy_bwd", per_element(2, 2)},
      {"layernorm", per_element(8, 3)},
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
    bad(op, "unknown op type (see models/op_counts.h for the known ones)");
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
