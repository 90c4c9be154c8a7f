// FlatIndex (common/flat_index.h) against std::map: every key inserted is found with its
// latest value, keys never inserted are not, across the table's growth.
#include "common/flat_index.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace orrery {
namespace {

TEST(FlatIndex, FindsWhatWasInsertedAcrossGrowth) {
  FlatIndex index;
  std::map<int64_t, int> want;
  std::mt19937_64 rng(11);
  for (int k = 0; k < 20000; ++k) {
    // Route-like keys: (source << 32 | destination) << 1 | flag, many sharing a source.
    const int64_t src = static_cast<int64_t>(rng() % 3000),
                  dst = static_cast<int64_t>(rng() % 3000);
    const int64_t key = ((src << 32) | dst) << 1 | static_cast<int64_t>(rng() % 2);
    index.insert(key, k);
    want[key] = k;
  }
  EXPECT_EQ(index.size(), want.size());
  for (const auto& [key, value] : want) {
    const int* got = index.find(key);
    ASSERT_NE(got, nullptr) << key;
    EXPECT_EQ(*got, value);
  }
  EXPECT_EQ(index.find(int64_t{1} << 60), nullptr);
  EXPECT_EQ(FlatIndex().find(0), nullptr);
}

TEST(FlatIndex, ReplacesAValue) {
  FlatIndex index;
  index.insert(0, 1);
  index.insert(0, 2);
  ASSERT_NE(index.find(0), nullptr);
  EXPECT_EQ(*index.find(0), 2);
  EXPECT_EQ(index.size(), 1u);
}

}  // namespace
}  // namespace orrery
