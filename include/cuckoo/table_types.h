// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The table types that the dynamic filter, the static builder and the
// plugin's reader share, and the one choice of a type for a table
// (VisitTable). A table type is a bucket codec (bucket_codec.h) and a key
// mapping (CuckooHashing, hashing.h) put together: a key's position (Locate
// and AltBucket), the probe of its two buckets (Contains), a bucket's slots
// (Load), whether it has room (HasEmptySlot) and the writes (Replace and
// Swap), over a BucketTableView or BucketTable. Both buckets are always probed,
// with no branch between their loads, so that the loads overlap and no branch
// depends on what the table holds.
//
// CompiledTable has its codec and index arithmetic fixed at compile time (a
// compiled codec, and LocateCompiled with or without a power-of-two bucket
// count); AnyLayoutTable is the same table over the view's runtime codec
// and the runtime mapping, and reads every layout. Each filter or reader
// keeps its choice, so no operation branches on its layout.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuckoo/bucket_codec.h"
#include "cuckoo/bucket_table.h"
#include "cuckoo/hashing.h"

namespace cuckoo {

// The key mapping with the fingerprint width and the kind of bucket count
// fixed at compile time.
template <int kFingerprintBits, bool kPowerOfTwo>
struct CompiledMapping {
  CUCKOO_ALWAYS_INLINE static KeyPosition Locate(const CuckooHashing& hashing,
                                                 uint64_t hash) {
    return hashing.template LocateCompiled<kFingerprintBits, kPowerOfTwo>(hash);
  }
  CUCKOO_ALWAYS_INLINE static uint32_t AltBucket(const CuckooHashing& hashing,
                                                 uint32_t bucket,
                                                 uint32_t fingerprint) {
    return hashing.template AltBucketCompiled<kPowerOfTwo>(bucket, fingerprint);
  }
};

// The key mapping as the CuckooHashing object says.
struct RuntimeMapping {
  CUCKOO_ALWAYS_INLINE static KeyPosition Locate(const CuckooHashing& hashing,
                                                 uint64_t hash) {
    return hashing.Locate(hash);
  }
  CUCKOO_ALWAYS_INLINE static uint32_t AltBucket(const CuckooHashing& hashing,
                                                 uint32_t bucket,
                                                 uint32_t fingerprint) {
    return hashing.AltBucket(bucket, fingerprint);
  }
};

// Whether Codec probes a key's two buckets as one word (a compiled plain
// codec of 32-bit buckets, PlainWordCodec::MatchBitsOfPair).
template <typename Codec, typename = void>
inline constexpr bool kPairInOneWord = false;
template <typename Codec>
inline constexpr bool
    kPairInOneWord<Codec, std::void_t<decltype(Codec::kPairInOneWord)>> =
        Codec::kPairInOneWord;

template <typename Codec, typename Mapping>
struct TableOver : Mapping {
  using CodecType = Codec;
  using MappingType = Mapping;
  // At most kSlots slots; SlotsPerBucket(table) of them are read.
  static constexpr int kSlots = Codec::kMaxSlots;

  // The codec of `table`: a compiled codec is an empty constant, the
  // runtime one is the view's.
  CUCKOO_ALWAYS_INLINE static decltype(auto) CodecOf(
      const BucketTableView& table) {
    if constexpr (std::is_same_v<Codec, AnyBucketCodec>) {
      return table.codec();
    } else {
      return Codec{};
    }
  }

