// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The dynamic cuckoo filter: an approximate multiset of 64-bit key hashes with
// insert, lookup, delete and count, a shortest-path search for room and a
// bounded kick-out walk, a victim stash, growth in place, statistics, and a
// checksummed serialization, whole or in chunks
// (cuckoo_filter_serialization.h). Not thread-safe; see
// concurrent_cuckoo_filter.h for the thread-safe filter.
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
// Count reports them and each Erase removes one. Two different keys whose
// fingerprints and bucket pairs coincide are indistinguishable: that is the
// false-positive event, and Erase of a key that was never inserted may remove
// such a twin. Only erase keys that were inserted.
//
// Growth
// ------
// A filter created with an expansion of 2^e grows when an insert would
// otherwise fail: the table becomes 2^e times larger, and the insert is
// retried. The keys are gone, so growth must work from what the slots hold.
// Two designs are known:
//
//   * Chaining (RedisBloom, scalable Bloom filters): add a new, larger
//     sub-filter; lookups probe every sub-filter. After k growths an absent
//     key costs k + 1 probes, and the false-positive rates add up: k + 1
//     times one filter's with equal fingerprints, or a geometric series when
//     each sub-filter's fingerprints are longer, paid for in memory.
//   * Doubling in place (Taffy cuckoo filters, InfiniFilter): every key keeps
//     its two buckets, and a doubled table needs one more bit of bucket index
//     per key, taken from the slot.
//
// This filter doubles in place, and takes the index bits from bits of the
// key hash reserved in each slot at creation for that purpose, not from the
// fingerprint (GrowableHashing in hashing.h has the mapping). A filter with
// f-bit fingerprints that may grow G times by 2^e starts with slots of
// f + G e bits; each growth moves e of them into the bucket index, so after
// all G growths the slots are f bits wide, like those of a filter made at
// that size. An absent key's lookup compares its f + (G - k) e bits with at
// most 2b values in two buckets, so after k growths
//
//     FPR <= 2 b alpha / ((2^f - 1) 2^((G - k) e)) <= 2 b / (2^f - 1),
//
// at every k: the bound does not grow with the number of growths, where
// chaining's grows linearly. A lookup stays two bucket probes, whatever k.
// What it costs: the reserved bits, G e per slot at first (they also lower
// the FPR until they are used up), and a growth copies the table (old and
// new are both allocated during it). The two buckets of a key share the
// moved bits, so after k growths the table is 2^(ke) cuckoo tables of the
// base size side by side, each key in one of them; the fullest one fails
// first, at a slightly lower average load than one table would. After G
// growths the filter no longer grows, and Insert reports kFull as a filter
// without expansion does. No growth ever drops a fingerprint: the 2^e new
// buckets of an old bucket hold exactly its slots.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuckoo/cuckoo_filter_options.h"
#include "cuckoo/hashing.h"
#include "cuckoo/path_search.h"
#include "cuckoo/sizing.h"
#include "cuckoo/table_types.h"

namespace cuckoo {

// RedisBloom's CF.INFO fields, from the options, the table and the history
// (Info): a view for RedisBloom's users, with no figure of its own.
struct CuckooFilterInfo {
  size_t size_in_bytes = 0;
  uint64_t num_buckets = 0;
  uint32_t num_growths = 0;    // RedisBloom's "Number of filters" minus 1
  uint64_t items_stored = 0;   // items stored now (inserts minus erases)
  uint64_t items_deleted = 0;  // successful erases, ever
  int bucket_size = 0;
  uint32_t expansion = 0;
  uint32_t max_iterations = 0;  // max_kicks
};

enum class InsertResult {
  kOk,        // stored
  kFull,      // not stored: no room, even after the walk and in the stash;
              // no stored key was lost
  kMayExist,  // InsertIfAbsent: not stored, the filter already matches it
};

// How full the filter is now, from a pass over its table (Stats). What its
// operations did over its life is CuckooFilterHistory (history()).
struct CuckooFilterStats {
  // bucket_occupancy[k] = number of buckets holding k fingerprints.
  std::vector<uint64_t> bucket_occupancy;
  uint64_t empty_buckets = 0;
  uint64_t full_buckets = 0;
  int max_bucket_fill = 0;
  uint32_t growths = 0;
  uint32_t stash_size = 0;
  uint32_t stash_capacity = 0;
};

// A fingerprint the table had no room for: its slot value and either of its
// two buckets.
struct StashEntry {
  uint32_t bucket;
  uint32_t fingerprint;
};

// What a filter's operations leave besides its table and stash: its
// counters over its life and the state of the generator that picks kick-out
// victims (history()). The serialization records it.
struct CuckooFilterHistory {
  uint64_t items = 0;            // stored now (inserts minus erases)
  uint64_t deleted = 0;          // successful erases, ever
  uint64_t generator_state = 0;  // starts at CuckooFilterOptions::seed
  uint64_t total_kicks = 0;      // evictions performed by all walks
  uint64_t failed_inserts = 0;   // Insert calls that returned kFull
  uint32_t peak_stash_size = 0;
};

class CuckooFilter {
 public:
  // A filter of num_buckets buckets (rounded up to an even count); with an
  // expansion, that is its size before it grows. Throws
  // std::invalid_argument for an invalid layout, a kick or stash limit, an
  // expansion or a growth count out of range, and std::length_error when
  // the table could outgrow 2^32 buckets.
  explicit CuckooFilter(uint64_t num_buckets,
                        const CuckooFilterOptions& options = {})
      : CuckooFilter(InitialHashing(num_buckets, CheckedOptions(options)),
                     options) {}

