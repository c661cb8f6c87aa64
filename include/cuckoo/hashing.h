// Key hashing and partial-key cuckoo hashing: how one 64-bit key hash becomes
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

// XXH_INLINE_ALL compiles XXH3 into the caller (same algorithm and output as
// libxxhash), so the hot lookup path makes no library call.
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
// xxhash.h picks its kernel for inputs over 240 bytes from the target flags:
// AVX-512 whenever __AVX512F__ is set, as under -march=native on such a CPU.
// GCC 12's avx512fintrin.h then fails -Werror=maybe-uninitialized inside
// that kernel (GCC bug 105593), so AVX-512 targets use the AVX2 kernel, which
// they all have. Every kernel computes the same hash; shorter keys use none.
#if !defined(XXH_VECTOR) && defined(__AVX512F__)
#define XXH_VECTOR XXH_AVX2
#endif
#include <xxhash.h>
#if XXH_VERSION_NUMBER < 800
#error \
    "rocksdb-cuckoo needs xxHash 0.8.0 or later: XXH3's output changed before"
#endif

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace cuckoo {

// The key hash used by this project: XXH3-64 with seed 0. Frozen.
inline uint64_t HashKey(const void* data, size_t size) {
  return XXH3_64bits(data, size);
}

// Maps a uniform 32-bit value to [0, range) without division.
inline uint32_t FastRange32(uint32_t value, uint32_t range) {
  return static_cast<uint32_t>((static_cast<uint64_t>(value) * range) >> 32);
}

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
class CuckooHashing {
 public:
  // num_buckets must be even and at least 2; fingerprint_bits in [4, 32].
  // Callers validate; the hot paths below assume it.
  CuckooHashing(uint32_t num_buckets, int fingerprint_bits)
      : num_buckets_(num_buckets),
        max_fingerprint_(fingerprint_bits >= 32
                             ? 0xFFFFFFFFu
                             : (uint32_t{1} << fingerprint_bits) - 1) {}

  uint32_t num_buckets() const { return num_buckets_; }
  uint32_t max_fingerprint() const { return max_fingerprint_; }

  uint32_t PrimaryBucket(uint64_t hash) const {
    return FastRange32(static_cast<uint32_t>(hash >> 32), num_buckets_);
  }

  uint32_t Fingerprint(uint64_t hash) const {
    return 1 + FastRange32(static_cast<uint32_t>(hash), max_fingerprint_);
  }

  // The other bucket of a fingerprint stored in `bucket`. An involution that
  // never returns `bucket` itself (see the comment at the top of the file).
  uint32_t AltBucket(uint32_t bucket, uint32_t fingerprint) const {
    // Multiplicative mixing: the high bits of fp * odd constant are well
    // spread, and FastRange32 uses the high bits.
    uint32_t target = FastRange32(fingerprint * 0x9E3779B1u, num_buckets_) | 1u;
    return target >= bucket ? target - bucket : target - bucket + num_buckets_;
  }

  KeyPosition Locate(uint64_t hash) const {
    const uint32_t bucket = PrimaryBucket(hash);
    const uint32_t fingerprint = Fingerprint(hash);
    return KeyPosition{bucket, AltBucket(bucket, fingerprint), fingerprint};
  }

 private:
  uint32_t num_buckets_;
  uint32_t max_fingerprint_;
};

}  // namespace cuckoo
