// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The dynamic filter's state and its algorithms: insert (into a free slot,
// along the shortest path of moves, or by the kick-out walk into the
// stash), lookup, one batched lookup loop, erase and count, compiled for
// one table type (table_types.h) and one key mapping. They never grow the
// table: an insert with no room reports kFull and leaves growth to the
// filter that owns the state. CuckooFilter (cuckoo_filter.h) chooses the
// core of its table type at run time and grows; TypedCuckooFilter knows its
// type and calls its core directly; ConcurrentCuckooFilter's batched lookup
// calls the core of its shards' type.
//
// Insertion and the stash
// -----------------------
// A new fingerprint goes to whichever of its two buckets has a free slot.
// When both are full, a breadth-first search (path_search.h, shared with the
// static builder) looks for the shortest chain of moves that frees a slot in
// one of them (as libcuckoo does): the nodes are buckets, the two roots are
// the new key's, and a bucket's children are the other buckets of the
// fingerprints it holds. The first bucket found with a free slot ends the
// search, and the moves run from that end back to the root, each one into a
// slot the previous move freed, so no fingerprint is ever out of the table,
// and nothing has to be undone. A random walk's steps each wait for the
// bucket the previous step chose, and at 90-95% load it takes tens of them.
// The search reads about as many buckets there (most buckets are full), but
// a bucket's children are known before any of them is read, so their loads
// overlap, and the path it finds is the shortest, usually one to three
// moves. At lower loads, where a walk usually ends after its first step, the
// search costs a little more than the walk: it computes and prefetches all
// of a bucket's children where the walk reads one. The search is bounded:
// kPathSearchNodes queued buckets, and paths of at most kPathSearchDepth
// moves and max_kicks. It marks no bucket (a mark per bucket would be
// memory for the filter's whole life), so a bucket may be queued twice.
//
// When the search finds no path, the walk takes over: it evicts a fingerprint
// chosen by a seeded generator, puts the homeless one in its place, and
// carries the evicted one to its own other bucket, at most max_kicks times.
// If the walk ends without a free slot, one fingerprint is still homeless,
// and it is usually not the new key's: it is a key stored earlier. Dropping it
// (as several libraries do) makes that key a false negative. Here it goes into
// a small stash, searched by every lookup. When the stash is full too, the walk
// is undone step by step, so the table is exactly as before, and Insert reports
// kFull: the new key was not stored and no stored key was lost. Erasing keys
// frees slots; stash entries move back into the table as soon as one of their
// buckets has room.
//
// Duplicates
// ----------
// Inserting the same key k times stores k copies (up to 2b + stash entries);
// Count reports them and each Erase removes one. A copy that finds its two
// buckets full of copies and the stash full is refused (kFull), and the
// dynamic filter does not grow for it (cuckoo_filter.h, "Growth"). Two
// different keys whose fingerprints and bucket pairs coincide are
// indistinguishable: that is the false-positive event, and Erase of a key that
// was never inserted may remove such a twin. Only erase keys that were
// inserted.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>

#include "cuckoo/cuckoo_filter_options.h"
#include "cuckoo/hashing.h"
#include "cuckoo/path_search.h"
#include "cuckoo/relocatable_array.h"
#include "cuckoo/table_types.h"

