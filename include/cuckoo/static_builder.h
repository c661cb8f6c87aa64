// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The static build path: all key hashes are known up front (as when RocksDB
// finishes an SST file), so placement can be planned instead of random. Owns
// deterministic placement at high load, and the sizing and growth of the
// table around it.
//
// Placement
// ---------
// The hashes come in any order and may repeat. Two hashes with the same bucket
// pair and fingerprint are indistinguishable to a lookup, so one entry serves
// both: before a fingerprint is placed, both of its buckets are checked for
// it. This removes repeated keys without sorting, and also shares an entry
// between the few distinct keys that collide completely (about 2b*load/2^f of
// them), which only frees slots.
// 1. Two-choice greedy pass, in input order: each fingerprint goes into the
//    emptier of its two buckets while one has room. Both buckets of the key a
//    few positions ahead are prefetched, so the pass runs at memory
//    parallelism rather than latency. At b = 4 this places about 96% of the
//    keys at 90% load and 94% at 95% load.
// 2. For the rest, breadth-first search from both buckets over "move this
//    fingerprint to its other bucket" edges, each bucket visited at most once,
//    until a bucket with a free slot is found; then shift the fingerprints
//    along the path, which frees a slot in one of the key's own buckets. The
//    search is bounded; if it fails, the build restarts with ~1.6% more
//    buckets. Nothing is random, so the same input gives the same table.
// For two choices and b = 4 the offline load threshold is about 98%, and
// short augmenting paths exist well past 95%, so step 2 rarely searches far.
//
// The table is sized from the number of hashes given. When shared entries
// leave it noticeably emptier than planned (repeated keys that were not
// adjacent in the input), it is rebuilt once at the size of what it stores,
// so a filter's size follows its distinct keys. The work array holds one
// 16-bit word per slot for fingerprints up to 16 bits (32-bit above), zero
// meaning empty and each bucket filled from its first slot; the packed (and
// possibly semi-sorted) table is written once at the end.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cuckoo/bucket_table.h"
#include "cuckoo/hashing.h"

namespace cuckoo {

struct StaticBuildStats {
  uint64_t input_hashes = 0;
  uint64_t stored_entries = 0;    // fingerprints in the table
  uint64_t shared_entries = 0;    // hashes served by an existing entry
  uint64_t placed_greedily = 0;   // by the two-choice pass
  uint64_t placed_by_search = 0;  // by the breadth-first search
  uint64_t searched_nodes = 0;
  uint32_t attempts = 0;  // placements tried, across growth and the resize
  uint32_t num_buckets = 0;
  double load_factor = 0.0;  // stored entries per slot
};

namespace static_build_internal {

// The work array of a placement: kBucketSize slots per bucket (a constant,
// so the bucket scans below unroll), zero for empty, each bucket filled from
// its first slot.
template <typename Slot, uint32_t kBucketSize>
class SlotArray {
 public:
  explicit SlotArray(uint32_t num_buckets)
      : slots_(static_cast<size_t>(num_buckets) * kBucketSize, 0) {}

  Slot* bucket(uint32_t index) {
    return slots_.data() + static_cast<size_t>(index) * kBucketSize;
  }
  void Prefetch(uint32_t index) { __builtin_prefetch(bucket(index), 1); }

  uint32_t Fill(uint32_t index) {
    const Slot* s = bucket(index);
    if constexpr (kOneWord) {
      // Slots fill from the front, so the lowest zero lane is the fill.
      const uint64_t empty = bits::ZeroLanes(Word(s), kLaneOnes, kLaneTops);
      return empty == 0
                 ? kBucketSize
                 : static_cast<uint32_t>(__builtin_ctzll(empty)) / kLaneBits;
    }
    uint32_t fill = 0;
    for (uint32_t k = 0; k < kBucketSize; ++k) fill += s[k] != 0;
    return fill;
  }
  bool Holds(uint32_t index, uint32_t fingerprint) {
    const Slot* s = bucket(index);
    if constexpr (kOneWord) {
      return bits::ZeroLanes(Word(s) ^ (fingerprint * kLaneOnes), kLaneOnes,
                             kLaneTops) != 0;
    }
    bool found = false;
    for (uint32_t k = 0; k < kBucketSize; ++k) found |= s[k] == fingerprint;
    return found;
  }
  // Appends to a bucket that has room.
  void Append(uint32_t index, uint32_t fingerprint) {
    bucket(index)[Fill(index)] = static_cast<Slot>(fingerprint);
  }

