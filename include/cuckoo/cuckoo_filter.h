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
// When both are full, a breadth-first search looks for the shortest chain of
// moves that frees a slot in one of them (as libcuckoo does): the nodes are
// buckets, the two roots are the new key's, and a bucket's children are the
// other buckets of the fingerprints it holds. The first bucket found with a
// free slot ends the search, and the moves run from that end back to the
// root, each one into a slot the previous move freed, so no fingerprint is
// ever out of the table, and nothing has to be undone. A random walk's steps
// each wait for the bucket the previous step chose, and at 90-95% load it
// takes tens of them. The search reads about as many buckets there (most
// buckets are full), but the buckets of a level are known before any of
// them is read, so their loads overlap (the search prefetches the next
// kPathPrefetchDistance), and the path it finds is the shortest, usually one
// to three moves. At lower loads, where a walk usually ends after its first
// step, the search costs a little more than the walk: it computes and
// prefetches a whole level of buckets where the walk reads one. The search
// is bounded: kPathSearchNodes buckets, and paths of at most
// kPathSearchDepth moves and max_kicks.
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
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuckoo/hashing.h"
#include "cuckoo/sizing.h"
#include "cuckoo/table_types.h"

namespace cuckoo {

// Limits of CuckooFilterOptions. They bound the work of one Insert and the
// memory of the stash, also for options read from untrusted bytes.
inline constexpr uint32_t kMaxKicksLimit = 1u << 16;
inline constexpr uint32_t kMaxStashCapacity = 1u << 16;

struct CuckooFilterOptions {
  BucketLayout layout;
  // Longest kick-out walk of one Insert; at most kMaxKicksLimit.
  uint32_t max_kicks = 500;
  // Homeless fingerprints kept outside the table; 1 to kMaxStashCapacity.
  uint32_t stash_capacity = 4;
  // Seeds the generator that picks victims: same seed, same operations, same
  // filter.
  uint64_t seed = 0x5EEDC0C0u;
  // Growth (see "Growth" above): 0, the filter never grows and Insert
  // reports kFull when it is full; otherwise a power of two >= 2, the
  // factor by which the table grows when an insert would fail.
  uint32_t expansion = 0;
  // How many times the filter may grow (with expansion != 0). Each growth
  // by 2^e reserves e bits in every slot from the start: at most
  // (32 - fingerprint_bits) / e growths.
  uint32_t max_growths = 6;
  // The hash function the caller fills the filter with: the filter takes
  // hashes, and this names theirs (hashing.h, "Integer keys"). It is
  // recorded by the serialization, so that a loaded filter says how its keys
  // were hashed, and Merge refuses a filter of another hasher.
  KeyHasher hasher = KeyHasher::kXxh3;
};

// RedisBloom's CF.INFO fields.
struct CuckooFilterInfo {
  size_t size_in_bytes = 0;
  uint64_t num_buckets = 0;
  uint32_t num_growths = 0;     // RedisBloom's "Number of filters" minus 1
  uint64_t items_inserted = 0;  // items stored now (inserts minus erases)
  uint64_t items_deleted = 0;   // successful erases, ever
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

struct CuckooFilterStats {
  // bucket_occupancy[k] = number of buckets holding k fingerprints.
  std::vector<uint64_t> bucket_occupancy;
  uint64_t empty_buckets = 0;
  uint64_t full_buckets = 0;
  int max_bucket_fill = 0;
  uint64_t total_kicks = 0;     // evictions performed by all walks
  uint64_t failed_inserts = 0;  // Insert calls that returned kFull
  uint32_t growths = 0;
  uint32_t stash_size = 0;
  uint32_t stash_capacity = 0;
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
    CheckedOptions(options);
    if (capacity == 0) {
      throw std::invalid_argument("cuckoo filter: a capacity of 0 items");
    }
    const double buckets = std::ceil(
        static_cast<double>(capacity) /
        (options.layout.bucket_size *
         MaxLoadFactor(options.layout.bucket_size, Construction::kDynamic)));
    if (!(buckets <= static_cast<double>(kMaxNumBuckets))) {
      throw std::length_error("cuckoo filter: a capacity of " +
                              std::to_string(capacity) +
                              " items needs more than 2^32 buckets");
    }
    return CuckooFilter(static_cast<uint64_t>(buckets), options);
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

