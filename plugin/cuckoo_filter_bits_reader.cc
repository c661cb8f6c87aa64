// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The policy's FilterBitsReader (see the header).
#include "cuckoo_filter_bits_reader.h"

#include <algorithm>
#include <cstddef>

#include "cuckoo/hashing.h"
#include "cuckoo/table_types.h"

namespace rocksdb_cuckoo {

using ROCKSDB_NAMESPACE::FilterBitsReader;
using ROCKSDB_NAMESPACE::Slice;

namespace {

// Probes a filter block in place. Stateless and const after construction, so
// one reader serves all threads. Table is the block's table type
// (cuckoo::VisitTable): compiled for its layout and bucket count where it can
// be, else cuckoo::AnyLayoutTable.
template <typename Table>
class CuckooFilterBitsReader : public FilterBitsReader {
 public:
  explicit CuckooFilterBitsReader(const DecodedBlock& block)
      : hashing_(block.num_buckets, block.layout.fingerprint_bits),
        table_(block.layout, block.num_buckets, block.table) {}

  bool MayMatch(const Slice& key) override {
    const cuckoo::KeyPosition position =
        Table::Locate(hashing_, cuckoo::HashKey(key.data(), key.size()));
    // Both cache misses start before either bucket is decoded.
    Table::Prefetch(table_, position);
    return Table::Contains(table_, position);
  }

  // The MultiGet path.
  void MayMatch(int num_keys, Slice** keys, bool* may_match) override {
    MayMatchEach(
        num_keys < 0 ? 0 : static_cast<size_t>(num_keys),
        [keys](size_t i) {
          return cuckoo::HashKey(keys[i]->data(), keys[i]->size());
        },
        may_match);
  }

  // may_match[i] for hashes[i], a key's cuckoo::HashKey.
  void MayMatchHashes(size_t count, const uint64_t* hashes,
                      bool* may_match) const {
    MayMatchEach(
        count, [hashes](size_t i) { return hashes[i]; }, may_match);
  }

 private:
  // Locates every key from its hash and prefetches both of its buckets
  // before the first probe, so the cache misses overlap.
  template <typename HashOf>
  void MayMatchEach(size_t count, HashOf&& hash_of, bool* may_match) const {
    cuckoo::LocatePrefetchProbe(
        count, [&](size_t i) { return Table::Locate(hashing_, hash_of(i)); },
        [&](const cuckoo::KeyPosition& position)
            CUCKOO_INLINE_LAMBDA { Table::Prefetch(table_, position); },
        [&](size_t i, const cuckoo::KeyPosition& position) {
          may_match[i] = Table::Contains(table_, position);
        });
  }

  const cuckoo::CuckooHashing hashing_;
  const cuckoo::BucketTableView table_;
};

// For blocks this build cannot read: every key may match.
class AlwaysMatchBitsReader : public FilterBitsReader {
 public:
  bool MayMatch(const Slice&) override { return true; }
  void MayMatch(int num_keys, Slice**, bool* may_match) override {
    for (int i = 0; i < num_keys; ++i) may_match[i] = true;
  }
};

}  // namespace

FilterBitsReader* NewCuckooFilterBitsReader(const DecodedBlock& block) {
  FilterBitsReader* reader = nullptr;
  cuckoo::VisitTable(
      block.layout,
      cuckoo::CuckooHashing(block.num_buckets, block.layout.fingerprint_bits),
      [&](auto table) {
        reader = new CuckooFilterBitsReader<decltype(table)>(block);
      });
  return reader;
}

bool MayMatchEveryHash(const DecodedBlock& block,
                       const std::deque<uint64_t>& hashes) {
  bool every = true;
  cuckoo::VisitTable(
      block.layout,
      cuckoo::CuckooHashing(block.num_buckets, block.layout.fingerprint_bits),
      [&](auto table) {
        const CuckooFilterBitsReader<decltype(table)> reader(block);
        constexpr size_t kChunk = 256;
        uint64_t chunk[kChunk];
        bool found[kChunk];
        for (size_t start = 0; every && start < hashes.size();
             start += kChunk) {
          const size_t count = std::min(kChunk, hashes.size() - start);
          std::copy_n(hashes.begin() + static_cast<std::ptrdiff_t>(start),
                      count, chunk);
          reader.MayMatchHashes(count, chunk, found);
          every = std::all_of(found, found + count, [](bool f) { return f; });
        }
      });
  return every;
}

FilterBitsReader* NewAlwaysMatchBitsReader() {
  return new AlwaysMatchBitsReader();
}

}  // namespace rocksdb_cuckoo