 private:
  // A bucket of one 64-bit word (4 x 16 or 2 x 32 bits) is scanned lane-wise
  // in parallel.
  static constexpr bool kOneWord = sizeof(Slot) * kBucketSize == 8;
  static constexpr int kLaneBits = 8 * sizeof(Slot);
  static constexpr uint64_t kLaneOnes =
      kLaneBits == 16 ? 0x0001000100010001ull : 0x0000000100000001ull;
  static constexpr uint64_t kLaneTops = kLaneOnes << (kLaneBits - 1);

  // The bucket as one word with slot k in lane k (bits [k * kLaneBits,
  // (k + 1) * kLaneBits)) on either byte order: Fill's lowest zero lane must
  // be the first empty slot, and ZeroLanes is exact only for the lowest.
  static uint64_t Word(const Slot* s) {
    uint64_t word;
    std::memcpy(&word, s, sizeof(word));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    // Big-endian memory puts slot 0 in the top lane: reverse the lanes.
    word = (word >> 32) | (word << 32);
    if constexpr (kLaneBits == 16) {
      word = ((word >> 16) & 0x0000FFFF0000FFFFull) |
             ((word & 0x0000FFFF0000FFFFull) << 16);
    }
#endif
    return word;
  }

  std::vector<Slot> slots_;
};

// Breadth-first search for a path of moves that frees a slot in one of the
// key's buckets, then the moves and the placement. False if the bounded
// search finds no free slot.
template <typename Slot, uint32_t kBucketSize, typename Table>
class AugmentingPathSearch {
 public:
  AugmentingPathSearch(const CuckooHashing& hashing,
                       SlotArray<Slot, kBucketSize>* slots)
      : hashing_(hashing),
        slots_(*slots),
        visited_epoch_(hashing.num_buckets(), 0) {}

  bool Place(const KeyPosition& key, uint64_t* searched_nodes) {
    ++epoch_;
    queue_.clear();
    Visit(key.bucket, -1, 0);
    Visit(key.alternate, -1, 0);
    for (size_t head = 0; head < queue_.size(); ++head) {
      const uint32_t bucket = queue_[head].bucket;
      // The b targets are independent cache misses: start them all at once.
      uint32_t targets[kBucketSize];
      for (uint32_t slot = 0; slot < kBucketSize; ++slot) {
        targets[slot] =
            Table::AltBucket(hashing_, bucket, slots_.bucket(bucket)[slot]);
        slots_.Prefetch(targets[slot]);
        __builtin_prefetch(&visited_epoch_[targets[slot]]);
      }
      for (uint32_t slot = 0; slot < kBucketSize; ++slot) {
        const uint32_t moving = slots_.bucket(bucket)[slot];
        const uint32_t target = targets[slot];
        if (slots_.Fill(target) < kBucketSize) {
          slots_.Append(target, moving);
          ShiftAlongPath(head, slot, key.fingerprint);
          *searched_nodes += queue_.size();
          return true;
        }
        if (queue_.size() < kMaxSearchNodes &&
            visited_epoch_[target] != epoch_) {
          Visit(target, static_cast<int32_t>(head), slot);
        }
      }
    }
    *searched_nodes += queue_.size();
    return false;
  }

 private:
  static constexpr size_t kMaxSearchNodes = 8192;

  struct Node {
    uint32_t bucket;
    int32_t parent;  // index in queue_, -1 for the key's own buckets
    uint32_t slot;   // slot of the parent bucket whose fingerprint moves here
  };

  void Visit(uint32_t bucket, int32_t parent, uint32_t slot) {
    visited_epoch_[bucket] = epoch_;
    queue_.push_back({bucket, parent, slot});
  }

