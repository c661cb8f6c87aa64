// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Partial-key cuckoo hashing: how one 64-bit key hash (key_hash.h) becomes
// a primary bucket, a fingerprint, and an alternate bucket, for any even
// bucket count. Everything here is part of the on-disk format: changing a
// constant changes which bucket a key lives in, so golden-value tests pin it.
//
// Theory
// ------
// A cuckoo filter stores for each key a short fingerprint fp in one of two
// buckets i1, i2. Lookups and moves must be able to find the other bucket
// knowing only (bucket, fp), because the key itself is gone: "partial-key
// cuckoo hashing" (Fan et al., CoNEXT 2014). The map alt(i, fp) must
// therefore be an involution: alt(alt(i, fp), fp) == i.
//
// The common form alt(i, fp) = (i XOR h(fp)) mod m is an involution only when
// m is a power of two; with any other m a key can be moved to a bucket from
// which it cannot come back, and a later lookup misses it (a false negative).
// Rounding m up to a power of two instead wastes up to half the space.
//
// We use subtraction modulo m instead:
//
//     alt(i, fp) = (t(fp) - i) mod m,   t(fp) an odd number in [0, m).
//
// It is an involution for every m: t - (t - i) = i. Requiring m to be even
// and t(fp) odd adds one more property: alt(i, fp) != i, because
// alt(i) == i would need t == 2i (mod m), and an odd number is never
// congruent to an even one modulo an even m. So every key always has two
// distinct candidate buckets, which keeps both the load threshold and the
// false-positive analysis of the paper valid.
//
// The 64-bit key hash h is split into two independent halves:
//   * primary bucket i1 = fastrange(h >> 32, m) (Lemire's multiply-shift
//     reduction, uniform for any m and monotone in the high bits, so sorting
//     hashes also sorts them by primary bucket);
//   * fingerprint fp = 1 + fastrange(h & 0xffffffff, 2^f - 1), uniform in
//     [1, 2^f - 1]. Zero is reserved for "empty slot".
// A lookup for an absent key compares its fingerprint with at most 2b stored
// ones, each equal with probability 1 / (2^f - 1), which gives the classic
// false-positive rate 1 - (1 - 1/(2^f - 1))^(2 b alpha) ~ 2 b alpha / 2^f for
// load factor alpha.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cuckoo/compiler.h"
#include "cuckoo/key_hash.h"

namespace cuckoo {

// Smallest and largest fingerprint widths supported, in bits.
inline constexpr int kMinFingerprintBits = 4;
inline constexpr int kMaxFingerprintBits = 32;
// Bucket counts are even (see above) and must fit in 32 bits.
inline constexpr uint64_t kMaxNumBuckets = 0xFFFFFFFEull;

// Rounds a bucket count up to the nearest valid one (even, at least 2).
inline uint64_t ValidBucketCount(uint64_t wanted) {
  // Checked before rounding up, which would wrap 2^64 - 1 around to 0. The
  // maximum is even, so a count within it stays within it when rounded up.
  if (wanted > kMaxNumBuckets) {
    throw std::length_error("cuckoo filter: " + std::to_string(wanted) +
                            " buckets exceed the maximum of " +
                            std::to_string(kMaxNumBuckets));
  }
  return wanted < 2 ? 2 : wanted + (wanted & 1);
}

// Where a key lives: its fingerprint and its two candidate buckets.
struct KeyPosition {
  uint32_t bucket;     // primary
  uint32_t alternate;  // AltBucket(bucket, fingerprint)
  uint32_t fingerprint;
};

// The hash-to-position mapping for one table geometry.
//
// Compiled forms
// --------------
// Locate costs three multiply-shift reductions, a multiply and a compare
// for any even m. LocateCompiled<f, kPowerOfTwo> gives the same positions
// with the fingerprint width a constant, and, when m = 2^k, with the index
// arithmetic of a power-of-two table: fastrange(x, 2^k) = x >> (32 - k)
// exactly, and (t - i) mod 2^k is a mask. Nothing about the mapping changes
// (the tests compare the two forms): a table of 2^k buckets costs shifts and
// a mask, as the XOR mapping of implementations limited to such tables does,
// and either form reads it. Tables choose the form once (VisitTable in
// table_types.h), not per key.
class CuckooHashing {
 public:
  // num_buckets must be even and at least 2; fingerprint_bits in [4, 32].
  // Callers validate; the hot paths below assume it.
  CuckooHashing(uint32_t num_buckets, int fingerprint_bits)
      : num_buckets_(num_buckets),
        max_fingerprint_(fingerprint_bits >= 32
                             ? 0xFFFFFFFFu
                             : (uint32_t{1} << fingerprint_bits) - 1),
        index_shift_(IsPowerOfTwo(num_buckets) ? 32 - __builtin_ctz(num_buckets)
                                               : 0) {}