  // RedisBloom's CF.RESERVE: a filter for `capacity` items at the dynamic
  // filter's sustainable load (sizing.h), with options' bucket size, kick
  // limit (MAXITERATIONS) and expansion. Throws as the constructor does,
  // std::invalid_argument for a capacity of 0 and std::length_error for one
  // too large.
  static CuckooFilter Reserve(uint64_t capacity,
                              const CuckooFilterOptions& options = {}) {
    return CuckooFilter(BucketsToReserve(capacity, options), options);
  }

  // A filter with the given contents, such as a loader has read
  // (cuckoo_filter_serialization.h): after `growths` growths, with `table`
  // (whose slots must be SlotLayout(options, the hashing after those
  // growths)), `stash` and `history`. Everything is checked, as for bytes
  // from an untrusted source: the options and the geometry
  // (GeometryProblem), the stash entries, the table's padding and semi-sort
  // codes, and an item count that agrees with the stored fingerprints.
  // nullopt, with *error set, when a check fails.
  static std::optional<CuckooFilter> Restore(const CuckooFilterOptions& options,
                                             uint32_t growths,
                                             BucketTable table,
                                             std::vector<StashEntry> stash,
                                             const CuckooFilterHistory& history,
                                             std::string* error) {
    std::string why = RestoreProblem(options, growths, table, stash, history);
    if (!why.empty()) {
      if (error != nullptr) *error = "cuckoo filter: " + why;
      return std::nullopt;
    }
    CuckooFilter filter(HashingAfter(options, table.num_buckets(), growths),
                        options, std::move(table));
    filter.stash_ = std::move(stash);
    filter.history_ = history;
    return filter;
  }

  // Whether a stash entry can be one of a filter with this mapping: a bucket
  // in range and a slot value whose key fingerprint is not 0.
  static bool ValidStashEntry(const GrowableHashing& hashing,
                              const StashEntry& entry) {
    return entry.bucket < hashing.num_buckets() &&
           entry.fingerprint <= hashing.max_fingerprint() &&
           hashing.KeyFingerprint(entry.fingerprint) != 0;
  }

  const CuckooFilterOptions& options() const { return options_; }
  // The layout the filter was created with; its slots are wider until the
  // reserved growth bits are used up (see "Growth").
  const BucketLayout& layout() const { return options_.layout; }
  uint32_t NumBuckets() const { return hashing_.num_buckets(); }
  uint32_t Growths() const {
    return ExpansionBits(options_) == 0
               ? 0
               : static_cast<uint32_t>(hashing_.moved_bits() /
                                       ExpansionBits(options_));
  }
  // What the serialization writes: the key mapping, the table, the stash
  // and the history.
  const GrowableHashing& hashing() const { return hashing_; }
  const BucketTable& table() const { return table_; }
  const std::vector<StashEntry>& stash() const { return stash_; }
  const CuckooFilterHistory& history() const { return history_; }

  // Stores the key. With an expansion, grows the filter when it is full
  // and retries (see "Growth").
  InsertResult Insert(uint64_t hash) { return dispatch_->insert(*this, hash); }

  // Inserts unless the filter already answers "may contain" (RedisBloom's
  // CF.ADDNX). The caveat is the false positive: a key never added whose
  // fingerprint and bucket pair match a stored key's is not inserted, with
  // the filter's false-positive probability. It still reads as present
  // (the twin answers for it), but Count sees one copy fewer than Insert
  // would have stored, and erasing the twin's key makes it read as absent.
  InsertResult InsertIfAbsent(uint64_t hash) {
    if (Contains(hash)) return InsertResult::kMayExist;
    return Insert(hash);
  }

  // Insert (or InsertIfAbsent) of each of hashes[0, count), in order;
  // results[i] (when results is not null) is that of hashes[i]. Returns
  // the number stored. A kFull leaves the keys before it stored. The
  // filter ends as one-by-one calls leave it; on a table larger than the
  // caches, faster, as the buckets of the next keys are fetched while one
  // is inserted.
  size_t InsertMany(const uint64_t* hashes, size_t count,
                    InsertResult* results = nullptr) {
    return InsertManyOf(hashes, count, results, false);
  }
  size_t InsertManyIfAbsent(const uint64_t* hashes, size_t count,
                            InsertResult* results = nullptr) {
    return InsertManyOf(hashes, count, results, true);
  }

  // Adds every fingerprint of `other`, a filter of the same geometry
  // (layout, initial bucket count, expansion and growth limit) and key
  // hasher (its other options may differ), as if its keys had been inserted
  // here: a fingerprint stored in bucket i has the same bucket pair in both.
  // The filter that has grown less is brought to the other's size first, and
  // the result grows if it must. All or nothing: on kFull this filter is
  // unchanged. Throws std::invalid_argument for another geometry, whose
  // fingerprints would mean other keys.
  InsertResult Merge(const CuckooFilter& other) {
    if (!(other.layout() == layout()) ||
        other.hashing_.base_buckets() != hashing_.base_buckets() ||
        ExpansionBits(other.options_) != ExpansionBits(options_) ||
        other.hashing_.reserve_bits() != hashing_.reserve_bits() ||
        other.options_.hasher != options_.hasher) {
      throw std::invalid_argument(
          "cuckoo filter: Merge needs the same layout, bucket count, "
          "expansion, growth limit and key hasher");
    }
    CuckooFilter merged = *this;
    CuckooFilter source = other;
    while (merged.Growths() < source.Growths()) merged.Grow();
    while (source.Growths() < merged.Growths()) source.Grow();
    for (;;) {
      CuckooFilter attempt = merged;
      if (attempt.InsertAllOf(source) == InsertResult::kOk) {
        attempt.history_.failed_inserts = history_.failed_inserts;
        *this = std::move(attempt);
        return InsertResult::kOk;
      }
      if (!merged.Grow()) return InsertResult::kFull;
      source.Grow();
    }
  }

