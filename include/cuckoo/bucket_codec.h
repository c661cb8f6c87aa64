// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The bucket codecs: how the slots of one bucket are read from and written
// into a bit string of the layout that bucket_layout.h describes. Each
// bucket format's bits are written here once:
//   * PlainWordCodec: plain buckets that one 8-byte load reads whole;
//   * SemiSortedCodec: semi-sorted buckets whose four low parts one load
//     reads (fingerprints of 4 to 18 bits);
//   * SlotBySlotCodec: every other layout, one slot at a time.
// WholeSlotCodec reads plain buckets of 16- or 32-bit slots one slot at a
// time, each slot a word of its own.
// The first two compare all slots of a bucket at once (the lane tests of
// bits.h). Their lane constants come from a geometry: Fixed*Geometry makes
// them compile-time constants, for the layouts that the filters compile
// (CompiledPlainCodec and CompiledSemiSortedCodec below), and Runtime*Geometry
// computes them once for a layout given at run time, with the same code
// over them. AnyBucketCodec picks one of the three for a runtime layout.
//
// Every codec has the same operations, on `data` (a table's bit string with
// its padding) and a bucket index:
//   Load(data, bucket, slots)         slots[0, slots()), 0 = empty;
//                                     semi-sorted slots come out ascending
//   MatchBits(data, bucket, f)        nonzero exactly when a slot holds f
//   Contains(data, bucket, f)         MatchBits != 0
//   Count(data, bucket, f)            slots holding f (f = 0: empty ones)
//   Occupancy(data, bucket)           nonempty slots
//   Replace(data, bucket, from, to)   the first slot holding `from` (0 = an
//                                     empty slot) gets `to`; false if none
//   Swap(data, bucket, slot, f)       f into `slot`, returning what was there
//                                     (semi-sorted: the slot-th smallest)
//   Store(data, bucket, slots)        the bucket holds slots[0, slots())
//   HasValidCode(data, bucket)        whether a stored semi-sort code is one
//                                     an encoder can produce (untrusted data)
// A semi-sorted bucket is stored sorted, so its slot order is not kept.
// A PlainWordCodec of 32-bit buckets (kPairInOneWord) also has
//   MatchBitsOfPair(data, b, a, f)    nonzero exactly when a slot of b or
//                                     of a holds f, in one lane test
// and the plain codecs that the static build works in (PlainWordCodec,
// WholeSlotCodec), for buckets filled from their first slot (no slot after
// an empty one holds anything), whatever they hold otherwise:
//   Fill(data, bucket)                the occupancy, which is then the first
//                                     empty slot (slots() if none)
//   StoreInEmptier(data, b, a, f)     unless b or a holds f (kHeld), f into
//                                     the first empty slot of the emptier,
//                                     b on a tie (kStored), or kFull
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cuckoo/bits.h"
#include "cuckoo/bucket_layout.h"
#include "cuckoo/compiler.h"
#include "cuckoo/semi_sort.h"

