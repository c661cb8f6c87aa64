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
// The placement works on a work table, a core table (BucketTable) of a plain
// layout with the layout's slots, zero meaning an empty slot and each bucket
// filled from its first slot (VisitWorkTable): of the fingerprint's bits for
// the compiled 4-slot layouts of up to 14 bits and of 16 (a 10-bit fingerprint
// takes 10 bits; a plain table is written by copying it, a semi-sorted one by
// encoding each bucket), else of 16 bits, or 32 above 16, which compiled codecs
// read faster than the layout's own bits. The build reads and writes it through
// the work layout's compiled codec (bucket_codec.h): StoreInEmptier for the
// greedy pass, and Load, Fill and Swap for the search. Besides it, it holds one
// bit per input hash (the keys the greedy pass leaves to the search, which then
// reads the input again in order), one bit per bucket (the search's visited
// marks, cleared after each search) and the search's queue of at most
// kMaxSearchNodes nodes. The result is a StaticPlacement: the work table, which
// the caller packs (WriteTable) into memory it owns, such as a filter block,
// after it has let go of the hashes if it no longer needs them. So the peak of
// a build is the larger of (hashes + work table + bits) and (work table +
// packed table), not their sum.
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

// Whether a work table keeps the fingerprint's bits: for the compiled
// 4-slot layouts whose buckets one load reads at any bit offset.
template <typename Codec>
inline constexpr bool kPackedWork = Codec::kSlots == 4 &&
                                    (Codec::kFingerprintBits <= 14 ||
                                     Codec::kFingerprintBits == 16);

// Calls visit(Work{}) with the table type of the work table of a build of
// `layout` whose table type is Table: Table's key mapping over a compiled
// codec of a plain layout with the layout's slots, of the fingerprint's bits
// where kPackedWork says (a plain layout's work table is then the table
// itself), else of 16 bits, or 32 above 16: whole words, compared in one
// lane test where a bucket is one 64-bit word (PlainWordCodec) and one slot
// at a time where not (WholeSlotCodec). Only AnyLayoutTable, whose layout no
// compiled codec reads, chooses at run time.
template <typename Table, typename Visit>
void VisitWorkTable(const BucketLayout& layout, Visit&& visit) {
  using Mapping = typename Table::MappingType;
  const auto with = [&](auto codec) {
    visit(TableOver<decltype(codec), Mapping>{});
  };
  if constexpr (!std::is_same_v<Table, AnyLayoutTable>) {
    using Codec = typename Table::CodecType;
    constexpr int kSlots = Codec::kSlots;
    if constexpr (kPackedWork<Codec>) {
      with(CompiledPlainCodec<4, Codec::kFingerprintBits>{});
    } else if constexpr (kSlots == 4) {
      with(CompiledPlainCodec<4, 16>{});
    } else {
      // Every compiled layout has fingerprints of at most 16 bits.
      static_assert(Codec::kFingerprintBits <= 16);
      with(WholeSlotCodec<kSlots, 16>{});
    }
  } else {
    const bool wide = layout.fingerprint_bits > 16;
    switch (layout.bucket_size) {
      case 2:
        wide ? with(CompiledPlainCodec<2, 32>{})
             : with(WholeSlotCodec<2, 16>{});
        break;
      case 4:
        wide ? with(WholeSlotCodec<4, 32>{})
             : with(CompiledPlainCodec<4, 16>{});
        break;
      default:
        wide ? with(WholeSlotCodec<8, 32>{}) : with(WholeSlotCodec<8, 16>{});
    }
  }
}

// The layout of a work table of type Work (VisitWorkTable).
template <typename Work>
BucketLayout WorkLayoutOf() {
  using Codec = typename Work::CodecType;
  return BucketLayout{Codec::kSlots, Codec::kFingerprintBits, false};
}

// The bytes of a work table as the graph of the shortest-path search
// (path_search.h): a bucket's room is its fill (its first empty slot), and
// a write sets a slot.
template <typename Work>
class WorkTableGraph {
 public:
  using Codec = typename Work::CodecType;

  WorkTableGraph(const CuckooHashing& hashing, uint8_t* work)
      : hashing_(hashing), work_(work) {}

