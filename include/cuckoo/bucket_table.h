// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The bit-packed bucket table: where fingerprints live in memory. Owns the
// bucket layout (slots per bucket, fingerprint width, semi-sorting), the
// little-endian bit packing, bucket reads and writes, and the table types
// that the dynamic filter, the static builder and the plugin's reader share
// (CompiledTable for the common layouts, AnyLayoutTable, chosen once by
// VisitTable). A read-only view
// works over memory it does not own (a RocksDB filter block, unaligned); the
// mutable table owns its bytes.
//
// Layout
// ------
// Bucket i occupies bits [i * B, (i + 1) * B) of a little-endian bit string
// (bit k is bit k % 8 of byte k / 8), where B is the bucket width:
//   * plain buckets: b slots of f bits, slot s at bits [s f, (s + 1) f);
//     an empty slot holds 0;
//   * semi-sorted buckets (b = 4 only): a 12-bit code of the four sorted
//     high nibbles (see semi_sort.h), then the four (f - 4)-bit low parts in
//     the same order. B = 4 (f - 1).
// The bytes are followed by kTablePaddingBytes of zeros, so that every read is
// one unaligned 8-byte load that never leaves the buffer: a field starting in
// the last data byte still has 7 readable bytes after it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "cuckoo/hashing.h"
#include "cuckoo/semi_sort.h"

namespace cuckoo {

inline constexpr size_t kTablePaddingBytes = 7;
inline constexpr int kMaxBucketSize = 8;

// Shape of one bucket.
struct BucketLayout {
  int bucket_size = 4;        // slots per bucket: 2, 4 or 8
  int fingerprint_bits = 12;  // 4..32
  bool semi_sorted = false;   // only with bucket_size 4

  int BitsPerBucket() const {
    return semi_sorted ? 4 * (fingerprint_bits - 1)
                       : bucket_size * fingerprint_bits;
  }
  double BitsPerSlot() const {
    return static_cast<double>(BitsPerBucket()) / bucket_size;
  }

  // Empty string when valid, otherwise what is wrong.
  std::string Validate() const {
    if (bucket_size != 2 && bucket_size != 4 && bucket_size != 8) {
      return "bucket size " + std::to_string(bucket_size) +
             " is not one of 2, 4, 8";
    }
    if (fingerprint_bits < kMinFingerprintBits ||
        fingerprint_bits > kMaxFingerprintBits) {
      return "fingerprint width " + std::to_string(fingerprint_bits) +
             " bits is outside [" + std::to_string(kMinFingerprintBits) + ", " +
             std::to_string(kMaxFingerprintBits) + "]";
    }
    if (semi_sorted && bucket_size != 4) {
      return "semi-sorting needs 4 slots per bucket, not " +
             std::to_string(bucket_size);
    }
    return "";
  }

  bool operator==(const BucketLayout& other) const {
    return bucket_size == other.bucket_size &&
           fingerprint_bits == other.fingerprint_bits &&
           semi_sorted == other.semi_sorted;
  }
};

// Empty when num_buckets buckets of `layout` make a table (a valid layout, an
// even bucket count from 2 to kMaxNumBuckets), otherwise what is wrong. The
// one check of every reader of stored tables.
inline std::string ValidateTableGeometry(const BucketLayout& layout,
                                         uint64_t num_buckets) {
  std::string problem = layout.Validate();
  if (!problem.empty()) return problem;
  if (num_buckets < 2 || num_buckets % 2 != 0 || num_buckets > kMaxNumBuckets) {
    return "bucket count " + std::to_string(num_buckets) +
           " is not an even number >= 2";
  }
  return "";
}

// Bytes of table data (without padding) for num_buckets buckets.
inline uint64_t TableDataBytes(const BucketLayout& layout,
                               uint64_t num_buckets) {
  return (num_buckets * static_cast<uint64_t>(layout.BitsPerBucket()) + 7) / 8;
}

namespace bits {

inline uint64_t Mask(int width) {
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

inline uint64_t LoadLittleEndian64(const uint8_t* p) {
  uint64_t value;
  std::memcpy(&value, p, sizeof(value));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  value = __builtin_bswap64(value);
#endif
  return value;
}

inline void StoreLittleEndian64(uint8_t* p, uint64_t value) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  value = __builtin_bswap64(value);
#endif
  std::memcpy(p, &value, sizeof(value));
}

// Reads `width` <= 57 bits starting at bit `position`.
inline uint64_t Read(const uint8_t* data, uint64_t position, int width) {
  return (LoadLittleEndian64(data + (position >> 3)) >> (position & 7)) &
         Mask(width);
}

// Writes the low `width` <= 57 bits of `value` at bit `position`.
inline void Write(uint8_t* data, uint64_t position, int width, uint64_t value) {
  uint8_t* p = data + (position >> 3);
  int shift = static_cast<int>(position & 7);
  uint64_t mask = Mask(width) << shift;
  uint64_t word = LoadLittleEndian64(p);
  word = (word & ~mask) | ((value << shift) & mask);
  StoreLittleEndian64(p, word);
}

// XORs `change` into the bits starting at bit `position`: one 8-byte
// read-modify-write, so change's bits must fit in the 64 - position % 8
// bits that it reaches.
inline void Flip(uint8_t* data, uint64_t position, uint64_t change) {
  uint8_t* p = data + (position >> 3);
  StoreLittleEndian64(p, LoadLittleEndian64(p) ^ (change << (position & 7)));
}

// The top bit of every zero lane of `word`, for lanes described by their
// bottom (`ones`) and top (`tops`) bits. Exact: adding 2^(w-1) - 1 to the
// low w - 1 bits of a lane sets its top bit unless they are all zero, and
// never carries into the next lane.
inline uint64_t ZeroLanes(uint64_t word, uint64_t ones, uint64_t tops) {
  const uint64_t low_mask = tops - ones;
  return ~(((word & low_mask) + low_mask) | word) & tops;
}

// Nonzero exactly when some lane of `word` is zero: one operation fewer than
// ZeroLanes, and bits above the top lane may hold anything. If no lane is
// zero, subtracting `ones` borrows nowhere, and a lane's top bit is set in
// v - 1 only when v > 2^(w-1), where ~v clears it. If some lane is zero, the
// lowest one becomes all ones with nothing borrowed into it, and its top bit
// survives ~v. Lanes above a zero one may be flagged falsely (a borrow),
// which is why this only answers whether one exists; borrows go upward, so
// the bits above the top lane change nothing.
inline uint64_t AnyZeroLane(uint64_t word, uint64_t ones, uint64_t tops) {
  return (word - ones) & ~word & tops;
}

}  // namespace bits

// A plain layout fixed at compile time, for the hot paths of the most used
// layouts: the bucket width, lane constants and shifts become constants, so
// a probe is one load, a shift, a mask and the zero-lane test. Same bits as
// BucketTableView reads for BucketLayout{kBucketSize, kFingerprintBits}.
template <int kBucketSize, int kFingerprintBitsOfSlot>
struct PlainWordBucket {
  static constexpr int kSlots = kBucketSize;
  static constexpr int kFingerprintBits = kFingerprintBitsOfSlot;
  static constexpr int kBits = kBucketSize * kFingerprintBits;
  static_assert(kBits <= 57 || kBits == 64, "one 8-byte load per bucket");
  static constexpr uint64_t kOnes = [] {
    uint64_t ones = 0;
    for (int slot = 0; slot < kBucketSize; ++slot) {
      ones |= uint64_t{1} << (slot * kFingerprintBits);
    }
    return ones;
  }();
  static constexpr uint64_t kTops = kOnes << (kFingerprintBits - 1);