  bool Contains(uint64_t hash) const {
    return dispatch_->contains(*this, hash);
  }

  // Calls visit(lookup) with a lookup compiled for this filter's table:
  // lookup.Contains(hash) answers as Contains does, and inlines into the
  // caller's loop. Such a loop pays for the choice of table type once, where
  // each Contains call pays an indirect call. visit is compiled for every
  // table type; the lookup is valid inside visit, while the filter does not
  // change.
  template <typename Visit>
  void VisitLookup(Visit&& visit) const {
    VisitOperations([&](auto ops) { visit(Lookup<decltype(ops)>(*this)); });
  }

  // Calls visit(Ops{}), Ops being the Operations of this filter's table
  // type and key mapping: a loop inside visit can call them, compiled and
  // inlined, on this filter, and on any other filter f for which
  // f.Uses<Ops>() (ConcurrentCuckooFilter's batched lookup does, over its
  // shards).
  template <typename Visit>
  void VisitOperations(Visit&& visit) const {
    VisitTypes(table_.layout(), hashing_, [&](auto table, auto mapping) {
      visit(Operations<decltype(table), decltype(mapping)>{});
    });
  }

  // Whether Ops are this filter's Operations. Where a program holds two
  // copies of them (a shared library with hidden symbols, say), it may say
  // false for a filter whose type matches, never true for one whose type
  // does not.
  template <typename Ops>
  bool Uses() const {
    return dispatch_ == DispatchOf<Ops>();
  }

  // Batched lookup: prefetches both buckets of every key before probing.
  void ContainsBatch(const uint64_t* hashes, size_t count, bool* out) const {
    dispatch_->contains_batch(*this, hashes, count, out);
  }

  // Removes one copy. Returns false when no copy was found.
  bool Erase(uint64_t hash) { return dispatch_->erase(*this, hash); }

  // Copies of the key's fingerprint in its two buckets and the stash.
  uint32_t Count(uint64_t hash) const { return dispatch_->count(*this, hash); }

  uint64_t Size() const { return history_.items; }
  // Slots in the table now (the stash is extra); growth multiplies them.
  uint64_t Capacity() const {
    return static_cast<uint64_t>(NumBuckets()) * layout().bucket_size;
  }
  double LoadFactor() const {
    return static_cast<double>(history_.items) /
           static_cast<double>(Capacity());
  }
  // Table bytes including padding, plus the stash.
  size_t SizeInBytes() const {
    return table_.bytes().size() + options_.stash_capacity * sizeof(StashEntry);
  }
  // Memory held besides SizeInBytes(): the kick-out walk's log, which the
  // first insert that has to move others reserves for max_kicks steps and
  // keeps (InsertByMoving).
  size_t WalkLogBytes() const {
    return walk_log_.capacity() * sizeof(KickStep);
  }
  double BitsPerKey() const {
    return history_.items == 0 ? 0.0
                               : 8.0 * static_cast<double>(SizeInBytes()) /
                                     static_cast<double>(history_.items);
  }

  // Empties the filter; it keeps its size, grown or not.
  void Clear() {
    table_.Clear();
    stash_.clear();
    history_ = CuckooFilterHistory{};
    history_.generator_state = options_.seed;
  }

  CuckooFilterInfo Info() const {
    CuckooFilterInfo info;
    info.size_in_bytes = SizeInBytes();
    info.num_buckets = NumBuckets();
    info.num_growths = Growths();
    info.items_stored = history_.items;
    info.items_deleted = history_.deleted;
    info.bucket_size = layout().bucket_size;
    info.expansion = options_.expansion;
    info.max_iterations = options_.max_kicks;
    return info;
  }

  CuckooFilterStats Stats() const {
    CuckooFilterStats stats;
    const int b = layout().bucket_size;
    stats.bucket_occupancy.assign(static_cast<size_t>(b) + 1, 0);
    for (uint32_t bucket = 0; bucket < NumBuckets(); ++bucket) {
      const int fill = table_.view().Occupancy(bucket);
      ++stats.bucket_occupancy[static_cast<size_t>(fill)];
      stats.max_bucket_fill = std::max(stats.max_bucket_fill, fill);
    }
    stats.empty_buckets = stats.bucket_occupancy[0];
    stats.full_buckets = stats.bucket_occupancy[static_cast<size_t>(b)];
    stats.stash_size = static_cast<uint32_t>(stash_.size());
    stats.stash_capacity = options_.stash_capacity;
    stats.growths = Growths();
    return stats;
  }

  // While held, the filter does not grow: an insert that would make it grow
  // reports kFull, as in a filter without expansion, and Merge reports kFull
  // where it would grow. Not saved.
  //
  // An insert that throws std::bad_alloc leaves the filter either as it was
  // (history() unchanged: the room for a walk could not be taken) or, when
  // its growth failed, as a held growth leaves it (the same table, stash and
  // history), so that a replica that repeats the insert with growth held
  // ends in the same state.
  void HoldGrowth(bool held) { growth_held_ = held; }

