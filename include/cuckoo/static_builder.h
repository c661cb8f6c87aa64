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
//    emptier of its two buckets while one has room. Both buckets of the keys a
//    few positions ahead are being fetched (LocatePrefetchStore, the loop of
//    the dynamic filter's batched insert too), so the pass runs at memory
//    parallelism rather than latency. At b = 4 this places about 96% of the
//    keys at 90% load and 94% at 95% load.
// 2. For the rest, the dynamic filter's shortest-path search
//    (path_search.h): breadth-first from both buckets over "move this
//    fingerprint to its other bucket" edges, each bucket queued at most once,
//    until a bucket with a free slot is found; then the fingerprints shift
//    along the path, which frees a slot in one of the key's own buckets. The
//    search is bounded; if it fails, the build restarts with ~1.6% more
//    buckets. Nothing is random, so the same input gives the same table.
// For two choices and b = 4 the offline load threshold is about 98%, and
// short augmenting paths exist well past 95%, so step 2 rarely searches far.
//
// The table is sized from the number of hashes given. When shared entries
// leave it noticeably emptier than planned (repeated keys that were not
// adjacent in the input), it is rebuilt once at the size of what it stores,
// so a filter's size follows its distinct keys.
//
// Memory
// ------
// The placement works on a work array, zero meaning an empty slot and each
// bucket filled from its first slot: for the compiled 4-slot layouts, the
// fingerprints' bits packed as in a plain table of the layout (a 10-bit
// fingerprint takes 10 bits, and a plain table is written by copying it),
// else one 16-bit word per slot for fingerprints up to 16 bits (32-bit
// above). Besides it, it holds one bit per input hash (the keys the greedy
// pass leaves to the search, which then reads the input again in order),
// one bit per bucket (the search's visited marks, cleared after each search)
// and the search's queue of at most kMaxSearchNodes nodes. The result is a
// StaticPlacement: the work array, which the caller packs (WriteTable) into
// memory it owns, such as a filter block, after it has let go of the hashes
// if it no longer needs them. So the peak of a build is the larger of
// (hashes + work array + bits) and (work array + packed table), not their
// sum.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "cuckoo/hashing.h"
#include "cuckoo/path_search.h"
#include "cuckoo/table_types.h"

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

// What the greedy pass did with a key (PlaceInEmptier below).
enum class GreedyStep {
  kShared,  // one of its buckets holds its fingerprint: one entry serves both
  kPlaced,  // into the emptier of its buckets, the primary on a tie
  kFull,    // both buckets are full: left to the search
};

// The work array of a placement, in one of two forms with the same
// interface. Each has kSlots slots per bucket, zero for empty, each bucket
// filled from its first slot, so that the lowest empty slot is the fill.

// Slots of 16 or 32 bits, for any layout.
template <typename Slot, uint32_t kBucketSize>
class SlotArray {
 public:
  static constexpr uint32_t kSlots = kBucketSize;
  using Storage = std::vector<Slot>;

  explicit SlotArray(uint32_t num_buckets)
      : slots_(static_cast<size_t>(num_buckets) * kBucketSize, 0) {}

  Storage Release() { return std::move(slots_); }