  uint32_t num_buckets() const { return num_buckets_; }
  uint32_t max_fingerprint() const { return max_fingerprint_; }
  bool power_of_two() const { return index_shift_ != 0; }
  int fingerprint_bits() const { return 32 - __builtin_clz(max_fingerprint_); }

  static bool IsPowerOfTwo(uint32_t value) {
    return value != 0 && (value & (value - 1)) == 0;
  }

  CUCKOO_ALWAYS_INLINE uint32_t PrimaryBucket(uint64_t hash) const {
    return FastRange32(static_cast<uint32_t>(hash >> 32), num_buckets_);
  }

  CUCKOO_ALWAYS_INLINE uint32_t Fingerprint(uint64_t hash) const {
    return 1 + FastRange32(static_cast<uint32_t>(hash), max_fingerprint_);
  }

  // The other bucket of a fingerprint stored in `bucket`. An involution that
  // never returns `bucket` itself (see the comment at the top of the file).
  CUCKOO_ALWAYS_INLINE uint32_t AltBucket(uint32_t bucket,
                                          uint32_t fingerprint) const {
    // Multiplicative mixing: the high bits of fp * odd constant are well
    // spread, and FastRange32 uses the high bits.
    uint32_t target = FastRange32(fingerprint * 0x9E3779B1u, num_buckets_) | 1u;
    return target >= bucket ? target - bucket : target - bucket + num_buckets_;
  }

  CUCKOO_ALWAYS_INLINE KeyPosition Locate(uint64_t hash) const {
    const uint32_t bucket = PrimaryBucket(hash);
    const uint32_t fingerprint = Fingerprint(hash);
    return KeyPosition{bucket, AltBucket(bucket, fingerprint), fingerprint};
  }

  // Locate, for a mapping with kFingerprintBits-bit fingerprints and, when
  // kPowerOfTwo, a power-of-two bucket count (see "Compiled forms").
  template <int kFingerprintBits, bool kPowerOfTwo>
  CUCKOO_ALWAYS_INLINE KeyPosition LocateCompiled(uint64_t hash) const {
    static_assert(kFingerprintBits >= kMinFingerprintBits &&
                  kFingerprintBits < 32);
    constexpr uint32_t kMaxFingerprint = (uint32_t{1} << kFingerprintBits) - 1;
    const uint32_t fingerprint =
        1 + FastRange32(static_cast<uint32_t>(hash), kMaxFingerprint);
    const uint32_t bucket =
        kPowerOfTwo ? static_cast<uint32_t>(hash >> (32 + index_shift_))
                    : PrimaryBucket(hash);
    return KeyPosition{bucket,
                       AltBucketCompiled<kPowerOfTwo>(bucket, fingerprint),
                       fingerprint};
  }

  // AltBucket, for a power-of-two bucket count when kPowerOfTwo.
  template <bool kPowerOfTwo>
  CUCKOO_ALWAYS_INLINE uint32_t AltBucketCompiled(uint32_t bucket,
                                                  uint32_t fingerprint) const {
    if constexpr (kPowerOfTwo) {
      const uint32_t target =
          ((fingerprint * 0x9E3779B1u) >> index_shift_) | 1u;
      return (target - bucket) & (num_buckets_ - 1);
    } else {
      return AltBucket(bucket, fingerprint);
    }
  }