  // Grows the filter now, as a full insert would; false (and nothing done)
  // when it has no expansion, has grown max_growths times or is held.
  bool Grow() {
    const int bits = ExpansionBits(options_);
    if (growth_held_ || bits == 0 ||
        hashing_.moved_bits() + bits > hashing_.reserve_bits()) {
      return false;
    }
    const GrowableHashing grown = hashing_.AfterMoving(bits);
    BucketTable grown_table(SlotLayout(options_, grown), grown.num_buckets());
    const BucketTableView& view = table_.view();
    bool kept_all = true;
    for (uint32_t bucket = 0; bucket < NumBuckets(); ++bucket) {
      view.ForEachSlot(bucket, [&](int, uint32_t value) {
        if (value == 0) return;
        const GrowableHashing::SlotMove moved =
            hashing_.MoveSlot(bucket, value, bits);
        kept_all &= grown_table.Replace(moved.bucket, 0, moved.value);
      });
    }
    if (!kept_all) {
      throw std::logic_error("cuckoo filter: growth overfilled a bucket");
    }
    for (StashEntry& entry : stash_) {
      const GrowableHashing::SlotMove moved =
          hashing_.MoveSlot(entry.bucket, entry.fingerprint, bits);
      entry = StashEntry{moved.bucket, moved.value};
    }
    hashing_ = grown;
    table_ = std::move(grown_table);
    dispatch_ = ChooseDispatch(table_.layout(), hashing_);
    DrainStash();
    return true;
  }

  // How a filter maps keys, for Operations: a filter that cannot grow maps
  // them with its base mapping, which Table may compile.
  template <typename Table>
  struct FixedSize {
    CUCKOO_ALWAYS_INLINE static KeyPosition Locate(const CuckooFilter& filter,
                                                   uint64_t hash) {
      return Table::Locate(filter.hashing_.base(), hash);
    }
    CUCKOO_ALWAYS_INLINE static uint32_t AltBucket(const CuckooFilter& filter,
                                                   uint32_t bucket,
                                                   uint32_t fingerprint) {
      return Table::AltBucket(filter.hashing_.base(), bucket, fingerprint);
    }
  };
  // A filter that may grow maps keys with the growable mapping; Table still
  // compiles its slots where their layout has a type.
  struct Growable {
    CUCKOO_ALWAYS_INLINE static KeyPosition Locate(const CuckooFilter& filter,
                                                   uint64_t hash) {
      return filter.hashing_.Locate(hash);
    }
    CUCKOO_ALWAYS_INLINE static uint32_t AltBucket(const CuckooFilter& filter,
                                                   uint32_t bucket,
                                                   uint32_t value) {
      return filter.hashing_.AltBucket(bucket, value);
    }
  };

  // The operations on a filter whose table has type Table (table_types.h)
  // and whose keys map by Mapping (FixedSize<Table> or Growable), compiled
  // for them. A CuckooFilter calls those of its table type through the
  // Dispatch it chose when it was made (and again when it grew); a
  // TypedCuckooFilter knows its type, and calls them directly. The caller
  // must use the filter's own types (VisitTypes chooses them).
  //
  // While the stash is empty (almost always), no lookup branches on what
  // the table holds: a branch on the probe's result would be mispredicted
  // for a mix of stored and absent keys, and would keep the next lookup's
  // loads from overlapping this one's.
  template <typename Table, typename Mapping>
  class Operations {
   public:
    using TableType = Table;
    using MappingType = Mapping;

    CUCKOO_ALWAYS_INLINE static bool Contains(const CuckooFilter& filter,
                                              uint64_t hash) {
      return ContainsAt(filter, Locate(filter, hash));
    }

    // The two halves of Contains, for a caller that interleaves many keys:
    // the key's position (whose buckets it may prefetch), and the answer
    // for that position.
    CUCKOO_ALWAYS_INLINE static KeyPosition Locate(const CuckooFilter& filter,
                                                   uint64_t hash) {
      return Mapping::Locate(filter, hash);
    }
    CUCKOO_ALWAYS_INLINE static bool ContainsAt(const CuckooFilter& filter,
                                                const KeyPosition& position) {
      return filter.InStashOrTable(
          Table::Contains(filter.table_.view(), position), position);
    }

    // out[i] = Contains(hash_of(i)) for i in [0, count): both buckets of
    // each key of a chunk are prefetched before any is probed. The filter
    // does not change during the call, so the stash is tested once: while
    // it is empty (almost always) the table alone answers each key.
    template <typename HashOf>
    static void ContainsEach(const CuckooFilter& filter, size_t count,
                             HashOf&& hash_of, bool* out) {
      const auto locate = [&](size_t i) { return Locate(filter, hash_of(i)); };
      const auto prefetch = [&](const KeyPosition& position) {
        Table::Prefetch(filter.table_.view(), position);
      };
      if (filter.stash_.empty()) {
        LocatePrefetchProbe(count, locate, prefetch,
                            [&](size_t i, const KeyPosition& position) {
                              out[i] = Table::Contains(filter.table_.view(),
                                                       position);
                            });
      } else {
        LocatePrefetchProbe(count, locate, prefetch,
                            [&](size_t i, const KeyPosition& position) {
                              out[i] = ContainsAt(filter, position);
                            });
      }
    }