  // Stores the key. With an expansion, grows the filter when it is full
  // and retries (see "Growth").
  InsertResult Insert(uint64_t hash) {
    for (;;) {
      const InsertResult result = operations_->insert(*this, hash);
      if (result == InsertResult::kOk) return result;
      if (!Grow()) {
        ++failed_inserts_;
        return result;
      }
    }
  }

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
  // the number stored. A kFull leaves the keys before it stored.
  size_t InsertMany(const uint64_t* hashes, size_t count,
                    InsertResult* results = nullptr) {
    return InsertEach(hashes, count, results, &CuckooFilter::Insert);
  }
  size_t InsertManyIfAbsent(const uint64_t* hashes, size_t count,
                            InsertResult* results = nullptr) {
    return InsertEach(hashes, count, results, &CuckooFilter::InsertIfAbsent);
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
        attempt.failed_inserts_ = failed_inserts_;
        *this = std::move(attempt);
        return InsertResult::kOk;
      }
      if (!merged.Grow()) return InsertResult::kFull;
      source.Grow();
    }
  }

  bool Contains(uint64_t hash) const {
    return operations_->contains(*this, hash);
  }

  // Calls visit(lookup) with a lookup compiled for this filter's table:
  // lookup.Contains(hash) answers as Contains does, and inlines into the
  // caller's loop. Such a loop pays for the choice of table type once, where
  // each Contains call pays an indirect call. visit is compiled for every
  // table type; the lookup is valid inside visit, while the filter does not
  // change.
  template <typename Visit>
  void VisitLookup(Visit&& visit) const {
    VisitOperations(table_.layout(), hashing_, [&](auto table, auto mapping) {
      visit(Lookup<decltype(table), decltype(mapping)>(*this));
    });
  }

  // Batched lookup: prefetches both buckets of every key before probing.
  void ContainsBatch(const uint64_t* hashes, size_t count, bool* out) const {
    operations_->contains_batch(*this, hashes, count, out);
  }

  // Removes one copy. Returns false when no copy was found.
  bool Erase(uint64_t hash) { return operations_->erase(*this, hash); }

  // Copies of the key's fingerprint in its two buckets and the stash.
  uint32_t Count(uint64_t hash) const {
    return operations_->count(*this, hash);
  }

  uint64_t Size() const { return num_items_; }
  // Slots in the table now (the stash is extra); growth multiplies them.
  uint64_t Capacity() const {
    return static_cast<uint64_t>(NumBuckets()) * layout().bucket_size;
  }
  double LoadFactor() const {
    return static_cast<double>(num_items_) / static_cast<double>(Capacity());
  }
  // Table bytes including padding, plus the stash.
  size_t SizeInBytes() const {
    return table_.bytes().size() + options_.stash_capacity * sizeof(StashEntry);
  }
  double BitsPerKey() const {
    return num_items_ == 0 ? 0.0
                           : 8.0 * static_cast<double>(SizeInBytes()) /
                                 static_cast<double>(num_items_);
  }

  // Empties the filter; it keeps its size, grown or not.
  void Clear() {
    table_.Clear();
    stash_.clear();
    num_items_ = num_deleted_ = 0;
    total_kicks_ = failed_inserts_ = 0;
    peak_stash_size_ = 0;
    rng_state_ = options_.seed;
  }

  CuckooFilterInfo Info() const {
    CuckooFilterInfo info;
    info.size_in_bytes = SizeInBytes();
    info.num_buckets = NumBuckets();
    info.num_growths = Growths();
    info.items_inserted = num_items_;
    info.items_deleted = num_deleted_;
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
    stats.total_kicks = total_kicks_;
    stats.failed_inserts = failed_inserts_;
    stats.stash_size = static_cast<uint32_t>(stash_.size());
    stats.stash_capacity = options_.stash_capacity;
    stats.peak_stash_size = peak_stash_size_;
    stats.growths = Growths();
    return stats;
  }

