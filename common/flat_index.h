// FlatIndex: non-negative 64-bit keys to int values in one open-addressed array (linear probing,
// at most half full), for lookups on a simulator's hot path. A lookup reads one or two
// neighbouring slots where a vector of per-source lists or std::unordered_map chases two or
// three pointers, each a cache miss once the table outgrows the caches (a route per flow at
// 16,384 GPUs). Keys are never removed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace orrery {

class FlatIndex {
 public:
  // The value stored for `key`, or nullptr.
  const int* find(int64_t key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key < 0) return nullptr;
    }
  }

  // Stores `value` for `key` (key >= 0), replacing what was there.
  void insert(int64_t key, int value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_ += put(key, value);
  }

  size_t size() const { return size_; }

 private:
  struct Slot {
    int64_t key = -1;  // -1: empty
    int value = 0;
  };

  size_t home(int64_t key) const {
    // Fibonacci hashing: the high bits of key x 2^64/phi spread neighbouring keys apart.
    return static_cast<size_t>((static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  bool put(int64_t key, int value) {  // true when the key is new
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == key) {
        s.value = value;
        return false;
      }
      if (s.key < 0) {
        s = {key, value};
        return true;
      }
    }
  }

  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    const size_t capacity = old.empty() ? 64 : 2 * old.size();
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c >>= 1) --shift_;
    for (const Slot& s : old)
      if (s.key >= 0) put(s.key, s.value);
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
  int shift_ = 64;
};

}  // namespace orrery