    static void ContainsBatch(const CuckooFilter& filter,
                              const uint64_t* hashes, size_t count, bool* out) {
      ContainsEach(
          filter, count, [hashes](size_t i) { return hashes[i]; }, out);
    }

    // Into either bucket, else by moving others (InsertByMoving); when that
    // fails too, the filter grows if it can and the grown filter, whose
    // table type may differ, inserts the key. A kFull is counted.
    static InsertResult Insert(CuckooFilter& filter, uint64_t hash) {
      return InsertAt(filter, hash, Mapping::Locate(filter, hash));
    }

    // Insert (with kIfAbsent, InsertIfAbsent) of hash_of(i) for i in
    // [0, count), in order; results[i], when results is not null, is key
    // i's result, and *stored counts the kOk ones. The filter ends as those
    // calls one by one would leave it. Returns how many keys it took: all,
    // or fewer when one of them made the filter grow, after which the
    // caller goes on with the grown filter's operations.
    //
    // While key i is inserted, both buckets of key i + kInsertAhead are
    // being fetched. One by one, the work an insert does with its bucket
    // waits for the bucket in the core's out-of-order window; where that
    // work is long (a semi-sorted bucket is decoded, sorted and encoded) it
    // fills the window, the next insert's load cannot start, and on a table
    // larger than the caches each insert waits for a whole miss of its own.
    template <bool kIfAbsent, typename HashOf>
    static size_t InsertEach(CuckooFilter& filter, size_t count,
                             HashOf&& hash_of, InsertResult* results,
                             size_t* stored) {
      uint64_t hashes[kInsertAhead];
      KeyPosition positions[kInsertAhead];
      const auto fetch = [&](size_t i) {
        const size_t slot = i % kInsertAhead;
        hashes[slot] = hash_of(i);
        positions[slot] = Locate(filter, hashes[slot]);
        Table::Prefetch(filter.table_.view(), positions[slot]);
      };
      for (size_t i = 0; i < std::min(count, kInsertAhead); ++i) fetch(i);
      const int moved_bits = filter.hashing_.moved_bits();
      for (size_t i = 0; i < count; ++i) {
        const size_t slot = i % kInsertAhead;
        const uint64_t hash = hashes[slot];
        const KeyPosition position = positions[slot];
        if (i + kInsertAhead < count) fetch(i + kInsertAhead);
        const InsertResult result = kIfAbsent && ContainsAt(filter, position)
                                        ? InsertResult::kMayExist
                                        : InsertAt(filter, hash, position);
        *stored += result == InsertResult::kOk;
        if (results != nullptr) results[i] = result;
        // Growth changes every key's position, and may change the table
        // type: the positions fetched ahead are stale.
        if (filter.hashing_.moved_bits() != moved_bits) return i + 1;
      }
      return count;
    }

    template <bool kIfAbsent>
    static size_t InsertBatch(CuckooFilter& filter, const uint64_t* hashes,
                              size_t count, InsertResult* results,
                              size_t* stored) {
      return InsertEach<kIfAbsent>(
          filter, count, [hashes](size_t i) { return hashes[i]; }, results,
          stored);
    }

    // Insert of the key whose position is `position`.
    static InsertResult InsertAt(CuckooFilter& filter, uint64_t hash,
                                 const KeyPosition& position) {
      if (Table::Replace(&filter.table_, position.bucket, 0,
                         position.fingerprint) ||
          Table::Replace(&filter.table_, position.alternate, 0,
                         position.fingerprint)) {
        ++filter.history_.items;
        return InsertResult::kOk;
      }
      const InsertResult result = filter.InsertByMoving<Table, Mapping>(
          position.bucket, position.fingerprint);
      if (result == InsertResult::kOk) return result;
      bool grown;
      try {
        grown = filter.Grow();
      } catch (const std::bad_alloc&) {
        // Counted as the insert a held growth refuses (HoldGrowth), so
        // that the filter is left as one that was not allowed to grow.
        ++filter.history_.failed_inserts;
        throw;
      }
      if (grown) return filter.Insert(hash);
      ++filter.history_.failed_inserts;
      return result;
    }

    CUCKOO_ALWAYS_INLINE static bool Erase(CuckooFilter& filter,
                                           uint64_t hash) {
      const KeyPosition position = Mapping::Locate(filter, hash);
      if (Table::Replace(&filter.table_, position.bucket, position.fingerprint,
                         0) ||
          Table::Replace(&filter.table_, position.alternate,
                         position.fingerprint, 0)) {
        --filter.history_.items;
        ++filter.history_.deleted;
        if (!filter.stash_.empty()) filter.DrainStash();
        return true;
      }
      return filter.EraseFromStash(position);
    }

    CUCKOO_ALWAYS_INLINE static uint32_t Count(const CuckooFilter& filter,
                                               uint64_t hash) {
      const KeyPosition position = Mapping::Locate(filter, hash);
      const BucketTableView& view = filter.table_.view();
      return Table::Count(view, position.bucket, position.fingerprint) +
             Table::Count(view, position.alternate, position.fingerprint) +
             filter.StashCount(position);
    }
  };

  // The lookup of VisitLookup.
  template <typename Ops>
  class Lookup {
   public:
    explicit Lookup(const CuckooFilter& filter) : filter_(filter) {}
    CUCKOO_ALWAYS_INLINE bool Contains(uint64_t hash) const {
      return Ops::Contains(filter_, hash);
    }