  static bool Matches(const BucketLayout& layout) {
    return !layout.semi_sorted && layout.bucket_size == kBucketSize &&
           layout.fingerprint_bits == kFingerprintBits;
  }
  CUCKOO_ALWAYS_INLINE static uint64_t Read(const uint8_t* data,
                                            uint32_t bucket) {
    const uint64_t position = uint64_t{bucket} * kBits;
    const uint64_t word =
        bits::LoadLittleEndian64(data + (position >> 3)) >> (position & 7);
    return kBits == 64 ? word : word & bits::Mask(kBits);
  }
  CUCKOO_ALWAYS_INLINE static bool Contains(const uint8_t* data,
                                            uint32_t bucket,
                                            uint32_t fingerprint) {
    return MatchBits(data, bucket, fingerprint) != 0;
  }
  // Nonzero exactly when a slot of the bucket holds `fingerprint`: the bits
  // above the bucket in its 8-byte load are left in (AnyZeroLane ignores
  // them).
  CUCKOO_ALWAYS_INLINE static uint64_t MatchBits(const uint8_t* data,
                                                 uint32_t bucket,
                                                 uint32_t fingerprint) {
    const uint64_t position = uint64_t{bucket} * kBits;
    const uint64_t word =
        bits::LoadLittleEndian64(data + (position >> 3)) >> (position & 7);
    return bits::AnyZeroLane(word ^ (fingerprint * kOnes), kOnes, kTops);
  }
  // BucketTableView::ReadBucket for this layout: slots[0, kBucketSize).
  CUCKOO_ALWAYS_INLINE static void Load(const uint8_t* data, uint32_t bucket,
                                        uint32_t* slots) {
    const uint64_t word = Read(data, bucket);
    for (int slot = 0; slot < kBucketSize; ++slot) {
      slots[slot] = static_cast<uint32_t>((word >> (slot * kFingerprintBits)) &
                                          bits::Mask(kFingerprintBits));
    }
  }
  // BucketTable::Replace for this layout: the first slot holding `from`
  // (0 = an empty slot) gets `to`; false when no slot holds `from`.
  static bool Replace(uint8_t* data, uint32_t bucket, uint32_t from,
                      uint32_t to) {
    const uint64_t word = Read(data, bucket);
    const uint64_t hits = bits::ZeroLanes(word ^ (from * kOnes), kOnes, kTops);
    if (hits == 0) return false;
    const int shift = __builtin_ctzll(hits) + 1 - kFingerprintBits;
    bits::Flip(data, uint64_t{bucket} * kBits, uint64_t{from ^ to} << shift);
    return true;
  }
  // The kBits-bit word of a bucket holding slots[0, kBucketSize).
  CUCKOO_ALWAYS_INLINE static uint64_t Encode(const uint32_t* slots) {
    uint64_t word = 0;
    for (int slot = 0; slot < kBucketSize; ++slot) {
      word |= uint64_t{slots[slot]} << (slot * kFingerprintBits);
    }
    return word;
  }
  // BucketTable::WriteBucket for this layout: slots[0, kBucketSize).
  CUCKOO_ALWAYS_INLINE static void Store(uint8_t* data, uint32_t bucket,
                                         const uint32_t* slots) {
    bits::Flip(data, uint64_t{bucket} * kBits,
               Read(data, bucket) ^ Encode(slots));
  }
  // BucketTable::Swap for this layout: `fingerprint` goes into `slot`, and
  // what was there is returned.
  static uint32_t Swap(uint8_t* data, uint32_t bucket, int slot,
                       uint32_t fingerprint) {
    const int shift = slot * kFingerprintBits;
    const uint32_t evicted = static_cast<uint32_t>(
        (Read(data, bucket) >> shift) & bits::Mask(kFingerprintBits));
    bits::Flip(data, uint64_t{bucket} * kBits,
               uint64_t{evicted ^ fingerprint} << shift);
    return evicted;
  }
};

// Ascending order of four values with five compare-exchanges: the order of
// a semi-sorted bucket's slots.
// Branch-free: the order of a bucket's fingerprints is random, and a branch
// per compare-exchange mispredicts half the time.
inline void SortFour(uint32_t* v) {
  uint32_t s0 = v[0], s1 = v[1], s2 = v[2], s3 = v[3];
  auto exchange = [](uint32_t& low, uint32_t& high) {
    const uint32_t out_of_order = 0u - static_cast<uint32_t>(high < low);
    const uint32_t change = (low ^ high) & out_of_order;
    low ^= change;
    high ^= change;
  };
  exchange(s0, s1);
  exchange(s2, s3);
  exchange(s0, s2);
  exchange(s1, s3);
  exchange(s1, s2);
  v[0] = s0;
  v[1] = s1;
  v[2] = s2;
  v[3] = s3;
}

// A semi-sorted 4-slot layout fixed at compile time, for buckets that one
// 8-byte load reads whole: a 12-bit code and four (f - 4)-bit low parts,
// 4 (f - 1) bits. A bucket starts at a multiple of gcd(4 (f - 1), 8) bits,
// so at most 8 - that gcd bits into its first byte: f <= 15 fits at any
// offset, and f = 16 (60 bits, offsets 0 and 4) exactly. Same bits and the
// same word-parallel match as BucketTableView's semi-sorted path, with every
// width and lane constant a constant.
template <int kFingerprintBitsOfSlot>
struct SemiSortedWordBucket {
  static constexpr int kSlots = 4;
  static constexpr int kFingerprintBits = kFingerprintBitsOfSlot;
  static constexpr int kLowBits = kFingerprintBits - semi_sort::kNibbleBits;
  static constexpr int kBits = semi_sort::kCodeBits + 4 * kLowBits;
  static_assert(kLowBits >= 1 && 8 - std::gcd(kBits, 8) + kBits <= 64,
                "one 8-byte load per bucket");
  static constexpr uint64_t kLowOnes = [] {
    uint64_t ones = 0;
    for (int slot = 0; slot < 4; ++slot)
      ones |= uint64_t{1} << (slot * kLowBits);
    return ones;
  }();
  static constexpr uint64_t kLowTops = kLowOnes << (kLowBits - 1);
  // With kLowBits > 3, multiplying a word whose bits are at s * kLowBits
  // (s < 4) by this moves bit s * kLowBits to 3 * kLowBits + s: the partial
  // product of bit s and term t lands at 3 * kLowBits + t + (s - t) *
  // kLowBits, no two partial products share a bit (|t - t'| < kLowBits), so
  // nothing carries into the four result bits (those past bit 63 drop).
  static constexpr uint64_t kGatherLowLanes = [] {
    uint64_t multiplier = 0;
    for (int t = 0; t < 4; ++t) {
      multiplier |= uint64_t{1} << (3 * kLowBits - t * kLowBits + t);
    }
    return multiplier;
  }();

