// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The typed dynamic filter: a CuckooFilter whose bucket layout and key
// hasher are template parameters, as in the paper's reference
// implementation. It takes keys, not hashes. Its operations are compiled for
// its layout, with nothing chosen at run time but the bucket count's
// arithmetic.
//
// Design
// ------
// A CuckooFilter chooses its table type when it is made (and again when it
// grows), and each Insert, Contains, Erase or Count goes through a pointer
// to the operation compiled for that type. The indirect call costs little
// by itself. It does cost the overlap of consecutive lookups: the compiler
// cannot interleave the next key's hashing and loads with this key's. And
// the caller hashes the key first, out of line. A TypedCuckooFilter<Bucket,
// Hasher> knows its type at compile time: the hash, the bucket arithmetic,
// the probe of both buckets and the stash test inline into the caller's
// loop as straight-line code. The only branch left is on whether the bucket
// count is a power of two, which is the same for every call, so it is always
// predicted.
//
// It is the same filter underneath. filter() is a CuckooFilter, and the
// operations are CuckooFilter::Operations for Bucket's table, the ones a
// CuckooFilter of that layout calls through its dispatch. So the typed
// filter has the same insertion, stash and no-loss guarantee. Its
// serialized bytes are those of a runtime filter of the same layout and
// options that never grew, and each loads as the other. What it gives up
// is growth: a growing filter's slots change width at every doubling, and a
// compile-time slot width cannot follow them. A filter that must grow is a
// CuckooFilter.
//
// Bucket is a compiled bucket codec of bucket_codec.h:
// PlainWordBucket<b, f> (plain buckets of b f-bit slots that one 8-byte load
// reads: b·f <= 57, or 58, 60 or 64) or SemiSortedWordBucket<f> (4
// semi-sorted slots, 5 <= f <= 16).
// Hasher is Xxh3Hasher (byte strings and integers, the default) or
// IntegerHasher (64-bit integers only; hashing.h, "Integer keys"). Any type
// with a static kId and a call operator from a key to uint64_t works, if its
// kId names the function it computes.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuckoo/cuckoo_filter.h"
#include "cuckoo/cuckoo_filter_serialization.h"
#include "cuckoo/hashing.h"
#include "cuckoo/table_types.h"

namespace cuckoo {

template <typename Bucket, typename Hasher = Xxh3Hasher>
class TypedCuckooFilter {
 public:
  using HasherType = Hasher;

  // The layout that Bucket compiles.
  static BucketLayout Layout() {
    return BucketLayout{Bucket::kSlots, Bucket::kFingerprintBits,
                        IsSemiSorted()};
  }

  // A filter of num_buckets buckets (rounded up to an even count), with
  // options' kick limit, stash and seed. Its layout and hasher are the
  // type's, whatever options says. Throws as CuckooFilter's constructor
  // does, and std::invalid_argument for an expansion: the typed filter does
  // not grow.
  explicit TypedCuckooFilter(uint64_t num_buckets,
                             const CuckooFilterOptions& options = {})
      : TypedCuckooFilter(CuckooFilter(num_buckets, TypedOptions(options))) {}

  // RedisBloom's CF.RESERVE, as CuckooFilter::Reserve.
  static TypedCuckooFilter Reserve(uint64_t capacity,
                                   const CuckooFilterOptions& options = {}) {
    return TypedCuckooFilter(
        CuckooFilter::Reserve(capacity, TypedOptions(options)));
  }

  // Adopts a runtime filter of this type's layout and hasher that cannot
  // grow, such as one a CuckooFilterChunkLoader has rebuilt. nullopt, with
  // *error set, for any other filter.
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
    }
    if (!why.empty()) {
      if (error != nullptr) *error = "typed cuckoo filter: " + why;
      return std::nullopt;
    }
    return TypedCuckooFilter(std::move(filter));
  }

  // Reads SerializeCuckooFilter's bytes (Serialize()'s, or a runtime
  // filter's of this layout and hasher that never grew).
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
    return power_of_two_ ? Ops<true>::Insert(filter_, hash)
                         : Ops<false>::Insert(filter_, hash);
  }

  // CuckooFilter::InsertIfAbsent, with its false-positive caveat.
  template <typename Key>
  InsertResult InsertIfAbsent(const Key& key) {
    if (Contains(key)) return InsertResult::kMayExist;
    return Insert(key);
  }

  template <typename Key>
  CUCKOO_ALWAYS_INLINE bool Contains(const Key& key) const {
    const uint64_t hash = Hasher()(key);
    return power_of_two_ ? Ops<true>::Contains(filter_, hash)
                         : Ops<false>::Contains(filter_, hash);
  }

  // Contains of keys[0, count) into out[0, count): the keys of a chunk are
  // hashed and both their buckets prefetched before any is probed.
  template <typename Key>
  void ContainsBatch(const Key* keys, size_t count, bool* out) const {
    auto hash_of = [keys](size_t i) { return Hasher()(keys[i]); };
    if (power_of_two_) {
      Ops<true>::ContainsEach(filter_, count, hash_of, out);
    } else {
      Ops<false>::ContainsEach(filter_, count, hash_of, out);
    }
  }

  // Removes one copy. Returns false when no copy was found.
  template <typename Key>
  bool Erase(const Key& key) {
    const uint64_t hash = Hasher()(key);
    return power_of_two_ ? Ops<true>::Erase(filter_, hash)
                         : Ops<false>::Erase(filter_, hash);
  }

  // Copies of the key's fingerprint in its two buckets and the stash.
  template <typename Key>
  uint32_t Count(const Key& key) const {
    const uint64_t hash = Hasher()(key);
    return power_of_two_ ? Ops<true>::Count(filter_, hash)
                         : Ops<false>::Count(filter_, hash);
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
  template <bool kPowerOfTwo>
  using Table = CompiledTable<Bucket, kPowerOfTwo>;
  template <bool kPowerOfTwo>
  using Ops =
      CuckooFilter::Operations<Table<kPowerOfTwo>,
                               CuckooFilter::FixedSize<Table<kPowerOfTwo>>>;

  static constexpr bool IsSemiSorted() {
    return std::is_same_v<Bucket,
                          SemiSortedWordBucket<Bucket::kFingerprintBits>>;
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
      : filter_(std::move(filter)),
        power_of_two_(filter_.hashing().base().power_of_two()) {}

  CuckooFilter filter_;
  bool power_of_two_;
};

// The common layouts: plain buckets of 4 slots (8, 12 and 16 bits are the
// usual choices), and semi-sorted buckets of 4 (13 bits is the paper's
// choice: the false-positive rate of 13-bit fingerprints in 12 bits a slot).
template <int kFingerprintBits, typename Hasher = Xxh3Hasher>
using PlainCuckooFilter =
    TypedCuckooFilter<PlainWordBucket<4, kFingerprintBits>, Hasher>;
template <int kFingerprintBits, typename Hasher = Xxh3Hasher>
using SemiSortedCuckooFilter =
    TypedCuckooFilter<SemiSortedWordBucket<kFingerprintBits>, Hasher>;

}  // namespace cuckoo
