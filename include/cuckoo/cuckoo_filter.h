// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The dynamic cuckoo filter: an approximate multiset of 64-bit key hashes with
// insert, lookup, delete and count (filter_core.h: the algorithms, the
// stash), a bucket layout chosen at run time, growth in place, merge,
// statistics, and a checksummed serialization, whole or in chunks
// (dynamic_filter_format.h). Not thread-safe; see
// concurrent_cuckoo_filter.h for the thread-safe filter.
//
// Layout and dispatch
// -------------------
// The filter's table type (table_types.h) follows from its layout, and
// changes when it grows: each operation goes through a pointer to the
// FilterCore compiled for that type (Dispatch), chosen when the filter is
// made and again when it grows. An insert that the core reports kFull
// grows the filter and is retried in the grown one.
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
// buckets of an old bucket hold exactly its slots. Nor does a growth make
// room for one more copy of a key whose two buckets hold nothing but its
// copies: the copies are equal slots, and all move to the same two buckets
// of the grown table. Such an insert reports kFull without growing, where
// growing would multiply the table for nothing, up to the growth limit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuckoo/cuckoo_filter_options.h"
#include "cuckoo/filter_core.h"
#include "cuckoo/hashing.h"
#include "cuckoo/sizing.h"
#include "cuckoo/table_types.h"

namespace cuckoo {

enum class BucketCounts : uint8_t;
template <typename Codec, typename Hasher, BucketCounts kBucketCounts>
class TypedCuckooFilter;

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
  // (dynamic_filter_format.h): after `growths` growths, with `table`
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
    filter.state_.stash =
        RelocatableArray<StashEntry>(stash.data(), stash.data() + stash.size());
    filter.state_.history = history;
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

