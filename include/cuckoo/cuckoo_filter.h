// The dynamic cuckoo filter: an approximate multiset of 64-bit key hashes with
// insert, lookup, delete and count, a bounded kick-out walk, a victim stash,
// statistics, and a checksummed serialization (cuckoo_filter_serialization.h).
// Not thread-safe; see concurrent_cuckoo_filter.h for a locked wrapper.
//
// Insertion and the stash
// -----------------------
// A new fingerprint goes to whichever of its two buckets has a free slot. When
// both are full, the walk evicts a fingerprint chosen by a seeded generator,
// puts the homeless one in its place, and carries the evicted one to its own
// other bucket, at most max_kicks times. If the walk ends without a free slot,
// one fingerprint is still homeless, and it is usually not the new key's: it
// is a key stored earlier. Dropping it (as several libraries do) makes that
// key a false negative. Here it goes into a small stash, searched by every
// lookup. When the stash is full too, the walk is undone step by step, so the
// table is exactly as before, and Insert reports kFull: the new key was not
// stored and no stored key was lost. Erasing keys frees slots; stash entries
// move back into the table as soon as one of their buckets has room.
//
// Duplicates
// ----------
// Inserting the same key k times stores k copies (up to 2b + stash entries);
// Count reports them and each Erase removes one. Two different keys whose
// fingerprints and bucket pairs coincide are indistinguishable: that is the
// false-positive event, and Erase of a key that was never inserted may remove
// such a twin. Only erase keys that were inserted.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuckoo/bucket_table.h"
#include "cuckoo/hashing.h"

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
  uint32_t stash_size = 0;
  uint32_t stash_capacity = 0;
  uint32_t peak_stash_size = 0;
};

class CuckooFilter {
 public:
  // A filter of num_buckets buckets (rounded up to an even count). Throws
  // std::invalid_argument for an invalid layout, or a kick or stash limit out
  // of range.
  explicit CuckooFilter(uint64_t num_buckets,
                        const CuckooFilterOptions& options = {})
      : options_(CheckedOptions(options)),
        hashing_(static_cast<uint32_t>(ValidBucketCount(num_buckets)),
                 options.layout.fingerprint_bits),
        table_(options.layout, hashing_.num_buckets()),
        lookups_(ChooseLookups(options.layout)),
        rng_state_(options.seed) {}

  const CuckooFilterOptions& options() const { return options_; }
  const BucketLayout& layout() const { return options_.layout; }
  uint32_t NumBuckets() const { return hashing_.num_buckets(); }

