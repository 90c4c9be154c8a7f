// FLOP and byte counts of every op family against values worked out by hand from the
// conventions of workloads/op_counts.h (fp32 = 4 bytes, fp16 = 2, indices int64 = 8).
#include "workloads/op_counts.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/errors.h"

namespace orrery {
namespace {

ModelOp make(const std::string& type, std::vector<Shape> inputs, Shape output,
             DType dt = DType::kFP32) {
  ModelOp op;
  op.name = type;
  op.type = type;
  op.inputs = std::move(inputs);
  op.output = std::move(output);
  op.dtype = dt;
  return op;
}

// Pairs by hand: causal self-attention over 4 tokens computes 1 + 2 + 3 + 4 = 10 scores per
// head; 2 queries that are the last of 5 positions see 4 and 5 keys; a window of 2 caps each
// query at 2 keys (1 + 2 + 2 + 2 = 7); without the mask every query sees every key.
TEST(OpCounts, AttentionCountsTheScoresItComputes) {
  auto op = [](int64_t s, int64_t skv, int64_t causal, int64_t window) {
    ModelOp m = make("attention", {{2, 8, s, 64}, {2, 2, skv, 64}, {2, 2, skv, 64}}, {2, 8, s, 64},
                     DType::kBF16);
    m.attrs = {{"causal", causal}, {"window", window}};
    return m;
  };
  EXPECT_DOUBLE_EQ(attention_dims(op(4, 4, 1, 0)).pairs(), 10);
  EXPECT_DOUBLE_EQ(attention_dims(op(2, 5, 1, 0)).pairs(), 9);
  EXPECT_DOUBLE_EQ(attention_dims(op(4, 4, 1, 2)).pairs(), 7);
  EXPECT_DOUBLE_EQ(attention_dims(op(4, 6, 0, 0)).pairs(), 24);
  EXPECT_DOUBLE_EQ(attention_dims(op(4, 6, 0, 5)).pairs(), 20);
  // Forward: 2 products of 2 x 64 FLOPs and 5 softmax FLOPs per pair, over 2 x 8 heads; q and o
  // [2,8,4,64], k and v [2,2,4,64] once each, bf16.
  const OpCounts f = count_op(op(4, 4, 1, 0));
  EXPECT_DOUBLE_EQ(f.flops, 2 * 8 * 10 * (2 * 2 * 64 + 5));
  EXPECT_DOUBLE_EQ(f.bytes, (2 * 2 * 8 * 4 * 64 + 2 * 2 * 2 * 4 * 64) * 2.0);
  ModelOp b = op(4, 4, 1, 0);
  b.type = "attention_bwd";
  const OpCounts g = count_op(b);
  EXPECT_DOUBLE_EQ(g.flops, 2 * 8 * 10 * (5 * 2 * 64 + 5));
  EXPECT_DOUBLE_EQ(g.bytes, 2 * f.bytes);
  // Shapes that cannot be attention.
  EXPECT_THROW(count_op(make("attention", {{2, 8, 4, 64}, {2, 3, 4, 64}, {2, 3, 4, 64}}, {})),
               InputError);                            // 8 heads over 3 KV heads
  EXPECT_THROW(count_op(op(6, 4, 1, 0)), InputError);  // causal with more queries than keys
  EXPECT_THROW(count_op(make("attention", {{2, 8, 4, 64}, {2, 8, 4, 32}, {2, 8, 4, 32}}, {})),
               InputError);  // head dims differ
}

TEST(OpCounts, Conv2dForwardAndBothBackwardsDoTheSameMultiplyAdds) {
  // x [2,3,8,8], w [4,3,3,3], y [2,4,8,8]: 2*4*8*8 outputs x 3*3*3 MACs = 13824 MACs.
  // Bytes (x 384 + w 108 + y 512) * 4 = 4016 for each of the three.
  OpCounts f = count_op(make("conv2d", {{2, 3, 8, 8}, {4, 3, 3, 3}}, {2, 4, 8, 8}));
  EXPECT_DOUBLE_EQ(f.flops, 27648);
  EXPECT_DOUBLE_EQ(f.bytes, 4016);
  OpCounts d = count_op(make("conv2d_bwd_data", {{2, 4, 8, 8}, {4, 3, 3, 3}}, {2, 3, 8, 8}));
  EXPECT_DOUBLE_EQ(d.flops, 27648);
  EXPECT_DOUBLE_EQ(d.bytes, 4016);
  OpCounts w = count_op(make("conv2d_bwd_filter", {{2, 3, 8, 8}, {2, 4, 8, 8}}, {4, 3, 3, 3}));
  EXPECT_DOUBLE_EQ(w.flops, 27648);
  EXPECT_DOUBLE_EQ(w.bytes, 4016);
}

TEST(OpCounts, GroupedConvCountsChannelsPerGroup) {
  // x [1,4,5,5], w [4,2,3,3], groups 2, y [1,4,3,3]: 36 outputs x 2*3*3 = 648 MACs.
  ModelOp op = make("conv2d", {{1, 4, 5, 5}, {4, 2, 3, 3}}, {1, 4, 3, 3});
  op.attrs["groups"] = 2;
  OpCounts c = count_op(op);
  EXPECT_DOUBLE_EQ(c.flops, 1296);
  EXPECT_DOUBLE_EQ(c.bytes, (100 + 72 + 36) * 4.0);
  op.attrs["groups"] = 1;  // now C=4 does not match w's 2 input channels
  EXPECT_THROW(count_op(op), InputError);
}

TEST(OpCounts, ConvShapeMismatchesAreInputErrors) {
  EXPECT_THROW(count_op(make("conv2d", {{2, 3, 8, 8}, {4, 3, 3, 3}}, {2, 5, 8, 8})), InputError);
  EXPECT_THROW(count_op(make("conv2d", {{2, 3, 8}, {4, 3, 3, 3}}, {2, 4, 8, 8})), InputError);
  EXPECT_THROW(count_op(make("conv2d_bwd_data", {{2, 4, 8, 8}, {4, 3, 3, 3}}, {})), InputError);
  EXPECT_THROW(count_op(make("conv2d_bwd_filter", {{2, 3, 8, 8}, {2, 4, 8, 8}}, {4, 2, 3, 3})),
               InputError);
}

TEST(OpCounts, MatmulAndBatchedMatmul) {
  // [64,128] x [128,32]: 2*64*32*128 = 524288 FLOPs; (8192 + 4096 + 2048) elements.
  OpCounts m = count_op(make("matmul", {{64, 128}, {128, 32}}, {64, 32}));
  EXPECT_DOUBLE_EQ(m.flops, 524288);
  EXPECT_DOUBLE_EQ(m.bytes, 14336 * 4.0);
  OpCounts h = count_op(make("matmul", {{64, 128}, {128, 32}}, {64, 32}, DType::kFP16));
  EXPECT_DOUBLE_EQ(h.flops, 524288);
  EXPECT_DOUBLE_EQ(h.bytes, 14336 * 2.0);
  // [8,16,32] x [8,32,4]: 8*16*4 outputs x 32 MACs.
  OpCounts b = count_op(make("bmm", {{8, 16, 32}, {8, 32, 4}}, {8, 16, 4}));
  EXPECT_DOUBLE_EQ(b.flops, 32768);
  EXPECT_DOUBLE_EQ(b.bytes, (4096 + 1024 + 512) * 4.0);
  // A linear layer on a 3-D activation broadcasts the weight: [4,10,16] x [16,8].
  OpCounts l = count_op(make("matmul", {{4, 10, 16}, {16, 8}}, {4, 10, 8}));
  EXPECT_DOUBLE_EQ(l.flops, 2.0 * 320 * 16);
}

TEST(OpCounts, MatmulInnerDimensionMustAgree) {
  EXPECT_THROW(count_op(make("matmul", {{64, 128}, {127, 32}}, {64, 32})), InputError);
  EXPECT_THROW(count_op(make("matmul", {{64, 128}, {128, 32}}, {64, 31})), InputError);
  EXPECT_THROW(count_op(make("matmul", {{64, 128}, {128, 32}}, {})), InputError);
}

TEST(OpCounts, ElementwiseReadsInputsWritesOutput) {
  OpCounts add = count_op(make("add", {{1000}, {1000}}, {1000}));
  EXPECT_DOUBLE_EQ(add.flops, 1000);
  EXPECT_DOUBLE_EQ(add.bytes, 12000);
  // Output not given: shaped like the first input, counted once (not as a 1-element scalar).
  OpCounts implicit = count_op(make("add", {{1000}, {1000}}, {}));
  EXPECT_DOUBLE_EQ(implicit.bytes, 12000);
  OpCounts relu = count_op(make("relu", {{10, 10}}, {}));
  EXPECT_DOUBLE_EQ(relu.flops, 100);
  EXPECT_DOUBLE_EQ(relu.bytes, 800);
  // bias_add broadcasts [256] over [64,256]: reads both, writes [64,256].
  OpCounts bias = count_op(make("bias_add", {{64, 256}, {256}}, {64, 256}));
  EXPECT_DOUBLE_EQ(bias.bytes, (16384 + 256 + 16384) * 4.0);
  EXPECT_DOUBLE_EQ(count_op(make("gelu", {{100}}, {100})).flops, 800);
  EXPECT_DOUBLE_EQ(count_op(make("tanh", {{100}}, {100})).flops, 400);
  // Dropout: 2 FLOPs per element, and a 1-byte mask written besides y.
  OpCounts drop = count_op(make("dropout", {{100}}, {100}));
  EXPECT_DOUBLE_EQ(drop.flops, 200);
  EXPECT_DOUBLE_EQ(drop.bytes, 900);
}

TEST(OpCounts, ReductionsAndNormalizations) {
  // Fused softmax over [32,1000]: 5 FLOPs and one read + one write per element.
  OpCounts sm = count_op(make("softmax", {{32, 1000}}, {32, 1000}));
  EXPECT_DOUBLE_EQ(sm.flops, 160000);
  EXPECT_DOUBLE_EQ(sm.bytes, 256000);
  OpCounts ln = count_op(make("layernorm", {{32, 1000}}, {32, 1000}, DType::kFP16));
  EXPECT_DOUBLE_EQ(ln.flops, 256000);
  EXPECT_DOUBLE_EQ(ln.bytes, 2 * 32000 * 2.0);  // the row stays on chip: one read, one write
  OpCounts bnb = count_op(make("batchnorm_bwd", {{8, 16, 4, 4}}, {8, 16, 4, 4}));
  EXPECT_DOUBLE_EQ(bnb.flops, 12 * 2048.0);
  EXPECT_DOUBLE_EQ(bnb.bytes, 4 * 2048 * 4.0);
  OpCounts red = count_op(make("reduce", {{64, 1024}}, {64}));
  EXPECT_DOUBLE_EQ(red.flops, 65536);
  EXPECT_DOUBLE_EQ(red.bytes, 262144);
}

TEST(OpCounts, Pooling) {
  // x [1,2,4,4] -> y [1,2,2,2] with 2x2 windows: 8 outputs x 4 = 32; (32 + 8) * 4 bytes.
  ModelOp mp = make("maxpool", {{1, 2, 4, 4}}, {1, 2, 2, 2});
  mp.attrs = {{"kernel_h", 2}, {"kernel_w", 2}};
  OpCounts c = count_op(mp);
  EXPECT_DOUBLE_EQ(c.flops, 32);
  EXPECT_DOUBLE_EQ(c.bytes, 160);
  OpCounts back = count_op(make("maxpool_bwd", {{1, 2, 4, 4}}, {1, 2, 4, 4}));
  EXPECT_DOUBLE_EQ(back.bytes, 3 * 32 * 4.0);
}

TEST(OpCounts, EmbeddingLookupForwardAndBackward) {
  // Table [1000,64], indices [32,10]: 320 lookups of 64 elements, pooled to [32,64].
  OpCounts f = count_op(make("embedding_fwd", {{1000, 64}, {32, 10}}, {32, 64}));
  EXPECT_DOUBLE_EQ(f.flops, 20480);
  EXPECT_DOUBLE_EQ(f.bytes, (20480 + 2048) * 4.0 + 320 * 8.0);
  // Batched over 4 tables: indices [4,32,10].
  OpCounts t = count_op(make("embedding_fwd", {{1000, 64}, {4, 32, 10}}, {4, 32, 64}));
  EXPECT_DOUBLE_EQ(t.flops, 81920);
  EXPECT_DOUBLE_EQ(t.bytes, (81920 + 8192) * 4.0 + 1280 * 8.0);
  // Backward: read dy [32,64], read-modify-write 320 rows of 64, read the indices.
  OpCounts b = count_op(make("embedding_bwd", {{32, 64}, {32, 10}}, {1000, 64}));
  EXPECT_DOUBLE_EQ(b.flops, 20480);
  EXPECT_DOUBLE_EQ(b.bytes, (2048 + 2 * 20480) * 4.0 + 320 * 8.0);
  EXPECT_THROW(count_op(make("embedding_fwd", {{1000, 64}, {320}}, {32, 64})), InputError);
}

TEST(OpCounts, DataMovementAndCasts) {
  OpCounts cat = count_op(make("concat", {{10, 5}, {10, 3}}, {10, 8}));
  EXPECT_DOUBLE_EQ(cat.flops, 0);
  EXPECT_DOUBLE_EQ(cat.bytes, (50 + 30 + 80) * 4.0);
  EXPECT_DOUBLE_EQ(count_op(make("transpose", {{4, 6}}, {6, 4})).bytes, 192);
  EXPECT_DOUBLE_EQ(count_op(make("memcpy", {{256}}, {256})).bytes, 2048);
  // fp32 -> fp16: read 4 bytes, write 2 per element.
  ModelOp c = make("cast", {{1000}}, {1000}, DType::kFP16);
  c.attrs["src_bytes"] = 4;
  OpCounts cc = count_op(c);
  EXPECT_DOUBLE_EQ(cc.flops, 1000);
  EXPECT_DOUBLE_EQ(cc.bytes, 6000);
}

TEST(OpCounts, OptimizerUpdatesStreamFp32State) {
  // SGD: read p and g, write p; Adam: read p, g, m, v and write p, m, v. Always fp32.
  OpCounts sgd = count_op(make("sgd_update", {{1000}}, {}, DType::kFP16));
  EXPECT_DOUBLE_EQ(sgd.flops, 2000);
  EXPECT_DOUBLE_EQ(sgd.bytes, 12000);
  OpCounts adam = count_op(make("adam_update", {{1000}}, {}));
  EXPECT_DOUBLE_EQ(adam.flops, 12000);
  EXPECT_DOUBLE_EQ(adam.bytes, 28000);
}

TEST(OpCounts, UnknownTypesAndListing) {
  EXPECT_THROW(count_op(make("matmult", {{2, 2}, {2, 2}}, {2, 2})), InputError);
  const auto& types = known_op_types();
  EXPECT_TRUE(std::is_sorted(types.begin(), types.end()));
  EXPECT_TRUE(is_known_op_type("conv2d_bwd_filter"));
  EXPECT_TRUE(is_known_op_type("embedding_bwd"));
  EXPECT_FALSE(is_known_op_type("lstm"));
}

TEST(OpCounts, FillKeepsMeasuredCounts) {
  ModelGraph g;
  g.ops.push_back(make("relu", {{10}}, {10}));
  g.ops.push_back(make("relu", {{10}}, {10}));
  g.ops[1].flops = 7;  // an importer's measured value
  fill_op_counts(g);
  EXPECT_DOUBLE_EQ(g.ops[0].bytes, 80);
  EXPECT_DOUBLE_EQ(g.ops[1].flops, 7);
  EXPECT_DOUBLE_EQ(g.ops[1].bytes, 0);
}

}  // namespace
}  // namespace orrery