  // The fingerprint in (queue_[node].bucket, slot) has just moved out; each
  // fingerprint on the path to the root moves to its other bucket into the
  // slot freed before it, and the new key takes the last freed slot.
  void ShiftAlongPath(size_t node, uint32_t slot, uint32_t fingerprint) {
    uint32_t free_bucket = queue_[node].bucket;
    uint32_t free_slot = slot;
    for (const Node* child = &queue_[node]; child->parent >= 0;) {
      const uint32_t parent_bucket =
          queue_[static_cast<size_t>(child->parent)].bucket;
      slots_.bucket(free_bucket)[free_slot] =
          slots_.bucket(parent_bucket)[child->slot];
      free_bucket = parent_bucket;
      free_slot = child->slot;
      child = &queue_[static_cast<size_t>(child->parent)];
    }
    slots_.bucket(free_bucket)[free_slot] = static_cast<Slot>(fingerprint);
  }

  const CuckooHashing& hashing_;
  SlotArray<Slot, kBucketSize>& slots_;
  std::vector<Node> queue_;
  std::vector<uint32_t> visited_epoch_;
  uint32_t epoch_ = 0;
};

// Table is the table type of the layout and of hashing's bucket count
// (VisitTable): its Locate and AltBucket map the keys, and it writes the
// packed table.
template <typename Slot, uint32_t kBucketSize, typename Table, typename Hashes>
std::optional<BucketTable> PlaceHashesWith(const Hashes& hashes,
                                           const BucketLayout& layout,
                                           const CuckooHashing& hashing,
                                           StaticBuildStats* stats) {
  // Far enough ahead to cover a memory access, near enough to stay cached.
  constexpr size_t kPrefetchDistance = 8;
  const uint32_t num_buckets = hashing.num_buckets();
  constexpr uint32_t b = kBucketSize;
  SlotArray<Slot, kBucketSize> slots(num_buckets);

  std::vector<uint64_t> unplaced;
  // Iterators rather than indexes: a deque's iterator steps cheaply, its
  // operator[] does not.
  auto ahead = hashes.begin();
  for (size_t i = 0; i < kPrefetchDistance && ahead != hashes.end(); ++i) {
    ++ahead;
  }
  for (auto next = hashes.begin(); next != hashes.end(); ++next) {
    if (ahead != hashes.end()) {
      const KeyPosition later = Table::Locate(hashing, *ahead++);
      slots.Prefetch(later.bucket);
      slots.Prefetch(later.alternate);
    }
    const KeyPosition key = Table::Locate(hashing, *next);
    if (slots.Holds(key.bucket, key.fingerprint) ||
        slots.Holds(key.alternate, key.fingerprint)) {
      ++stats->shared_entries;
      continue;
    }
    // Into the emptier bucket, the primary on a tie.
    const uint32_t primary_fill = slots.Fill(key.bucket);
    const uint32_t alternate_fill = slots.Fill(key.alternate);
    const bool to_alternate = alternate_fill < primary_fill;
    const uint32_t target = to_alternate ? key.alternate : key.bucket;
    const uint32_t fill = to_alternate ? alternate_fill : primary_fill;
    if (fill < b) {
      slots.bucket(target)[fill] = static_cast<Slot>(key.fingerprint);
      ++stats->placed_greedily;
    } else {
      unplaced.push_back(*next);
    }
  }

  if (!unplaced.empty()) {
    AugmentingPathSearch<Slot, kBucketSize, Table> search(hashing, &slots);
    for (size_t i = 0; i < unplaced.size(); ++i) {
      if (i + kPrefetchDistance < unplaced.size()) {
        const KeyPosition later =
            Table::Locate(hashing, unplaced[i + kPrefetchDistance]);
        slots.Prefetch(later.bucket);
        slots.Prefetch(later.alternate);
      }
      const KeyPosition key = Table::Locate(hashing, unplaced[i]);
      // An earlier key of this list may have placed the same entry.
      if (slots.Holds(key.bucket, key.fingerprint) ||
          slots.Holds(key.alternate, key.fingerprint)) {
        ++stats->shared_entries;
        continue;
      }
      if (!search.Place(key, &stats->searched_nodes)) return std::nullopt;
      ++stats->placed_by_search;
    }
  }

  BucketTable table(layout, num_buckets);
  uint32_t scratch[kMaxBucketSize] = {};
  for (uint32_t bucket = 0; bucket < num_buckets; ++bucket) {
    const Slot* s = slots.bucket(bucket);
    if (s[0] == 0) continue;
    std::copy_n(s, b, scratch);
    Table::WriteBucket(&table, bucket, scratch);
  }
  return table;
}

}  // namespace static_build_internal

// Places hashes (any order, repeats allowed) into a table of num_buckets
// (even) buckets. Returns nullopt when the bounded search cannot place some
// key. Counts into *stats, which the caller resets. Hashes is any container
// of uint64_t with size() and forward iterators: a std::vector, or a
// std::deque, which grows without copying or doubling its memory.
template <typename Hashes>
std::optional<BucketTable> PlaceHashes(const Hashes& hashes,
                                       const BucketLayout& layout,
                                       uint32_t num_buckets,
                                       StaticBuildStats* stats) {
  using static_build_internal::PlaceHashesWith;
  const CuckooHashing hashing(num_buckets, layout.fingerprint_bits);
  std::optional<BucketTable> table;
  VisitTable(layout, hashing, [&](auto table_type) {
    using Table = decltype(table_type);
    if constexpr (std::is_same_v<Table, AnyLayoutTable>) {
      // A work slot of 16 bits for fingerprints up to 16 bits, else 32.
      auto place = [&](auto slot) {
        using Slot = decltype(slot);
        switch (layout.bucket_size) {
          case 2:
            table =
                PlaceHashesWith<Slot, 2, Table>(hashes, layout, hashing, stats);
            break;
          case 4:
            table =
                PlaceHashesWith<Slot, 4, Table>(hashes, layout, hashing, stats);
            break;
          default:
            table =
                PlaceHashesWith<Slot, 8, Table>(hashes, layout, hashing, stats);
        }
      };
      if (layout.fingerprint_bits <= 16) {
        place(uint16_t{});
      } else {
        place(uint32_t{});
      }
    } else {
      // Every compiled layout has 4 slots of at most 16 bits.
      static_assert(Table::BucketType::kFingerprintBits <= 16);
      table =
          PlaceHashesWith<uint16_t, 4, Table>(hashes, layout, hashing, stats);
    }
  });
  return table;
}

// The memory a placement at `num_buckets` buckets of `layout` holds besides
// its input, for `entries` hashes, at its peak: the work slots (16 bits each
// for fingerprints up to 16 bits, else 32), the search's visited marks (32
// bits per bucket), the hashes the greedy pass leaves to the search (at most
// about 6% of them at the loads of MaxLoadFactor; counted as 1/16), and the
// packed table with its padding. For a caller that accounts for it, such as
// the plugin's charge to RocksDB's block cache.
inline uint64_t StaticBuildWorkingBytes(const BucketLayout& layout,
                                        uint64_t num_buckets,
                                        uint64_t entries) {
  const uint64_t slot_bytes = layout.fingerprint_bits <= 16 ? 2 : 4;
  return num_buckets * layout.bucket_size * slot_bytes + num_buckets * 4 +
         entries / 16 * sizeof(uint64_t) + TableDataBytes(layout, num_buckets) +
         kTablePaddingBytes;
}

// Bucket count for `keys` keys at load factor `load` (even, at least 2).
inline uint32_t BucketsForLoad(uint64_t keys, int bucket_size, double load) {
  const double wanted =
      std::ceil(static_cast<double>(keys) / (bucket_size * load));
  return static_cast<uint32_t>(ValidBucketCount(static_cast<uint64_t>(wanted)));
}

// The bucket count of the next attempt when placement fails: about 1.6%
// more, and at least 2 more, so that small tables grow too.
inline uint64_t GrownBucketCount(uint64_t num_buckets) {
  return ValidBucketCount(num_buckets + num_buckets / 64 + 2);
}

// Growth steps that MaxStaticTableBuckets allows for. A step is needed when
// the bounded search fails at the planned size; at the loads of
// MaxLoadFactor that is a small fraction of a percent of builds, almost all
// of tables of a few dozen buckets, and two failures in a row have not been
// seen (the plugin's space test builds every key count up to a few thousand
// at several budgets against this bound).
inline constexpr int kStaticGrowthAllowance = 4;

// An upper bound on the bucket count of BuildStaticTable(hashes, layout,
// target_load) for `keys` hashes, whatever they are: the planned count after
// kStaticGrowthAllowance growth steps, and never above kMaxNumBuckets
// (shared entries only shrink the table). Does not throw: when even the
// planned count is above kMaxNumBuckets, BuildStaticTable throws, and this
// returns more than kMaxNumBuckets.
inline uint64_t MaxStaticTableBuckets(uint64_t keys, int bucket_size,
                                      double target_load) {
  const double planned =
      std::ceil(static_cast<double>(keys) / (bucket_size * target_load));
  if (!(planned <= static_cast<double>(kMaxNumBuckets))) {
    return kMaxNumBuckets + 2;
  }
  uint64_t buckets = BucketsForLoad(keys, bucket_size, target_load);
  for (int step = 0; step < kStaticGrowthAllowance; ++step) {
    const uint64_t grown = buckets + buckets / 64 + 2;
    buckets = grown >= kMaxNumBuckets ? kMaxNumBuckets : grown + (grown & 1);
  }
  return buckets;
}

namespace static_build_internal {

// Places `hashes` starting at num_buckets buckets, growing the table until
// every key is placed. With resize_load > 0, shrinks it once to that load if
// shared entries left it more than 3% emptier than planned.
template <typename Hashes>
BucketTable BuildGrowing(const Hashes& hashes, const BucketLayout& layout,
                         uint32_t num_buckets, double resize_load,
                         StaticBuildStats& s) {
  constexpr double kResizeBelow = 0.97;
  s = StaticBuildStats{};
  s.input_hashes = hashes.size();
  bool resized = resize_load <= 0.0;
  for (;;) {
    ++s.attempts;
    StaticBuildStats placement;
    std::optional<BucketTable> table =
        PlaceHashes(hashes, layout, num_buckets, &placement);
    s.searched_nodes += placement.searched_nodes;
    if (!table) {
      num_buckets = static_cast<uint32_t>(GrownBucketCount(num_buckets));
      continue;
    }
    const uint64_t stored =
        placement.placed_greedily + placement.placed_by_search;
    if (!resized && stored < kResizeBelow * hashes.size()) {
      const uint32_t fitting =
          BucketsForLoad(stored, layout.bucket_size, resize_load);
      resized = true;
      if (fitting < num_buckets) {
        num_buckets = fitting;
        continue;
      }
    }
    s.stored_entries = stored;
    s.shared_entries = placement.shared_entries;
    s.placed_greedily = placement.placed_greedily;
    s.placed_by_search = placement.placed_by_search;
    s.num_buckets = num_buckets;
    s.load_factor = static_cast<double>(stored) /
                    (static_cast<double>(num_buckets) * layout.bucket_size);
    return std::move(*table);
  }
}

}  // namespace static_build_internal

// Builds a table for `hashes` (any order, repeats allowed) at `target_load`
// (0 < target_load <= 1), growing it until every key is placed, and shrinking
// it once if shared entries left it more than 3% emptier than planned.
template <typename Hashes>
BucketTable BuildStaticTable(const Hashes& hashes, const BucketLayout& layout,
                             double target_load,
                             StaticBuildStats* stats = nullptr) {
  StaticBuildStats local_stats;
  std::string problem = layout.Validate();
  if (!problem.empty())
    throw std::invalid_argument("cuckoo filter: " + problem);
  if (!(target_load > 0.0 && target_load <= 1.0)) {
    throw std::invalid_argument("cuckoo filter: target load " +
                                std::to_string(target_load) +
                                " is outside (0, 1]");
  }
  return static_build_internal::BuildGrowing(
      hashes, layout,
      BucketsForLoad(hashes.size(), layout.bucket_size, target_load),
      target_load, stats != nullptr ? *stats : local_stats);
}

// Builds a table of `num_buckets` buckets (an even count >= 2) for `hashes`,
// a size chosen by the caller (ChooseForTableBytes), growing it only if some
// key cannot be placed; it never shrinks.
template <typename Hashes>
BucketTable BuildStaticTableWithBuckets(const Hashes& hashes,
                                        const BucketLayout& layout,
                                        uint32_t num_buckets,
                                        StaticBuildStats* stats = nullptr) {
  StaticBuildStats local_stats;
  std::string problem = ValidateTableGeometry(layout, num_buckets);
  if (!problem.empty())
    throw std::invalid_argument("cuckoo filter: " + problem);
  return static_build_internal::BuildGrowing(
      hashes, layout, num_buckets, 0.0,
      stats != nullptr ? *stats : local_stats);
}

}  // namespace cuckoo