  CUCKOO_ALWAYS_INLINE static int SlotsPerBucket(const BucketTableView& table) {
    return CodecOf(table).slots();
  }
  CUCKOO_ALWAYS_INLINE static void Load(const BucketTableView& table,
                                        uint32_t bucket, uint32_t* slots) {
    CodecOf(table).Load(table.data(), bucket, slots);
  }
  CUCKOO_ALWAYS_INLINE static bool Contains(const BucketTableView& table,
                                            const KeyPosition& position) {
    return ContainsWith(CodecOf(table), table.data(), position);
  }
  // Contains, and the prefetch of a key's two buckets, over the table's
  // bytes alone: for a compiled codec, which needs nothing else of the
  // table.
  CUCKOO_ALWAYS_INLINE static bool ContainsInBytes(
      const uint8_t* data, const KeyPosition& position) {
    static_assert(!std::is_same_v<Codec, AnyBucketCodec>);
    return ContainsWith(Codec{}, data, position);
  }
  CUCKOO_ALWAYS_INLINE static void PrefetchInBytes(
      const uint8_t* data, const KeyPosition& position) {
    static_assert(!std::is_same_v<Codec, AnyBucketCodec>);
    constexpr uint64_t kBits = static_cast<uint64_t>(Codec::bucket_bits());
    // Whole-byte buckets from their byte index, as bits::LoadFieldAt.
    if constexpr (Codec::kWholeBytes != 0) {
      __builtin_prefetch(data + uint64_t{position.bucket} * Codec::kWholeBytes);
      __builtin_prefetch(data +
                         uint64_t{position.alternate} * Codec::kWholeBytes);
    } else {
      __builtin_prefetch(data + ((position.bucket * kBits) >> 3));
      __builtin_prefetch(data + ((position.alternate * kBits) >> 3));
    }
  }
  // Fetches both buckets of a key: for a compiled codec at addresses
  // computed with its constant bucket width.
  CUCKOO_ALWAYS_INLINE static void Prefetch(const BucketTableView& table,
                                            const KeyPosition& position) {
    if constexpr (std::is_same_v<Codec, AnyBucketCodec>) {
      table.Prefetch(position);
    } else {
      PrefetchInBytes(table.data(), position);
    }
  }
  CUCKOO_ALWAYS_INLINE static bool HasEmptySlot(const BucketTableView& table,
                                                uint32_t bucket) {
    return CodecOf(table).MatchBits(table.data(), bucket, 0) != 0;
  }
  CUCKOO_ALWAYS_INLINE static int Count(const BucketTableView& table,
                                        uint32_t bucket, uint32_t fingerprint) {
    return CodecOf(table).Count(table.data(), bucket, fingerprint);
  }
  CUCKOO_ALWAYS_INLINE static bool Replace(BucketTable* table, uint32_t bucket,
                                           uint32_t from, uint32_t to) {
    return CodecOf(table->view())
        .Replace(table->mutable_bytes().data(), bucket, from, to);
  }
  CUCKOO_ALWAYS_INLINE static uint32_t Swap(BucketTable* table, uint32_t bucket,
                                            int slot, uint32_t fingerprint) {
    return CodecOf(table->view())
        .Swap(table->mutable_bytes().data(), bucket, slot, fingerprint);
  }

 private:
  // Both buckets' matches ORed before the one test, so that neither load
  // waits on a branch; 32-bit plain buckets in one lane test of the pair.
  template <typename AnyCodec>
  CUCKOO_ALWAYS_INLINE static bool ContainsWith(const AnyCodec& codec,
                                                const uint8_t* data,
                                                const KeyPosition& position) {
    if constexpr (kPairInOneWord<AnyCodec>) {
      return codec.MatchBitsOfPair(data, position.bucket, position.alternate,
                                   position.fingerprint) != 0;
    } else {
      return (codec.MatchBits(data, position.bucket, position.fingerprint) |
              codec.MatchBits(data, position.alternate,
                              position.fingerprint)) != 0;
    }
  }
};

template <typename Bucket, bool kPowerOfTwo>
using CompiledTable =
    TableOver<Bucket, CompiledMapping<Bucket::kFingerprintBits, kPowerOfTwo>>;
using AnyLayoutTable = TableOver<AnyBucketCodec, RuntimeMapping>;

// Calls visit(Table{}) with the table type for a table of `layout` and
// `hashing`: a CompiledTable where VisitCompiledBucket has a codec for the
// layout and the mapping's fingerprints are the slots', else
// AnyLayoutTable.
template <typename Visit>
void VisitTable(const BucketLayout& layout, const CuckooHashing& hashing,
                Visit&& visit) {
  const bool compiled = hashing.fingerprint_bits() == layout.fingerprint_bits &&
                        VisitCompiledBucket(layout, [&](auto bucket) {
                          using Bucket = decltype(bucket);
                          if (hashing.power_of_two()) {
                            visit(CompiledTable<Bucket, true>{});
                          } else {
                            visit(CompiledTable<Bucket, false>{});
                          }
                        });
  if (!compiled) visit(AnyLayoutTable{});
}

}  // namespace cuckoo