namespace cuckoo {

// Ascending order of four values with five compare-exchanges: the order of
// a semi-sorted bucket's slots.
// Branch-free: the order of a bucket's fingerprints is random, and a branch
// per compare-exchange mispredicts half the time.
CUCKOO_ALWAYS_INLINE void SortFour(uint32_t* v) {
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

// Sorts four fingerprints of `fingerprint_bits` bits and returns the 12-bit
// code of their high nibbles; their low parts are then
// slots[s] & bits::Mask(fingerprint_bits - 4), in slot order.
CUCKOO_ALWAYS_INLINE uint32_t SortAndEncodeNibbles(uint32_t* slots,
                                                   int fingerprint_bits) {
  SortFour(slots);
  const int low_bits = fingerprint_bits - semi_sort::kNibbleBits;
  return semi_sort::EncodeSortedNibbles(
      slots[0] >> low_bits, slots[1] >> low_bits, slots[2] >> low_bits,
      slots[3] >> low_bits);
}

// What StoreInEmptier did.
enum class EmptierStore {
  kHeld,    // one of the two buckets holds the fingerprint: nothing stored
  kStored,  // into the emptier bucket
  kFull,    // both buckets are full: nothing stored
};

// ---------------------------------------------------------------------------
// Plain buckets in one word
// ---------------------------------------------------------------------------
//
// b slots of f bits, slot s in lane s (bits [s f, (s + 1) f)) of the bucket
// read as one word. XOR with f copies of the fingerprint turns the lanes
// holding it into zero lanes, which the lane tests find.

// The shape of a plain layout fixed at compile time: b slots of f bits.
template <int kBucketSize, int kFingerprintBitsOfSlot>
struct FixedPlainShape {
  static constexpr int kSlots = kBucketSize;
  static constexpr int kMaxSlots = kSlots;
  static constexpr int kFingerprintBits = kFingerprintBitsOfSlot;
  static constexpr int kBits = kBucketSize * kFingerprintBits;

  static bool Matches(const BucketLayout& layout) {
    return !layout.semi_sorted && layout.bucket_size == kBucketSize &&
           layout.fingerprint_bits == kFingerprintBits;
  }
  static constexpr int slots() { return kSlots; }
  static constexpr int fingerprint_bits() { return kFingerprintBits; }
  static constexpr int bucket_bits() { return kBits; }
};

template <int kBucketSize, int kFingerprintBitsOfSlot>
struct FixedPlainGeometry
    : FixedPlainShape<kBucketSize, kFingerprintBitsOfSlot> {
  static constexpr int kBits = kBucketSize * kFingerprintBitsOfSlot;
  static constexpr uint64_t kOnes =
      bits::LaneOnes(kBucketSize, kFingerprintBitsOfSlot);
  static constexpr uint64_t kTops = kOnes << (kFingerprintBitsOfSlot - 1);
  // Buckets of exactly 32 bits: a key's two buckets fill one word.
  static constexpr bool kPairInOneWord = kBits == 32;
  // The bucket's width in bytes when it is whole, else 0 (LoadFieldAt).
  static constexpr int kWholeBytes = kBits % 8 == 0 ? kBits / 8 : 0;
  static_assert(bits::FieldFitsOneLoad(kBits), "one 8-byte load per bucket");

  static constexpr uint64_t ones() { return kOnes; }
  static constexpr uint64_t tops() { return kTops; }
};

class RuntimePlainGeometry {
 public:
  static constexpr int kMaxSlots = kMaxBucketSize;
  static constexpr bool kPairInOneWord = false;
  static constexpr int kWholeBytes = 0;
  RuntimePlainGeometry() = default;
  // For a plain layout with bits::FieldFitsOneLoad(layout.BitsPerBucket()).
  explicit RuntimePlainGeometry(const BucketLayout& layout)
      : slots_(layout.bucket_size),
        fingerprint_bits_(layout.fingerprint_bits),
        bits_(layout.BitsPerBucket()),
        ones_(bits::LaneOnes(slots_, fingerprint_bits_)),
        tops_(ones_ << (fingerprint_bits_ - 1)) {}

  int slots() const { return slots_; }
  int fingerprint_bits() const { return fingerprint_bits_; }
  int bucket_bits() const { return bits_; }
  uint64_t ones() const { return ones_; }
  uint64_t tops() const { return tops_; }

 private:
  int slots_ = 4;
  int fingerprint_bits_ = 12;
  int bits_ = 48;
  uint64_t ones_ = 0;
  uint64_t tops_ = 0;
};

template <typename Geometry>
class PlainWordCodec : public Geometry {
 public:
  using Geometry::bucket_bits;
  using Geometry::fingerprint_bits;
  using Geometry::Geometry;
  using Geometry::ones;
  using Geometry::slots;
  using Geometry::tops;

  // The bucket as a word, slot s in lane s.
  CUCKOO_ALWAYS_INLINE uint64_t Read(const uint8_t* data,
                                     uint32_t bucket) const {
    return bits::Read(data, Position(bucket), bucket_bits());
  }
  // The bits above the bucket in its 8-byte load are left in: AnyZeroLane
  // ignores them.
  CUCKOO_ALWAYS_INLINE uint64_t MatchBits(const uint8_t* data, uint32_t bucket,
                                          uint32_t fingerprint) const {
    const uint64_t word = bits::LoadFieldAt<Geometry::kWholeBytes>(
        data, bucket, Position(bucket));
    return bits::AnyZeroLane(word ^ bits::Broadcast(fingerprint, ones()),
                             ones(), tops());
  }
  // For 32-bit buckets (kPairInOneWord): nonzero exactly when a slot of
  // `bucket` or of `alternate` holds `fingerprint`. The two buckets, one in
  // each half of a word, are compared in one lane test instead of two.
  CUCKOO_ALWAYS_INLINE uint64_t MatchBitsOfPair(const uint8_t* data,
                                                uint32_t bucket,
                                                uint32_t alternate,
                                                uint32_t fingerprint) const {
    static_assert(Geometry::kPairInOneWord);
    constexpr uint64_t kPairOnes = Geometry::kOnes | Geometry::kOnes << 32;
    constexpr uint64_t kPairTops = Geometry::kTops | Geometry::kTops << 32;
    const uint64_t first =
        bits::LoadLittleEndian<uint32_t>(data + uint64_t{bucket} * 4);
    const uint64_t second =
        bits::LoadLittleEndian<uint32_t>(data + uint64_t{alternate} * 4);
    const uint64_t pair = first | second << 32;
    return bits::AnyZeroLane(pair ^ bits::Broadcast(fingerprint, kPairOnes),
                             kPairOnes, kPairTops);
  }
  CUCKOO_ALWAYS_INLINE bool Contains(const uint8_t* data, uint32_t bucket,
                                     uint32_t fingerprint) const {
    return MatchBits(data, bucket, fingerprint) != 0;
  }
  CUCKOO_ALWAYS_INLINE int Count(const uint8_t* data, uint32_t bucket,
                                 uint32_t fingerprint) const {
    return __builtin_popcountll(bits::ZeroLanes(
        Read(data, bucket) ^ bits::Broadcast(fingerprint, ones()), ones(),
        tops()));
  }
  int Occupancy(const uint8_t* data, uint32_t bucket) const {
    return slots() - Count(data, bucket, 0);
  }
  // The first zero lane, found by its top bit.
  CUCKOO_ALWAYS_INLINE int Fill(const uint8_t* data, uint32_t bucket) const {
    const int top = FirstEmptyTop(bits::LoadAt(data, Position(bucket)));
    return top == 64 ? slots() : top / fingerprint_bits();
  }
  // On one load of each bucket: the lane tests find the fingerprint and
  // each bucket's lowest empty slot, whose top bit (64 for a full bucket)
  // orders the two, and the fingerprint is XORed into that slot's zero
  // bits.
  CUCKOO_ALWAYS_INLINE EmptierStore StoreInEmptier(uint8_t* data,
                                                   uint32_t bucket,
                                                   uint32_t alternate,
                                                   uint32_t fingerprint) const {
    const uint64_t bucket_position = Position(bucket);
    const uint64_t alternate_position = Position(alternate);
    const uint64_t bucket_word = bits::LoadAt(data, bucket_position);
    const uint64_t alternate_word = bits::LoadAt(data, alternate_position);
    const uint64_t copies = bits::Broadcast(fingerprint, ones());
    if ((bits::ZeroLanes(bucket_word ^ copies, ones(), tops()) |
         bits::ZeroLanes(alternate_word ^ copies, ones(), tops())) != 0) {
      return EmptierStore::kHeld;
    }
    const int bucket_top = FirstEmptyTop(bucket_word);
    const int alternate_top = FirstEmptyTop(alternate_word);
    const int top = std::min(bucket_top, alternate_top);
    if (top == 64) return EmptierStore::kFull;
    // Which bucket is emptier is a coin toss: the position is chosen by a
    // mask, not a branch.
    const uint64_t to_alternate =
        uint64_t{0} - static_cast<uint64_t>(alternate_top < bucket_top);
    const uint64_t position =
        bucket_position ^
        ((bucket_position ^ alternate_position) & to_alternate);
    bits::Flip(data, position,
               uint64_t{fingerprint} << (top + 1 - fingerprint_bits()));
    return EmptierStore::kStored;
  }
  CUCKOO_ALWAYS_INLINE void Load(const uint8_t* data, uint32_t bucket,
                                 uint32_t* out) const {
    const uint64_t word = Read(data, bucket);
    for (int slot = 0; slot < slots(); ++slot) {
      out[slot] = static_cast<uint32_t>((word >> (slot * fingerprint_bits())) &
                                        bits::Mask(fingerprint_bits()));
    }
  }
  // The lowest zero lane of word ^ from's copies is the first slot holding
  // `from`; XOR turns it into `to`.
  CUCKOO_ALWAYS_INLINE bool Replace(uint8_t* data, uint32_t bucket,
                                    uint32_t from, uint32_t to) const {
    const uint64_t hits = bits::ZeroLanes(
        Read(data, bucket) ^ bits::Broadcast(from, ones()), ones(), tops());
    if (hits == 0) return false;
    const int shift = __builtin_ctzll(hits) + 1 - fingerprint_bits();
    bits::Flip(data, Position(bucket), uint64_t{from ^ to} << shift);
    return true;
  }
  CUCKOO_ALWAYS_INLINE uint32_t Swap(uint8_t* data, uint32_t bucket, int slot,
                                     uint32_t fingerprint) const {
    const int shift = slot * fingerprint_bits();
    const uint32_t evicted = static_cast<uint32_t>(
        (Read(data, bucket) >> shift) & bits::Mask(fingerprint_bits()));
    bits::Flip(data, Position(bucket),
               uint64_t{evicted ^ fingerprint} << shift);
    return evicted;
  }
  // The bucket_bits() bits of a bucket holding slots[0, slots()).
  CUCKOO_ALWAYS_INLINE uint64_t Encode(const uint32_t* in) const {
    uint64_t word = 0;
    for (int slot = 0; slot < slots(); ++slot) {
      word |= uint64_t{in[slot]} << (slot * fingerprint_bits());
    }
    return word;
  }
  CUCKOO_ALWAYS_INLINE void Store(uint8_t* data, uint32_t bucket,
                                  const uint32_t* in) const {
    bits::Flip(data, Position(bucket), Read(data, bucket) ^ Encode(in));
  }
  bool HasValidCode(const uint8_t*, uint32_t) const { return true; }

 private:
  CUCKOO_ALWAYS_INLINE uint64_t Position(uint32_t bucket) const {
    return uint64_t{bucket} * static_cast<uint64_t>(bucket_bits());
  }
  // The top bit of the lowest zero lane of a bucket's 8-byte load (LoadAt),
  // 64 when it has none; the lane tests mask off the bits above the bucket.
  CUCKOO_ALWAYS_INLINE int FirstEmptyTop(uint64_t word) const {
    const uint64_t empty = bits::ZeroLanes(word, ones(), tops());
    return empty == 0 ? 64 : __builtin_ctzll(empty);
  }
};

// ---------------------------------------------------------------------------
// Semi-sorted buckets with their low parts in one word
// ---------------------------------------------------------------------------
//
// A 12-bit code of the four sorted high nibbles, then four (f - 4)-bit low
// parts L: 4 (f - 1) bits. The code decodes to the four nibbles in four
// 4-bit lanes, and the low parts are four L-bit lanes. A fingerprint is in
// the bucket when some slot s matches in both. The nibble side is one
// lookup (semi_sort::SlotsWithNibble: the slots holding the query's nibble),
// the low side a lane test, and a table of 16 masks (LowTopsOfSlots, a
// constant of the compiled geometries, computed once by the runtime one)
// spreads the slots of the first onto the low lanes' tops of the second,
// with one load and no multiply or shift. With f <= 15 code and low parts
// share one load, at f = 16 and 17 still (their buckets start at multiples
// of 4 and 8 bits), and up to f = 18 the low parts alone fit one
// (4 L <= 56).

// The tops of the L-bit low lanes of each set of slots (bit s for slot s).
struct LowTopsOfSlots {
  uint64_t of[16];
};

constexpr LowTopsOfSlots MakeLowTopsOfSlots(int low_bits) {
  LowTopsOfSlots table{};
  for (uint32_t slots = 0; slots < 16; ++slots) {
    for (int slot = 0; slot < 4; ++slot) {
      if ((slots >> slot) & 1) {
        table.of[slots] |= uint64_t{1} << (slot * low_bits + low_bits - 1);
      }
    }
  }
  return table;
}

template <int kFingerprintBitsOfSlot>
struct FixedSemiSortedGeometry {
  static constexpr int kSlots = 4;
  static constexpr int kMaxSlots = 4;
  static constexpr int kFingerprintBits = kFingerprintBitsOfSlot;
  static constexpr int kLowBits = kFingerprintBits - semi_sort::kNibbleBits;
  static constexpr int kBits = semi_sort::kCodeBits + 4 * kLowBits;
  static_assert(kLowBits >= 1 && bits::FieldFitsOneLoad(kBits),
                "one 8-byte load per bucket");
  // The bucket's width in bytes when it is whole, else 0 (LoadFieldAt).
  static constexpr int kWholeBytes = kBits % 8 == 0 ? kBits / 8 : 0;

  static bool Matches(const BucketLayout& layout) {
    return layout.semi_sorted && layout.bucket_size == 4 &&
           layout.fingerprint_bits == kFingerprintBits;
  }
  static constexpr int slots() { return kSlots; }
  static constexpr int fingerprint_bits() { return kFingerprintBits; }
  static constexpr int low_bits() { return kLowBits; }
  static constexpr int bucket_bits() { return kBits; }
  static constexpr bool one_load() { return true; }
  static constexpr uint64_t low_mask() { return bits::Mask(kLowBits); }
  static constexpr uint64_t low_ones() { return bits::LaneOnes(4, kLowBits); }
  static constexpr uint64_t low_tops() { return low_ones() << (kLowBits - 1); }

  static constexpr const LowTopsOfSlots& low_tops_of_slots() {
    return kLowTopsOfSlots;
  }
  static constexpr LowTopsOfSlots kLowTopsOfSlots =
      MakeLowTopsOfSlots(kLowBits);
};

class RuntimeSemiSortedGeometry {
 public:
  static constexpr int kMaxSlots = 4;
  static constexpr int kWholeBytes = 0;
  RuntimeSemiSortedGeometry() = default;
  // For a semi-sorted layout of 4 to 18 bits.
  explicit RuntimeSemiSortedGeometry(const BucketLayout& layout)
      : fingerprint_bits_(layout.fingerprint_bits),
        low_bits_(layout.fingerprint_bits - semi_sort::kNibbleBits),
        bits_(layout.BitsPerBucket()),
        one_load_(bits::FieldFitsOneLoad(bits_)),
        low_mask_(bits::Mask(low_bits_)),
        low_ones_(low_bits_ == 0 ? 0 : bits::LaneOnes(4, low_bits_)),
        low_tops_(low_bits_ == 0 ? 0 : low_ones_ << (low_bits_ - 1)),
        // 4-bit fingerprints have no low lanes; MatchBits does not use it.
        low_tops_of_slots_(low_bits_ == 0 ? LowTopsOfSlots{}
                                          : MakeLowTopsOfSlots(low_bits_)) {}

  static constexpr int slots() { return 4; }
  int fingerprint_bits() const { return fingerprint_bits_; }
  int low_bits() const { return low_bits_; }
  int bucket_bits() const { return bits_; }
  bool one_load() const { return one_load_; }
  uint64_t low_mask() const { return low_mask_; }
  uint64_t low_ones() const { return low_ones_; }
  uint64_t low_tops() const { return low_tops_; }
  const LowTopsOfSlots& low_tops_of_slots() const { return low_tops_of_slots_; }

 private:
  int fingerprint_bits_ = 13;
  int low_bits_ = 9;
  int bits_ = 48;
  bool one_load_ = true;
  uint64_t low_mask_ = 0;
  uint64_t low_ones_ = 0;
  uint64_t low_tops_ = 0;
  LowTopsOfSlots low_tops_of_slots_{};
};

template <typename Geometry>
class SemiSortedCodec : public Geometry {
 public:
  using Geometry::bucket_bits;
  using Geometry::fingerprint_bits;
  using Geometry::Geometry;
  using Geometry::low_bits;
  using Geometry::low_mask;
  using Geometry::low_ones;
  using Geometry::low_tops;
  using Geometry::one_load;
  using Geometry::slots;

  // Nonzero with one bit per slot holding `fingerprint`: bit s, or with low
  // parts the top of slot s's low lane. The slots' mask keeps only low lane
  // tops, so the low lanes' test needs no mask of its own (ZeroLaneTops).
  CUCKOO_ALWAYS_INLINE uint64_t MatchBits(const uint8_t* data, uint32_t bucket,
                                          uint32_t fingerprint) const {
    const Parts parts = ReadParts(data, bucket);
    const uint32_t nibble_slots =
        semi_sort::SlotsWithNibble(parts.code, fingerprint >> low_bits());
    if (low_bits() == 0) return nibble_slots;
    const uint64_t low_hits = bits::ZeroLaneTops(
        parts.lows ^ bits::Broadcast(fingerprint & low_mask(), low_ones()),
        low_ones(), low_tops());
    return low_hits & this->low_tops_of_slots().of[nibble_slots];
  }
  CUCKOO_ALWAYS_INLINE bool Contains(const uint8_t* data, uint32_t bucket,
                                     uint32_t fingerprint) const {
    return MatchBits(data, bucket, fingerprint) != 0;
  }
  // A slot is 0 only when its nibble and its low part are: exact for 0 too.
  CUCKOO_ALWAYS_INLINE int Count(const uint8_t* data, uint32_t bucket,
                                 uint32_t fingerprint) const {
    return __builtin_popcountll(MatchBits(data, bucket, fingerprint));
  }
  int Occupancy(const uint8_t* data, uint32_t bucket) const {
    return 4 - Count(data, bucket, 0);
  }
  // The four fingerprints, ascending.
  CUCKOO_ALWAYS_INLINE void Load(const uint8_t* data, uint32_t bucket,
                                 uint32_t* out) const {
    const Parts parts = ReadParts(data, bucket);
    const uint32_t nibbles = semi_sort::DecodeNibbles(parts.code);
    for (int slot = 0; slot < 4; ++slot) {
      const uint32_t low =
          low_bits() == 0
              ? 0
              : static_cast<uint32_t>((parts.lows >> (slot * low_bits())) &
                                      low_mask());
      out[slot] = ((nibbles >> (4 * slot)) & 0xFu) << low_bits() | low;
    }
  }
  bool Replace(uint8_t* data, uint32_t bucket, uint32_t from,
               uint32_t to) const {
    if (from == 0 && to != 0 && one_load() &&
        low_bits() <= kMaxLowBitsOfInsertByLanes) {
      return InsertByLanes(data, bucket, to);
    }
    uint32_t held[4];
    Load(data, bucket, held);
    const int slot = (held[0] == from)   ? 0
                     : (held[1] == from) ? 1
                     : (held[2] == from) ? 2
                     : (held[3] == from) ? 3
                                         : -1;
    if (slot < 0) return false;
    held[slot] = to;
    StoreSorting(data, bucket, held);
    return true;
  }
  uint32_t Swap(uint8_t* data, uint32_t bucket, int slot,
                uint32_t fingerprint) const {
    uint32_t held[4];
    Load(data, bucket, held);
    const uint32_t evicted = held[slot];
    held[slot] = fingerprint;
    StoreSorting(data, bucket, held);
    return evicted;
  }
  // The bucket_bits() bits of a bucket holding slots[0, 4), sorted; for
  // one_load() layouts.
  CUCKOO_ALWAYS_INLINE uint64_t Encode(const uint32_t* in) const {
    uint32_t sorted[4] = {in[0], in[1], in[2], in[3]};
    const uint32_t code = SortAndEncodeNibbles(sorted, fingerprint_bits());
    return code | (EncodeLows(sorted) << semi_sort::kCodeBits);
  }
  CUCKOO_ALWAYS_INLINE void Store(uint8_t* data, uint32_t bucket,
                                  const uint32_t* in) const {
    uint32_t sorted[4] = {in[0], in[1], in[2], in[3]};
    StoreSorting(data, bucket, sorted);
  }
  bool HasValidCode(const uint8_t* data, uint32_t bucket) const {
    return bits::Read(data, Position(bucket), semi_sort::kCodeBits) <
           semi_sort::kNumCodes;
  }

 private:
  struct Parts {
    uint32_t code;  // 12 bits
    uint64_t lows;  // the low lanes, bits above them unspecified
  };

  // Replace(bucket, 0, value) of a nonzero value (an insert), without
  // decoding into slots, sorting and encoding: the bucket's work after its
  // load is what keeps one insert's miss from overlapping the next one's
  // (see FilterCore::InsertEach in filter_core.h), so it is kept short.
  // The slots are held sorted, so an empty one (0) is slot 0. The new
  // sorted order drops it and puts value in after the r - 1 held values
  // v_1..v_{r-1} that are at most value (equal ones before it, which
  // changes no bit): slots 1..r-1 move down one lane, value goes to lane
  // r - 1, and slots r..3 stay. r comes from one lane test: the four
  // values v_s = nibble_s << L | low_s, spread into 16-bit lanes (f <= 15
  // bits and a guard bit), subtracted from copies of value with the guard
  // bits set; a guard survives where v_s <= value, and v_0 = 0 always
  // counts. The low parts' L-bit lanes then move by masks, and the new code
  // is one lookup by the old code and value's nibble
  // (semi_sort::CodeAfterInsert). The result is bit for bit what
  // StoreSorting writes (the agreement tests compare them).
  static constexpr int kMaxLowBitsOfInsertByLanes = 11;
  CUCKOO_ALWAYS_INLINE bool InsertByLanes(uint8_t* data, uint32_t bucket,
                                          uint32_t value) const {
    const int l = low_bits();
    const uint64_t position = Position(bucket);
    uint8_t* bytes = data + (position >> 3);
    const int shift = static_cast<int>(position & 7);
    const uint64_t raw = bits::LoadLittleEndian64(bytes);
    const uint64_t word = raw >> shift;
    const uint32_t nibbles =
        semi_sort::DecodeNibbles(static_cast<uint32_t>(word));
    const uint64_t lows = (word >> semi_sort::kCodeBits) & bits::Mask(4 * l);
    if (((nibbles & 0xFu) | (lows & low_mask())) != 0) return false;

    constexpr uint64_t kOnes16 = 0x0001000100010001ull;
    constexpr uint64_t kGuards16 = kOnes16 << 15;
    uint64_t spread_nibbles = nibbles;
    spread_nibbles =
        (spread_nibbles | spread_nibbles << 24) & 0x000000FF000000FFull;
    spread_nibbles =
        (spread_nibbles | spread_nibbles << 12) & 0x000F000F000F000Full;
    uint64_t values = (lows & bits::Mask(2 * l)) | (lows >> (2 * l)) << 32;
    const uint64_t low_lanes = bits::Mask(l) | bits::Mask(l) << 32;
    values = (values & low_lanes) | ((values >> l) & low_lanes) << 16;
    values |= spread_nibbles << l;
    const uint64_t at_most =
        (((value * kOnes16) | kGuards16) - values) & kGuards16;
    const int rank = static_cast<int>(((at_most >> 15) * kOnes16) >> 48);
    const int below = rank - 1;

    const uint64_t new_lows = ((lows >> l) & bits::Mask(l * below)) |
                              uint64_t{value & low_mask()} << (l * below) |
                              (lows & (~uint64_t{0} << (l * rank)));
    const uint32_t code =
        semi_sort::CodeAfterInsert(static_cast<uint32_t>(word), value >> l);
    const uint64_t new_bits = code | new_lows << semi_sort::kCodeBits;
    const uint64_t old_bits = word & bits::Mask(bucket_bits());
    bits::StoreLittleEndian64(bytes, raw ^ ((old_bits ^ new_bits) << shift));
    return true;
  }
  CUCKOO_ALWAYS_INLINE uint64_t Position(uint32_t bucket) const {
    return uint64_t{bucket} * static_cast<uint64_t>(bucket_bits());
  }
  CUCKOO_ALWAYS_INLINE Parts ReadParts(const uint8_t* data,
                                       uint32_t bucket) const {
    const uint64_t position = Position(bucket);
    if (one_load()) {
      const uint64_t word =
          bits::LoadFieldAt<Geometry::kWholeBytes>(data, bucket, position);
      return {static_cast<uint32_t>(word & bits::Mask(semi_sort::kCodeBits)),
              word >> semi_sort::kCodeBits};
    }
    return {
        static_cast<uint32_t>(bits::Read(data, position, semi_sort::kCodeBits)),
        bits::LoadAt(data, position + semi_sort::kCodeBits)};
  }
  CUCKOO_ALWAYS_INLINE uint64_t EncodeLows(const uint32_t* sorted) const {
    uint64_t lows = 0;
    for (int slot = 0; slot < 4; ++slot) {
      lows |= (sorted[slot] & low_mask()) << (slot * low_bits());
    }
    return lows;
  }
  // Sorts held[0, 4) and stores them.
  CUCKOO_ALWAYS_INLINE void StoreSorting(uint8_t* data, uint32_t bucket,
                                         uint32_t* held) const {
    const uint64_t code = SortAndEncodeNibbles(held, fingerprint_bits());
    const uint64_t lows = EncodeLows(held);
    const uint64_t position = Position(bucket);
    if (one_load()) {
      bits::Flip(data, position,
                 bits::Read(data, position, bucket_bits()) ^
                     (code | (lows << semi_sort::kCodeBits)));
      return;
    }
    bits::Write(data, position, semi_sort::kCodeBits, code);
    bits::Write(data, position + semi_sort::kCodeBits, 4 * low_bits(), lows);
  }
};

// The layouts with a compiled codec: plain ones whose buckets one load reads
// (b f <= 57, or 58, 60 or 64) and semi-sorted ones of 5 to 16 bits.
template <int kBucketSize, int kFingerprintBits>
using CompiledPlainCodec =
    PlainWordCodec<FixedPlainGeometry<kBucketSize, kFingerprintBits>>;
template <int kFingerprintBits>
using CompiledSemiSortedCodec =
    SemiSortedCodec<FixedSemiSortedGeometry<kFingerprintBits>>;

// ---------------------------------------------------------------------------
// Plain buckets of 16- or 32-bit slots
// ---------------------------------------------------------------------------
//
// b slots of exactly 16 or 32 bits: each slot is a little-endian word of
// its own, read and compared on its own.
// The static build's work layouts (static_builder.h) where a bucket is not
// one word (2 slots of 16 bits, 8 of 16, 4 or 8 of 32); the runtime codec
// reads the same bits slot by slot.
template <int kBucketSize, int kFingerprintBitsOfSlot>
class WholeSlotCodec
    : public FixedPlainShape<kBucketSize, kFingerprintBitsOfSlot> {
 public:
  static constexpr int kSlots = kBucketSize;
  static constexpr int kFingerprintBits = kFingerprintBitsOfSlot;
  static constexpr int kWholeBytes = kSlots * kFingerprintBits / 8;
  static_assert(kFingerprintBits == 16 || kFingerprintBits == 32);

  CUCKOO_ALWAYS_INLINE uint64_t MatchBits(const uint8_t* data, uint32_t bucket,
                                          uint32_t fingerprint) const {
    bool found = false;
    for (int slot = 0; slot < kSlots; ++slot) {
      found |= At(data, bucket, slot) == fingerprint;
    }
    return found;
  }
  CUCKOO_ALWAYS_INLINE bool Contains(const uint8_t* data, uint32_t bucket,
                                     uint32_t fingerprint) const {
    return MatchBits(data, bucket, fingerprint) != 0;
  }
  CUCKOO_ALWAYS_INLINE int Count(const uint8_t* data, uint32_t bucket,
                                 uint32_t fingerprint) const {
    int count = 0;
    for (int slot = 0; slot < kSlots; ++slot) {
      count += At(data, bucket, slot) == fingerprint;
    }
    return count;
  }
  // The nonempty slots counted: a loop the compiler vectorizes.
  CUCKOO_ALWAYS_INLINE int Occupancy(const uint8_t* data,
                                     uint32_t bucket) const {
    int occupied = 0;
    for (int slot = 0; slot < kSlots; ++slot) {
      occupied += At(data, bucket, slot) != 0;
    }
    return occupied;
  }
  CUCKOO_ALWAYS_INLINE int Fill(const uint8_t* data, uint32_t bucket) const {
    return Occupancy(data, bucket);
  }
  CUCKOO_ALWAYS_INLINE void Load(const uint8_t* data, uint32_t bucket,
                                 uint32_t* out) const {
    for (int slot = 0; slot < kSlots; ++slot) {
      out[slot] = At(data, bucket, slot);
    }
  }
  CUCKOO_ALWAYS_INLINE bool Replace(uint8_t* data, uint32_t bucket,
                                    uint32_t from, uint32_t to) const {
    for (int slot = 0; slot < kSlots; ++slot) {
      if (At(data, bucket, slot) == from) {
        Put(data, bucket, slot, to);
        return true;
      }
    }
    return false;
  }
  CUCKOO_ALWAYS_INLINE uint32_t Swap(uint8_t* data, uint32_t bucket, int slot,
                                     uint32_t fingerprint) const {
    const uint32_t evicted = At(data, bucket, slot);
    Put(data, bucket, slot, fingerprint);
    return evicted;
  }
  CUCKOO_ALWAYS_INLINE void Store(uint8_t* data, uint32_t bucket,
                                  const uint32_t* in) const {
    for (int slot = 0; slot < kSlots; ++slot) {
      Put(data, bucket, slot, in[slot]);
    }
  }
  bool HasValidCode(const uint8_t*, uint32_t) const { return true; }
  CUCKOO_ALWAYS_INLINE EmptierStore StoreInEmptier(uint8_t* data,
                                                   uint32_t bucket,
                                                   uint32_t alternate,
                                                   uint32_t fingerprint) const {
    if (Contains(data, bucket, fingerprint) ||
        Contains(data, alternate, fingerprint)) {
      return EmptierStore::kHeld;
    }
    const int bucket_fill = Fill(data, bucket);
    const int alternate_fill = Fill(data, alternate);
    const bool to_alternate = alternate_fill < bucket_fill;
    const int fill = to_alternate ? alternate_fill : bucket_fill;
    if (fill == kSlots) return EmptierStore::kFull;
    Put(data, to_alternate ? alternate : bucket, fill, fingerprint);
    return EmptierStore::kStored;
  }

 private:
  using Slot = std::conditional_t<kFingerprintBits == 16, uint16_t, uint32_t>;

  CUCKOO_ALWAYS_INLINE static size_t Offset(uint32_t bucket, int slot) {
    return (size_t{bucket} * kSlots + static_cast<size_t>(slot)) * sizeof(Slot);
  }
  CUCKOO_ALWAYS_INLINE static uint32_t At(const uint8_t* data, uint32_t bucket,
                                          int slot) {
    return bits::LoadLittleEndian<Slot>(data + Offset(bucket, slot));
  }
  CUCKOO_ALWAYS_INLINE static void Put(uint8_t* data, uint32_t bucket, int slot,
                                       uint32_t fingerprint) {
    bits::StoreLittleEndian<Slot>(data + Offset(bucket, slot),
                                  static_cast<Slot>(fingerprint));
  }
};

// ---------------------------------------------------------------------------
// Every other layout, slot by slot
// ---------------------------------------------------------------------------
//
// Plain buckets wider than a load (8 slots of 9 bits or more, 4 of 17 or
// more...) and semi-sorted ones of 19 bits or more: each slot, code and low
// part is its own field of at most 32 bits. Its operations are out of line,
// so that AnyBucketCodec's word paths stay small enough to inline into
// their callers.
class SlotBySlotCodec {
 public:
  static constexpr int kMaxSlots = kMaxBucketSize;
  SlotBySlotCodec() = default;
  explicit SlotBySlotCodec(const BucketLayout& layout)
      : slots_(layout.bucket_size),
        fingerprint_bits_(layout.fingerprint_bits),
        semi_sorted_(layout.semi_sorted),
        low_bits_(layout.fingerprint_bits - semi_sort::kNibbleBits),
        bits_(layout.BitsPerBucket()) {}

  int slots() const { return slots_; }
  int bucket_bits() const { return bits_; }

  CUCKOO_NOINLINE void Load(const uint8_t* data, uint32_t bucket,
                            uint32_t* out) const {
    uint64_t position = Position(bucket);
    if (semi_sorted_) {
      const uint32_t nibbles = semi_sort::DecodeNibbles(static_cast<uint32_t>(
          bits::Read(data, position, semi_sort::kCodeBits)));
      position += semi_sort::kCodeBits;
      for (int slot = 0; slot < 4; ++slot) {
        // With 4-bit fingerprints there are no low parts, and reading zero
        // bits at the very end of the table would touch the byte past it.
        const uint32_t low =
            low_bits_ == 0 ? 0
                           : static_cast<uint32_t>(bits::Read(
                                 data, position + slot * low_bits_, low_bits_));
        out[slot] = (((nibbles >> (4 * slot)) & 0xFu) << low_bits_) | low;
      }
      return;
    }
    for (int slot = 0; slot < slots_; ++slot) {
      out[slot] = static_cast<uint32_t>(bits::Read(
          data, position + slot * fingerprint_bits_, fingerprint_bits_));
    }
  }
  CUCKOO_NOINLINE int Count(const uint8_t* data, uint32_t bucket,
                            uint32_t fingerprint) const {
    uint32_t held[kMaxBucketSize] = {};
    Load(data, bucket, held);
    int count = 0;
    for (int slot = 0; slot < slots_; ++slot) {
      count += held[slot] == fingerprint;
    }
    return count;
  }
  uint64_t MatchBits(const uint8_t* data, uint32_t bucket,
                     uint32_t fingerprint) const {
    return static_cast<uint64_t>(Count(data, bucket, fingerprint));
  }
  bool Contains(const uint8_t* data, uint32_t bucket,
                uint32_t fingerprint) const {
    return Count(data, bucket, fingerprint) != 0;
  }
  int Occupancy(const uint8_t* data, uint32_t bucket) const {
    return slots_ - Count(data, bucket, 0);
  }
  CUCKOO_NOINLINE bool Replace(uint8_t* data, uint32_t bucket, uint32_t from,
                               uint32_t to) const {
    uint32_t held[kMaxBucketSize] = {};
    Load(data, bucket, held);
    for (int slot = 0; slot < slots_; ++slot) {
      if (held[slot] == from) {
        held[slot] = to;
        Store(data, bucket, held);
        return true;
      }
    }
    return false;
  }
  CUCKOO_NOINLINE uint32_t Swap(uint8_t* data, uint32_t bucket, int slot,
                                uint32_t fingerprint) const {
    uint32_t held[kMaxBucketSize] = {};
    Load(data, bucket, held);
    const uint32_t evicted = held[slot];
    held[slot] = fingerprint;
    Store(data, bucket, held);
    return evicted;
  }
  CUCKOO_NOINLINE void Store(uint8_t* data, uint32_t bucket,
                             const uint32_t* in) const {
    uint64_t position = Position(bucket);
    if (semi_sorted_) {
      uint32_t sorted[4] = {in[0], in[1], in[2], in[3]};
      const uint32_t code = SortAndEncodeNibbles(sorted, fingerprint_bits_);
      bits::Write(data, position, semi_sort::kCodeBits, code);
      position += semi_sort::kCodeBits;
      for (int slot = 0; slot < 4 && low_bits_ > 0; ++slot) {
        bits::Write(data, position + slot * low_bits_, low_bits_,
                    sorted[slot] & bits::Mask(low_bits_));
      }
      return;
    }
    for (int slot = 0; slot < slots_; ++slot) {
      bits::Write(data, position + slot * fingerprint_bits_, fingerprint_bits_,
                  in[slot]);
    }
  }
  bool HasValidCode(const uint8_t* data, uint32_t bucket) const {
    return !semi_sorted_ ||
           bits::Read(data, Position(bucket), semi_sort::kCodeBits) <
               semi_sort::kNumCodes;
  }

 private:
  uint64_t Position(uint32_t bucket) const {
    return uint64_t{bucket} * static_cast<uint64_t>(bits_);
  }

  int slots_ = 4;
  int fingerprint_bits_ = 12;
  bool semi_sorted_ = false;
  int low_bits_ = 8;
  int bits_ = 48;
};

// ---------------------------------------------------------------------------
// A codec for any layout given at run time
// ---------------------------------------------------------------------------
//
// The codec of the three that reads the layout, chosen at construction;
// each operation branches on that choice (one predictable branch).
class AnyBucketCodec {
 public:
  static constexpr int kMaxSlots = kMaxBucketSize;
  AnyBucketCodec() : AnyBucketCodec(BucketLayout{}) {}
  explicit AnyBucketCodec(const BucketLayout& layout)
      : kind_(KindOf(layout)), slots_(layout.bucket_size) {
    switch (kind_) {
      case Kind::kPlainWord:
        plain_ = PlainWordCodec<RuntimePlainGeometry>(layout);
        break;
      case Kind::kSemiSorted:
        semi_sorted_ = SemiSortedCodec<RuntimeSemiSortedGeometry>(layout);
        break;
      case Kind::kSlotBySlot:
        slot_by_slot_ = SlotBySlotCodec(layout);
        break;
    }
  }

  int slots() const { return slots_; }

  CUCKOO_ALWAYS_INLINE uint64_t MatchBits(const uint8_t* data, uint32_t bucket,
                                          uint32_t fingerprint) const {
    return Dispatch([&](const auto& codec) -> uint64_t {
      return codec.MatchBits(data, bucket, fingerprint);
    });
  }
  CUCKOO_ALWAYS_INLINE bool Contains(const uint8_t* data, uint32_t bucket,
                                     uint32_t fingerprint) const {
    return MatchBits(data, bucket, fingerprint) != 0;
  }
  int Count(const uint8_t* data, uint32_t bucket, uint32_t fingerprint) const {
    return Dispatch([&](const auto& codec) {
      return codec.Count(data, bucket, fingerprint);
    });
  }
  int Occupancy(const uint8_t* data, uint32_t bucket) const {
    return Dispatch(
        [&](const auto& codec) { return codec.Occupancy(data, bucket); });
  }
  void Load(const uint8_t* data, uint32_t bucket, uint32_t* out) const {
    Dispatch([&](const auto& codec) { codec.Load(data, bucket, out); });
  }
  bool Replace(uint8_t* data, uint32_t bucket, uint32_t from,
               uint32_t to) const {
    return Dispatch([&](const auto& codec) {
      return codec.Replace(data, bucket, from, to);
    });
  }
  uint32_t Swap(uint8_t* data, uint32_t bucket, int slot,
                uint32_t fingerprint) const {
    return Dispatch([&](const auto& codec) {
      return codec.Swap(data, bucket, slot, fingerprint);
    });
  }
  void Store(uint8_t* data, uint32_t bucket, const uint32_t* in) const {
    Dispatch([&](const auto& codec) { codec.Store(data, bucket, in); });
  }
  bool HasValidCode(const uint8_t* data, uint32_t bucket) const {
    return Dispatch(
        [&](const auto& codec) { return codec.HasValidCode(data, bucket); });
  }

 private:
  enum class Kind : uint8_t { kPlainWord, kSemiSorted, kSlotBySlot };
  static Kind KindOf(const BucketLayout& layout) {
    if (layout.semi_sorted) {
      return layout.fingerprint_bits <= 18 ? Kind::kSemiSorted
                                           : Kind::kSlotBySlot;
    }
    return bits::FieldFitsOneLoad(layout.BitsPerBucket()) ? Kind::kPlainWord
                                                          : Kind::kSlotBySlot;
  }
  // Every codec's operation has the slot-by-slot codec's result type.
  template <typename Operation>
  CUCKOO_ALWAYS_INLINE std::invoke_result_t<Operation&, const SlotBySlotCodec&>
  Dispatch(Operation&& operation) const {
    switch (kind_) {
      case Kind::kPlainWord:
        return operation(plain_);
      case Kind::kSemiSorted:
        return operation(semi_sorted_);
      default:
        return operation(slot_by_slot_);
    }
  }

  Kind kind_;
  int slots_;
  PlainWordCodec<RuntimePlainGeometry> plain_;
  SemiSortedCodec<RuntimeSemiSortedGeometry> semi_sorted_;
  SlotBySlotCodec slot_by_slot_;
};

// The layouts with a compiled codec that the filters use: plain 4-slot
// buckets of 8, 12 and 16 bits (the dynamic filter's usual choices), plain
// 2-slot buckets of 13 bits (the CF module's default: RedisBloom's bucket
// size 2 and 8 bits, with 5 bits reserved for growth), and semi-sorted
// 4-slot buckets of 5 to 16 bits (the filter policy's choices up to 17 bits
// per key). Calls visit(Bucket{}) with the codec of `layout` and
// returns true, or returns false when it has none. Each filter or reader
// makes this choice once, so no operation branches on its layout.
template <typename Visit>
bool VisitCompiledBucket(const BucketLayout& layout, Visit&& visit) {
  bool found = false;
  auto try_one = [&](auto bucket) {
    if (!found && decltype(bucket)::Matches(layout)) {
      found = true;
      visit(bucket);
    }
  };
  try_one(CompiledPlainCodec<4, 8>{});
  try_one(CompiledPlainCodec<4, 12>{});
  try_one(CompiledPlainCodec<4, 16>{});
  try_one(CompiledPlainCodec<2, 13>{});
  try_one(CompiledSemiSortedCodec<5>{});
  try_one(CompiledSemiSortedCodec<6>{});
  try_one(CompiledSemiSortedCodec<7>{});
  try_one(CompiledSemiSortedCodec<8>{});
  try_one(CompiledSemiSortedCodec<9>{});
  try_one(CompiledSemiSortedCodec<10>{});
  try_one(CompiledSemiSortedCodec<11>{});
  try_one(CompiledSemiSortedCodec<12>{});
  try_one(CompiledSemiSortedCodec<13>{});
  try_one(CompiledSemiSortedCodec<14>{});
  try_one(CompiledSemiSortedCodec<15>{});
  try_one(CompiledSemiSortedCodec<16>{});
  return found;
}

}  // namespace cuckoo
