// One op named by a user or a measurement file rather than by a model graph: "linear" with B, M,
// N, K, as the measured GPU kernel data names its ops (bmm, linear, conv, softmax, ln, add, addu,
// mul, mulu, div, divu, pow, powu, relu, gelu, tanh), or any op-graph type
// (workloads/op_counts.h) with its tensor shapes, turned into the ModelOp the cost models price.
// `orrery cost` prices such ops on a device without a scenario.
//
// Fields by op (values are non-negative integers, but for attention's impl):
//   bmm                 B, M, N, K: out[B,M,N] = A[B,M,K] x W[B,K,N]
//   linear (matmul)     B, M, N, K: a [B,M,K] input times K-to-N weights -> [B,M,N]
//   conv (conv2d)       B, in_channels, out_channels, kernel_size, input_size, stride, padding:
//                       square input and kernel, forward
//   softmax, ln         B, H: over the last dimension of [B,H] (ln is layernorm)
//   add, mul, div, pow  B, H: two [B,H] tensors; addu, mulu, divu, powu: one [B,H] tensor and a
//                       scalar; relu, gelu, tanh: one [B,H] tensor
//   attention, attention_bwd   B, S, H, D and optional S_kv (default S), KV (default H), causal
//                       (default 1), window (default 0), impl (a kernel name, default auto;
//                       workloads/attention_impl.h): flash attention forward or backward over
//                       q [B,H,S,D] and k, v [B,KV,S_kv,D]
//   any op-graph type   in: the input shapes, "64x1024;1024x512" (';' between tensors, 'x'
//                       between dimensions), optional out: the output shape, and integer
//                       attributes by name (stride_h, pad_w, groups, ...), as in
//                       docs/op-graph-format.md
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "workloads/model_graph.h"

namespace orrery {

// The names the kernel data uses, then every op-graph type; sorted within each group.
std::vector<std::string> query_op_names();

// The fields `op` reads, in the order above ("in" and "out" for op-graph types).
std::vector<std::string> query_fields(const std::string& op);

// The op `op` with `fields` (other keys are ignored, so a CSV row's extra columns may be passed)
// in `dtype`. Throws InputError starting with `where` when the op is unknown (listing the known
// names), a field it needs is missing or not an integer, or the shapes are impossible.
ModelOp query_op(const std::string& op, const std::map<std::string, std::string>& fields,
                 DType dtype, const std::string& where);

}  // namespace orrery