  static constexpr uint32_t slots() { return Codec::kSlots; }
  CUCKOO_ALWAYS_INLINE void Prefetch(uint32_t bucket) {
    __builtin_prefetch(work_ + ((uint64_t{bucket} * Codec::kBits) >> 3));
  }
  CUCKOO_ALWAYS_INLINE void Load(uint32_t bucket, uint32_t* values) {
    Codec{}.Load(work_, bucket, values);
  }
  CUCKOO_ALWAYS_INLINE uint32_t AltBucket(uint32_t bucket, uint32_t value) {
    return Work::AltBucket(hashing_, bucket, value);
  }
  CUCKOO_ALWAYS_INLINE int Room(uint32_t bucket) {
    const int fill = Codec{}.Fill(work_, bucket);
    return fill < Codec::kSlots ? fill : -1;
  }
  CUCKOO_ALWAYS_INLINE void Write(uint32_t bucket, int slot, uint32_t,
                                  uint32_t to) {
    Codec{}.Swap(work_, bucket, slot, to);
  }

 private:
  const CuckooHashing& hashing_;
  uint8_t* work_;
};

// The search's bound on queued nodes: enough for paths through most of a
// table near its load threshold, and a queue of 64 KiB.
inline constexpr uint32_t kMaxSearchNodes = 8192;

// The nodes a placement's search queues at most, in a table of
// `num_buckets` buckets: each bucket at most once, the roots included.
inline uint64_t SearchQueueNodes(uint64_t num_buckets) {
  return std::min<uint64_t>(kMaxSearchNodes, num_buckets);
}