  const CuckooFilterOptions& options() const { return state_.options; }
  // The layout the filter was created with; its slots are wider until the
  // reserved growth bits are used up (see "Growth").
  const BucketLayout& layout() const { return state_.options.layout; }
  uint32_t NumBuckets() const { return state_.hashing.num_buckets(); }
  uint32_t Growths() const {
    return ExpansionBits(state_.options) == 0
               ? 0
               : static_cast<uint32_t>(state_.hashing.moved_bits() /
                                       ExpansionBits(state_.options));
  }
  // What the serialization writes: the key mapping, the table, the stash
  // and the history.
  const GrowableHashing& hashing() const { return state_.hashing; }
  const BucketTable& table() const { return state_.table; }
  const RelocatableArray<StashEntry>& stash() const { return state_.stash; }
  const CuckooFilterHistory& history() const { return state_.history; }
  // All of it, for the core's operations (VisitOperations).
  const FilterState& state() const { return state_; }

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
        other.hashing().base_buckets() != hashing().base_buckets() ||
        ExpansionBits(other.options()) != ExpansionBits(options()) ||
        other.hashing().reserve_bits() != hashing().reserve_bits() ||
        other.options().hasher != options().hasher) {
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
        attempt.state_.history.failed_inserts = history().failed_inserts;
        *this = std::move(attempt);
        return InsertResult::kOk;
      }
      if (!merged.Grow()) return InsertResult::kFull;
      source.Grow();
    }
  }

  bool Contains(uint64_t hash) const {
    return dispatch_->contains(state_, hash);
  }

  // Calls visit(lookup) with a lookup compiled for this filter's table:
  // lookup.Contains(hash) answers as Contains does, and inlines into the
  // caller's loop. Such a loop pays for the choice of table type once, where
  // each Contains call pays an indirect call. visit is compiled for every
  // table type; the lookup is valid inside visit, while the filter does not
  // change.
  template <typename Visit>
  void VisitLookup(Visit&& visit) const {
    VisitOperations([&](auto ops) { visit(Lookup<decltype(ops)>(state_)); });
  }

  // Calls visit(Ops{}), Ops being the FilterCore of this filter's table
  // type and key mapping: a loop inside visit can call them, compiled and
  // inlined, on this filter's state(), and on that of any other filter f
  // for which f.Uses<Ops>() (ConcurrentCuckooFilter's batched lookup does,
  // over its shards).
  template <typename Visit>
  void VisitOperations(Visit&& visit) const {
    VisitTypes(table().layout(), hashing(), [&](auto table, auto mapping) {
      visit(FilterCore<decltype(table), decltype(mapping)>{});
    });
  }

  // Whether Ops is this filter's FilterCore. Where a program holds two
  // copies of them (a shared library with hidden symbols, say), it may say
  // false for a filter whose type matches, never true for one whose type
  // does not.
  template <typename Ops>
  bool Uses() const {
    return dispatch_ == DispatchOf<Ops>();
  }

  // Batched lookup: prefetches both buckets of every key before probing.
  void ContainsBatch(const uint64_t* hashes, size_t count, bool* out) const {
    dispatch_->contains_batch(state_, hashes, count, out);
  }

  // Removes one copy. Returns false when no copy was found.
  bool Erase(uint64_t hash) { return dispatch_->erase(state_, hash); }

  // Copies of the key's fingerprint in its two buckets and the stash.
  uint32_t Count(uint64_t hash) const { return dispatch_->count(state_, hash); }

  uint64_t Size() const { return state_.history.items; }
  // Slots in the table now (the stash is extra); growth multiplies them.
  uint64_t Capacity() const {
    return static_cast<uint64_t>(NumBuckets()) * layout().bucket_size;
  }
  double LoadFactor() const {
    return static_cast<double>(Size()) / static_cast<double>(Capacity());
  }
  // Table bytes including padding, plus the stash.
  size_t SizeInBytes() const {
    return state_.table.bytes().size() +
           state_.options.stash_capacity * sizeof(StashEntry);
  }
  // Memory held besides SizeInBytes(): the kick-out walk's log, which the
  // first insert that has to move others reserves for max_kicks steps and
  // keeps (FilterCore::InsertByMoving). Counted from the start, so that the
  // figure does not depend on whether that insert has come yet, and is the
  // same for a copy or a loaded filter, which reserve it again.
  size_t WalkLogBytes() const {
    return std::max<size_t>(state_.walk_log.capacity(),
                            state_.options.max_kicks) *
           sizeof(KickStep);
  }
  double BitsPerKey() const {
    return Size() == 0 ? 0.0
                       : 8.0 * static_cast<double>(SizeInBytes()) /
                             static_cast<double>(Size());
  }

  // Hands each heap allocation of the filter (its table, stash and walk log)
  // to a memory defragmenter: `move` takes an allocation's address and
  // returns where it copied it to, having freed it, or nullptr when it
  // leaves it (RelocatableArray::Relocate). Returns how many moved. Not
  // while another thread uses the filter.
  template <typename Move>
  int RelocateStorage(Move&& move) {
    return state_.Relocate(move);
  }

  // Empties the filter; it keeps its size, grown or not.
  void Clear() {
    state_.table.Clear();
    state_.stash.clear();
    state_.history = CuckooFilterHistory{};
    state_.history.generator_state = state_.options.seed;
  }

  CuckooFilterInfo Info() const {
    CuckooFilterInfo info;
    info.size_in_bytes = SizeInBytes();
    info.num_buckets = NumBuckets();
    info.num_growths = Growths();
    info.items_stored = history().items;
    info.items_deleted = history().deleted;
    info.bucket_size = layout().bucket_size;
    info.expansion = options().expansion;
    info.max_iterations = options().max_kicks;
    return info;
  }

  CuckooFilterStats Stats() const {
    CuckooFilterStats stats;
    const int b = layout().bucket_size;
    stats.bucket_occupancy.assign(static_cast<size_t>(b) + 1, 0);
    for (uint32_t bucket = 0; bucket < NumBuckets(); ++bucket) {
      const int fill = table().view().Occupancy(bucket);
      ++stats.bucket_occupancy[static_cast<size_t>(fill)];
      stats.max_bucket_fill = std::max(stats.max_bucket_fill, fill);
    }
    stats.empty_buckets = stats.bucket_occupancy[0];
    stats.full_buckets = stats.bucket_occupancy[static_cast<size_t>(b)];
    stats.stash_size = static_cast<uint32_t>(stash().size());
    stats.stash_capacity = options().stash_capacity;
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
    FilterState& s = state_;
    const int bits = ExpansionBits(s.options);
    if (growth_held_ || bits == 0 ||
        s.hashing.moved_bits() + bits > s.hashing.reserve_bits()) {
      return false;
    }
    const GrowableHashing grown = s.hashing.AfterMoving(bits);
    BucketTable grown_table(SlotLayout(s.options, grown), grown.num_buckets());
    const BucketTableView& view = s.table.view();
    bool kept_all = true;
    for (uint32_t bucket = 0; bucket < NumBuckets(); ++bucket) {
      view.ForEachSlot(bucket, [&](int, uint32_t value) {
        if (value == 0) return;
        const GrowableHashing::SlotMove moved =
            s.hashing.MoveSlot(bucket, value, bits);
        kept_all &= grown_table.Replace(moved.bucket, 0, moved.value);
      });
    }
    if (!kept_all) {
      throw std::logic_error("cuckoo filter: growth overfilled a bucket");
    }
    for (StashEntry& entry : s.stash) {
      const GrowableHashing::SlotMove moved =
          s.hashing.MoveSlot(entry.bucket, entry.fingerprint, bits);
      entry = StashEntry{moved.bucket, moved.value};
    }
    s.hashing = grown;
    s.table = std::move(grown_table);
    dispatch_ = ChooseDispatch(s.table.layout(), s.hashing);
    s.DrainStash();
    return true;
  }

  // The lookup of VisitLookup.
  template <typename Ops>
  class Lookup {
   public:
    explicit Lookup(const FilterState& state) : state_(state) {}
    CUCKOO_ALWAYS_INLINE bool Contains(uint64_t hash) const {
      return Ops::Contains(state_, hash);
    }

   private:
    const FilterState& state_;
  };

 private:
  // A typed filter calls its core on the state of its CuckooFilter, and
  // GrowAndInsert when the core reports kFull.
  template <typename, typename, BucketCounts>
  friend class TypedCuckooFilter;

  // The operations of one table type, as pointers, for the runtime choice.
  struct Dispatch {
    bool (*contains)(const FilterState&, uint64_t);
    void (*contains_batch)(const FilterState&, const uint64_t*, size_t, bool*);
    InsertResult (*insert)(CuckooFilter&, uint64_t);
    size_t (*insert_each)(CuckooFilter&, const uint64_t*, size_t, InsertResult*,
                          size_t*);
    size_t (*insert_each_if_absent)(CuckooFilter&, const uint64_t*, size_t,
                                    InsertResult*, size_t*);
    bool (*erase)(FilterState&, uint64_t);
    uint32_t (*count)(const FilterState&, uint64_t);
    bool (*buckets_full_of_copies)(const FilterState&, uint64_t);
  };

  // The core's insert, and the growth and retry when it reports kFull.
  template <typename Core>
  static InsertResult InsertWith(CuckooFilter& filter, uint64_t hash) {
    const InsertResult result = Core::Insert(filter.state_, hash);
    return result == InsertResult::kFull ? filter.GrowAndInsert(hash) : result;
  }

  // The core's batched insert of hashes[0, count); returns how many keys
  // it took (FilterCore::InsertEach).
  template <typename Core, bool kIfAbsent>
  static size_t InsertEachWith(CuckooFilter& filter, const uint64_t* hashes,
                               size_t count, InsertResult* results,
                               size_t* stored) {
    return Core::template InsertEach<kIfAbsent>(
        filter.state_, count, [hashes](size_t i) { return hashes[i]; },
        [&filter](uint64_t hash) { return filter.GrowAndInsert(hash); },
        results, stored);
  }

  template <typename Core>
  static const Dispatch* DispatchOf() {
    static constexpr Dispatch dispatch = {&Core::Contains,
                                          &Core::ContainsBatch,
                                          &InsertWith<Core>,
                                          &InsertEachWith<Core, false>,
                                          &InsertEachWith<Core, true>,
                                          &Core::Erase,
                                          &Core::Count,
                                          &Core::BucketsFullOfCopies};
    return &dispatch;
  }

  // Calls visit(Table{}, Mapping{}) with the types of a table of `slots`
  // mapped by `hashing`.
  template <typename Visit>
  static void VisitTypes(const BucketLayout& slots,
                         const GrowableHashing& hashing, Visit&& visit) {
    if (hashing.reserve_bits() == 0) {
      VisitTable(slots, hashing.base(), [&visit](auto table) {
        visit(table, FixedSizeMapping<decltype(table)>{});
      });
      return;
    }
    // The growable mapping is not the base's: only the slots compile.
    const bool compiled = VisitCompiledBucket(slots, [&visit](auto bucket) {
      visit(CompiledTable<decltype(bucket), false>{}, GrowableMapping{});
    });
    if (!compiled) visit(AnyLayoutTable{}, GrowableMapping{});
  }

  static const Dispatch* ChooseDispatch(const BucketLayout& slots,
                                        const GrowableHashing& hashing) {
    const Dispatch* dispatch = nullptr;
    VisitTypes(slots, hashing, [&dispatch](auto table, auto mapping) {
      dispatch = DispatchOf<FilterCore<decltype(table), decltype(mapping)>>();
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
      : dispatch_(ChooseDispatch(table.layout(), hashing)),
        state_{hashing, {}, std::move(table), options, {}, {}} {
    state_.history.generator_state = options.seed;
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
    const RelocatableArray<uint8_t>& bytes = table.bytes();
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

  // Inserts every fingerprint of `other` (same geometry and growths). The
  // growable mapping's AltBucket is every filter's.
  InsertResult InsertAllOf(const CuckooFilter& other) {
    using AnyCore = FilterCore<AnyLayoutTable, GrowableMapping>;
    const GrowableHashing& hashing = state_.hashing;
    const auto insert = [&](uint32_t bucket, uint32_t value) {
      return AnyCore::InsertAt(
          state_, KeyPosition{bucket, hashing.AltBucket(bucket, value), value});
    };
    const BucketTableView& from = other.table().view();
    InsertResult result = InsertResult::kOk;
    for (uint32_t bucket = 0;
         bucket < NumBuckets() && result == InsertResult::kOk; ++bucket) {
      from.ForEachSlot(bucket, [&](int, uint32_t value) {
        if (value != 0 && result == InsertResult::kOk) {
          result = insert(bucket, value);
        }
      });
    }
    for (const StashEntry& entry : other.stash()) {
      if (result != InsertResult::kOk) break;
      result = insert(entry.bucket, entry.fingerprint);
    }
    return result;
  }

  // The end of an insert the core had no room for: the filter grows and
  // the grown filter, whose table type may differ, inserts the key; when
  // it cannot grow, or a growth would not make room (see "Growth"), the
  // insert is counted as failed.
  InsertResult GrowAndInsert(uint64_t hash) {
    if (dispatch_->buckets_full_of_copies(state_, hash)) {
      ++state_.history.failed_inserts;
      return InsertResult::kFull;
    }
    bool grown;
    try {
      grown = Grow();
    } catch (const std::bad_alloc&) {
      // Counted as the insert a held growth refuses (HoldGrowth), so that
      // the filter is left as one that was not allowed to grow.
      ++state_.history.failed_inserts;
      throw;
    }
    if (grown) return Insert(hash);
    ++state_.history.failed_inserts;
    return InsertResult::kFull;
  }

  // InsertMany's loop: the core of the table type takes keys until the
  // filter grows, then that of the grown filter's type goes on.
  size_t InsertManyOf(const uint64_t* hashes, size_t count,
                      InsertResult* results, bool if_absent) {
    size_t stored = 0;
    size_t done = 0;
    while (done < count) {
      done += (if_absent ? dispatch_->insert_each_if_absent
                         : dispatch_->insert_each)(
          *this, hashes + done, count - done,
          results == nullptr ? nullptr : results + done, &stored);
    }
    return stored;
  }

  // Beside the state's first fields, which a lookup reads with it.
  const Dispatch* dispatch_;
  FilterState state_;
  bool growth_held_ = false;  // HoldGrowth
};

}  // namespace cuckoo
