// The parameter classification and candidate enumeration of Tianshu's principal-component
// search (Tianshu section 3.2.2), and how ops become parameter lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "common/errors.h"
#include "models/learned/op_params.h"
#include "models/learned/principal_component.h"

namespace orrery {
namespace {

using K = ParamKind;

ModelOp op_of(const std::string& type, std::vector<Shape> inputs, Shape output,
              std::map<std::string, int64_t> attrs = {}) {
  ModelOp op;
  op.name = op.type = type;
  op.inputs = std::move(inputs);
  op.output = std::move(output);
  op.attrs = std::move(attrs);
  return op;
}

std::vector<std::string> names(const OpSchema& s) {
  std::vector<std::string> out;
  for (const auto& p : s.params) out.push_back(p.name);
  return out;
}

// Allowed kinds of every parameter of `s`, every numeric one having `distinct` values except
// those in `few` (2 values).
std::vector<std::vector<ParamKind>> allowed(const OpSchema& s, size_t distinct,
                                            const std::vector<std::string>& few = {}) {
  std::vector<std::vector<ParamKind>> out;
  for (const auto& p : s.params) {
    bool is_few = p.is_string() || std::count(few.begin(), few.end(), p.name);
    out.push_back(allowed_kinds({p.is_string(), p.is_dim(), is_few ? 2u : distinct}));
  }
  return out;
}

TEST(LearnedPruning, FewValuesMeanModeSelectionWhateverTheType) {
  for (bool is_string : {false, true})
    for (bool is_dim : {false, true})
      for (size_t distinct : {1u, 2u, 5u}) {
        auto k = allowed_kinds({is_string && !is_dim, is_dim, distinct});
        EXPECT_EQ(k, std::vector<K>{K::kMode}) << is_string << is_dim << distinct;
      }
}

TEST(LearnedPruning, StringsAreNullOrModeDimensionsLinearOrNull) {
  // A string with many values cannot be a mode (one model per value): null.
  EXPECT_EQ(allowed_kinds({true, false, 6}), std::vector<K>{K::kNull});
  EXPECT_EQ(allowed_kinds({false, true, 6}), (std::vector<K>{K::kLinear, K::kNull}));
  EXPECT_EQ(allowed_kinds({false, true, 1000}), (std::vector<K>{K::kLinear, K::kNull}));
  // Other numbers (a stride with many values) may also be inversely proportional.
  EXPECT_EQ(allowed_kinds({false, false, 7}), (std::vector<K>{K::kLinear, K::kInverse, K::kNull}));
}

TEST(LearnedPruning, MatmulHasFiveParametersAndSixteenCandidates) {
  // The paper's example: four shape parameters and the data type; without pruning 4^5 = 1024
  // functions, after it 2^4 = 16.
  OpSchema s = make_schema(op_of("matmul", {{64, 32}, {32, 16}}, {64, 16}), {});
  EXPECT_EQ(names(s), (std::vector<std::string>{"a.M", "a.K", "b.K", "b.N", "dtype"}));
  auto cands = enumerate_candidates(allowed(s, 1000));
  ASSERT_EQ(cands.size(), 16u);
  EXPECT_TRUE(cands[0].empty());  // the all-null function (no principal component) first
  Candidate mkn{{0, 1, 3}, {}};
  EXPECT_NE(std::find(cands.begin(), cands.end(), mkn), cands.end());
  EXPECT_EQ(candidate_text(mkn, s.params), "a.M*a.K*b.N");
  EXPECT_EQ(candidate_text(cands[0], s.params), "1");
  for (const auto& c : cands) EXPECT_TRUE(c.inverse.empty());
  // All distinct.
  for (size_t i = 0; i < cands.size(); ++i)
    for (size_t j = i + 1; j < cands.size(); ++j) EXPECT_FALSE(cands[i] == cands[j]);
}

TEST(LearnedPruning, ConvolutionCandidatesAndTheStrideAsInverse) {
  ModelOp conv = op_of("conv2d", {{8, 16, 32, 32}, {32, 16, 3, 3}}, {8, 32, 16, 16},
                       {{"stride_h", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1}});
  OpSchema s = make_schema(conv, {"pad_h", "pad_w", "stride_h", "stride_w"});
  EXPECT_EQ(names(s),
            (std::vector<std::string>{"x.N", "x.C", "x.H", "x.W", "w.K", "w.C", "w.R", "w.S",
                                      "pad_h", "pad_w", "stride_h", "stride_w", "dtype"}));
  // Strides and pads with two values each are modes: 2^8 functions of the dimensions.
  EXPECT_EQ(
      enumerate_candidates(allowed(s, 100, {"pad_h", "pad_w", "stride_h", "stride_w"})).size(),
      256u);
  // Strides with many values may be inverse (Figure 5): x3 each.
  auto cands = enumerate_candidates(allowed(s, 100, {"pad_h", "pad_w"}));
  EXPECT_EQ(cands.size(), 256u * 9u);
  // Eq. 2 of the paper is among them: n*h*w*c*fx*fy / (stride_h*stride_w) (here with K too).
  Candidate eq2{{0, 1, 2, 3, 4, 6, 7}, {10, 11}};
  ASSERT_NE(std::find(cands.begin(), cands.end(), eq2), cands.end());
  EXPECT_EQ(candidate_text(eq2, s.params), "x.N*x.C*x.H*x.W*w.K*w.R*w.S/stride_h/stride_w");
  auto v = extract_params(s, conv);
  ASSERT_TRUE(v);
  EXPECT_DOUBLE_EQ(log_principal_component(eq2, *v),
                   std::log(8.0 * 16 * 32 * 32 * 32 * 3 * 3 / (2 * 2)));
}

TEST(LearnedPruning, BackwardConvolutionsTakeTheSizeTheyProduce) {
  OpSchema d =
      make_schema(op_of("conv2d_bwd_data", {{8, 32, 16, 16}, {32, 16, 3, 3}}, {8, 16, 32, 32}), {});
  EXPECT_EQ(names(d), (std::vector<std::string>{"dy.N", "dy.K", "dy.P", "dy.Q", "w.K", "w.C", "w.R",
                                                "w.S", "dx.H", "dx.W", "dtype"}));
  OpSchema f = make_schema(
      op_of("conv2d_bwd_filter", {{8, 16, 32, 32}, {8, 32, 16, 16}}, {32, 16, 3, 3}), {});
  EXPECT_EQ(names(f), (std::vector<std::string>{"x.N", "x.C", "x.H", "x.W", "dy.N", "dy.K", "dy.P",
                                                "dy.Q", "dw.R", "dw.S", "dtype"}));
  EXPECT_EQ(enumerate_candidates(allowed(f, 100)).size(), 1024u);
}

TEST(LearnedPruning, ExtractFillsDefaultsAndRejectsOpsOutsideTheSchema) {
  ModelOp conv = op_of("conv2d", {{8, 16, 32, 32}, {32, 16, 3, 3}}, {8, 32, 32, 32},
                       {{"pad_h", 1}, {"pad_w", 1}});
  OpSchema s = make_schema(conv, {"pad_h", "pad_w", "stride_h", "stride_w"});
  auto v = extract_params(s, conv);
  ASSERT_TRUE(v);
  EXPECT_EQ((*v)[10].value, 1.0);  // stride_h left out of the op: its default
  EXPECT_EQ((*v)[8].value, 1.0);   // pad_h
  EXPECT_EQ((*v)[12].text, "fp32");
  ModelOp other_rank = conv;
  other_rank.inputs[0] = {8, 16, 32};
  EXPECT_FALSE(extract_params(s, other_rank));
  ModelOp grouped = conv;
  grouped.attrs["groups"] = 2;  // an attribute the schema never saw, not at its default
  EXPECT_FALSE(extract_params(s, grouped));
  grouped.attrs["groups"] = 1;
  EXPECT_TRUE(extract_params(s, grouped));
  ModelOp empty = conv;
  empty.inputs[0][0] = 0;
  EXPECT_FALSE(extract_params(s, empty));
  ModelOp wrong = conv;
  wrong.type = "matmul";
  EXPECT_FALSE(extract_params(s, wrong));
  // Exporters spell the kernel size out; it repeats the weight's shape.
  ModelOp spelled = conv;
  spelled.attrs["kernel_h"] = 3;
  spelled.attrs["kernel_w"] = 3;
  EXPECT_TRUE(extract_params(s, spelled));
  spelled.attrs["kernel_w"] = 5;
  EXPECT_FALSE(extract_params(s, spelled));
}

TEST(LearnedPruning, RowsBecomeOps) {
  ProfileRow r;
  r.op = "add";
  r.dtype = "fp16";
  r.device = "x";
  r.inputs = "3x4;3x4";
  r.output = "";
  r.attrs = "";
  r.time_s = 1e-6;
  ModelOp op = op_from_row(r);
  EXPECT_EQ(op.output, (Shape{3, 4}));  // element-wise: shaped like the first input
  EXPECT_EQ(op.dtype, DType::kFP16);
  EXPECT_EQ(row_key(r), "3x4;3x4|||fp16");
  r.inputs = "3xq";
  EXPECT_THROW(op_from_row(r), InputError);
}

}  // namespace
}  // namespace orrery