  void Prefetch(uint32_t index) { __builtin_prefetch(bucket(index), 1); }
  // slots[0, kSlots) of the bucket.
  CUCKOO_ALWAYS_INLINE void Load(uint32_t index, uint32_t* slots) {
    std::copy_n(bucket(index), kBucketSize, slots);
  }
  CUCKOO_ALWAYS_INLINE void Set(uint32_t index, uint32_t slot,
                                uint32_t fingerprint) {
    bucket(index)[slot] = static_cast<Slot>(fingerprint);
  }
  CUCKOO_ALWAYS_INLINE uint32_t Occupancy(uint32_t index) {
    const Slot* s = bucket(index);
    if constexpr (kOneWord) {
      const uint64_t empty = bits::ZeroLanes(Word(s), kLaneOnes, kLaneTops);
      return empty == 0
                 ? kBucketSize
                 : static_cast<uint32_t>(__builtin_ctzll(empty)) / kLaneBits;
    }
    uint32_t fill = 0;
    for (uint32_t k = 0; k < kBucketSize; ++k) fill += s[k] != 0;
    return fill;
  }
  CUCKOO_ALWAYS_INLINE bool Contains(uint32_t index, uint32_t fingerprint) {
    const Slot* s = bucket(index);
    if constexpr (kOneWord) {
      return bits::ZeroLanes(Word(s) ^ (fingerprint * kLaneOnes), kLaneOnes,
                             kLaneTops) != 0;
    }
    bool found = false;
    for (uint32_t k = 0; k < kBucketSize; ++k) found |= s[k] == fingerprint;
    return found;
  }
  // The greedy pass's step for one key.
  CUCKOO_ALWAYS_INLINE GreedyStep PlaceInEmptier(const KeyPosition& key) {
    if (Contains(key.bucket, key.fingerprint) ||
        Contains(key.alternate, key.fingerprint)) {
      return GreedyStep::kShared;
    }
    const uint32_t primary_fill = Occupancy(key.bucket);
    const uint32_t alternate_fill = Occupancy(key.alternate);
    const bool to_alternate = alternate_fill < primary_fill;
    const uint32_t fill = to_alternate ? alternate_fill : primary_fill;
    if (fill == kBucketSize) return GreedyStep::kFull;
    Set(to_alternate ? key.alternate : key.bucket, fill, key.fingerprint);
    return GreedyStep::kPlaced;
  }

 private:
  Slot* bucket(uint32_t index) {
    return slots_.data() + static_cast<size_t>(index) * kBucketSize;
  }

  // A bucket of one 64-bit word (4 x 16 or 2 x 32 bits) is scanned lane-wise
  // in parallel.
  static constexpr bool kOneWord = sizeof(Slot) * kBucketSize == 8;
  static constexpr int kLaneBits = 8 * sizeof(Slot);
  static constexpr uint64_t kLaneOnes =
      bits::LaneOnes(64 / kLaneBits, kLaneBits);
  static constexpr uint64_t kLaneTops = kLaneOnes << (kLaneBits - 1);

  // The bucket as one word with slot k in lane k (bits [k * kLaneBits,
  // (k + 1) * kLaneBits)) on either byte order: Occupancy's lowest zero lane
  // must be the first empty slot, and ZeroLanes is exact only for the lowest.
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

  Storage slots_;
};

// Four slots of exactly the fingerprint's bits per bucket, packed one bucket
// after another: the bits of a plain table of the layout
// (CompiledPlainCodec<4, kFingerprintBits>), for the compiled 4-slot layouts
// whose buckets one 8-byte load reads. A 10-bit fingerprint takes 10 bits
// instead of a 16-bit slot's, and the placement's memory shrinks with it.
template <int kFingerprintBits>
class PackedSlotArray {
 public:
  using Lanes = CompiledPlainCodec<4, kFingerprintBits>;
  static constexpr uint32_t kSlots = 4;
  using Storage = std::vector<uint8_t>;

  explicit PackedSlotArray(uint32_t num_buckets)
      : bytes_(TableDataBytes(BucketLayout{4, kFingerprintBits, false},
                              num_buckets) +
                   kTablePaddingBytes,
               0) {}

  Storage Release() { return std::move(bytes_); }

