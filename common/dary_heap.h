// DaryHeap: a min-heap of T in which each node has four children, for the simulators' event
// queues. A pop walks half as many levels as a binary heap's and reads each level's children
// from one or two cache lines: with tens of thousands of pending events (a ring step of a
// 4,096-GPU job) std::priority_queue's sift-down was a quarter of the replay.
//
// Pops come out in the order `Less` defines; elements that compare equal come out in an
// unspecified order, as from std::priority_queue, so callers that need determinism give a
// total order.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace orrery {

template <class T, class Less>
class DaryHeap {
 public:
  bool empty() const { return v_.empty(); }
  size_t size() const { return v_.size(); }
  const T& top() const { return v_.front(); }
  void clear() { v_.clear(); }

  void push(const T& x) {
    size_t i = v_.size();
    v_.push_back(x);
    while (i > 0) {
      const size_t parent = (i - 1) / kArity;
      if (!less_(x, v_[parent])) break;
      v_[i] = v_[parent];
      i = parent;
    }
    v_[i] = x;
  }

  void pop() {
    const T last = v_.back();
    v_.pop_back();
    const size_t n = v_.size();
    if (n == 0) return;
    size_t i = 0;
    for (;;) {
      const size_t first = kArity * i + 1;
      if (first >= n) break;
      size_t best = first;
      const size_t end = first + kArity < n ? first + kArity : n;
      for (size_t c = first + 1; c < end; ++c)
        if (less_(v_[c], v_[best])) best = c;
      if (!less_(v_[best], last)) break;
      v_[i] = v_[best];
      i = best;
    }
    v_[i] = last;
  }

 private:
  static constexpr size_t kArity = 4;
  std::vector<T> v_;
  Less less_;
};

}  // namespace orrery