   private:
    const CuckooFilter& filter_;
  };

 private:
  struct KickStep {
    uint32_t bucket;
    uint32_t inserted;
    uint32_t evicted;
  };
  // Keys whose buckets a batched insert fetches ahead (InsertEach).
  static constexpr size_t kInsertAhead = 8;
  static constexpr uint32_t kPathSearchNodes = 256;
  static constexpr uint32_t kPathSearchDepth = 5;

  // The operations of one table type, as pointers, for the runtime choice.
  struct Dispatch {
    bool (*contains)(const CuckooFilter&, uint64_t);
    void (*contains_batch)(const CuckooFilter&, const uint64_t*, size_t, bool*);
    InsertResult (*insert)(CuckooFilter&, uint64_t);
    size_t (*insert_batch)(CuckooFilter&, const uint64_t*, size_t,
                           InsertResult*, size_t*);
    size_t (*insert_batch_if_absent)(CuckooFilter&, const uint64_t*, size_t,
                                     InsertResult*, size_t*);
    bool (*erase)(CuckooFilter&, uint64_t);
    uint32_t (*count)(const CuckooFilter&, uint64_t);
  };

  template <typename Ops>
  static const Dispatch* DispatchOf() {
    static constexpr Dispatch dispatch = {&Ops::Contains,
                                          &Ops::ContainsBatch,
                                          &Ops::Insert,
                                          &Ops::template InsertBatch<false>,
                                          &Ops::template InsertBatch<true>,
                                          &Ops::Erase,
                                          &Ops::Count};
    return &dispatch;
  }

  // Calls visit(Table{}, Mapping{}) with the types of a table of `slots`
  // mapped by `hashing`.
  template <typename Visit>
  static void VisitTypes(const BucketLayout& slots,
                         const GrowableHashing& hashing, Visit&& visit) {
    if (hashing.reserve_bits() == 0) {
      VisitTable(slots, hashing.base(), [&visit](auto table) {
        visit(table, FixedSize<decltype(table)>{});
      });
      return;
    }
    // The growable mapping is not the base's: only the slots compile.
    const bool compiled = VisitCompiledBucket(slots, [&visit](auto bucket) {
      visit(CompiledTable<decltype(bucket), false>{}, Growable{});
    });
    if (!compiled) visit(AnyLayoutTable{}, Growable{});
  }

  static const Dispatch* ChooseDispatch(const BucketLayout& slots,
                                        const GrowableHashing& hashing) {
    const Dispatch* dispatch = nullptr;
    VisitTypes(slots, hashing, [&dispatch](auto table, auto mapping) {
      dispatch = DispatchOf<Operations<decltype(table), decltype(mapping)>>();
    });
    return dispatch;
  }

  // options must have passed CheckedOptions, and table (when given) must
  // have SlotLayout(options, hashing)'s slots and hashing's bucket count.
  CuckooFilter(const GrowableHashing& hashing,
               const CuckooFilterOptions& options)
      : CuckooFilter(
            hashing, options,
            BucketTable(SlotLayout(options, hashing), hashing.num_buckets())) {}
  CuckooFilter(const GrowableHashing& hashing,
               const CuckooFilterOptions& options, BucketTable table)
      : options_(options),
        hashing_(hashing),
        table_(std::move(table)),
        dispatch_(ChooseDispatch(table_.layout(), hashing_)) {
    history_.generator_state = options.seed;
  }

  // Restore's checks beyond the geometry: the table's slots and size, the
  // stash, and what only the whole table can tell.
  static std::string RestoreProblem(const CuckooFilterOptions& options,
                                    uint32_t growths, const BucketTable& table,
                                    const std::vector<StashEntry>& stash,
                                    const CuckooFilterHistory& history) {
    std::string problem =
        GeometryProblem(options, table.num_buckets(), growths);
    if (!problem.empty()) return problem;
    const GrowableHashing hashing =
        HashingAfter(options, table.num_buckets(), growths);
    const std::vector<uint8_t>& bytes = table.bytes();
    if (!(table.layout() == SlotLayout(options, hashing)) ||
        bytes.size() != TableDataBytes(table.layout(), table.num_buckets()) +
                            kTablePaddingBytes) {
      return "the table's slots or size are not those of the options";
    }
    if (stash.size() > history.peak_stash_size ||
        history.peak_stash_size > options.stash_capacity) {
      return "stash size " + std::to_string(stash.size()) + " / peak " +
             std::to_string(history.peak_stash_size) + " / capacity " +
             std::to_string(options.stash_capacity) + " out of range";
    }
    for (size_t i = 0; i < stash.size(); ++i) {
      if (!ValidStashEntry(hashing, stash[i])) {
        return "stash entry " + std::to_string(i) + " is out of range";
      }
    }
    const size_t data_bytes = bytes.size() - kTablePaddingBytes;
    for (size_t i = data_bytes; i < bytes.size(); ++i) {
      if (bytes[i] != 0) return "nonzero table padding";
    }
    // Bits after the last bucket inside the last data byte must be zero too.
    const uint64_t used_bits =
        uint64_t{table.num_buckets()} * table.layout().BitsPerBucket();
    if (used_bits % 8 != 0 && (bytes[data_bytes - 1] >> (used_bits % 8)) != 0) {
      return "nonzero bits after the last bucket";
    }
    const BucketTableView& view = table.view();
    uint64_t occupied = 0;
    bool key_fingerprints_nonzero = true;
    for (uint32_t bucket = 0; bucket < table.num_buckets(); ++bucket) {
      if (!view.HasValidCode(bucket)) {
        return "bucket " + std::to_string(bucket) +
               " has an invalid semi-sort code";
      }
      occupied += static_cast<uint64_t>(view.Occupancy(bucket));
      if (hashing.reserve_bits() != 0) {
        view.ForEachSlot(bucket, [&](int, uint32_t value) {
          key_fingerprints_nonzero &=
              value == 0 || hashing.KeyFingerprint(value) != 0;
        });
      }
    }
    if (!key_fingerprints_nonzero) {
      return "a slot holds growth bits with a key fingerprint of 0";
    }
    if (occupied + stash.size() != history.items) {
      return "item count " + std::to_string(history.items) +
             " disagrees with the " + std::to_string(occupied + stash.size()) +
             " stored fingerprints";
    }
    return "";
  }

