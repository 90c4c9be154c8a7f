#include "common/suggest.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

const std::vector<std::string> kModels = {"resnet50", "resnet152", "vgg16", "vgg19", "bert_base"};

TEST(Suggest, OneTypoFindsTheName) {
  EXPECT_EQ(did_you_mean("resnt50", kModels), " (did you mean \"resnet50\"?)");
  EXPECT_EQ(did_you_mean("bret_base", kModels), " (did you mean \"bert_base\"?)");  // transposed
}

TEST(Suggest, CaseOnlyDifferenceIsTheBestMatch) {
  EXPECT_EQ(did_you_mean("VGG19", kModels), " (did you mean \"vgg19\"?)");
}

TEST(Suggest, NothingCloseGivesNoHint) {
  EXPECT_EQ(did_you_mean("transformer", kModels), "");
  EXPECT_EQ(did_you_mean("", kModels), "");
  // A three-letter name allows one edit; "abc" is five away from every model.
  EXPECT_EQ(did_you_mean("abc", kModels), "");
}

TEST(Suggest, TiesGoToTheFirstKnownName) {
  // "vgg1" is one edit from both vgg16 and vgg19.
  EXPECT_EQ(did_you_mean("vgg1", kModels), " (did you mean \"vgg16\"?)");
}

TEST(Suggest, JoinNames) {
  EXPECT_EQ(join_names({"a", "b", "c"}), "a, b, c");
  EXPECT_EQ(join_names({}), "");
}

}  // namespace
}  // namespace orrery