  static bool Matches(const BucketLayout& layout) {
    return layout.semi_sorted && layout.bucket_size == 4 &&
           layout.fingerprint_bits == kFingerprintBits;
  }

  // BucketTableView::ReadBucket for this layout: the four fingerprints,
  // ascending.
  CUCKOO_ALWAYS_INLINE static void Load(const uint8_t* data, uint32_t bucket,
                                        uint32_t* slots) {
    Decode(Read(data, bucket), slots);
  }
  // BucketTable::Replace for this layout: the first slot, in ascending
  // order, holding `from` (0 = an empty slot) gets `to`, and the bucket is
  // stored sorted again; false when no slot holds `from`.
  static bool Replace(uint8_t* data, uint32_t bucket, uint32_t from,
                      uint32_t to) {
    const uint64_t word = Read(data, bucket);
    uint32_t slots[4];
    Decode(word, slots);
    const int slot = (slots[0] == from)   ? 0
                     : (slots[1] == from) ? 1
                     : (slots[2] == from) ? 2
                     : (slots[3] == from) ? 3
                                          : -1;
    if (slot < 0) return false;
    slots[slot] = to;
    bits::Flip(data, uint64_t{bucket} * kBits, word ^ EncodeSorting(slots));
    return true;
  }
  // The kBits-bit word of a bucket holding slots[0, 4), sorted.
  CUCKOO_ALWAYS_INLINE static uint64_t Encode(const uint32_t* slots) {
    uint32_t sorted[4] = {slots[0], slots[1], slots[2], slots[3]};
    return EncodeSorting(sorted);
  }
  // BucketTable::WriteBucket for this layout: slots[0, 4), stored sorted.
  CUCKOO_ALWAYS_INLINE static void Store(uint8_t* data, uint32_t bucket,
                                         const uint32_t* slots) {
    bits::Flip(data, uint64_t{bucket} * kBits,
               Read(data, bucket) ^ Encode(slots));
  }
  // BucketTable::Swap for this layout: slot k is the k-th smallest
  // fingerprint; `fingerprint` takes its place, and it is returned.
  static uint32_t Swap(uint8_t* data, uint32_t bucket, int slot,
                       uint32_t fingerprint) {
    const uint64_t word = Read(data, bucket);
    uint32_t slots[4];
    Decode(word, slots);
    const uint32_t evicted = slots[slot];
    slots[slot] = fingerprint;
    bits::Flip(data, uint64_t{bucket} * kBits, word ^ EncodeSorting(slots));
    return evicted;
  }
  CUCKOO_ALWAYS_INLINE static bool Contains(const uint8_t* data,
                                            uint32_t bucket,
                                            uint32_t fingerprint) {
    return MatchBits(data, bucket, fingerprint) != 0;
  }
  // Nonzero exactly when a slot of the bucket holds `fingerprint`.
  CUCKOO_ALWAYS_INLINE static uint64_t MatchBits(const uint8_t* data,
                                                 uint32_t bucket,
                                                 uint32_t fingerprint) {
    const uint64_t word = Read(data, bucket);
    const uint32_t nibbles = semi_sort::DecodeNibbles(
        static_cast<uint32_t>(word & bits::Mask(semi_sort::kCodeBits)));
    const uint64_t nibble_hits = bits::ZeroLanes(
        nibbles ^ ((fingerprint >> kLowBits) * 0x1111u), 0x1111, 0x8888);
    // Lane s of the nibbles matched -> bit s (see BucketTableView).
    const uint32_t lane_mask =
        static_cast<uint32_t>((((nibble_hits >> 3) * 0x1248u) >> 12) & 0xF);
    const uint64_t low_hits =
        bits::ZeroLanes((word >> semi_sort::kCodeBits) ^
                            ((fingerprint & bits::Mask(kLowBits)) * kLowOnes),
                        kLowOnes, kLowTops);
    if constexpr (kLowBits > 3) {
      // Lane s of the low parts matched -> bit s, gathered as lane_mask is.
      const uint32_t low_mask = static_cast<uint32_t>(
          (((low_hits >> (kLowBits - 1)) * kGatherLowLanes) >> (3 * kLowBits)) &
          0xF);
      return lane_mask & low_mask;
    } else {
      return low_hits & LowTopsOfLanes(lane_mask);
    }
  }

