// FLOP and memory-byte counts of the op types Orrery knows, from the op's shapes, attrs and
// dtype. These feed every analytic cost model (roofline, PAI model) and the workload listings.
//
// Input conventions (ModelOp::inputs), per type:
//   conv2d             x [N,C,H,W], w [K,C/groups,R,S]        -> y [N,K,P,Q]
//   conv2d_bwd_data    dy [N,K,P,Q], w [K,C/groups,R,S]       -> dx [N,C,H,W]
//   conv2d_bwd_filter  x [N,C,H,W], dy [N,K,P,Q]              -> dw [K,C/groups,R,S]
//                      (attrs groups, stride_h/w, pad_h/w; groups defaults to 1)
//   matmul, bmm        a [..., M, K], b [..., K, N]           -> [..., M, N]
//   embedding_fwd      table [rows, dim], indices [B, L] or [T, B, L] (T tables of `rows` rows
//                      looked up in one batched op)           -> [B, dim] or [T, B, dim] (pooled)
//   embedding_bwd      dy [B, dim] or [T, B, dim], indices as above -> table gradient
//                      [rows, dim] (only the looked-up rows are touched: a sparse update)
//   cast               x (attr src_bytes = element size of the source dtype; dtype = target)
//   sgd_update, momentum_update, adam_update   param [...]  (in place, fp32 master weights)
//   maxpool, avgpool   x [N,C,H,W] -> y [N,C,P,Q], attrs kernel_h, kernel_w
//   maxpool_bwd, avgpool_bwd, softmax(_bwd), layernorm(_bwd), batchnorm(_bwd), reduce,
//   cross_entropy(_bwd): counted per element of the first input.
//   attention          q [B,H,S,D], k [B,KV,S_kv,D], v [B,KV,S_kv,D] -> o [B,H,S,D]: fused
//                      (flash) attention, softmax(q k^T / sqrt(D)) v without the S x S_kv
//                      scores in memory; attrs causal (0/1: the S queries are the last S of the
//                      S_kv positions and see none after their own) and window (0 = all keys,
//                      else at most that many before and including each query's own); H a
//                      multiple of KV (grouped-query attention)
//   attention_bwd      the same shapes -> dq [B,H,S,D] (and dk, dv): recomputes the scores and
//                      runs the four gradient products
//   everything else: element-wise over its inputs and output.
// An empty output shape means "not given": element-wise ops then write a tensor shaped like
// their first input. A scalar output is written [1].
//
// Per-element FLOP constants of the element-wise family follow common practice (one FLOP per
// add/mul/compare; transcendental ops counted as 4); these ops are memory-bound on every GPU we
// model, so their time comes from bytes (roofline, the DLRM performance model section III-B1).
// Bytes count ideal traffic: every input read once and every output written once, except where
// a comment says a kernel makes more passes.
#pragma once

#include <string>
#include <vector>

#include "workloads/attention_impl.h"
#include "workloads/model_graph.h"

namespace orrery {

struct OpCounts {
  double flops = 0.0;
  double bytes = 0.0;
};

// The dimensions of an attention or attention_bwd op.
struct AttentionDims {
  double batch = 0, heads = 0, kv_heads = 0, seq = 0, seq_kv = 0, head_dim = 0;
  bool causal = false;
  double window = 0;
  AttentionImpl impl = AttentionImpl::kAuto;  // the `impl` attribute
  // Query-key pairs whose scores are computed (per batch and head), after the causal mask and
  // the window.
  double pairs() const;
};
// Throws InputError naming the op when its shapes break the convention above.
AttentionDims attention_dims(const ModelOp& op);
bool is_attention(const std::string& op_type);

// Sorted list of the op types count_op understands.
const std::vector<std::string>& known_op_types();
bool is_known_op_type(const std::string& type);

// Throws InputError naming the op when its type is unknown or its shapes break the convention.
OpCounts count_op(const ModelOp& op);

// Sets flops and bytes of every op whose flops and bytes are both zero.
void fill_op_counts(ModelGraph& g);

}  // namespace orrery
