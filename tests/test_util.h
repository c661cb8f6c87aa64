// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Helpers shared by the core tests: deterministic key streams.
#pragma once

#include <cstdint>
#include <vector>

namespace cuckoo {
namespace testing {

// SplitMix64: a deterministic stream of well-mixed 64-bit values.
class HashStream {
 public:
  explicit HashStream(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::vector<uint64_t> Take(size_t count) {
    std::vector<uint64_t> values(count);
    for (uint64_t& value : values) value = Next();
    return values;
  }

 private:
  uint64_t state_;
};

}  // namespace testing
}  // namespace cuckoo