namespace cuckoo {

enum class InsertResult {
  kOk,        // stored
  kFull,      // not stored: no room, even after the walk and in the stash;
              // no stored key was lost
  kMayExist,  // InsertIfAbsent: not stored, the filter already matches it
};

// A fingerprint the table had no room for: its slot value and either of its
// two buckets.
struct StashEntry {
  uint32_t bucket;
  uint32_t fingerprint;
};

// What a filter's operations leave besides its table and stash: its
// counters over its life and the state of the generator that picks kick-out
// victims (CuckooFilter::history()). The serialization records it.
struct CuckooFilterHistory {
  uint64_t items = 0;            // stored now (inserts minus erases)
  uint64_t deleted = 0;          // successful erases, ever
  uint64_t generator_state = 0;  // starts at CuckooFilterOptions::seed
  uint64_t total_kicks = 0;      // evictions performed by all walks
  uint64_t failed_inserts = 0;   // Insert calls that returned kFull
  uint32_t peak_stash_size = 0;
};

// One step of the kick-out walk, for its undo: `inserted` took the place of
// `evicted` in `bucket`.
struct KickStep {
  uint32_t bucket;
  uint32_t inserted;
  uint32_t evicted;
};

// Everything a dynamic filter holds. The stash's functions are here, as
// they do not depend on the table's type. What a lookup reads (the
// mapping, the stash's size, the table's address) comes first, so that
// it shares as few cache lines as it can: a sharded filter's lookups
// read a random shard's each time.
struct FilterState {
  GrowableHashing hashing;
  RelocatableArray<StashEntry> stash;
  BucketTable table;
  CuckooFilterOptions options;
  CuckooFilterHistory history;
  // The walk's log, for its undo; kept between walks, so that a walk
  // allocates nothing once the longest one has been seen.
  RelocatableArray<KickStep> walk_log;

  // Hands each heap allocation to a defragmenter
  // (RelocatableArray::Relocate); returns how many it moved.
  template <typename Move>
  int Relocate(Move& move) {
    return int{table.Relocate(move)} + int{stash.Relocate(move)} +
           int{walk_log.Relocate(move)};
  }

  // SplitMix64.
  uint64_t NextRandom() {
    return Mix13(history.generator_state += 0x9E3779B97F4A7C15ull);
  }

  // Whether a stash entry is a copy of the key at `position`.
  static bool InStash(const StashEntry& entry, const KeyPosition& position) {
    return entry.fingerprint == position.fingerprint &&
           (entry.bucket == position.bucket ||
            entry.bucket == position.alternate);
  }
  uint32_t StashCount(const KeyPosition& position) const {
    uint32_t count = 0;
    for (const StashEntry& entry : stash) count += InStash(entry, position);
    return count;
  }

  // The stash is read out of line, and given the key's position by value:
  // a reference would make every lookup store the position in memory for
  // the rare call, which is pure (CUCKOO_PURE) for the same reason.
  CUCKOO_ALWAYS_INLINE bool InStashOrTable(bool in_table,
                                           const KeyPosition& position) const {
    return stash.empty()
               ? in_table
               : in_table || StashContains(position.bucket, position.alternate,
                                           position.fingerprint);
  }
  CUCKOO_NOINLINE CUCKOO_PURE bool StashContains(uint32_t bucket,
                                                 uint32_t alternate,
                                                 uint32_t fingerprint) const {
    return StashCount(KeyPosition{bucket, alternate, fingerprint}) > 0;
  }

  // Erase's last resort: one copy of the key in the stash.
  bool EraseFromStash(const KeyPosition& position) {
    for (size_t i = 0; i < stash.size(); ++i) {
      if (InStash(stash[i], position)) {
        stash.erase(stash.begin() + static_cast<std::ptrdiff_t>(i));
        --history.items;
        ++history.deleted;
        return true;
      }
    }
    return false;
  }

