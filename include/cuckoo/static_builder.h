// The static build path: all key hashes are known up front (as when RocksDB
// finishes an SST file), so placement can be planned instead of random. Owns
// hash sorting and deduplication, deterministic placement at high load, and
// growth of the table when a placement fails.
//
// Placement
// ---------
// 1. Sort and deduplicate the hashes. Equal hashes would be equal fingerprints
//    in the same bucket pair, which wastes slots and overflows a pair after 2b
//    copies; they answer lookups identically, so one copy suffices. The sort
//    is an MSD radix pass on the top bits (linear time on hashes), and since
//    the primary bucket is a monotone function of the top 32 bits, the sorted
//    order is also primary-bucket order.
// 2. Put every fingerprint into its primary bucket while it has room: a
//    sequential sweep over the table.
// 3. Put each overflowing fingerprint into its alternate bucket if it has
//    room.
// 4. For the rest, breadth-first search from both buckets over "move this
//    fingerprint to its other bucket" edges, each bucket visited at most once,
//    until a bucket with a free slot is found; then shift the fingerprints
//    along the path, which frees a slot in one of the key's own buckets. The
//    search is bounded; if it fails, the build restarts with ~1.6% more
//    buckets. Nothing is random, so the same input gives the same table.
// For two choices and b = 4 the offline load threshold is about 98%, and
// short augmenting paths exist well past 95%, so step 4 rarely searches far.
// The work arrays use a whole 32-bit word per slot; the packed (and possibly
// semi-sorted) table is written once at the end.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "cuckoo/bucket_table.h"
#include "cuckoo/hashing.h"

