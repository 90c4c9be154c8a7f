// FLOP and memory-byte counts of the op types Orrery knows, from the op's shapes, attrs and
// dtype. These feed every analytic cost model (roofline, PAI model) and the workload listings.
//
// Input conventions (ModelOp::inputs), per type:
//   conv2d             x [N,C,H,W], w [K,C/groups,R,S]        -> y [N,K,P,Q]
//   conv2d_bwd_data    dy [N,K,P,Q], w [K,C/groups,R,S]       -> dx [N,C,H,W]
//   conv2d_bwd_filter  x [N,C,H,W], dy [N,K,P,Q]              -> dw [K,C/groups,R,S]
//   matmul, bmm        a [..., M, K], b [..., K, N]          -> [..., M, N]
//   embedding_fwd      table [rows, dim], indices [B, L]     -> [B, dim] (sum-pooled) or [B,L,dim]
//   embedding_bwd      dy [B, dim] or [B,L,dim], indices [B, L] -> sparse rows of the table
//   cast               x (attr src_bytes = element size of the source dtype; dtype = target)
//   sgd_update, momentum_update, adam_update   param [...]  (in place)
//   maxpool, avgpool (+ _bwd)   x [N,C,H,W] -> y [N,C,P,Q], attrs kernel_h, kernel_w
//   everything else: element-wise over its inputs and output.
// Per-element FLOP constants of the element-wise family follow common practice (one FLOP per
// add/mul/compare; transcendental ops counted as 4); these ops are memory-bound on every GPU we
// model, so their time comes from bytes (roofline, 003_591ec105bd254cba.txt section III-B).
#pragma once

#include <string>
#include <vector>

#include "workloads/model_graph.h"

namespace orrery {

struct OpCounts {
  double flops = 0.0;
  double bytes = 0.0;
};

// Sorted list of the op types count_op understands.
const std::vector<std::string>& known_op_types();
bool is_known_op_type(const std::string& type);

// Throws InputError naming the op when its type is unknown or its shapes break the convention.
OpCounts count_op(const ModelOp& op);

// Sets flops and bytes of every op whose flops and bytes are both zero.
void fill_op_counts(ModelGraph& g);

}  // namespace orrery
