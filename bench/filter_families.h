// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Shared by the benchmarks that drive filters through RocksDB's
// FilterBitsBuilder/FilterBitsReader directly (filter_micro_bench and the
// equal-FPR view of filter_compare): the policies by family name, and sets of
// fixed-size keys in one buffer.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cuckoo_filter_policy.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/slice.h"

namespace filter_bench {

// bloom (the built-in Bloom filter, format_version 5), ribbon (always
// Ribbon), or cuckoo, with a bits-per-key budget.
inline std::unique_ptr<const ROCKSDB_NAMESPACE::FilterPolicy> MakeFilterPolicy(
    const std::string& family, int bits) {
  if (family == "bloom") {
    return std::unique_ptr<const ROCKSDB_NAMESPACE::FilterPolicy>(
        ROCKSDB_NAMESPACE::NewBloomFilterPolicy(bits, false));
  }
  if (family == "ribbon") {
    return std::unique_ptr<const ROCKSDB_NAMESPACE::FilterPolicy>(
        ROCKSDB_NAMESPACE::NewRibbonFilterPolicy(bits,
                                                 /*bloom_before_level=*/-1));
  }
  return std::make_unique<rocksdb_cuckoo::CuckooFilterPolicy>(bits);
}

// Key i of a set: its index in big-endian bytes, then 8 bytes of `tag`, so
// sets with different tags are disjoint.
class FixedKeys {
 public:
  static constexpr size_t kKeyBytes = 16;
  FixedKeys(uint64_t count, char tag) : bytes_(count * kKeyBytes) {
    for (uint64_t i = 0; i < count; ++i) {
      char* key = bytes_.data() + i * kKeyBytes;
      for (int b = 0; b < 8; ++b) {
        key[b] = static_cast<char>(i >> (8 * (7 - b)));
      }
      std::memset(key + 8, tag, kKeyBytes - 8);
    }
  }
  uint64_t size() const { return bytes_.size() / kKeyBytes; }
  ROCKSDB_NAMESPACE::Slice operator[](uint64_t i) const {
    return ROCKSDB_NAMESPACE::Slice(bytes_.data() + i * kKeyBytes, kKeyBytes);
  }

 private:
  std::vector<char> bytes_;
};

}  // namespace filter_bench
