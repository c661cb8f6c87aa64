// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The typed dynamic filter: a CuckooFilter whose bucket layout, key hasher
// and kind of bucket count are template parameters, as in the paper's
// reference implementation. It takes keys, not hashes. Its operations are
// compiled for its layout, its hasher and its kind of bucket count, with
// nothing chosen at run time.
//
// Design
// ------
// A CuckooFilter chooses its table type when it is made (and again when it
// grows), and each Insert, Contains, Erase or Count goes through a pointer
// to the FilterCore (filter_core.h) compiled for that type. The indirect
// call costs little by itself. It does cost the overlap of consecutive
// lookups: the compiler cannot interleave the next key's hashing and loads
// with this key's. And the caller hashes the key first, out of line. A
// TypedCuckooFilter<Codec, Hasher, kBucketCounts> knows its type at compile
// time and calls its FilterCore on its filter's state: the hash, the
// bucket arithmetic, the probe of both buckets and the stash test inline
// into the caller's loop as straight-line code, with no branch on the
// filter's kind.
//
// That includes the bucket count's arithmetic, which kBucketCounts fixes.
// With BucketCounts::kAnyEven (the default) the filter takes any even
// bucket count, as a CuckooFilter does, and maps keys by multiply-shift
// reductions. With BucketCounts::kPowerOfTwo it takes only 2^k buckets
// (rounding a requested count up, as the paper's reference implementation
// does) and maps keys with shifts and a mask. Both map a key of a 2^k-bucket
// table to the same buckets (hashing.h, "Compiled forms"), so the choice is
// of speed and memory, not of format: the two kinds read each other's
// bytes. It is a type parameter rather than a branch in each call because a
// branch, however well predicted, keeps values in registers for both paths
// through the caller's loop, and the compiler spills some of them.
//
// Codec is a compiled bucket codec of bucket_codec.h:
// CompiledPlainCodec<b, f> (plain buckets of b f-bit slots that one 8-byte load
// reads: b·f <= 57, or 58, 60 or 64) or CompiledSemiSortedCodec<f> (4
// semi-sorted slots, 5 <= f <= 16).
// Hasher is Xxh3Hasher (byte strings and integers, the default) or
// IntegerHasher (64-bit integers only; key_hash.h, "Integer keys"). Any type
// with a static kId and a call operator from a key to uint64_t works, if its
// kId names the function it computes.
// kBucketCounts is BucketCounts::kAnyEven or BucketCounts::kPowerOfTwo.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuckoo/cuckoo_filter.h"
#include "cuckoo/dynamic_filter_format.h"
#include "cuckoo/hashing.h"
#include "cuckoo/table_types.h"

namespace cuckoo {

// The bucket counts a typed filter takes (see "Design").
enum class BucketCounts : uint8_t {
  kAnyEven,     // any even count from 2 to kMaxNumBuckets
  kPowerOfTwo,  // 2^k only; a requested count is rounded up
};

template <typename Codec, typename Hasher = Xxh3Hasher,
          BucketCounts kBucketCounts = BucketCounts::kAnyEven>
class TypedCuckooFilter {
 public:
  using HasherType = Hasher;

  // The layout that Codec compiles.
  static BucketLayout Layout() {
    return BucketLayout{Codec::kSlots, Codec::kFingerprintBits, IsSemiSorted()};
  }

  // A filter of num_buckets buckets (rounded up to an even count, or with
  // BucketCounts::kPowerOfTwo to a power of two), with options' kick limit,
  // stash and seed. Its layout and hasher are the type's, whatever options
  // says. Throws as CuckooFilter's constructor does, and
  // std::invalid_argument for an expansion: the typed filter does not grow.
  explicit TypedCuckooFilter(uint64_t num_buckets,
                             const CuckooFilterOptions& options = {})
      : TypedCuckooFilter(
            CuckooFilter(AllowedBuckets(num_buckets), TypedOptions(options))) {}

  // RedisBloom's CF.RESERVE, as CuckooFilter::Reserve; with
  // BucketCounts::kPowerOfTwo, its bucket count rounded up to a power of
  // two, as RedisBloom's is.
  static TypedCuckooFilter Reserve(uint64_t capacity,
                                   const CuckooFilterOptions& options = {}) {
    const CuckooFilterOptions typed = TypedOptions(options);
    return TypedCuckooFilter(
        CuckooFilter(AllowedBuckets(BucketsToReserve(capacity, typed)), typed));
  }