 private:
  // The tops of the low lanes whose bits are set in lane_mask: bit s of the
  // mask moved to bit s * kLowBits + kLowBits - 1 (for kLowBits <= 3).
  CUCKOO_ALWAYS_INLINE static uint64_t LowTopsOfLanes(uint32_t lane_mask) {
    uint64_t tops = 0;
    for (int slot = 0; slot < 4; ++slot) {
      tops |= uint64_t{(lane_mask >> slot) & 1u}
              << (slot * kLowBits + kLowBits - 1);
    }
    return tops;
  }
  CUCKOO_ALWAYS_INLINE static uint64_t Read(const uint8_t* data,
                                            uint32_t bucket) {
    const uint64_t position = uint64_t{bucket} * kBits;
    return (bits::LoadLittleEndian64(data + (position >> 3)) >>
            (position & 7)) &
           bits::Mask(kBits);
  }
  // The four fingerprints of a bucket word, ascending.
  static void Decode(uint64_t word, uint32_t* slots) {
    const uint32_t nibbles = semi_sort::DecodeNibbles(
        static_cast<uint32_t>(word & bits::Mask(semi_sort::kCodeBits)));
    for (int slot = 0; slot < 4; ++slot) {
      slots[slot] = ((nibbles >> (4 * slot)) & 0xFu) << kLowBits |
                    static_cast<uint32_t>(
                        (word >> (semi_sort::kCodeBits + slot * kLowBits)) &
                        bits::Mask(kLowBits));
    }
  }
  // Sorts four fingerprints and returns them as a bucket word.
  CUCKOO_ALWAYS_INLINE static uint64_t EncodeSorting(uint32_t* slots) {
    SortFour(slots);
    uint64_t word = semi_sort::EncodeSortedNibbles(
        slots[0] >> kLowBits, slots[1] >> kLowBits, slots[2] >> kLowBits,
        slots[3] >> kLowBits);
    for (int slot = 0; slot < 4; ++slot) {
      word |= (slots[slot] & bits::Mask(kLowBits))
              << (semi_sort::kCodeBits + slot * kLowBits);
    }
    return word;
  }
};

// The layouts with a bucket type compiled for them: plain 4-slot buckets of
// 8, 12 and 16 bits (the dynamic filter's usual choices), and semi-sorted
// 4-slot buckets of 5 to 16 bits (the filter policy's choices up to 17 bits
// per key). Calls visit(Bucket{}) with the type of `layout` and returns
// true, or returns false when it has none. Each filter or reader makes this
// choice once, so no operation branches on its layout.
template <typename Visit>
bool VisitCompiledBucket(const BucketLayout& layout, Visit&& visit) {
  bool found = false;
  auto try_one = [&](auto bucket) {
    if (!found && decltype(bucket)::Matches(layout)) {
      found = true;
      visit(bucket);
    }
  };
  try_one(PlainWordBucket<4, 8>{});
  try_one(PlainWordBucket<4, 12>{});
  try_one(PlainWordBucket<4, 16>{});
  try_one(SemiSortedWordBucket<5>{});
  try_one(SemiSortedWordBucket<6>{});
  try_one(SemiSortedWordBucket<7>{});
  try_one(SemiSortedWordBucket<8>{});
  try_one(SemiSortedWordBucket<9>{});
  try_one(SemiSortedWordBucket<10>{});
  try_one(SemiSortedWordBucket<11>{});
  try_one(SemiSortedWordBucket<12>{});
  try_one(SemiSortedWordBucket<13>{});
  try_one(SemiSortedWordBucket<14>{});
  try_one(SemiSortedWordBucket<15>{});
  try_one(SemiSortedWordBucket<16>{});
  return found;
}

// Read-only access to a packed table in memory the view does not own. The
// memory must hold TableDataBytes(layout, num_buckets) + kTablePaddingBytes
// bytes; it may be unaligned. Thread-safe for concurrent readers.
class BucketTableView {
 public:
  BucketTableView() = default;
  BucketTableView(const BucketLayout& layout, uint32_t num_buckets,
                  const uint8_t* data)
      : data_(data),
        num_buckets_(num_buckets),
        bucket_size_(layout.bucket_size),
        fingerprint_bits_(layout.fingerprint_bits),
        semi_sorted_(layout.semi_sorted),
        bits_per_bucket_(layout.BitsPerBucket()),
        low_bits_(layout.fingerprint_bits - semi_sort::kNibbleBits) {
    // Constants of the word-parallel slot comparisons: one set bit at the
    // bottom (ones) and at the top (tops) of every lane of a bucket read as
    // one word. Plain buckets have b lanes of f bits; semi-sorted buckets
    // have 4 nibble lanes (in the decoded code) and 4 lanes of f - 4 low bits.
    if (PlainBucketIsOneWord(layout)) {
      for (int slot = 0; slot < bucket_size_; ++slot) {
        lane_ones_ |= uint64_t{1} << (slot * fingerprint_bits_);
      }
      lane_tops_ = lane_ones_ << (fingerprint_bits_ - 1);
    }
    if (semi_sorted_ && 4 * low_bits_ <= 57) {
      for (int slot = 0; slot < 4 && low_bits_ > 0; ++slot) {
        low_ones_ |= uint64_t{1} << (slot * low_bits_);
      }
      low_tops_ = low_bits_ > 0 ? low_ones_ << (low_bits_ - 1) : 0;
      // Lane mask (bit s = nibble lane s matched) -> the tops of the same
      // low lanes; without low bits, any nibble match is a match.
      for (uint32_t mask = 0; mask < 16; ++mask) {
        uint64_t spread = 0;
        for (int slot = 0; slot < 4; ++slot) {
          if ((mask >> slot) & 1) {
            spread |= low_bits_ > 0
                          ? uint64_t{1} << (slot * low_bits_ + low_bits_ - 1)
                          : 1;
          }
        }
        nibble_lanes_to_low_tops_[mask] = spread;
      }
    }
  }