  void Prefetch(uint32_t index) {
    __builtin_prefetch(bytes_.data() + uint64_t{index} * Lanes::kBits / 8, 1);
  }
  CUCKOO_ALWAYS_INLINE void Load(uint32_t index, uint32_t* slots) {
    Lanes{}.Load(bytes_.data(), index, slots);
  }
  CUCKOO_ALWAYS_INLINE void Set(uint32_t index, uint32_t slot,
                                uint32_t fingerprint) {
    Lanes{}.Swap(bytes_.data(), index, static_cast<int>(slot), fingerprint);
  }
  CUCKOO_ALWAYS_INLINE uint32_t Occupancy(uint32_t index) {
    const uint64_t empty = bits::ZeroLanes(Lanes{}.Read(bytes_.data(), index),
                                           Lanes::kOnes, Lanes::kTops);
    return empty == 0 ? 4
                      : static_cast<uint32_t>(__builtin_ctzll(empty)) /
                            kFingerprintBits;
  }
  CUCKOO_ALWAYS_INLINE bool Contains(uint32_t index, uint32_t fingerprint) {
    return Lanes{}.Contains(bytes_.data(), index, fingerprint);
  }
  // The greedy pass's step for one key, on each bucket's word as one load
  // reads it: the lane tests find the fingerprint and each bucket's first
  // empty slot, whose top bit (64 for a full bucket) orders the buckets by
  // fill, and the fingerprint is XORed into the empty slot's zero bits. The
  // bits above the bucket in its load are masked off by the lane tops.
  CUCKOO_ALWAYS_INLINE GreedyStep PlaceInEmptier(const KeyPosition& key) {
    uint8_t* data = bytes_.data();
    const uint64_t primary = uint64_t{key.bucket} * Lanes::kBits;
    const uint64_t alternate = uint64_t{key.alternate} * Lanes::kBits;
    const uint64_t primary_word = bits::LoadAt(data, primary);
    const uint64_t alternate_word = bits::LoadAt(data, alternate);
    const uint64_t copies = bits::Broadcast(key.fingerprint, Lanes::kOnes);
    if ((ZeroLanes(primary_word ^ copies) |
         ZeroLanes(alternate_word ^ copies)) != 0) {
      return GreedyStep::kShared;
    }
    const int primary_top = FirstEmptyTop(primary_word);
    const int alternate_top = FirstEmptyTop(alternate_word);
    const bool to_alternate = alternate_top < primary_top;
    const int top = to_alternate ? alternate_top : primary_top;
    if (top == 64) return GreedyStep::kFull;
    bits::Flip(data, to_alternate ? alternate : primary,
               uint64_t{key.fingerprint} << (top + 1 - kFingerprintBits));
    return GreedyStep::kPlaced;
  }

 private:
  static uint64_t ZeroLanes(uint64_t word) {
    return bits::ZeroLanes(word, Lanes::kOnes, Lanes::kTops);
  }
  // The top bit of the bucket's first empty slot, 64 when it has none.
  static int FirstEmptyTop(uint64_t word) {
    const uint64_t empty = ZeroLanes(word);
    return empty == 0 ? 64 : __builtin_ctzll(empty);
  }

  Storage bytes_;
};

// Whether PackedSlotArray holds the work of a compiled bucket type.
template <typename Codec>
inline constexpr bool kPackedWork = Codec::kSlots == 4 &&
                                    (Codec::kFingerprintBits <= 14 ||
                                     Codec::kFingerprintBits == 16);

// The two checks of a key's buckets that every pass makes.
template <typename Array>
CUCKOO_ALWAYS_INLINE void PrefetchAt(Array& slots, const KeyPosition& key) {
  slots.Prefetch(key.bucket);
  slots.Prefetch(key.alternate);
}
// True when one of the key's buckets already holds its fingerprint: one
// entry serves both keys.
template <typename Array>
CUCKOO_ALWAYS_INLINE bool ContainsAt(Array& slots, const KeyPosition& key) {
  return slots.Contains(key.bucket, key.fingerprint) ||
         slots.Contains(key.alternate, key.fingerprint);
}

// The work array as the graph of the shortest-path search (path_search.h):
// a bucket's room is its fill, and a write sets a slot.
template <typename Array, typename Table>
class WorkArrayGraph {
 public:
  WorkArrayGraph(const CuckooHashing& hashing, Array* slots)
      : hashing_(hashing), slots_(*slots) {}

  static constexpr uint32_t slots() { return Array::kSlots; }
  CUCKOO_ALWAYS_INLINE void Prefetch(uint32_t bucket) {
    slots_.Prefetch(bucket);
  }
  CUCKOO_ALWAYS_INLINE void Load(uint32_t bucket, uint32_t* values) {
    slots_.Load(bucket, values);
  }
  CUCKOO_ALWAYS_INLINE uint32_t AltBucket(uint32_t bucket, uint32_t value) {
    return Table::AltBucket(hashing_, bucket, value);
  }
  CUCKOO_ALWAYS_INLINE int Room(uint32_t bucket) {
    const uint32_t fill = slots_.Occupancy(bucket);
    return fill < Array::kSlots ? static_cast<int>(fill) : -1;
  }
  CUCKOO_ALWAYS_INLINE void Write(uint32_t bucket, int slot, uint32_t,
                                  uint32_t to) {
    slots_.Set(bucket, static_cast<uint32_t>(slot), to);
  }