 private:
  uint32_t num_buckets_;
  uint32_t max_fingerprint_;
  // 32 - log2(num_buckets) when num_buckets is a power of two, else 0.
  int index_shift_;
};

// The hash-to-position mapping of a table that doubles in place (the
// dynamic filter's growth; the theory is under "Growth" in cuckoo_filter.h).
//
// A growable filter reserves r bits of the key hash in every slot, next to
// the key's f-bit fingerprint F, and each doubling of the table moves one of
// them from the slot into the bucket index. After s of the r bits have moved
// (s doublings; growing by 2^e moves e at once) a key's position is
//
//   R      = the top r bits of Remix(hash), independent of F and the bucket
//   low    = the top s bits of R, kept = the other r - s bits
//   bucket = base_bucket << s | low,  alternate = base_alternate << s | low
//   value  = F | kept << f              (the slot's content, f + r - s bits)
//
// where base_bucket, base_alternate and F are CuckooHashing's for the base
// bucket count m0. So AltBucket acts on the high part only and is an
// involution that never returns its argument, as the base's is, and a slot
// value in bucket j moves on doubling to bucket j << 1 | (top bit of value),
// keeping the value's other bits: whichever of its two buckets it was in,
// that is where Locate at the next level puts it. With r = 0 this is exactly
// CuckooHashing (m0, f): a filter that cannot grow keeps the original
// mapping. Like CuckooHashing, this is part of the serialized format.
class GrowableHashing {
 public:
  // base_buckets even and >= 2, key_fingerprint_bits in [4, 32], reserve_bits
  // <= 32 - key_fingerprint_bits, moved_bits <= reserve_bits, and
  // base_buckets << moved_bits within kMaxNumBuckets. Callers validate.
  GrowableHashing(uint32_t base_buckets, int key_fingerprint_bits,
                  int reserve_bits, int moved_bits)
      : base_(base_buckets, key_fingerprint_bits),
        key_fingerprint_bits_(key_fingerprint_bits),
        reserve_bits_(reserve_bits),
        moved_bits_(moved_bits),
        kept_bits_(reserve_bits - moved_bits),
        num_buckets_(base_buckets << moved_bits),
        max_fingerprint_(
            static_cast<uint32_t>(Mask64(key_fingerprint_bits + kept_bits_))) {}

  uint32_t num_buckets() const { return num_buckets_; }
  uint32_t base_buckets() const { return base_.num_buckets(); }
  // The largest slot value (slot_bits() ones).
  uint32_t max_fingerprint() const { return max_fingerprint_; }
  int reserve_bits() const { return reserve_bits_; }
  int moved_bits() const { return moved_bits_; }
  // The mapping of the base bucket count; with no reserve bits it is this
  // mapping's too.
  const CuckooHashing& base() const { return base_; }
  // Width of a slot value: the key fingerprint and the reserve bits that
  // have not moved into the bucket index yet.
  int slot_bits() const { return key_fingerprint_bits_ + kept_bits_; }

  // The mapping after `bits` more reserve bits have moved into the index.
  GrowableHashing AfterMoving(int bits) const {
    return GrowableHashing(base_.num_buckets(), key_fingerprint_bits_,
                           reserve_bits_, moved_bits_ + bits);
  }

  // The key fingerprint F of a slot value: nonzero for every stored value.
  uint32_t KeyFingerprint(uint32_t value) const {
    return value & base_.max_fingerprint();
  }

  uint32_t AltBucket(uint32_t bucket, uint32_t value) const {
    if (reserve_bits_ == 0) return base_.AltBucket(bucket, value);
    const uint32_t low = bucket & LowMask();
    return base_.AltBucket(bucket >> moved_bits_, KeyFingerprint(value))
               << moved_bits_ |
           low;
  }

  CUCKOO_ALWAYS_INLINE KeyPosition Locate(uint64_t hash) const {
    const KeyPosition base = base_.Locate(hash);
    if (reserve_bits_ == 0) return base;
    const uint32_t reserve =
        static_cast<uint32_t>(Remix(hash) >> (64 - reserve_bits_));
    const uint32_t low = reserve >> kept_bits_;
    const uint32_t kept = reserve & static_cast<uint32_t>(Mask64(kept_bits_));
    return KeyPosition{base.bucket << moved_bits_ | low,
                       base.alternate << moved_bits_ | low,
                       base.fingerprint | kept << key_fingerprint_bits_};
  }

  // Where a value stored in `bucket` goes when `bits` more reserve bits move
  // into the index: the value's top `bits` bits are appended to the bucket
  // index and dropped from the value. Needs bits <= reserve_bits() -
  // moved_bits().
  struct SlotMove {
    uint32_t bucket;
    uint32_t value;
  };
  SlotMove MoveSlot(uint32_t bucket, uint32_t value, int bits) const {
    const int remaining = slot_bits() - bits;
    return SlotMove{bucket << bits | value >> remaining,
                    value & static_cast<uint32_t>(Mask64(remaining))};
  }

 private:
  static uint64_t Mask64(int width) {
    return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  }
  uint32_t LowMask() const {
    return static_cast<uint32_t>(Mask64(moved_bits_));
  }
  // SplitMix64's finalizer: its top bits are independent of the hash's
  // halves that pick the base bucket and F.
  static uint64_t Remix(uint64_t hash) { return Mix13(hash); }

  CuckooHashing base_;
  int key_fingerprint_bits_;
  int reserve_bits_;
  int moved_bits_;
  int kept_bits_;
  uint32_t num_buckets_;
  uint32_t max_fingerprint_;
};

}  // namespace cuckoo