  // Plain buckets that one 8-byte load reads whole: up to 57 bits at any
  // bit offset, or exactly 64 bits, which always start on a byte.
  static bool PlainBucketIsOneWord(const BucketLayout& layout) {
    return !layout.semi_sorted &&
           (layout.BitsPerBucket() <= 57 || layout.BitsPerBucket() == 64);
  }

  BucketLayout layout() const {
    return BucketLayout{bucket_size_, fingerprint_bits_, semi_sorted_};
  }
  uint32_t num_buckets() const { return num_buckets_; }
  int bucket_size() const { return bucket_size_; }
  const uint8_t* data() const { return data_; }

  // Address of the first byte of a bucket, for prefetching.
  const uint8_t* BucketAddress(uint32_t bucket) const {
    return data_ + ((static_cast<uint64_t>(bucket) * bits_per_bucket_) >> 3);
  }

  // Calls visit(slot, fingerprint) for each slot of the bucket, in slot
  // order; 0 is empty. Semi-sorted buckets come out in ascending order. The
  // scans below use it rather than a scratch array: the compiler cannot see
  // that semi-sorting implies 4 slots, and warns that such an array may be
  // read uninitialized (GCC 12 at -O3 with AVX-512).
  template <typename Visit>
  void ForEachSlot(uint32_t bucket, Visit&& visit) const {
    uint64_t position = static_cast<uint64_t>(bucket) * bits_per_bucket_;
    if (semi_sorted_) {
      uint32_t nibbles = semi_sort::DecodeNibbles(static_cast<uint32_t>(
          bits::Read(data_, position, semi_sort::kCodeBits)));
      position += semi_sort::kCodeBits;
      for (int slot = 0; slot < 4; ++slot) {
        // With 4-bit fingerprints there are no low parts, and reading zero
        // bits at the very end of the table would touch the byte past it.
        uint32_t low =
            low_bits_ == 0
                ? 0
                : static_cast<uint32_t>(bits::Read(
                      data_, position + slot * low_bits_, low_bits_));
        visit(slot, (((nibbles >> (4 * slot)) & 0xF) << low_bits_) | low);
      }
      return;
    }
    for (int slot = 0; slot < bucket_size_; ++slot) {
      visit(slot, static_cast<uint32_t>(
                      bits::Read(data_, position + slot * fingerprint_bits_,
                                 fingerprint_bits_)));
    }
  }

  // Copies the bucket's fingerprints to out[0, bucket_size); 0 is empty.
  // Semi-sorted buckets come out in ascending order.
  void ReadBucket(uint32_t bucket, uint32_t* out) const {
    ForEachSlot(bucket, [out](int slot, uint32_t fingerprint) {
      out[slot] = fingerprint;
    });
  }

  // For plain one-word buckets (lane_ones() != 0): the bucket as a word,
  // slot s in bits [s f, (s + 1) f).
  uint64_t ReadWord(uint32_t bucket) const {
    if (bits_per_bucket_ == 64) {
      return bits::LoadLittleEndian64(data_ + uint64_t{bucket} * 8);
    }
    return bits::Read(data_, static_cast<uint64_t>(bucket) * bits_per_bucket_,
                      bits_per_bucket_);
  }
  // The word-parallel constants of plain one-word buckets; 0 otherwise.
  uint64_t lane_ones() const { return lane_ones_; }
  uint64_t lane_tops() const { return lane_tops_; }
  int bits_per_bucket() const { return bits_per_bucket_; }