namespace cuckoo {

struct StaticBuildStats {
  uint64_t input_hashes = 0;
  uint64_t unique_hashes = 0;
  uint64_t placed_primary = 0;
  uint64_t placed_alternate = 0;
  uint64_t placed_by_search = 0;
  uint64_t searched_nodes = 0;
  uint32_t attempts = 0;
  uint32_t num_buckets = 0;
  double load_factor = 0.0;
};

// Sorts *hashes ascending and removes duplicates, in expected linear time.
inline void SortAndUnique(std::vector<uint64_t>* hashes) {
  std::vector<uint64_t>& h = *hashes;
  const size_t n = h.size();
  if (n < 256) {
    std::sort(h.begin(), h.end());
  } else {
    // About 16 hashes per bin: the bin counters stay cache-resident, and
    // insertion sort of a bin is cheap.
    int bin_bits = 1;
    while ((size_t{16} << bin_bits) < n && bin_bits < 22) ++bin_bits;
    const int shift = 64 - bin_bits;
    std::vector<uint32_t> starts((size_t{1} << bin_bits) + 1, 0);
    for (uint64_t value : h) ++starts[(value >> shift) + 1];
    for (size_t bin = 1; bin < starts.size(); ++bin) {
      starts[bin] += starts[bin - 1];
    }
    std::vector<uint64_t> sorted(n);
    std::vector<uint32_t> next(starts.begin(), starts.end() - 1);
    for (uint64_t value : h) sorted[next[value >> shift]++] = value;
    for (size_t bin = 0; bin + 1 < starts.size(); ++bin) {
      uint64_t* begin = sorted.data() + starts[bin];
      uint64_t* end = sorted.data() + starts[bin + 1];
      if (end - begin > 64) {
        std::sort(begin, end);
        continue;
      }
      for (uint64_t* i = begin + 1; i < end; ++i) {
        const uint64_t value = *i;
        uint64_t* j = i;
        for (; j > begin && *(j - 1) > value; --j) *j = *(j - 1);
        *j = value;
      }
    }
    h.swap(sorted);
  }
  h.erase(std::unique(h.begin(), h.end()), h.end());
}

// Places sorted, unique hashes into a table of num_buckets (even) buckets.
// Returns nullopt when the bounded search cannot place some key.
inline std::optional<BucketTable> PlaceSortedUniqueHashes(
    const std::vector<uint64_t>& hashes, const BucketLayout& layout,
    uint32_t num_buckets, StaticBuildStats* stats) {
  constexpr size_t kMaxSearchNodes = 8192;
  const CuckooHashing hashing(num_buckets, layout.fingerprint_bits);
  const uint32_t b = static_cast<uint32_t>(layout.bucket_size);
  std::vector<uint32_t> slots(static_cast<size_t>(num_buckets) * b, 0);
  std::vector<uint8_t> fill(num_buckets, 0);
  auto place = [&](uint32_t bucket, uint32_t fingerprint) {
    slots[static_cast<size_t>(bucket) * b + fill[bucket]++] = fingerprint;
  };

  std::vector<uint64_t> overflow;
  for (uint64_t hash : hashes) {
    const uint32_t bucket = hashing.PrimaryBucket(hash);
    if (fill[bucket] < b) {
      place(bucket, hashing.Fingerprint(hash));
      ++stats->placed_primary;
    } else {
      overflow.push_back(hash);
    }
  }

  std::vector<uint64_t> unplaced;
  for (uint64_t hash : overflow) {
    const uint32_t fingerprint = hashing.Fingerprint(hash);
    const uint32_t alt =
        hashing.AltBucket(hashing.PrimaryBucket(hash), fingerprint);
    if (fill[alt] < b) {
      place(alt, fingerprint);
      ++stats->placed_alternate;
    } else {
      unplaced.push_back(hash);
    }
  }

  struct Node {
    uint32_t bucket;
    int32_t parent;  // index in `queue`, -1 for the key's own buckets
    uint32_t slot;   // slot of the parent bucket whose fingerprint moves here
  };
  std::vector<Node> queue;
  std::vector<uint32_t> visited_epoch(unplaced.empty() ? 0 : num_buckets, 0);
  uint32_t epoch = 0;
  for (uint64_t hash : unplaced) {
    const uint32_t fingerprint = hashing.Fingerprint(hash);
    const uint32_t primary = hashing.PrimaryBucket(hash);
    const uint32_t alt = hashing.AltBucket(primary, fingerprint);
    ++epoch;
    queue.clear();
    queue.push_back({primary, -1, 0});
    queue.push_back({alt, -1, 0});
    visited_epoch[primary] = visited_epoch[alt] = epoch;
    bool placed = false;
    for (size_t head = 0; head < queue.size() && !placed; ++head) {
      const uint32_t bucket = queue[head].bucket;
      for (uint32_t slot = 0; slot < b; ++slot) {
        const uint32_t moving = slots[static_cast<size_t>(bucket) * b + slot];
        const uint32_t target = hashing.AltBucket(bucket, moving);
        if (fill[target] < b) {
          // Shift along the path: each fingerprint moves to its other
          // bucket, freeing a slot in the bucket before it.
          place(target, moving);
          uint32_t free_bucket = bucket;
          uint32_t free_slot = slot;
          for (int32_t node = static_cast<int32_t>(head);
               queue[static_cast<size_t>(node)].parent >= 0;) {
            const Node& child = queue[static_cast<size_t>(node)];
            const uint32_t parent_bucket =
                queue[static_cast<size_t>(child.parent)].bucket;
            slots[static_cast<size_t>(free_bucket) * b + free_slot] =
                slots[static_cast<size_t>(parent_bucket) * b + child.slot];
            free_bucket = parent_bucket;
            free_slot = child.slot;
            node = child.parent;
          }
          slots[static_cast<size_t>(free_bucket) * b + free_slot] = fingerprint;
          placed = true;
          break;
        }
        if (queue.size() < kMaxSearchNodes && visited_epoch[target] != epoch) {
          visited_epoch[target] = epoch;
          queue.push_back({target, static_cast<int32_t>(head), slot});
        }
      }
    }
    stats->searched_nodes += queue.size();
    if (!placed) return std::nullopt;
    ++stats->placed_by_search;
  }

  BucketTable table(layout, num_buckets);
  uint32_t scratch[kMaxBucketSize];
  for (uint32_t bucket = 0; bucket < num_buckets; ++bucket) {
    if (fill[bucket] == 0) continue;
    std::copy_n(slots.data() + static_cast<size_t>(bucket) * b, b, scratch);
    table.WriteBucket(bucket, scratch);
  }
  return table;
}

// Bucket count for `keys` keys at load factor `load` (even, at least 2).
inline uint32_t BucketsForLoad(uint64_t keys, int bucket_size, double load) {
  const double wanted =
      std::ceil(static_cast<double>(keys) / (bucket_size * load));
  return static_cast<uint32_t>(ValidBucketCount(static_cast<uint64_t>(wanted)));
}

// Builds a table for sorted, unique hashes at `target_load`
// (0 < target_load <= 1), growing it until every key is placed.
inline BucketTable BuildStaticTableFromSortedUnique(
    const std::vector<uint64_t>& hashes, const BucketLayout& layout,
    double target_load, StaticBuildStats* stats = nullptr) {
  StaticBuildStats local_stats;
  StaticBuildStats& s = stats != nullptr ? *stats : local_stats;
  std::string problem = layout.Validate();
  if (!problem.empty())
    throw std::invalid_argument("cuckoo filter: " + problem);
  if (!(target_load > 0.0 && target_load <= 1.0)) {
    throw std::invalid_argument("cuckoo filter: target load " +
                                std::to_string(target_load) +
                                " is outside (0, 1]");
  }
  s.unique_hashes = hashes.size();
  s.attempts = 0;
  uint32_t num_buckets =
      BucketsForLoad(hashes.size(), layout.bucket_size, target_load);
  for (;;) {
    ++s.attempts;
    s.placed_primary = s.placed_alternate = s.placed_by_search = 0;
    std::optional<BucketTable> table =
        PlaceSortedUniqueHashes(hashes, layout, num_buckets, &s);
    if (table) {
      s.num_buckets = num_buckets;
      s.load_factor = static_cast<double>(hashes.size()) /
                      (static_cast<double>(num_buckets) * layout.bucket_size);
      return std::move(*table);
    }
    num_buckets = static_cast<uint32_t>(
        ValidBucketCount(uint64_t{num_buckets} + num_buckets / 64 + 2));
  }
}

// Sorts and deduplicates *hashes, then builds a table at `target_load`.
inline BucketTable BuildStaticTable(std::vector<uint64_t>* hashes,
                                    const BucketLayout& layout,
                                    double target_load,
                                    StaticBuildStats* stats = nullptr) {
  StaticBuildStats local_stats;
  StaticBuildStats& s = stats != nullptr ? *stats : local_stats;
  s = StaticBuildStats{};
  s.input_hashes = hashes->size();
  SortAndUnique(hashes);
  return BuildStaticTableFromSortedUnique(*hashes, layout, target_load, &s);
}

}  // namespace cuckoo