 private:
  const CuckooHashing& hashing_;
  Array& slots_;
};

// The search's bound on queued nodes: enough for paths through most of a
// table near its load threshold, and a queue of 64 KiB.
inline constexpr uint32_t kMaxSearchNodes = 8192;

// The nodes a placement's search queues at most, in a table of
// `num_buckets` buckets: each bucket at most once, the roots included.
inline uint64_t SearchQueueNodes(uint64_t num_buckets) {
  return std::min<uint64_t>(kMaxSearchNodes, num_buckets);
}

// Places `hashes` into hashing.num_buckets() buckets of a work array: true,
// with the array's storage in *placed and counts in *stats, or false when
// the bounded search cannot place some key. Table is the table type of the
// layout and of hashing's bucket count (VisitTable): its Locate and
// AltBucket map the keys.
template <typename Array, typename Table, typename Hashes>
bool PlaceHashesWith(const Hashes& hashes, const CuckooHashing& hashing,
                     typename Array::Storage* placed, StaticBuildStats* stats) {
  Array slots(hashing.num_buckets());
  const auto prefetch = [&](const KeyPosition& key) { PrefetchAt(slots, key); };

  // The greedy pass, over the input in order, with the buckets of the keys
  // ahead being fetched (LocatePrefetchStore). An iterator rather than an
  // index reads the input: a deque's iterator steps cheaply, its operator[]
  // does not. One bit per input hash is set for the keys left to the
  // search.
  std::vector<uint64_t> left_for_search((hashes.size() + 63) / 64, 0);
  size_t num_left = 0;
  auto next = hashes.begin();
  LocatePrefetchStore(
      hashes.size(), [&](size_t) { return Table::Locate(hashing, *next++); },
      prefetch,
      [&](size_t index, const KeyPosition& key) {
        switch (slots.PlaceInEmptier(key)) {
          case GreedyStep::kShared:
            ++stats->shared_entries;
            break;
          case GreedyStep::kPlaced:
            ++stats->placed_greedily;
            break;
          case GreedyStep::kFull:
            left_for_search[index / 64] |= uint64_t{1} << (index % 64);
            ++num_left;
        }
        return true;
      });

  if (num_left != 0) {
    // The keys left, read again from the input in order, each placed by
    // the search. Each bucket is queued at most once per search, and the
    // search has no bound on depth: a table filled to near its threshold
    // may need long paths, and a failure costs a rebuild.
    auto input = hashes.begin();
    size_t input_index = 0;
    size_t word = 0;
    uint64_t word_bits = left_for_search[0];
    const auto locate_next_left = [&](size_t) {
      while (word_bits == 0) word_bits = left_for_search[++word];
      const size_t position =
          word * 64 + static_cast<size_t>(__builtin_ctzll(word_bits));
      word_bits &= word_bits - 1;
      std::advance(input, position - input_index);
      input_index = position;
      return Table::Locate(hashing, *input);
    };
    WorkArrayGraph<Array, Table> graph(hashing, &slots);
    BucketMarks marks(hashing.num_buckets());
    std::vector<PathNode> nodes(SearchQueueNodes(hashing.num_buckets()));
    ShortestPathSearch<Array::kSlots, WorkArrayGraph<Array, Table>, BucketMarks>
        search(graph, marks, nodes.data(), static_cast<uint32_t>(nodes.size()),
               UINT32_MAX);
    bool placed_all = true;
    LocatePrefetchStore(num_left, locate_next_left, prefetch,
                        [&](size_t, const KeyPosition& key) {
                          // An earlier key of this pass may have placed the
                          // same entry.
                          if (ContainsAt(slots, key)) {
                            ++stats->shared_entries;
                            return true;
                          }
                          const PathSearchResult result = search.Run(
                              key.bucket, key.alternate, key.fingerprint);
                          stats->searched_nodes += result.queued;
                          stats->placed_by_search += result.found;
                          placed_all = result.found;
                          return placed_all;
                        });
    if (!placed_all) return false;
  }
  *placed = slots.Release();
  return true;
}

}  // namespace static_build_internal