  // Inserts every fingerprint of `other` (same geometry and growths).
  InsertResult InsertAllOf(const CuckooFilter& other) {
    const BucketTableView& from = other.table_.view();
    InsertResult result = InsertResult::kOk;
    for (uint32_t bucket = 0;
         bucket < NumBuckets() && result == InsertResult::kOk; ++bucket) {
      from.ForEachSlot(bucket, [&](int, uint32_t value) {
        if (value != 0 && result == InsertResult::kOk) {
          result = InsertFingerprint(bucket, hashing_.AltBucket(bucket, value),
                                     value);
        }
      });
    }
    for (const StashEntry& entry : other.stash_) {
      if (result != InsertResult::kOk) break;
      result = InsertFingerprint(
          entry.bucket, hashing_.AltBucket(entry.bucket, entry.fingerprint),
          entry.fingerprint);
    }
    return result;
  }

  // The stash is read out of line, and given the key's position by value:
  // a reference would make every lookup store the position in memory for
  // the rare call, which is pure (CUCKOO_PURE) for the same reason.
  CUCKOO_ALWAYS_INLINE bool InStashOrTable(bool in_table,
                                           const KeyPosition& position) const {
    return stash_.empty()
               ? in_table
               : in_table || StashContains(position.bucket, position.alternate,
                                           position.fingerprint);
  }
  CUCKOO_NOINLINE CUCKOO_PURE bool StashContains(uint32_t bucket,
                                                 uint32_t alternate,
                                                 uint32_t fingerprint) const {
    return StashCount(KeyPosition{bucket, alternate, fingerprint}) > 0;
  }

  // SplitMix64.
  uint64_t NextRandom() {
    return Mix13(history_.generator_state += 0x9E3779B97F4A7C15ull);
  }

  // Stores a fingerprint of bucket pair (bucket, alternate), for Merge. The
  // growable mapping's AltBucket is every filter's.
  InsertResult InsertFingerprint(uint32_t bucket, uint32_t alternate,
                                 uint32_t fingerprint) {
    if (table_.Replace(bucket, 0, fingerprint) ||
        table_.Replace(alternate, 0, fingerprint)) {
      ++history_.items;
      return InsertResult::kOk;
    }
    return InsertByMoving<AnyLayoutTable, Growable>(bucket, fingerprint);
  }

  // InsertMany's loop: the operations of the table type take keys until
  // the filter grows, then those of the grown filter's type go on.
  size_t InsertManyOf(const uint64_t* hashes, size_t count,
                      InsertResult* results, bool if_absent) {
    size_t stored = 0;
    size_t done = 0;
    while (done < count) {
      done += (if_absent ? dispatch_->insert_batch_if_absent
                         : dispatch_->insert_batch)(
          *this, hashes + done, count - done,
          results == nullptr ? nullptr : results + done, &stored);
    }
    return stored;
  }

  // Whether a stash entry is a copy of the key at `position`.
  static bool InStash(const StashEntry& entry, const KeyPosition& position) {
    return entry.fingerprint == position.fingerprint &&
           (entry.bucket == position.bucket ||
            entry.bucket == position.alternate);
  }

  // Erase's last resort: one copy of the key in the stash.
  bool EraseFromStash(const KeyPosition& position) {
    for (size_t i = 0; i < stash_.size(); ++i) {
      if (InStash(stash_[i], position)) {
        stash_.erase(stash_.begin() + static_cast<std::ptrdiff_t>(i));
        --history_.items;
        ++history_.deleted;
        return true;
      }
    }
    return false;
  }

  uint32_t StashCount(const KeyPosition& position) const {
    uint32_t count = 0;
    for (const StashEntry& entry : stash_) count += InStash(entry, position);
    return count;
  }

  // The table as the graph of the shortest-path search (path_search.h).
  // Write replaces by value, since a semi-sorted Replace reorders its
  // bucket.
  template <typename Table, typename Mapping>
  class PathGraph {
   public:
    explicit PathGraph(CuckooFilter& filter) : filter_(filter) {}