  // Moves stash entries back into the table where a bucket has room.
  void DrainStash() {
    for (size_t i = 0; i < stash.size();) {
      const StashEntry entry = stash[i];
      if (table.Replace(entry.bucket, 0, entry.fingerprint) ||
          table.Replace(hashing.AltBucket(entry.bucket, entry.fingerprint), 0,
                        entry.fingerprint)) {
        stash.erase(stash.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }
};

// How a filter maps keys: one that cannot grow maps them with its base
// mapping, which Table may compile.
template <typename Table>
struct FixedSizeMapping {
  CUCKOO_ALWAYS_INLINE static KeyPosition Locate(const FilterState& state,
                                                 uint64_t hash) {
    return Table::Locate(state.hashing.base(), hash);
  }
  CUCKOO_ALWAYS_INLINE static uint32_t AltBucket(const FilterState& state,
                                                 uint32_t bucket,
                                                 uint32_t fingerprint) {
    return Table::AltBucket(state.hashing.base(), bucket, fingerprint);
  }
};
// One that may grow maps them with the growable mapping; Table still
// compiles its slots where their layout has a type.
struct GrowableMapping {
  CUCKOO_ALWAYS_INLINE static KeyPosition Locate(const FilterState& state,
                                                 uint64_t hash) {
    return state.hashing.Locate(hash);
  }
  CUCKOO_ALWAYS_INLINE static uint32_t AltBucket(const FilterState& state,
                                                 uint32_t bucket,
                                                 uint32_t value) {
    return state.hashing.AltBucket(bucket, value);
  }
};

// The operations on the state of a filter whose table has type Table and
// whose keys map by Mapping (FixedSizeMapping<Table> or GrowableMapping).
// The caller must use the state's own types (CuckooFilter::VisitTypes
// chooses them).
//
// While the stash is empty (almost always), no lookup branches on what
// the table holds: a branch on the probe's result would be mispredicted
// for a mix of stored and absent keys, and would keep the next lookup's
// loads from overlapping this one's.
template <typename Table, typename Mapping>
class FilterCore {
 public:
  using TableType = Table;
  using MappingType = Mapping;

  CUCKOO_ALWAYS_INLINE static bool Contains(const FilterState& state,
                                            uint64_t hash) {
    return ContainsAt(state, Locate(state, hash));
  }

  // The two halves of Contains, for a caller that interleaves many keys:
  // the key's position (whose buckets it may prefetch), and the answer
  // for that position.
  CUCKOO_ALWAYS_INLINE static KeyPosition Locate(const FilterState& state,
                                                 uint64_t hash) {
    return Mapping::Locate(state, hash);
  }
  CUCKOO_ALWAYS_INLINE static bool ContainsAt(const FilterState& state,
                                              const KeyPosition& position) {
    return state.InStashOrTable(Table::Contains(state.table.view(), position),
                                position);
  }

  // out[i] = Contains(hash_of(i)) for i in [0, count): both buckets of
  // each key of a chunk are prefetched before any is probed. The state
  // does not change during the call, so the stash is tested once: while
  // it is empty (almost always) the table alone answers each key.
  template <typename HashOf>
  static void ContainsEach(const FilterState& state, size_t count,
                           HashOf&& hash_of, bool* out) {
    const auto locate = [&](size_t i) { return Locate(state, hash_of(i)); };
    const auto prefetch = [&](const KeyPosition& position)
                              CUCKOO_INLINE_LAMBDA {
                                Table::Prefetch(state.table.view(), position);
                              };
    if (state.stash.empty()) {
      LocatePrefetchProbe(
          count, locate, prefetch, [&](size_t i, const KeyPosition& position) {
            out[i] = Table::Contains(state.table.view(), position);
          });
    } else {
      LocatePrefetchProbe(count, locate, prefetch,
                          [&](size_t i, const KeyPosition& position) {
                            out[i] = ContainsAt(state, position);
                          });
    }
  }

  static void ContainsBatch(const FilterState& state, const uint64_t* hashes,
                            size_t count, bool* out) {
    ContainsEach(
        state, count, [hashes](size_t i) { return hashes[i]; }, out);
  }

  // Into either bucket, else by moving others (InsertByMoving); kFull, with
  // the state as it was, when that fails too.
  static InsertResult Insert(FilterState& state, uint64_t hash) {
    return InsertAt(state, Locate(state, hash));
  }

  // Insert of the key whose position is `position`.
  static InsertResult InsertAt(FilterState& state,
                               const KeyPosition& position) {
    if (Table::Replace(&state.table, position.bucket, 0,
                       position.fingerprint) ||
        Table::Replace(&state.table, position.alternate, 0,
                       position.fingerprint)) {
      ++state.history.items;
      return InsertResult::kOk;
    }
    return InsertByMoving(state, position);
  }

  // Insert (with kIfAbsent, unless the state already matches the key) of
  // hash_of(i) for i in [0, count), in order. A key with no room is given
  // to on_full(hash_of(i)) (hash_of is called again for it), whose result
  // is the key's. results[i], when results is not null, is key i's result,
  // and *stored counts the kOk ones. The state ends as those calls one by
  // one would leave it. Returns how many keys it took: all, or fewer when
  // on_full grew the table, after which the caller goes on with the grown
  // table's core.
  //
  // The loop is LocatePrefetchStore's: one by one, the work an insert does
  // with its bucket waits for the bucket in the core's out-of-order
  // window; where that work is long (a semi-sorted bucket is decoded,
  // sorted and encoded) it fills the window, the next insert's load cannot
  // start, and on a table larger than the caches each insert waits for a
  // whole miss of its own.
  template <bool kIfAbsent, typename HashOf, typename OnFull>
  static size_t InsertEach(FilterState& state, size_t count, HashOf&& hash_of,
                           OnFull&& on_full, InsertResult* results,
                           size_t* stored) {
    const int moved_bits = state.hashing.moved_bits();
    return LocatePrefetchStore(
        count, [&](size_t i) { return Locate(state, hash_of(i)); },
        [&](const KeyPosition& position) CUCKOO_INLINE_LAMBDA {
          Table::Prefetch(state.table.view(), position);
        },
        [&](size_t i, const KeyPosition& position) {
          InsertResult result = kIfAbsent && ContainsAt(state, position)
                                    ? InsertResult::kMayExist
                                    : InsertAt(state, position);
          if (result == InsertResult::kFull) result = on_full(hash_of(i));
          *stored += result == InsertResult::kOk;
          if (results != nullptr) results[i] = result;
          // Growth changes every key's position, and may change the table
          // type: the positions fetched ahead are stale.
          return state.hashing.moved_bits() == moved_bits;
        });
  }

  CUCKOO_ALWAYS_INLINE static bool Erase(FilterState& state, uint64_t hash) {
    const KeyPosition position = Locate(state, hash);
    if (Table::Replace(&state.table, position.bucket, position.fingerprint,
                       0) ||
        Table::Replace(&state.table, position.alternate, position.fingerprint,
                       0)) {
      --state.history.items;
      ++state.history.deleted;
      if (!state.stash.empty()) state.DrainStash();
      return true;
    }
    return state.EraseFromStash(position);
  }

  // Whether the key's two buckets hold nothing but copies of its
  // fingerprint: then no move makes room for another copy, since each
  // copy's other bucket is the pair's other bucket.
  static bool BucketsFullOfCopies(const FilterState& state, uint64_t hash) {
    const KeyPosition position = Locate(state, hash);
    const BucketTableView& view = state.table.view();
    const int slots = Table::SlotsPerBucket(view);
    return Table::Count(view, position.bucket, position.fingerprint) == slots &&
           Table::Count(view, position.alternate, position.fingerprint) ==
               slots;
  }

  CUCKOO_ALWAYS_INLINE static uint32_t Count(const FilterState& state,
                                             uint64_t hash) {
    const KeyPosition position = Locate(state, hash);
    const BucketTableView& view = state.table.view();
    return Table::Count(view, position.bucket, position.fingerprint) +
           Table::Count(view, position.alternate, position.fingerprint) +
           state.StashCount(position);
  }

 private:
  static constexpr uint32_t kPathSearchNodes = 256;
  static constexpr uint32_t kPathSearchDepth = 5;

  // The table as the graph of the shortest-path search (path_search.h).
  // Write replaces by value, since a semi-sorted Replace reorders its
  // bucket.
  class PathGraph {
   public:
    explicit PathGraph(FilterState& state) : state_(state) {}

    uint32_t slots() const {
      return static_cast<uint32_t>(Table::SlotsPerBucket(state_.table.view()));
    }
    CUCKOO_ALWAYS_INLINE void Prefetch(uint32_t bucket) {
      state_.table.view().PrefetchBucket(bucket);
    }
    CUCKOO_ALWAYS_INLINE void Load(uint32_t bucket, uint32_t* values) {
      Table::Load(state_.table.view(), bucket, values);
    }
    CUCKOO_ALWAYS_INLINE uint32_t AltBucket(uint32_t bucket, uint32_t value) {
      return Mapping::AltBucket(state_, bucket, value);
    }
    CUCKOO_ALWAYS_INLINE int Room(uint32_t bucket) {
      return Table::HasEmptySlot(state_.table.view(), bucket) ? 0 : -1;
    }
    CUCKOO_ALWAYS_INLINE void Write(uint32_t bucket, int, uint32_t from,
                                    uint32_t to) {
      const bool replaced = Table::Replace(&state_.table, bucket, from, to);
      assert(replaced);
      static_cast<void>(replaced);
    }

   private:
    FilterState& state_;
  };

  // Stores the fingerprint at `position`, whose two buckets are full: along
  // the shortest path of moves the search finds, else by a random walk
  // that ends in a free slot or in the stash; kFull, with the table as it
  // was, when neither can.
  static InsertResult InsertByMoving(FilterState& state,
                                     const KeyPosition& position) {
    // The walk's log and the stash take their room before anything changes:
    // an allocation that failed in the middle of the walk would lose the
    // homeless fingerprint, and one that fails here leaves the state as it
    // was.
    state.walk_log.reserve(state.options.max_kicks);
    state.stash.reserve(state.options.stash_capacity);
    if (InsertAlongShortestPath(state, position) ||
        InsertByRandomWalk(state, position.bucket, position.fingerprint)) {
      ++state.history.items;
      return InsertResult::kOk;
    }
    return InsertResult::kFull;
  }

  // Stores the fingerprint by moving stored fingerprints along the
  // shortest path the search finds (see "Insertion and the stash"), from a
  // root chosen at random; false, with the table unchanged, when it finds
  // none.
  static bool InsertAlongShortestPath(FilterState& state,
                                      const KeyPosition& position) {
    const uint32_t max_depth =
        std::min(kPathSearchDepth, state.options.max_kicks);
    const bool alternate_first = (state.NextRandom() & 1) != 0;
    PathGraph graph(state);
    NoBucketMarks marks;
    std::array<PathNode, kPathSearchNodes> nodes;
    ShortestPathSearch<Table::kSlots, PathGraph, NoBucketMarks> search(
        graph, marks, nodes.data(), kPathSearchNodes, max_depth);
    const PathSearchResult result =
        search.Run(alternate_first ? position.alternate : position.bucket,
                   alternate_first ? position.bucket : position.alternate,
                   position.fingerprint);
    state.history.total_kicks += result.moves;
    return result.found;
  }

  // The paper's walk: the homeless fingerprint takes a random slot of its
  // bucket, and the one it evicts goes to its other bucket, up to max_kicks
  // times. The last homeless fingerprint goes to the stash if it has room;
  // otherwise the walk is undone and this returns false.
  static bool InsertByRandomWalk(FilterState& state, uint32_t bucket,
                                 uint32_t fingerprint) {
    RelocatableArray<KickStep>& steps = state.walk_log;
    steps.clear();
    uint32_t homeless = fingerprint;
    uint32_t current = bucket;
    for (uint32_t kick = 0; kick < state.options.max_kicks; ++kick) {
      // Alternate the starting bucket between the two choices.
      if (kick == 0 && (state.NextRandom() & 1)) {
        current = Mapping::AltBucket(state, current, homeless);
      }
      // bucket_size is 2, 4 or 8: the mask is the remainder.
      const int victim = static_cast<int>(
          state.NextRandom() &
          static_cast<uint64_t>(state.options.layout.bucket_size - 1));
      const uint32_t evicted =
          Table::Swap(&state.table, current, victim, homeless);
      steps.push_back({current, homeless, evicted});
      ++state.history.total_kicks;
      homeless = evicted;
      current = Mapping::AltBucket(state, current, homeless);
      if (Table::Replace(&state.table, current, 0, homeless)) return true;
    }
    if (state.stash.size() < state.options.stash_capacity) {
      state.stash.push_back({current, homeless});
      state.history.peak_stash_size =
          std::max(state.history.peak_stash_size,
                   static_cast<uint32_t>(state.stash.size()));
      return true;
    }
    // Undo in reverse order: each step put `inserted` where `evicted` was.
    for (auto step = steps.rbegin(); step != steps.rend(); ++step) {
      state.table.Replace(step->bucket, step->inserted, step->evicted);
    }
    return false;
  }
};

}  // namespace cuckoo
