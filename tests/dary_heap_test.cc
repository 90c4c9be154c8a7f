// DaryHeap (common/dary_heap.h) against a sort: the same elements come out in the same order.
#include "common/dary_heap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

namespace orrery {
namespace {

struct ByFirstThenSecond {
  bool operator()(const std::pair<double, int>& a, const std::pair<double, int>& b) const {
    return a.first != b.first ? a.first < b.first : a.second < b.second;
  }
};

TEST(DaryHeap, PopsInSortedOrderWithPushesInBetween) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> date(0, 50);  // many equal dates: the ties decide
  DaryHeap<std::pair<double, int>, ByFirstThenSecond> heap;
  std::vector<std::pair<double, int>> pending, popped, expected;
  int id = 0;
  for (int round = 0; round < 200; ++round) {
    const int pushes = static_cast<int>(rng() % 40);
    for (int k = 0; k < pushes; ++k) {
      const std::pair<double, int> e{date(rng) * 0.5, id++};
      heap.push(e);
      pending.push_back(e);
    }
    const int pops = static_cast<int>(rng() % 40);
    for (int k = 0; k < pops && !heap.empty(); ++k) {
      auto lowest = std::min_element(pending.begin(), pending.end(), ByFirstThenSecond());
      ASSERT_EQ(heap.top(), *lowest) << "round " << round;
      pending.erase(lowest);
      heap.pop();
    }
    ASSERT_EQ(heap.size(), pending.size());
  }
  std::sort(pending.begin(), pending.end(), ByFirstThenSecond());
  for (const auto& e : pending) {
    ASSERT_FALSE(heap.empty());
    EXPECT_EQ(heap.top(), e);
    heap.pop();
  }
  EXPECT_TRUE(heap.empty());
}

TEST(DaryHeap, OneElementEmptyAndCleared) {
  DaryHeap<std::pair<double, int>, ByFirstThenSecond> heap;
  EXPECT_TRUE(heap.empty());
  heap.push({1.0, 3});
  EXPECT_EQ(heap.top(), std::make_pair(1.0, 3));
  heap.pop();
  EXPECT_TRUE(heap.empty());
  EXPECT_EQ(heap.size(), 0u);
  for (int k = 0; k < 10; ++k) heap.push({10.0 - k, k});
  heap.clear();
  EXPECT_TRUE(heap.empty());
  heap.push({2.0, 1});
  EXPECT_EQ(heap.top(), std::make_pair(2.0, 1));
}

}  // namespace
}  // namespace orrery