  // Whether any slot of the bucket holds `fingerprint` (nonzero).
  bool BucketContains(uint32_t bucket, uint32_t fingerprint) const {
    uint64_t position = static_cast<uint64_t>(bucket) * bits_per_bucket_;
    if (lane_ones_ != 0) {
      // Plain bucket in one word: XOR turns matching lanes into zero lanes.
      const uint64_t word = ReadWord(bucket) ^ (fingerprint * lane_ones_);
      return bits::ZeroLanes(word, lane_ones_, lane_tops_) != 0;
    }
    if (semi_sorted_ && 4 * low_bits_ <= 57) {
      // Semi-sorted bucket with its low parts in one word (f <= 18; up to
      // f = 15 code and low parts share one load): match the four decoded
      // nibbles and the four low parts lane by lane, in parallel, then
      // require both in the same lane.
      uint64_t code;
      uint64_t lows;
      if (bits_per_bucket_ <= 57) {
        const uint64_t word = bits::Read(data_, position, bits_per_bucket_);
        code = word & ((1u << semi_sort::kCodeBits) - 1);
        lows = word >> semi_sort::kCodeBits;
      } else {
        code = bits::Read(data_, position, semi_sort::kCodeBits);
        lows =
            bits::Read(data_, position + semi_sort::kCodeBits, 4 * low_bits_);
      }
      const uint32_t nibbles =
          semi_sort::DecodeNibbles(static_cast<uint32_t>(code));
      const uint64_t nibble_hits = bits::ZeroLanes(
          nibbles ^ ((fingerprint >> low_bits_) * 0x1111u), 0x1111, 0x8888);
      // Gather the lane tops (bits 3, 7, 11, 15) into bits 12..15: the
      // multiplier's partial products below bit 12 sum to less than 2^12,
      // so they cannot carry into the result.
      const uint32_t lane_mask =
          static_cast<uint32_t>((((nibble_hits >> 3) * 0x1248u) >> 12) & 0xF);
      if (low_ones_ == 0) return lane_mask != 0;
      const uint64_t low_hits = bits::ZeroLanes(
          lows ^ ((fingerprint & bits::Mask(low_bits_)) * low_ones_), low_ones_,
          low_tops_);
      return (low_hits & nibble_lanes_to_low_tops_[lane_mask]) != 0;
    }
    bool found = false;
    ForEachSlot(bucket, [&found, fingerprint](int, uint32_t slot_fingerprint) {
      found |= slot_fingerprint == fingerprint;
    });
    return found;
  }

  // The lookup of a cuckoo filter: either bucket holds the fingerprint.
  // Both buckets are always probed (no short circuit), so that their loads
  // overlap.
  bool Contains(const KeyPosition& position) const {
    const bool in_primary =
        BucketContains(position.bucket, position.fingerprint);
    const bool in_alternate =
        BucketContains(position.alternate, position.fingerprint);
    return in_primary || in_alternate;
  }

  // Starts loading both buckets of a key into the cache.
  void Prefetch(const KeyPosition& position) const {
    PrefetchBucket(position.bucket);
    PrefetchBucket(position.alternate);
  }
  void PrefetchBucket(uint32_t bucket) const {
    __builtin_prefetch(BucketAddress(bucket));
  }

  // Number of slots of the bucket holding `fingerprint`.
  int CountInBucket(uint32_t bucket, uint32_t fingerprint) const {
    int count = 0;
    ForEachSlot(bucket, [&count, fingerprint](int, uint32_t slot_fingerprint) {
      count += slot_fingerprint == fingerprint;
    });
    return count;
  }

  // Number of nonempty slots of the bucket.
  int Occupancy(uint32_t bucket) const {
    int count = 0;
    ForEachSlot(bucket, [&count](int, uint32_t slot_fingerprint) {
      count += slot_fingerprint != 0;
    });
    return count;
  }

  // For validation of untrusted data: whether the semi-sort code of a bucket
  // is one that an encoder can produce. Always true for plain buckets.
  bool HasValidCode(uint32_t bucket) const {
    if (!semi_sorted_) return true;
    uint64_t position = static_cast<uint64_t>(bucket) * bits_per_bucket_;
    return bits::Read(data_, position, semi_sort::kCodeBits) <
           semi_sort::kNumCodes;
  }