  // Adopts a runtime filter of this type's layout, hasher and bucket
  // counts that cannot grow, such as one a CuckooFilterChunkLoader has
  // rebuilt. nullopt, with *error set, for any other filter.
  static std::optional<TypedCuckooFilter> FromFilter(CuckooFilter filter,
                                                     std::string* error) {
    std::string why;
    if (!(filter.layout() == Layout())) {
      why = "the filter's layout is not the type's";
    } else if (filter.options().expansion != 0) {
      why = "the filter may grow, and a typed filter does not";
    } else if (filter.options().hasher != Hasher::kId) {
      why = std::string("the filter was filled with the ") +
            KeyHasherName(filter.options().hasher) + " key hasher, not the " +
            KeyHasherName(Hasher::kId) + " one";
    } else if (kPowerOfTwo && !filter.hashing().base().power_of_two()) {
      why = "the filter has " + std::to_string(filter.NumBuckets()) +
            " buckets, and the type takes only a power of two";
    }
    if (!why.empty()) {
      if (error != nullptr) *error = "typed cuckoo filter: " + why;
      return std::nullopt;
    }
    return TypedCuckooFilter(std::move(filter));
  }

  // Reads SerializeCuckooFilter's bytes (Serialize()'s, or a runtime
  // filter's of this layout, hasher and bucket counts that never grew).
  static std::optional<TypedCuckooFilter> Deserialize(const uint8_t* data,
                                                      size_t size,
                                                      std::string* error) {
    std::optional<CuckooFilter> filter =
        DeserializeCuckooFilter(data, size, error);
    if (!filter) return std::nullopt;
    return FromFilter(std::move(*filter), error);
  }

  std::vector<uint8_t> Serialize() const {
    return SerializeCuckooFilter(filter_);
  }

  // The runtime filter underneath: for what takes a CuckooFilter
  // (CuckooFilterDumper, Stats, serialization).
  const CuckooFilter& filter() const { return filter_; }

  template <typename Key>
  CUCKOO_ALWAYS_INLINE InsertResult Insert(const Key& key) {
    const uint64_t hash = Hasher()(key);
    const InsertResult result = Core::Insert(filter_.state_, hash);
    return result == InsertResult::kFull ? filter_.GrowAndInsert(hash) : result;
  }

  // CuckooFilter::InsertIfAbsent, with its false-positive caveat.
  template <typename Key>
  InsertResult InsertIfAbsent(const Key& key) {
    if (Contains(key)) return InsertResult::kMayExist;
    return Insert(key);
  }

  // Insert (or InsertIfAbsent) of each of keys[0, count), in order, as
  // CuckooFilter::InsertMany: results[i] (when results is not null) is key
  // i's; returns the number stored. Faster than one-by-one calls on a table
  // larger than the caches: the next keys' buckets are fetched while one is
  // inserted.
  template <typename Key>
  size_t InsertMany(const Key* keys, size_t count,
                    InsertResult* results = nullptr) {
    return InsertManyOf<false>(keys, count, results);
  }
  template <typename Key>
  size_t InsertManyIfAbsent(const Key* keys, size_t count,
                            InsertResult* results = nullptr) {
    return InsertManyOf<true>(keys, count, results);
  }

  template <typename Key>
  CUCKOO_ALWAYS_INLINE bool Contains(const Key& key) const {
    return Core::Contains(filter_.state_, Hasher()(key));
  }

  // Contains of keys[0, count) into out[0, count): the keys of a chunk are
  // hashed and both their buckets prefetched before any is probed. The
  // chunk's keys are hashed in a loop of their own: hashing inside the loop
  // that locates and prefetches leaves that loop too few registers for the
  // hash's constants, which it then loads again for every key.
  template <typename Key>
  void ContainsBatch(const Key* keys, size_t count, bool* out) const {
    uint64_t hashes[kProbeChunk];
    for (size_t begin = 0; begin < count; begin += kProbeChunk) {
      const size_t n = std::min(kProbeChunk, count - begin);
      for (size_t i = 0; i < n; ++i) hashes[i] = Hasher()(keys[begin + i]);
      Core::ContainsBatch(filter_.state_, hashes, n, out + begin);
    }
  }

