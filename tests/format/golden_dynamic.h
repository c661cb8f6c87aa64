// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The golden dynamic filters in tests/format/golden: how each was built
// (layout, growth, key hasher, keys, operations), so that the format tests
// can build it again and compare bytes, and which keys each must find. The
// formats are in docs/dynamic-filter-format.md. RocksDB-free, so that these
// tests run on big-endian hosts too.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cuckoo/concurrent_cuckoo_filter.h"
#include "cuckoo/cuckoo_filter.h"
#include "cuckoo/dynamic_filter_format.h"
#include "cuckoo/hashing.h"

namespace cuckoo_golden {

// A dynamic filter and the keys it stores (as hashes).
struct GoldenDynamicFilter {
  cuckoo::CuckooFilter filter;
  std::vector<uint64_t> stored;
};

// Integer keys 1, 2, ... into 4 buckets of 2 plain 8-bit slots, until the
// table and the stash of 4 are full; then key 1 is erased. The stash holds
// keys, the counters are not 0, and the key hasher is the integer one.
inline GoldenDynamicFilter PlainIntegerFilter() {
  cuckoo::CuckooFilterOptions options;
  options.layout = cuckoo::BucketLayout{2, 8, false};
  options.max_kicks = 20;
  options.stash_capacity = 4;
  options.seed = 7;
  options.hasher = cuckoo::KeyHasher::kInteger;
  GoldenDynamicFilter golden{cuckoo::CuckooFilter(4, options), {}};
  for (uint64_t key = 1;; ++key) {
    const uint64_t hash = cuckoo::HashInteger(key);
    if (golden.filter.Insert(hash) != cuckoo::InsertResult::kOk) break;
    if (key != 1) golden.stored.push_back(hash);
  }
  golden.filter.Erase(cuckoo::HashInteger(1));
  return golden;
}

// Byte-string keys "golden-0000000", ... (XXH3) into a semi-sorted filter of
// 8-bit key fingerprints that starts with 2 buckets of 4 and may double 3
// times: 24 keys make it grow twice, so its slots have 1 growth bit left.
// The code of 815a5ce, before the key hasher was recorded, writes the same
// bytes: this is also the golden of a filter from then, which loads as XXH3.
inline GoldenDynamicFilter GrownSemiSortedFilter() {
  cuckoo::CuckooFilterOptions options;
  options.layout = cuckoo::BucketLayout{4, 8, true};
  options.expansion = 2;
  options.max_growths = 3;
  options.seed = 8;
  GoldenDynamicFilter golden{cuckoo::CuckooFilter(2, options), {}};
  for (uint32_t i = 0; i < 24; ++i) {
    char key[32];
    std::snprintf(key, sizeof(key), "golden-%07u", i);
    const uint64_t hash = cuckoo::HashKey(key, std::strlen(key));
    if (golden.filter.Insert(hash) == cuckoo::InsertResult::kOk) {
      golden.stored.push_back(hash);
    }
  }
  return golden;
}

// PlainIntegerFilter's dump in chunks of at most 48 payload bytes.
inline constexpr size_t kGoldenChunkPayload = 48;
inline std::vector<std::vector<uint8_t>> PlainIntegerChunks() {
  const GoldenDynamicFilter golden = PlainIntegerFilter();
  cuckoo::CuckooFilterDumper dumper(golden.filter, kGoldenChunkPayload);
  std::vector<std::vector<uint8_t>> chunks;
  std::vector<uint8_t> chunk;
  while (dumper.Next(&chunk)) chunks.push_back(chunk);
  return chunks;
}

// Integer keys 0 to 39 into a filter of 2 shards of 8 buckets of 4 plain
// 12-bit slots.
inline constexpr uint64_t kGoldenShardedKeys = 40;
inline std::vector<uint8_t> ShardedIntegerFilterBytes() {
  cuckoo::CuckooFilterOptions options;
  options.layout = cuckoo::BucketLayout{4, 12, false};
  options.seed = 9;
  options.hasher = cuckoo::KeyHasher::kInteger;
  cuckoo::ConcurrentCuckooFilter filter(16, options, 2);
  for (uint64_t key = 0; key < kGoldenShardedKeys; ++key) {
    filter.Insert(cuckoo::HashInteger(key));
  }
  return filter.Serialize();
}

// The files, in tests/format/golden.
inline const char kPlainIntegerFile[] = "dynamic-plain-integer.ckf";
inline const char kGrownSemiSortedFile[] = "dynamic-grown-semisorted.ckf";
inline std::string ChunkFile(size_t i) {
  return "dynamic-plain-integer.chunk" + std::to_string(i) + ".ckc";
}
inline const char kShardedFile[] = "sharded-integer.cks";

}  // namespace cuckoo_golden