 private:
  const uint8_t* data_ = nullptr;
  uint32_t num_buckets_ = 0;
  int bucket_size_ = 4;
  int fingerprint_bits_ = 12;
  bool semi_sorted_ = false;
  int bits_per_bucket_ = 48;
  int low_bits_ = 8;
  uint64_t lane_ones_ = 0;
  uint64_t lane_tops_ = 0;
  uint64_t low_ones_ = 0;
  uint64_t low_tops_ = 0;
  uint64_t nibble_lanes_to_low_tops_[16] = {};
};

// Keys per chunk of a batched lookup.
inline constexpr size_t kProbeChunk = 32;

// The batched lookup of the dynamic filter and of the plugin's reader: for
// up to kProbeChunk keys at a time, locate(i) gives key i's position and both
// of its buckets are prefetched; then probe(i, position) runs for each, so
// that the cache misses of a chunk overlap instead of following each other.
template <typename Locate, typename Probe>
void LocatePrefetchProbe(const BucketTableView& view, size_t count,
                         Locate&& locate, Probe&& probe) {
  KeyPosition positions[kProbeChunk];
  for (size_t begin = 0; begin < count; begin += kProbeChunk) {
    const size_t n = std::min(kProbeChunk, count - begin);
    for (size_t i = 0; i < n; ++i) {
      positions[i] = locate(begin + i);
      view.Prefetch(positions[i]);
    }
    for (size_t i = 0; i < n; ++i) probe(begin + i, positions[i]);
  }
}

// Stores fingerprints in[0, layout.bucket_size) (0 = empty) into bucket
// `bucket` of the packed table at `data`, whatever it held. Semi-sorted
// buckets are stored sorted, so slot order is not preserved.
inline void WriteBucketBits(const BucketLayout& layout, uint8_t* data,
                            uint32_t bucket, const uint32_t* in) {
  const int fingerprint_bits = layout.fingerprint_bits;
  uint64_t position = static_cast<uint64_t>(bucket) * layout.BitsPerBucket();
  if (layout.semi_sorted) {
    uint32_t sorted[4] = {in[0], in[1], in[2], in[3]};
    SortFour(sorted);
    const int low_bits = fingerprint_bits - semi_sort::kNibbleBits;
    const uint64_t code = semi_sort::EncodeSortedNibbles(
        sorted[0] >> low_bits, sorted[1] >> low_bits, sorted[2] >> low_bits,
        sorted[3] >> low_bits);
    const uint64_t low_mask = bits::Mask(low_bits);
    if (layout.BitsPerBucket() <= 57) {
      // The whole bucket as one word, one write.
      uint64_t word = code;
      for (int slot = 0; slot < 4; ++slot) {
        word |= (sorted[slot] & low_mask)
                << (semi_sort::kCodeBits + slot * low_bits);
      }
      bits::Write(data, position, layout.BitsPerBucket(), word);
      return;
    }
    bits::Write(data, position, semi_sort::kCodeBits, code);
    position += semi_sort::kCodeBits;
    for (int slot = 0; slot < 4; ++slot) {
      bits::Write(data, position + slot * low_bits, low_bits,
                  sorted[slot] & low_mask);
    }
    return;
  }
  for (int slot = 0; slot < layout.bucket_size; ++slot) {
    bits::Write(data, position + slot * fingerprint_bits, fingerprint_bits,
                in[slot]);
  }
}

// A packed table that owns its bytes (data plus zero padding).
class BucketTable {
 public:
  BucketTable(const BucketLayout& layout, uint32_t num_buckets)
      : layout_(layout),
        bytes_(TableDataBytes(layout, num_buckets) + kTablePaddingBytes, 0),
        view_(layout, num_buckets, bytes_.data()) {}

  BucketTable(const BucketTable& other)
      : layout_(other.layout_),
        bytes_(other.bytes_),
        view_(layout_, other.view_.num_buckets(), bytes_.data()) {}
  BucketTable& operator=(const BucketTable& other) {
    if (this != &other) {
      layout_ = other.layout_;
      bytes_ = other.bytes_;
      view_ =
          BucketTableView(layout_, other.view_.num_buckets(), bytes_.data());
    }
    return *this;
  }
  // Moving a std::vector keeps its buffer, so the view stays valid.
  BucketTable(BucketTable&&) noexcept = default;
  BucketTable& operator=(BucketTable&&) noexcept = default;

  const BucketTableView& view() const { return view_; }
  const BucketLayout& layout() const { return layout_; }
  uint32_t num_buckets() const { return view_.num_buckets(); }
  // Data and padding, as stored.
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t>& mutable_bytes() { return bytes_; }

  void Clear() { std::fill(bytes_.begin(), bytes_.end(), 0); }

  // Puts `fingerprint` (nonzero) into the first empty slot of the bucket;
  // false if the bucket is full. An empty slot holds 0, so this is Replace
  // of 0.
  bool TryInsert(uint32_t bucket, uint32_t fingerprint) {
    return Replace(bucket, 0, fingerprint);
  }

  // Replaces the first slot holding `from` by `to` (0 removes it); false if
  // no slot holds `from`. Plain one-word buckets do it word-parallel: XOR
  // turns the lanes holding `from` into zero lanes, and the lowest is
  // rewritten.
  bool Replace(uint32_t bucket, uint32_t from, uint32_t to) {
    const BucketTableView& view = view_;
    if (view.lane_ones() != 0) {
      const uint64_t word = view.ReadWord(bucket);
      const uint64_t hits = bits::ZeroLanes(word ^ (from * view.lane_ones()),
                                            view.lane_ones(), view.lane_tops());
      if (hits == 0) return false;
      const int shift = __builtin_ctzll(hits) + 1 - layout_.fingerprint_bits;
      WriteWord(bucket, word ^ (uint64_t{from ^ to} << shift));
      return true;
    }
    return ReplaceSlotBySlot(bucket, from, to);
  }

  // Puts `fingerprint` into slot `slot` and returns what was there. (In a
  // semi-sorted bucket, slot k is the k-th smallest fingerprint.)
  uint32_t Swap(uint32_t bucket, int slot, uint32_t fingerprint) {
    const BucketTableView& view = view_;
    if (view.lane_ones() != 0) {
      const uint64_t word = view.ReadWord(bucket);
      const int shift = slot * layout_.fingerprint_bits;
      const uint32_t evicted = static_cast<uint32_t>(
          (word >> shift) & bits::Mask(layout_.fingerprint_bits));
      WriteWord(bucket, word ^ (uint64_t{evicted ^ fingerprint} << shift));
      return evicted;
    }
    return SwapSlotBySlot(bucket, slot, fingerprint);
  }

  // Stores fingerprints in[0, bucket_size) (0 = empty) into the bucket
  // (WriteBucketBits).
  void WriteBucket(uint32_t bucket, const uint32_t* in) {
    WriteBucketBits(layout_, bytes_.data(), bucket, in);
  }

 private:
  // The other layouts (semi-sorted, or wider than a word), out of line so
  // that the one-word paths above inline into their callers.
  __attribute__((noinline)) bool ReplaceSlotBySlot(uint32_t bucket,
                                                   uint32_t from, uint32_t to) {
    uint32_t slots[kMaxBucketSize] = {};
    view_.ReadBucket(bucket, slots);
    for (int slot = 0; slot < layout_.bucket_size; ++slot) {
      if (slots[slot] == from) {
        slots[slot] = to;
        WriteBucket(bucket, slots);
        return true;
      }
    }
    return false;
  }
  __attribute__((noinline)) uint32_t SwapSlotBySlot(uint32_t bucket, int slot,
                                                    uint32_t fingerprint) {
    uint32_t slots[kMaxBucketSize] = {};
    view_.ReadBucket(bucket, slots);
    const uint32_t evicted = slots[slot];
    slots[slot] = fingerprint;
    WriteBucket(bucket, slots);
    return evicted;
  }