  InsertResult Insert(uint64_t hash) {
    const KeyPosition position = hashing_.Locate(hash);
    return InsertFingerprint(position.bucket, position.alternate,
                             position.fingerprint);
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

  // Adds every fingerprint of `other`, a filter of the same layout and
  // bucket count (its options may differ otherwise), as if its keys had
  // been inserted here: with the same bucket count, a fingerprint stored in
  // bucket i has the same bucket pair in both filters. All or nothing: on
  // kFull this filter is unchanged. Throws std::invalid_argument for another
  // geometry, whose fingerprints would mean other keys.
  InsertResult Merge(const CuckooFilter& other) {
    if (!(other.layout() == layout()) || other.NumBuckets() != NumBuckets()) {
      throw std::invalid_argument(
          "cuckoo filter: Merge needs the same layout and bucket count");
    }
    CuckooFilter merged = *this;
    const BucketTableView& from = other.table_.view();
    InsertResult result = InsertResult::kOk;
    for (uint32_t bucket = 0;
         bucket < NumBuckets() && result == InsertResult::kOk; ++bucket) {
      from.ForEachSlot(bucket, [&](int, uint32_t fingerprint) {
        if (fingerprint != 0 && result == InsertResult::kOk) {
          result = merged.InsertFingerprint(
              bucket, hashing_.AltBucket(bucket, fingerprint), fingerprint);
        }
      });
    }
    for (const StashEntry& entry : other.stash_) {
      if (result != InsertResult::kOk) break;
      result = merged.InsertFingerprint(
          entry.bucket, hashing_.AltBucket(entry.bucket, entry.fingerprint),
          entry.fingerprint);
    }
    if (result == InsertResult::kOk) *this = std::move(merged);
    return result;
  }

  bool Contains(uint64_t hash) const { return lookups_->contains(*this, hash); }

  // Batched lookup: prefetches both buckets of every key before probing.
  void ContainsBatch(const uint64_t* hashes, size_t count, bool* out) const {
    lookups_->contains_batch(*this, hashes, count, out);
  }

  // Removes one copy. Returns false when no copy was found.
  bool Erase(uint64_t hash) {
    const KeyPosition position = hashing_.Locate(hash);
    if (TryRemoveFromBucket(position.bucket, position.fingerprint) ||
        TryRemoveFromBucket(position.alternate, position.fingerprint)) {
      --num_items_;
      DrainStash();
      return true;
    }
    for (size_t i = 0; i < stash_.size(); ++i) {
      if (InStash(stash_[i], position)) {
        stash_.erase(stash_.begin() + static_cast<std::ptrdiff_t>(i));
        --num_items_;
        return true;
      }
    }
    return false;
  }

  // Copies of the key's fingerprint in its two buckets and the stash.
  uint32_t Count(uint64_t hash) const {
    const KeyPosition position = hashing_.Locate(hash);
    const BucketTableView& view = table_.view();
    return static_cast<uint32_t>(
        view.CountInBucket(position.bucket, position.fingerprint) +
        view.CountInBucket(position.alternate, position.fingerprint) +
        StashCount(position));
  }

  uint64_t Size() const { return num_items_; }
  // Slots in the table (the stash is extra).
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

  void Clear() {
    table_.Clear();
    stash_.clear();
    num_items_ = 0;
    total_kicks_ = failed_inserts_ = 0;
    peak_stash_size_ = 0;
    rng_state_ = options_.seed;
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
    return stats;
  }

  // Serialization: cuckoo_filter_serialization.h.
  friend std::vector<uint8_t> SerializeCuckooFilter(const CuckooFilter& filter);
  friend std::optional<CuckooFilter> DeserializeCuckooFilter(
      const uint8_t* data, size_t size, std::string* error);

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

  // Lookups: chosen once per filter, a version compiled for the layout
  // where there is one (plain 4-slot buckets of 8, 12 or 16 bits), else the
  // version for any layout. While the stash is empty (almost always), no
  // branch depends on what the table holds: a branch on the probe's result
  // would be mispredicted for a mix of stored and absent keys, and would
  // keep the next lookup's loads from overlapping this one's.
  struct LookupFunctions {
    bool (*contains)(const CuckooFilter&, uint64_t);
    void (*contains_batch)(const CuckooFilter&, const uint64_t*, size_t, bool*);
  };

  struct AnyLayoutProbe {
    static bool InTable(const CuckooFilter& filter,
                        const KeyPosition& position) {
      return filter.table_.view().Contains(position);
    }
  };
  template <typename Bucket>
  struct FixedLayoutProbe {
    static bool InTable(const CuckooFilter& filter,
                        const KeyPosition& position) {
      // Both buckets are always probed, without a branch between them, so
      // that their loads overlap.
      const uint8_t* data = filter.table_.bytes().data();
      const unsigned in_primary =
          Bucket::Contains(data, position.bucket, position.fingerprint);
      const unsigned in_alternate =
          Bucket::Contains(data, position.alternate, position.fingerprint);
      return (in_primary | in_alternate) != 0;
    }
  };

  bool InStashOrTable(bool in_table, const KeyPosition& position) const {
    return stash_.empty() ? in_table : in_table || StashCount(position) > 0;
  }

  template <typename Probe>
  static bool ContainsWith(const CuckooFilter& filter, uint64_t hash) {
    const KeyPosition position = filter.hashing_.Locate(hash);
    return filter.InStashOrTable(Probe::InTable(filter, position), position);
  }

  // Prefetches both buckets of up to 32 keys before probing them.
  template <typename Probe>
  static void ContainsBatchWith(const CuckooFilter& filter,
                                const uint64_t* hashes, size_t count,
                                bool* out) {
    constexpr size_t kChunk = 32;
    KeyPosition positions[kChunk];
    const BucketTableView& view = filter.table_.view();
    for (size_t begin = 0; begin < count; begin += kChunk) {
      const size_t n = std::min(kChunk, count - begin);
      for (size_t i = 0; i < n; ++i) {
        positions[i] = filter.hashing_.Locate(hashes[begin + i]);
        view.Prefetch(positions[i]);
      }
      for (size_t i = 0; i < n; ++i) {
        out[begin + i] = filter.InStashOrTable(
            Probe::InTable(filter, positions[i]), positions[i]);
      }
    }
  }

  template <typename Probe>
  static const LookupFunctions* LookupsWith() {
    static constexpr LookupFunctions functions = {&ContainsWith<Probe>,
                                                  &ContainsBatchWith<Probe>};
    return &functions;
  }

  static const LookupFunctions* ChooseLookups(const BucketLayout& layout) {
    if (PlainWordBucket<4, 8>::Matches(layout)) {
      return LookupsWith<FixedLayoutProbe<PlainWordBucket<4, 8>>>();
    }
    if (PlainWordBucket<4, 12>::Matches(layout)) {
      return LookupsWith<FixedLayoutProbe<PlainWordBucket<4, 12>>>();
    }
    if (PlainWordBucket<4, 16>::Matches(layout)) {
      return LookupsWith<FixedLayoutProbe<PlainWordBucket<4, 16>>>();
    }
    return LookupsWith<AnyLayoutProbe>();
  }

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
    if (options.max_kicks > kMaxKicksLimit) {
      throw std::invalid_argument("cuckoo filter: max_kicks " +
                                  std::to_string(options.max_kicks) +
                                  " exceeds " + std::to_string(kMaxKicksLimit));
    }
    return options;
  }