  // Grows the filter now, as a full insert would; false (and nothing done)
  // when it has no expansion or has grown max_growths times.
  bool Grow() {
    const int bits = ExpansionBits(options_);
    if (bits == 0 || hashing_.moved_bits() + bits > hashing_.reserve_bits()) {
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
    operations_ = ChooseOperations(table_.layout(), hashing_);
    DrainStash();
    return true;
  }

  // Serialization: cuckoo_filter_serialization.h.
  friend class CuckooFilterLoader;
  friend class CuckooFilterDumper;
  // The operations with the table type fixed at compile time:
  // typed_cuckoo_filter.h.
  template <typename Bucket, typename Hasher>
  friend class TypedCuckooFilter;

 private:
  struct StashEntry {
    uint32_t bucket;  // either of the fingerprint's two buckets
    uint32_t fingerprint;
  };
  struct KickStep {
    uint32_t bucket;
    uint32_t inserted;
    uint32_t evicted;
  };
  // A bucket of the path search: reached from node `parent` (-1 for the new
  // key's two buckets) by moving `moved`, a value in the parent's bucket, to
  // its other bucket, `depth` moves from a root.
  struct PathNode {
    uint32_t bucket;
    uint32_t moved;
    int32_t parent;
    uint32_t depth;
  };
  static constexpr int kPathSearchNodes = 256;
  static constexpr uint32_t kPathSearchDepth = 5;
  // The search prefetches the buckets it will read next, at most this many
  // ahead: prefetching every queued bucket would fill the core's miss
  // buffers with buckets that are rarely read (most searches end early in
  // the last level they reach), and the prefetches would stall.
  static constexpr int kPathPrefetchDistance = 12;

  // options must have passed CheckedOptions.
  CuckooFilter(const GrowableHashing& hashing,
               const CuckooFilterOptions& options)
      : options_(options),
        hashing_(hashing),
        table_(SlotLayout(options, hashing), hashing.num_buckets()),
        operations_(ChooseOperations(table_.layout(), hashing_)),
        rng_state_(options.seed) {}

  // log2 of the expansion; 0 without growth.
  static int ExpansionBits(const CuckooFilterOptions& options) {
    return options.expansion == 0 ? 0 : __builtin_ctz(options.expansion);
  }

  // The slots' layout: the key fingerprint and the growth bits not yet
  // moved into the bucket index.
  static BucketLayout SlotLayout(const CuckooFilterOptions& options,
                                 const GrowableHashing& hashing) {
    BucketLayout slots = options.layout;
    slots.fingerprint_bits = hashing.slot_bits();
    return slots;
  }

  static GrowableHashing InitialHashing(uint64_t num_buckets,
                                        const CuckooFilterOptions& options) {
    const uint64_t buckets = ValidBucketCount(num_buckets);
    const int reserve_bits =
        ExpansionBits(options) * static_cast<int>(options.max_growths);
    if ((buckets << reserve_bits) > kMaxNumBuckets) {
      throw std::length_error(
          "cuckoo filter: " + std::to_string(buckets) + " buckets grown " +
          std::to_string(options.max_growths) + " times by " +
          std::to_string(options.expansion) + " exceed 2^32 buckets");
    }
    return GrowableHashing(static_cast<uint32_t>(buckets),
                           options.layout.fingerprint_bits, reserve_bits, 0);
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

  // The hot operations, chosen once per filter (and again after a growth):
  // lookups and inserts (both buckets, then the kick-out walk), compiled for
  // the table where VisitTable has a type for it. While the stash is empty
  // (almost always), no lookup branches on what the table holds: a branch on
  // the probe's result would be mispredicted for a mix of stored and absent
  // keys, and would keep the next lookup's loads from overlapping this one's.
  struct Operations {
    bool (*contains)(const CuckooFilter&, uint64_t);
    void (*contains_batch)(const CuckooFilter&, const uint64_t*, size_t, bool*);
    InsertResult (*insert)(CuckooFilter&, uint64_t);
    bool (*erase)(CuckooFilter&, uint64_t);
    uint32_t (*count)(const CuckooFilter&, uint64_t);
  };

  // A filter that cannot grow maps keys with its base mapping, which Table
  // may compile.
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

  CUCKOO_ALWAYS_INLINE bool InStashOrTable(bool in_table,
                                           const KeyPosition& position) const {
    return stash_.empty() ? in_table : in_table || StashCount(position) > 0;
  }

  template <typename Table, typename Mapping>
  CUCKOO_ALWAYS_INLINE static bool ContainsWith(const CuckooFilter& filter,
                                                uint64_t hash) {
    const KeyPosition position = Mapping::Locate(filter, hash);
    return filter.InStashOrTable(
        Table::Contains(filter.table_.view(), position), position);
  }

  template <typename Table, typename Mapping>
  static void ContainsBatchWith(const CuckooFilter& filter,
                                const uint64_t* hashes, size_t count,
                                bool* out) {
    LocatePrefetchProbe(
        filter.table_.view(), count,
        [&](size_t i) { return Mapping::Locate(filter, hashes[i]); },
        [&](size_t i, const KeyPosition& position) {
          out[i] = filter.InStashOrTable(
              Table::Contains(filter.table_.view(), position), position);
        });
  }

  // One insert attempt at the current size: either bucket, else the walk.
  template <typename Table, typename Mapping>
  static InsertResult InsertWith(CuckooFilter& filter, uint64_t hash) {
    const KeyPosition position = Mapping::Locate(filter, hash);
    if (Table::Replace(&filter.table_, position.bucket, 0,
                       position.fingerprint) ||
        Table::Replace(&filter.table_, position.alternate, 0,
                       position.fingerprint)) {
      ++filter.num_items_;
      return InsertResult::kOk;
    }
    return filter.InsertByMoving<Table, Mapping>(position.bucket,
                                                 position.fingerprint);
  }

  template <typename Table, typename Mapping>
  CUCKOO_ALWAYS_INLINE static bool EraseWith(CuckooFilter& filter,
                                             uint64_t hash) {
    const KeyPosition position = Mapping::Locate(filter, hash);
    if (Table::Replace(&filter.table_, position.bucket, position.fingerprint,
                       0) ||
        Table::Replace(&filter.table_, position.alternate, position.fingerprint,
                       0)) {
      --filter.num_items_;
      ++filter.num_deleted_;
      if (!filter.stash_.empty()) filter.DrainStash();
      return true;
    }
    return filter.EraseFromStash(position);
  }

  template <typename Table, typename Mapping>
  CUCKOO_ALWAYS_INLINE static uint32_t CountWith(const CuckooFilter& filter,
                                                 uint64_t hash) {
    const KeyPosition position = Mapping::Locate(filter, hash);
    const BucketTableView& view = filter.table_.view();
    return Table::Count(view, position.bucket, position.fingerprint) +
           Table::Count(view, position.alternate, position.fingerprint) +
           filter.StashCount(position);
  }

  template <typename Table, typename Mapping>
  static const Operations* OperationsWith() {
    static constexpr Operations operations = {
        &ContainsWith<Table, Mapping>, &ContainsBatchWith<Table, Mapping>,
        &InsertWith<Table, Mapping>, &EraseWith<Table, Mapping>,
        &CountWith<Table, Mapping>};
    return &operations;
  }

  // Calls visit(Table{}, Mapping{}) with the types of a table of `slots`
  // mapped by `hashing`.
  template <typename Visit>
  static void VisitOperations(const BucketLayout& slots,
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

  static const Operations* ChooseOperations(const BucketLayout& slots,
                                            const GrowableHashing& hashing) {
    const Operations* operations = nullptr;
    VisitOperations(slots, hashing, [&operations](auto table, auto mapping) {
      operations = OperationsWith<decltype(table), decltype(mapping)>();
    });
    return operations;
  }

 public:
  // The lookup of VisitLookup.
  template <typename Table, typename Mapping>
  class Lookup {
   public:
    explicit Lookup(const CuckooFilter& filter) : filter_(filter) {}
    CUCKOO_ALWAYS_INLINE bool Contains(uint64_t hash) const {
      return ContainsWith<Table, Mapping>(filter_, hash);
    }

   private:
    const CuckooFilter& filter_;
  };

 private:
  static const CuckooFilterOptions& CheckedOptions(
      const CuckooFilterOptions& options) {
    std::string problem = options.layout.Validate();
    if (!problem.empty()) {
      throw std::invalid_argument("cuckoo filter: " + problem);
    }
    if (options.stash_capacity == 0 ||
        options.stash_capacity > kMaxStashCapacity) {
      throw std::invalid_argument("cuckoo filter: the stash capacity " +
                                  std::to_string(options.stash_capacity) +
                                  " is not in [1, " +
                                  std::to_string(kMaxStashCapacity) + "]");
    }
    if (static_cast<uint8_t>(options.hasher) > kMaxKeyHasherId) {
      throw std::invalid_argument(
          "cuckoo filter: key hasher " +
          std::to_string(static_cast<int>(options.hasher)) + " is unknown");
    }
    if (options.max_kicks > kMaxKicksLimit) {
      throw std::invalid_argument("cuckoo filter: max_kicks " +
                                  std::to_string(options.max_kicks) +
                                  " exceeds " + std::to_string(kMaxKicksLimit));
    }
    if (options.expansion == 1 ||
        (options.expansion & (options.expansion - 1)) != 0) {
      throw std::invalid_argument(
          "cuckoo filter: expansion " + std::to_string(options.expansion) +
          " is not 0 (no growth) or a power of two >= 2");
    }
    const int spare_bits =
        kMaxFingerprintBits - options.layout.fingerprint_bits;
    if (options.expansion != 0 &&
        uint64_t{options.max_growths} *
                static_cast<uint64_t>(ExpansionBits(options)) >
            static_cast<uint64_t>(spare_bits)) {
      throw std::invalid_argument(
          "cuckoo filter: " + std::to_string(options.max_growths) +
          " growths by " + std::to_string(options.expansion) + " need " +
          std::to_string(uint64_t{options.max_growths} *
                         static_cast<uint64_t>(ExpansionBits(options))) +
          " reserved bits per slot; " +
          std::to_string(options.layout.fingerprint_bits) +
          "-bit fingerprints leave " + std::to_string(spare_bits));
    }
    return options;
  }

  // SplitMix64.
  uint64_t NextRandom() { return Mix13(rng_state_ += 0x9E3779B97F4A7C15ull); }

  // Stores a fingerprint of bucket pair (bucket, alternate), for Merge. The
  // growable mapping's AltBucket is every filter's.
  InsertResult InsertFingerprint(uint32_t bucket, uint32_t alternate,
                                 uint32_t fingerprint) {
    if (table_.Replace(bucket, 0, fingerprint) ||
        table_.Replace(alternate, 0, fingerprint)) {
      ++num_items_;
      return InsertResult::kOk;
    }
    return InsertByMoving<AnyLayoutTable, Growable>(bucket, fingerprint);
  }

  size_t InsertEach(const uint64_t* hashes, size_t count, InsertResult* results,
                    InsertResult (CuckooFilter::*insert)(uint64_t)) {
    size_t stored = 0;
    for (size_t i = 0; i < count; ++i) {
      const InsertResult result = (this->*insert)(hashes[i]);
      stored += result == InsertResult::kOk;
      if (results != nullptr) results[i] = result;
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
        --num_items_;
        ++num_deleted_;
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

  // Stores `fingerprint`, whose buckets `bucket` and `alternate` are full,
  // by moving stored fingerprints along the shortest path the search finds
  // (see "Insertion and the stash"); false, with the table unchanged, when it
  // finds none.
  template <typename Table, typename Mapping>
  bool InsertAlongShortestPath(uint32_t bucket, uint32_t alternate,
                               uint32_t fingerprint) {
    const uint32_t max_depth = std::min(kPathSearchDepth, options_.max_kicks);
    if (max_depth == 0) return false;
    const BucketTableView& view = table_.view();
    const int slots_per_bucket = Table::SlotsPerBucket(view);
    std::array<PathNode, kPathSearchNodes> nodes;
    const bool alternate_first = (NextRandom() & 1) != 0;
    nodes[0] = {alternate_first ? alternate : bucket, 0, -1, 0};
    nodes[1] = {alternate_first ? bucket : alternate, 0, -1, 0};
    int queued = 2;
    for (int head = 0; head < queued; ++head) {
      const PathNode node = nodes[head];
      if (head + kPathPrefetchDistance < queued) {
        view.PrefetchBucket(nodes[head + kPathPrefetchDistance].bucket);
      }
      uint32_t slots[Table::kSlots] = {};
      Table::ReadBucket(view, node.bucket, slots);
      if (node.depth > 0) {
        bool has_free_slot = false;
        for (int slot = 0; slot < slots_per_bucket; ++slot) {
          has_free_slot |= slots[slot] == 0;
        }
        if (has_free_slot) {
          MoveAlongPath<Table>(nodes.data(), head, fingerprint);
          return true;
        }
      }
      if (node.depth == max_depth) continue;
      for (int slot = 0; slot < slots_per_bucket && queued < kPathSearchNodes;
           ++slot) {
        const uint32_t child =
            Mapping::AltBucket(*this, node.bucket, slots[slot]);
        if (queued <= head + kPathPrefetchDistance) view.PrefetchBucket(child);
        nodes[queued++] = {child, slots[slot], head, node.depth + 1};
      }
    }
    return false;
  }

  // Runs the moves of the path from the root to nodes[last], whose bucket
  // has a free slot: from that end back, each bucket takes the value moved
  // into it in the slot that the next move emptied, and the root takes
  // `fingerprint`.
  //
  // Every Replace finds its value, because the path passes through no bucket
  // twice: if it held bucket X at depths i < j, the nodes below X at depth j
  // would also hang below X at depth i (the table does not change during the
  // search, so X has the same children), and the search, which reads nodes
  // in order of depth and queues them in that order until it stops queuing,
  // would have read the copy of nodes[last] j - i levels higher first.
  template <typename Table>
  void MoveAlongPath(const PathNode* nodes, int last, uint32_t fingerprint) {
    uint32_t emptied = 0;
    int moves = 0;
    for (int index = last; index >= 0; index = nodes[index].parent) {
      const PathNode& node = nodes[index];
      const uint32_t arriving = node.parent < 0 ? fingerprint : node.moved;
      const bool replaced =
          Table::Replace(&table_, node.bucket, emptied, arriving);
      assert(replaced);
      static_cast<void>(replaced);
      emptied = node.moved;
      moves += node.parent >= 0;
    }
    total_kicks_ += static_cast<uint64_t>(moves);
  }

  // Stores `fingerprint`, whose two buckets (`bucket` and its alternate)
  // are full: along the shortest path of moves the search finds, else by a
  // random walk that ends in a free slot or in the stash; kFull, with the
  // table as it was, when neither can.
  template <typename Table, typename Mapping>
  InsertResult InsertByMoving(uint32_t bucket, uint32_t fingerprint) {
    if (InsertAlongShortestPath<Table, Mapping>(
            bucket, Mapping::AltBucket(*this, bucket, fingerprint),
            fingerprint) ||
        InsertByRandomWalk<Table, Mapping>(bucket, fingerprint)) {
      ++num_items_;
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
    // The walk's log, for the undo; kept between walks, so that a walk
    // allocates nothing once the longest one has been seen.
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
      ++total_kicks_;
      homeless = evicted;
      current = Mapping::AltBucket(*this, current, homeless);
      if (Table::Replace(&table_, current, 0, homeless)) return true;
    }
    if (stash_.size() < options_.stash_capacity) {
      stash_.push_back({current, homeless});
      peak_stash_size_ =
          std::max(peak_stash_size_, static_cast<uint32_t>(stash_.size()));
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
  const Operations* operations_;
  std::vector<StashEntry> stash_;
  uint64_t num_items_ = 0;
  uint64_t num_deleted_ = 0;
  uint64_t rng_state_;
  uint64_t total_kicks_ = 0;
  uint64_t failed_inserts_ = 0;
  uint32_t peak_stash_size_ = 0;
  std::vector<KickStep> walk_log_;
};

}  // namespace cuckoo