  void WriteWord(uint32_t bucket, uint64_t word) {
    const int width = layout_.BitsPerBucket();
    if (width == 64) {
      bits::StoreLittleEndian64(bytes_.data() + uint64_t{bucket} * 8, word);
    } else {
      bits::Write(bytes_.data(), static_cast<uint64_t>(bucket) * width, width,
                  word);
    }
  }

  BucketLayout layout_;
  std::vector<uint8_t> bytes_;
  BucketTableView view_;
};

// The table type that the dynamic filter, the static builder and the
// plugin's reader share: a key's position (Locate and AltBucket, over the
// table's CuckooHashing), the probe of its two buckets (Contains), a
// bucket's slots (ReadBucket, as the view's), and the writes (Replace and
// Swap, as BucketTable's, and WriteBucket into packed bytes, as
// WriteBucketBits). Both buckets are always probed, with
// no branch between their loads, so that the loads overlap and no branch
// depends on what the table holds.
//
// CompiledTable has its bucket layout and index arithmetic fixed at compile
// time (a compiled bucket type, and LocateCompiled with or without a
// power-of-two bucket count); AnyLayoutTable reads every layout.
// VisitTable chooses one for a table, once: each filter or reader keeps its
// choice, so no operation branches on its layout.
template <typename Bucket, bool kPowerOfTwo>
struct CompiledTable {
  using BucketType = Bucket;
  CUCKOO_ALWAYS_INLINE static KeyPosition Locate(const CuckooHashing& hashing,
                                                 uint64_t hash) {
    return hashing
        .template LocateCompiled<Bucket::kFingerprintBits, kPowerOfTwo>(hash);
  }
  CUCKOO_ALWAYS_INLINE static uint32_t AltBucket(const CuckooHashing& hashing,
                                                 uint32_t bucket,
                                                 uint32_t fingerprint) {
    return hashing.template AltBucketCompiled<kPowerOfTwo>(bucket, fingerprint);
  }
  CUCKOO_ALWAYS_INLINE static void WriteBucket(const BucketLayout&,
                                               uint8_t* data, uint32_t bucket,
                                               const uint32_t* slots) {
    Bucket::Store(data, bucket, slots);
  }
  CUCKOO_ALWAYS_INLINE static bool Replace(BucketTable* table, uint32_t bucket,
                                           uint32_t from, uint32_t to) {
    return Bucket::Replace(table->mutable_bytes().data(), bucket, from, to);
  }
  CUCKOO_ALWAYS_INLINE static uint32_t Swap(BucketTable* table, uint32_t bucket,
                                            int slot, uint32_t fingerprint) {
    return Bucket::Swap(table->mutable_bytes().data(), bucket, slot,
                        fingerprint);
  }
  // BucketTableView::ReadBucket: slots[0, kSlots) of the bucket.
  static constexpr int kSlots = Bucket::kSlots;
  static constexpr int SlotsPerBucket(const BucketTableView&) { return kSlots; }
  CUCKOO_ALWAYS_INLINE static void ReadBucket(const BucketTableView& table,
                                              uint32_t bucket,
                                              uint32_t* slots) {
    Bucket::Load(table.data(), bucket, slots);
  }
  CUCKOO_ALWAYS_INLINE static bool Contains(const BucketTableView& table,
                                            const KeyPosition& position) {
    return (Bucket::MatchBits(table.data(), position.bucket,
                              position.fingerprint) |
            Bucket::MatchBits(table.data(), position.alternate,
                              position.fingerprint)) != 0;
  }
};

struct AnyLayoutTable {
  CUCKOO_ALWAYS_INLINE static KeyPosition Locate(const CuckooHashing& hashing,
                                                 uint64_t hash) {
    return hashing.Locate(hash);
  }
  CUCKOO_ALWAYS_INLINE static uint32_t AltBucket(const CuckooHashing& hashing,
                                                 uint32_t bucket,
                                                 uint32_t fingerprint) {
    return hashing.AltBucket(bucket, fingerprint);
  }
  static void WriteBucket(const BucketLayout& layout, uint8_t* data,
                          uint32_t bucket, const uint32_t* slots) {
    WriteBucketBits(layout, data, bucket, slots);
  }
  static bool Replace(BucketTable* table, uint32_t bucket, uint32_t from,
                      uint32_t to) {
    return table->Replace(bucket, from, to);
  }
  static uint32_t Swap(BucketTable* table, uint32_t bucket, int slot,
                       uint32_t fingerprint) {
    return table->Swap(bucket, slot, fingerprint);
  }
  // At most kSlots slots; SlotsPerBucket(table) of them are read.
  static constexpr int kSlots = kMaxBucketSize;
  static int SlotsPerBucket(const BucketTableView& table) {
    return table.bucket_size();
  }
  static void ReadBucket(const BucketTableView& table, uint32_t bucket,
                         uint32_t* slots) {
    table.ReadBucket(bucket, slots);
  }
  CUCKOO_ALWAYS_INLINE static bool Contains(const BucketTableView& table,
                                            const KeyPosition& position) {
    return table.Contains(position);
  }
};

// Calls visit(Table{}) with the table type for a table of `layout` and
// `hashing`: a CompiledTable where VisitCompiledBucket has a bucket type for
// the layout and the mapping's fingerprints are the slots', else
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