// Every key placed, before packing: the work array of a table that holds
// them all, and how they got there. WriteTable packs it into memory the
// caller owns, with the types the placement chose (PlaceHashes): a build
// chooses its table type once.
class StaticPlacement {
 public:
  // The placement in `work`, the storage of the work array Array that
  // placed the keys for the table type Table (VisitTable's for the layout).
  template <typename Array, typename Table>
  static StaticPlacement Of(const BucketLayout& layout, uint32_t num_buckets,
                            typename Array::Storage work,
                            const StaticBuildStats& stats) {
    return StaticPlacement(layout, num_buckets, std::move(work), stats,
                           &WriteWith<Array, Table>);
  }

  const BucketLayout& layout() const { return layout_; }
  uint32_t num_buckets() const { return num_buckets_; }
  const StaticBuildStats& stats() const { return stats_; }
  // TableDataBytes(layout(), num_buckets()) + kTablePaddingBytes.
  uint64_t table_bytes() const {
    return TableDataBytes(layout_, num_buckets_) + kTablePaddingBytes;
  }

  // Writes table_bytes() bytes at `out` (any alignment): the packed (and
  // possibly semi-sorted) table, then its zero padding.
  void WriteTable(uint8_t* out) const { write_(*this, out); }

  BucketTable ToTable() const {
    BucketTable table(layout_, num_buckets_);
    WriteTable(table.mutable_bytes().data());
    return table;
  }

 private:
  // The storage of each kind of work array: slots of 16 or 32 bits
  // (SlotArray), or the packed bits of a compiled 4-slot layout
  // (PackedSlotArray).
  using Work = std::variant<std::vector<uint8_t>, std::vector<uint16_t>,
                            std::vector<uint32_t>>;
  using Writer = void (*)(const StaticPlacement&, uint8_t*);

  StaticPlacement(const BucketLayout& layout, uint32_t num_buckets, Work work,
                  const StaticBuildStats& stats, Writer write)
      : layout_(layout),
        num_buckets_(num_buckets),
        stats_(stats),
        work_(std::move(work)),
        write_(write) {}

  template <typename Array, typename Table>
  static void WriteWith(const StaticPlacement& placement, uint8_t* out) {
    const auto& work = std::get<typename Array::Storage>(placement.work_);
    if constexpr (std::is_same_v<Table, AnyLayoutTable>) {
      placement.WriteAnyLayout(work.data(), out);
    } else {
      using Codec = typename Table::CodecType;
      if constexpr (static_build_internal::kPackedWork<Codec>) {
        if (!placement.layout_.semi_sorted) {
          // The work array is the table.
          std::memcpy(out, work.data(),
                      static_cast<size_t>(placement.table_bytes()));
          return;
        }
        placement.StreamBuckets<Codec>(
            out, [&](uint32_t bucket, uint32_t* slots) {
              typename Array::Lanes{}.Load(work.data(), bucket, slots);
            });
      } else {
        placement.StreamBuckets<Codec>(
            out, [&](uint32_t bucket, uint32_t* slots) {
              std::copy_n(work.data() + size_t{bucket} * Codec::kSlots,
                          Codec::kSlots, slots);
            });
      }
    }
  }

  // Any layout: each nonempty bucket into a zeroed table, in place.
  template <typename Slot>
  void WriteAnyLayout(const Slot* slots, uint8_t* out) const {
    std::memset(out, 0, static_cast<size_t>(table_bytes()));
    const AnyBucketCodec codec(layout_);
    const uint32_t b = static_cast<uint32_t>(layout_.bucket_size);
    uint32_t scratch[kMaxBucketSize] = {};
    for (uint32_t bucket = 0; bucket < num_buckets_; ++bucket) {
      const Slot* s = slots + static_cast<size_t>(bucket) * b;
      if (s[0] == 0) continue;
      std::copy_n(s, b, scratch);
      codec.Store(out, bucket, scratch);
    }
  }