  uint64_t NextRandom() {
    // SplitMix64.
    uint64_t z = (rng_state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Stores a fingerprint of bucket pair (bucket, alternate).
  InsertResult InsertFingerprint(uint32_t bucket, uint32_t alternate,
                                 uint32_t fingerprint) {
    if (TryAddToBucket(bucket, fingerprint) ||
        TryAddToBucket(alternate, fingerprint)) {
      ++num_items_;
      return InsertResult::kOk;
    }
    return KickOut(bucket, fingerprint);
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

  bool TryAddToBucket(uint32_t bucket, uint32_t fingerprint) {
    return table_.TryInsert(bucket, fingerprint);
  }

  bool TryRemoveFromBucket(uint32_t bucket, uint32_t fingerprint) {
    return ReplaceInBucket(bucket, fingerprint, 0);
  }

  // Replaces one slot holding `from` by `to`; false if none holds `from`.
  bool ReplaceInBucket(uint32_t bucket, uint32_t from, uint32_t to) {
    return table_.Replace(bucket, from, to);
  }

  // Whether a stash entry is a copy of the key at `position`.
  static bool InStash(const StashEntry& entry, const KeyPosition& position) {
    return entry.fingerprint == position.fingerprint &&
           (entry.bucket == position.bucket ||
            entry.bucket == position.alternate);
  }

  uint32_t StashCount(const KeyPosition& position) const {
    uint32_t count = 0;
    for (const StashEntry& entry : stash_) count += InStash(entry, position);
    return count;
  }

  InsertResult KickOut(uint32_t bucket, uint32_t fingerprint) {
    std::vector<KickStep> steps;
    steps.reserve(std::min<uint32_t>(options_.max_kicks, 64));
    uint32_t homeless = fingerprint;
    uint32_t current = bucket;
    for (uint32_t kick = 0; kick < options_.max_kicks; ++kick) {
      // Alternate the starting bucket between the two choices.
      if (kick == 0 && (NextRandom() & 1)) {
        current = hashing_.AltBucket(current, homeless);
      }
      const int victim = static_cast<int>(
          NextRandom() % static_cast<uint64_t>(layout().bucket_size));
      const uint32_t evicted = table_.Swap(current, victim, homeless);
      steps.push_back({current, homeless, evicted});
      ++total_kicks_;
      homeless = evicted;
      current = hashing_.AltBucket(current, homeless);
      if (TryAddToBucket(current, homeless)) {
        ++num_items_;
        return InsertResult::kOk;
      }
    }
    if (stash_.size() < options_.stash_capacity) {
      stash_.push_back({current, homeless});
      peak_stash_size_ =
          std::max(peak_stash_size_, static_cast<uint32_t>(stash_.size()));
      ++num_items_;
      return InsertResult::kOk;
    }
    // Undo the walk in reverse order: each step put `inserted` where
    // `evicted` was.
    for (auto step = steps.rbegin(); step != steps.rend(); ++step) {
      ReplaceInBucket(step->bucket, step->inserted, step->evicted);
    }
    ++failed_inserts_;
    return InsertResult::kFull;
  }

  // Moves stash entries back into the table where a bucket has room.
  void DrainStash() {
    for (size_t i = 0; i < stash_.size();) {
      const StashEntry entry = stash_[i];
      if (TryAddToBucket(entry.bucket, entry.fingerprint) ||
          TryAddToBucket(hashing_.AltBucket(entry.bucket, entry.fingerprint),
                         entry.fingerprint)) {
        stash_.erase(stash_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }

  CuckooFilterOptions options_;
  CuckooHashing hashing_;
  BucketTable table_;
  const LookupFunctions* lookups_;
  std::vector<StashEntry> stash_;
  uint64_t num_items_ = 0;
  uint64_t rng_state_;
  uint64_t total_kicks_ = 0;
  uint64_t failed_inserts_ = 0;
  uint32_t peak_stash_size_ = 0;
};

}  // namespace cuckoo