// Places `hashes` into a work table of type Work (VisitWorkTable) and
// hashing.num_buckets() buckets: the table, with counts in *stats, or
// nullopt when the bounded search cannot place some key. Work's Locate and
// AltBucket map the keys as the built table's type does, and its compiled
// codec reads and writes the table's bytes.
template <typename Work, typename Hashes>
std::optional<BucketTable> PlaceHashesWith(const Hashes& hashes,
                                           const CuckooHashing& hashing,
                                           StaticBuildStats* stats) {
  BucketTable work(WorkLayoutOf<Work>(), hashing.num_buckets());
  uint8_t* const bytes = work.mutable_bytes().data();
  const auto prefetch = [&](const KeyPosition& key) CUCKOO_INLINE_LAMBDA {
    Work::PrefetchInBytes(bytes, key);
  };

  // The greedy pass, over the input in order, with the buckets of the keys
  // ahead being fetched (LocatePrefetchStore). An iterator rather than an
  // index reads the input: a deque's iterator steps cheaply, its operator[]
  // does not. One bit per input hash is set for the keys left to the
  // search.
  std::vector<uint64_t> left_for_search((hashes.size() + 63) / 64, 0);
  size_t num_left = 0;
  auto next = hashes.begin();
  LocatePrefetchStore(
      hashes.size(), [&](size_t) { return Work::Locate(hashing, *next++); },
      prefetch,
      [&](size_t index, const KeyPosition& key) {
        switch (typename Work::CodecType{}.StoreInEmptier(
            bytes, key.bucket, key.alternate, key.fingerprint)) {
          case EmptierStore::kHeld:
            ++stats->shared_entries;
            break;
          case EmptierStore::kStored:
            ++stats->placed_greedily;
            break;
          case EmptierStore::kFull:
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
      return Work::Locate(hashing, *input);
    };
    WorkTableGraph<Work> graph(hashing, bytes);
    BucketMarks marks(hashing.num_buckets());
    std::vector<PathNode> nodes(SearchQueueNodes(hashing.num_buckets()));
    ShortestPathSearch<Work::kSlots, WorkTableGraph<Work>, BucketMarks> search(
        graph, marks, nodes.data(), static_cast<uint32_t>(nodes.size()),
        UINT32_MAX);
    bool placed_all = true;
    LocatePrefetchStore(num_left, locate_next_left, prefetch,
                        [&](size_t, const KeyPosition& key) {
                          // An earlier key of this pass may have placed the
                          // same entry.
                          if (Work::ContainsInBytes(bytes, key)) {
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
    if (!placed_all) return std::nullopt;
  }
  return work;
}

}  // namespace static_build_internal

// Every key placed, before packing: the work table of a table that holds
// them all, and how they got there. WriteTable packs it into memory the
// caller owns, with the types the placement chose (PlaceHashes): a build
// chooses its table type once.
class StaticPlacement {
 public:
  // The placement in `work`, the work table of type Work that placed the
  // keys for the table type Table (VisitTable's for the layout).
  template <typename Work, typename Table>
  static StaticPlacement Of(const BucketLayout& layout, BucketTable work,
                            const StaticBuildStats& stats) {
    return StaticPlacement(layout, std::move(work), stats,
                           &WriteWith<Work, Table>);
  }

  const BucketLayout& layout() const { return layout_; }
  uint32_t num_buckets() const { return work_.num_buckets(); }
  const StaticBuildStats& stats() const { return stats_; }
  // TableDataBytes(layout(), num_buckets()) + kTablePaddingBytes.
  uint64_t table_bytes() const {
    return TableDataBytes(layout_, num_buckets()) + kTablePaddingBytes;
  }

  // Writes table_bytes() bytes at `out` (any alignment): the packed (and
  // possibly semi-sorted) table, then its zero padding.
  void WriteTable(uint8_t* out) const { write_(*this, out); }

  BucketTable ToTable() const {
    BucketTable table(layout_, num_buckets());
    WriteTable(table.mutable_bytes().data());
    return table;
  }

 private:
  using Writer = void (*)(const StaticPlacement&, uint8_t*);

  StaticPlacement(const BucketLayout& layout, BucketTable work,
                  const StaticBuildStats& stats, Writer write)
      : layout_(layout), stats_(stats), work_(std::move(work)), write_(write) {}

  template <typename Work, typename Table>
  static void WriteWith(const StaticPlacement& placement, uint8_t* out) {
    const BucketTableView& work = placement.work_.view();
    if (work.layout() == placement.layout_) {
      // The work table is the table.
      std::memcpy(out, work.data(),
                  static_cast<size_t>(placement.table_bytes()));
      return;
    }
    const auto load = [&](uint32_t bucket, uint32_t* slots) {
      Work::Load(work, bucket, slots);
    };
    if constexpr (std::is_same_v<Table, AnyLayoutTable>) {
      placement.WriteAnyLayout(out, load);
    } else {
      placement.StreamBuckets<typename Table::CodecType>(out, load);
    }
  }

  // Any layout: each nonempty bucket into a zeroed table, in place.
  // load(bucket, slots) gives the bucket's work slots.
  template <typename LoadBucket>
  void WriteAnyLayout(uint8_t* out, const LoadBucket& load) const {
    std::memset(out, 0, static_cast<size_t>(table_bytes()));
    const AnyBucketCodec codec(layout_);
    uint32_t slots[kMaxBucketSize] = {};
    for (uint32_t bucket = 0; bucket < num_buckets(); ++bucket) {
      load(bucket, slots);
      if (slots[0] != 0) codec.Store(out, bucket, slots);
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
    for (uint32_t bucket = 0; bucket < num_buckets(); ++bucket) {
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
  StaticBuildStats stats_;
  BucketTable work_;
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
  auto place = [&](auto work_type, auto table_type) {
    using Work = decltype(work_type);
    using Table = decltype(table_type);
    StaticBuildStats s;
    std::optional<BucketTable> work =
        PlaceHashesWith<Work>(hashes, hashing, &s);
    attempts->searched_nodes += s.searched_nodes;
    if (!work) return;
    s.input_hashes = hashes.size();
    s.stored_entries = s.placed_greedily + s.placed_by_search;
    s.searched_nodes = attempts->searched_nodes;
    s.attempts = attempts->attempts;
    s.num_buckets = num_buckets;
    s.load_factor = static_cast<double>(s.stored_entries) /
                    (static_cast<double>(num_buckets) * layout.bucket_size);
    placement.emplace(
        StaticPlacement::Of<Work, Table>(layout, std::move(*work), s));
  };
  VisitTable(layout, hashing, [&](auto table_type) {
    VisitWorkTable<decltype(table_type)>(
        layout, [&](auto work_type) { place(work_type, table_type); });
  });
  return placement;
}

}  // namespace static_build_internal

// The memory a placement at `num_buckets` buckets of `layout` holds besides
// its input, for `entries` hashes, at its peak: the work table (of the
// layout VisitWorkTable gives it), one bit per bucket and one per hash, and
// the search's queue.
// The packed table is the caller's (StaticPlacement::WriteTable). For a
// caller that accounts for it, such as the plugin's charge to RocksDB's
// block cache.
inline uint64_t StaticBuildWorkingBytes(const BucketLayout& layout,
                                        uint64_t num_buckets,
                                        uint64_t entries) {
  using static_build_internal::VisitWorkTable;
  using static_build_internal::WorkLayoutOf;
  BucketLayout work_layout;
  VisitTable(layout,
             CuckooHashing(static_cast<uint32_t>(num_buckets),
                           layout.fingerprint_bits),
             [&](auto table_type) {
               VisitWorkTable<decltype(table_type)>(layout, [&](auto work) {
                 work_layout = WorkLayoutOf<decltype(work)>();
               });
             });
  const uint64_t work_bytes =
      TableDataBytes(work_layout, num_buckets) + kTablePaddingBytes;
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