  // A compiled layout: the bucket words one after another, gathered in a
  // register and stored a whole 64-bit word at a time, so that no store
  // waits on the read of a word an earlier store touched. load(bucket,
  // slots) gives the bucket's kSlots work slots.
  template <typename Codec, typename LoadBucket>
  void StreamBuckets(uint8_t* out, const LoadBucket& load) const {
    constexpr int kBits = Codec::kBits;
    uint64_t pending = 0;  // bits not yet stored, from bit 0
    int pending_bits = 0;  // < 64
    uint32_t slots[Codec::kSlots];
    for (uint32_t bucket = 0; bucket < num_buckets_; ++bucket) {
      load(bucket, slots);
      const uint64_t word = slots[0] == 0 ? 0 : Codec{}.Encode(slots);
      pending |= word << pending_bits;
      pending_bits += kBits;
      if (pending_bits >= 64) {
        bits::StoreLittleEndian64(out, pending);
        out += 8;
        pending_bits -= 64;
        pending = pending_bits == 0 ? 0 : word >> (kBits - pending_bits);
      }
    }
    // The last partial word, then the padding.
    uint8_t last[8];
    bits::StoreLittleEndian64(last, pending);
    const size_t last_bytes = static_cast<size_t>(pending_bits + 7) / 8;
    std::memcpy(out, last, last_bytes);
    std::memset(out + last_bytes, 0, kTablePaddingBytes);
  }

  BucketLayout layout_;
  uint32_t num_buckets_;
  StaticBuildStats stats_;
  Work work_;
  Writer write_;
};

namespace static_build_internal {

// Places hashes (any order, repeats allowed) into num_buckets (even)
// buckets; nullopt when the bounded search cannot place some key. *attempts
// carries the attempts and searched nodes of a build across its placements:
// this one adds to them, and a placement's stats include them. Hashes is any
// container of uint64_t with size() and forward iterators: a std::vector, or
// a std::deque, which grows without copying or doubling its memory.
template <typename Hashes>
std::optional<StaticPlacement> PlaceHashes(const Hashes& hashes,
                                           const BucketLayout& layout,
                                           uint32_t num_buckets,
                                           StaticBuildStats* attempts) {
  const CuckooHashing hashing(num_buckets, layout.fingerprint_bits);
  ++attempts->attempts;
  std::optional<StaticPlacement> placement;
  // array_type is a null pointer to the work array's type.
  auto place = [&](auto array_type, auto table_type) {
    using Array = std::remove_pointer_t<decltype(array_type)>;
    using Table = decltype(table_type);
    typename Array::Storage storage;
    StaticBuildStats s;
    const bool placed =
        PlaceHashesWith<Array, Table>(hashes, hashing, &storage, &s);
    attempts->searched_nodes += s.searched_nodes;
    if (!placed) return;
    s.input_hashes = hashes.size();
    s.stored_entries = s.placed_greedily + s.placed_by_search;
    s.searched_nodes = attempts->searched_nodes;
    s.attempts = attempts->attempts;
    s.num_buckets = num_buckets;
    s.load_factor = static_cast<double>(s.stored_entries) /
                    (static_cast<double>(num_buckets) * layout.bucket_size);
    placement.emplace(StaticPlacement::Of<Array, Table>(layout, num_buckets,
                                                        std::move(storage), s));
  };
  VisitTable(layout, hashing, [&](auto table_type) {
    using Table = decltype(table_type);
    if constexpr (std::is_same_v<Table, AnyLayoutTable>) {
      // A work slot of 16 bits for fingerprints up to 16 bits, else 32.
      auto with_slot = [&](auto slot) {
        using Slot = decltype(slot);
        switch (layout.bucket_size) {
          case 2:
            place(static_cast<SlotArray<Slot, 2>*>(nullptr), table_type);
            break;
          case 4:
            place(static_cast<SlotArray<Slot, 4>*>(nullptr), table_type);
            break;
          default:
            place(static_cast<SlotArray<Slot, 8>*>(nullptr), table_type);
        }
      };
      if (layout.fingerprint_bits <= 16) {
        with_slot(uint16_t{});
      } else {
        with_slot(uint32_t{});
      }
    } else {
      using Codec = typename Table::CodecType;
      if constexpr (kPackedWork<Codec>) {
        place(static_cast<PackedSlotArray<Codec::kFingerprintBits>*>(nullptr),
              table_type);
      } else {
        // Every compiled layout has slots of at most 16 bits.
        static_assert(Codec::kFingerprintBits <= 16);
        place(static_cast<SlotArray<uint16_t, Codec::kSlots>*>(nullptr),
              table_type);
      }
    }
  });
  return placement;
}

}  // namespace static_build_internal

