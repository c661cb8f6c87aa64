// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Helpers shared by the core tests: deterministic key streams, and the
// serialization round trip.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuckoo/concurrent_cuckoo_filter.h"
#include "cuckoo/dynamic_filter_format.h"

namespace cuckoo {
namespace testing {

// `filter` serialized and read back. The copy must serialize to the same
// bytes; when it does not load, the reason is a test failure and the result
// empty.
inline std::optional<CuckooFilter> RoundTrip(const CuckooFilter& filter) {
  const std::vector<uint8_t> bytes = SerializeCuckooFilter(filter);
  std::string error;
  std::optional<CuckooFilter> back =
      DeserializeCuckooFilter(bytes.data(), bytes.size(), &error);
  if (!back.has_value()) {
    ADD_FAILURE() << "the serialized filter does not load: " << error;
  } else {
    EXPECT_EQ(SerializeCuckooFilter(*back), bytes);
  }
  return back;
}

inline std::unique_ptr<ConcurrentCuckooFilter> RoundTrip(
    const ConcurrentCuckooFilter& filter) {
  const std::vector<uint8_t> bytes = filter.Serialize();
  std::string error;
  std::unique_ptr<ConcurrentCuckooFilter> back =
      ConcurrentCuckooFilter::Deserialize(bytes.data(), bytes.size(), &error);
  if (back == nullptr) {
    ADD_FAILURE() << "the serialized filter does not load: " << error;
  } else {
    EXPECT_EQ(back->Serialize(), bytes);
  }
  return back;
}

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