    uint32_t slots() const {
      return static_cast<uint32_t>(
          Table::SlotsPerBucket(filter_.table_.view()));
    }
    CUCKOO_ALWAYS_INLINE void Prefetch(uint32_t bucket) {
      filter_.table_.view().PrefetchBucket(bucket);
    }
    CUCKOO_ALWAYS_INLINE void Load(uint32_t bucket, uint32_t* values) {
      Table::Load(filter_.table_.view(), bucket, values);
    }
    CUCKOO_ALWAYS_INLINE uint32_t AltBucket(uint32_t bucket, uint32_t value) {
      return Mapping::AltBucket(filter_, bucket, value);
    }
    CUCKOO_ALWAYS_INLINE int Room(uint32_t bucket) {
      return Table::HasEmptySlot(filter_.table_.view(), bucket) ? 0 : -1;
    }
    CUCKOO_ALWAYS_INLINE void Write(uint32_t bucket, int, uint32_t from,
                                    uint32_t to) {
      const bool replaced = Table::Replace(&filter_.table_, bucket, from, to);
      assert(replaced);
      static_cast<void>(replaced);
    }

   private:
    CuckooFilter& filter_;
  };

  // Stores `fingerprint`, whose buckets `bucket` and `alternate` are full,
  // by moving stored fingerprints along the shortest path the search finds
  // (see "Insertion and the stash"), from a root chosen at random; false,
  // with the table unchanged, when it finds none.
  template <typename Table, typename Mapping>
  bool InsertAlongShortestPath(uint32_t bucket, uint32_t alternate,
                               uint32_t fingerprint) {
    const uint32_t max_depth = std::min(kPathSearchDepth, options_.max_kicks);
    const bool alternate_first = (NextRandom() & 1) != 0;
    PathGraph<Table, Mapping> graph(*this);
    NoBucketMarks marks;
    std::array<PathNode, kPathSearchNodes> nodes;
    ShortestPathSearch<Table::kSlots, PathGraph<Table, Mapping>, NoBucketMarks>
        search(graph, marks, nodes.data(), kPathSearchNodes, max_depth);
    const PathSearchResult result =
        search.Run(alternate_first ? alternate : bucket,
                   alternate_first ? bucket : alternate, fingerprint);
    history_.total_kicks += result.moves;
    return result.found;
  }

  // Stores `fingerprint`, whose two buckets (`bucket` and its alternate)
  // are full: along the shortest path of moves the search finds, else by a
  // random walk that ends in a free slot or in the stash; kFull, with the
  // table as it was, when neither can.
  template <typename Table, typename Mapping>
  InsertResult InsertByMoving(uint32_t bucket, uint32_t fingerprint) {
    // The walk's log and the stash take their room before anything changes:
    // an allocation that failed in the middle of the walk would lose the
    // homeless fingerprint, and one that fails here leaves the filter as it
    // was.
    walk_log_.reserve(options_.max_kicks);
    stash_.reserve(options_.stash_capacity);
    if (InsertAlongShortestPath<Table, Mapping>(
            bucket, Mapping::AltBucket(*this, bucket, fingerprint),
            fingerprint) ||
        InsertByRandomWalk<Table, Mapping>(bucket, fingerprint)) {
      ++history_.items;
      return InsertResult::kOk;
    }
    return InsertResult::kFull;
  }

  // The paper's walk: the homeless fingerprint takes a random slot of its
  // bucket, and the one it evicts goes to its other bucket, up to max_kicks
  // times. The last homeless fingerprint goes to the stash if it has room;
  // otherwise the walk is undone and this returns false.
  template <typename Table, typename Mapping>
  bool InsertByRandomWalk(uint32_t bucket, uint32_t fingerprint) {
    std::vector<KickStep>& steps = walk_log_;
    steps.clear();
    uint32_t homeless = fingerprint;
    uint32_t current = bucket;
    for (uint32_t kick = 0; kick < options_.max_kicks; ++kick) {
      // Alternate the starting bucket between the two choices.
      if (kick == 0 && (NextRandom() & 1)) {
        current = Mapping::AltBucket(*this, current, homeless);
      }
      // bucket_size is 2, 4 or 8: the mask is the remainder.
      const int victim = static_cast<int>(
          NextRandom() & static_cast<uint64_t>(layout().bucket_size - 1));
      const uint32_t evicted = Table::Swap(&table_, current, victim, homeless);
      steps.push_back({current, homeless, evicted});
      ++history_.total_kicks;
      homeless = evicted;
      current = Mapping::AltBucket(*this, current, homeless);
      if (Table::Replace(&table_, current, 0, homeless)) return true;
    }
    if (stash_.size() < options_.stash_capacity) {
      stash_.push_back({current, homeless});
      history_.peak_stash_size = std::max(history_.peak_stash_size,
                                          static_cast<uint32_t>(stash_.size()));
      return true;
    }
    // Undo in reverse order: each step put `inserted` where `evicted` was.
    for (auto step = steps.rbegin(); step != steps.rend(); ++step) {
      table_.Replace(step->bucket, step->inserted, step->evicted);
    }
    return false;
  }

  // Moves stash entries back into the table where a bucket has room.
  void DrainStash() {
    for (size_t i = 0; i < stash_.size();) {
      const StashEntry entry = stash_[i];
      if (table_.Replace(entry.bucket, 0, entry.fingerprint) ||
          table_.Replace(hashing_.AltBucket(entry.bucket, entry.fingerprint), 0,
                         entry.fingerprint)) {
        stash_.erase(stash_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }

  CuckooFilterOptions options_;
  GrowableHashing hashing_;
  BucketTable table_;
  const Dispatch* dispatch_;
  std::vector<StashEntry> stash_;
  CuckooFilterHistory history_;
  // The walk's log, for its undo; kept between walks, so that a walk
  // allocates nothing once the longest one has been seen.
  std::vector<KickStep> walk_log_;
  bool growth_held_ = false;  // HoldGrowth
};

}  // namespace cuckoo