// The memory a placement at `num_buckets` buckets of `layout` holds besides
// its input, for `entries` hashes, at its peak: the work array (the
// fingerprint's bits per slot for the compiled 4-slot layouts, else 16 bits
// per slot for fingerprints up to 16 bits and 32 above), one bit per bucket
// and one per hash, and the search's queue. The packed table is the
// caller's (StaticPlacement::WriteTable). For a caller that accounts for it,
// such as the plugin's charge to RocksDB's block cache.
inline uint64_t StaticBuildWorkingBytes(const BucketLayout& layout,
                                        uint64_t num_buckets,
                                        uint64_t entries) {
  uint64_t work_bytes = num_buckets * layout.bucket_size *
                        (layout.fingerprint_bits <= 16 ? 2 : 4);
  VisitCompiledBucket(layout, [&](auto bucket) {
    if constexpr (static_build_internal::kPackedWork<decltype(bucket)>) {
      work_bytes =
          TableDataBytes(BucketLayout{4, layout.fingerprint_bits, false},
                         num_buckets) +
          kTablePaddingBytes;
    }
  });
  const uint64_t queue_bytes =
      static_build_internal::SearchQueueNodes(num_buckets) * sizeof(PathNode);
  return work_bytes + BucketMarks::BytesFor(num_buckets) +
         (entries + 63) / 64 * 8 + queue_bytes;
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
StaticPlacement PlaceGrowing(const Hashes& hashes, const BucketLayout& layout,
                             uint32_t num_buckets, double resize_load) {
  constexpr double kResizeBelow = 0.97;
  bool resized = resize_load <= 0.0;
  StaticBuildStats attempts;
  for (;;) {
    std::optional<StaticPlacement> placement =
        PlaceHashes(hashes, layout, num_buckets, &attempts);
    if (!placement) {
      num_buckets = static_cast<uint32_t>(GrownBucketCount(num_buckets));
      continue;
    }
    const uint64_t stored = placement->stats().stored_entries;
    if (!resized && stored < kResizeBelow * hashes.size()) {
      const uint32_t fitting =
          BucketsForLoad(stored, layout.bucket_size, resize_load);
      resized = true;
      if (fitting < num_buckets) {
        num_buckets = fitting;
        continue;
      }
    }
    return std::move(*placement);
  }
}

}  // namespace static_build_internal

// Places `hashes` (any order, repeats allowed) at `target_load`
// (0 < target_load <= 1), growing the table until every key is placed, and
// shrinking it once if shared entries left it more than 3% emptier than
// planned.
template <typename Hashes>
StaticPlacement PlaceStatic(const Hashes& hashes, const BucketLayout& layout,
                            double target_load) {
  std::string problem = layout.Validate();
  if (!problem.empty())
    throw std::invalid_argument("cuckoo filter: " + problem);
  if (!(target_load > 0.0 && target_load <= 1.0)) {
    throw std::invalid_argument("cuckoo filter: target load " +
                                std::to_string(target_load) +
                                " is outside (0, 1]");
  }
  return static_build_internal::PlaceGrowing(
      hashes, layout,
      BucketsForLoad(hashes.size(), layout.bucket_size, target_load),
      target_load);
}

// Places `hashes` in `num_buckets` buckets (an even count >= 2), a size
// chosen by the caller (ChooseForTableBytes), growing the table only if some
// key cannot be placed; it never shrinks.
template <typename Hashes>
StaticPlacement PlaceStaticWithBuckets(const Hashes& hashes,
                                       const BucketLayout& layout,
                                       uint32_t num_buckets) {
  std::string problem = ValidateTableGeometry(layout, num_buckets);
  if (!problem.empty())
    throw std::invalid_argument("cuckoo filter: " + problem);
  return static_build_internal::PlaceGrowing(hashes, layout, num_buckets, 0.0);
}

// PlaceStatic, packed into a table.
template <typename Hashes>
BucketTable BuildStaticTable(const Hashes& hashes, const BucketLayout& layout,
                             double target_load,
                             StaticBuildStats* stats = nullptr) {
  const StaticPlacement placement = PlaceStatic(hashes, layout, target_load);
  if (stats != nullptr) *stats = placement.stats();
  return placement.ToTable();
}

}  // namespace cuckoo