  // Removes one copy. Returns false when no copy was found.
  template <typename Key>
  bool Erase(const Key& key) {
    return Core::Erase(filter_.state_, Hasher()(key));
  }

  // Copies of the key's fingerprint in its two buckets and the stash.
  template <typename Key>
  uint32_t Count(const Key& key) const {
    return Core::Count(filter_.state_, Hasher()(key));
  }

  // Adds every key of `other`, a filter of the same bucket count; as
  // CuckooFilter::Merge, all or nothing.
  InsertResult Merge(const TypedCuckooFilter& other) {
    return filter_.Merge(other.filter_);
  }

  void Clear() { filter_.Clear(); }

  const CuckooFilterOptions& options() const { return filter_.options(); }
  uint32_t NumBuckets() const { return filter_.NumBuckets(); }
  uint64_t Size() const { return filter_.Size(); }
  uint64_t Capacity() const { return filter_.Capacity(); }
  double LoadFactor() const { return filter_.LoadFactor(); }
  size_t SizeInBytes() const { return filter_.SizeInBytes(); }
  double BitsPerKey() const { return filter_.BitsPerKey(); }
  CuckooFilterInfo Info() const { return filter_.Info(); }
  CuckooFilterStats Stats() const { return filter_.Stats(); }

 private:
  static constexpr bool kPowerOfTwo =
      kBucketCounts == BucketCounts::kPowerOfTwo;
  using Table = CompiledTable<Codec, kPowerOfTwo>;
  using Core = FilterCore<Table, FixedSizeMapping<Table>>;

  static constexpr bool IsSemiSorted() {
    return std::is_same_v<Codec,
                          CompiledSemiSortedCodec<Codec::kFingerprintBits>>;
  }

  // num_buckets, or with kPowerOfTwo the least power of two at least that
  // large. A count past kMaxNumBuckets passes as it is, for the filter's
  // constructor to refuse.
  static uint64_t AllowedBuckets(uint64_t num_buckets) {
    if (!kPowerOfTwo || num_buckets > kMaxNumBuckets) return num_buckets;
    uint64_t power = 2;
    while (power < num_buckets) power *= 2;
    return power;
  }

  static CuckooFilterOptions TypedOptions(const CuckooFilterOptions& options) {
    if (options.expansion != 0) {
      throw std::invalid_argument("typed cuckoo filter: an expansion of " +
                                  std::to_string(options.expansion) +
                                  "; a filter that grows is a CuckooFilter");
    }
    CuckooFilterOptions typed = options;
    typed.layout = Layout();
    typed.hasher = Hasher::kId;
    return typed;
  }

  explicit TypedCuckooFilter(CuckooFilter filter)
      : filter_(std::move(filter)) {}
  // A typed filter does not grow (GrowAndInsert only counts the failed
  // insert), so its core takes every key at once.
  template <bool kIfAbsent, typename Key>
  size_t InsertManyOf(const Key* keys, size_t count, InsertResult* results) {
    size_t stored = 0;
    Core::template InsertEach<kIfAbsent>(
        filter_.state_, count, [keys](size_t i) { return Hasher()(keys[i]); },
        [this](uint64_t hash) { return filter_.GrowAndInsert(hash); }, results,
        &stored);
    return stored;
  }

  CuckooFilter filter_;
};

// The common layouts: plain buckets of 4 slots (8, 12 and 16 bits are the
// usual choices), and semi-sorted buckets of 4 (13 bits is the paper's
// choice: the false-positive rate of 13-bit fingerprints in 12 bits a slot).
template <int kFingerprintBits, typename Hasher = Xxh3Hasher,
          BucketCounts kBucketCounts = BucketCounts::kAnyEven>
using PlainCuckooFilter =
    TypedCuckooFilter<CompiledPlainCodec<4, kFingerprintBits>, Hasher,
                      kBucketCounts>;
template <int kFingerprintBits, typename Hasher = Xxh3Hasher,
          BucketCounts kBucketCounts = BucketCounts::kAnyEven>
using SemiSortedCuckooFilter =
    TypedCuckooFilter<CompiledSemiSortedCodec<kFingerprintBits>, Hasher,
                      kBucketCounts>;

}  // namespace cuckoo
