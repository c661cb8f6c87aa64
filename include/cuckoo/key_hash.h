// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Key hashes: how a key becomes the 64-bit hash every filter of the project
// takes (HashKey, XXH3; HashInteger for integer keys), the names a
// serialized filter records for them (KeyHasher), and the mixers and range
// reductions that turn a hash into positions. The hashes are frozen: they
// are part of every filter written, so golden-value tests pin them.
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
#include <string_view>

#include "cuckoo/compiler.h"

namespace cuckoo {

// The key hash used by this project: XXH3-64 with seed 0. Frozen.
CUCKOO_ALWAYS_INLINE uint64_t HashKey(const void* data, size_t size) {
  return XXH3_64bits(data, size);
}

// HashKey of a 64-bit integer key's 8 little-endian bytes, the same value on
// every host. XXH3 is compiled into the caller for this one length (flatten):
// the call of XXH3_64bits that a variable length leaves out of line, with its
// dispatch on the length, costs more than a cuckoo filter's lookup.
__attribute__((flatten)) inline uint64_t HashKey(uint64_t key) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  key = __builtin_bswap64(key);
#endif
  return XXH3_64bits(&key, sizeof(key));
}

// Integer keys
// ------------
// HashInteger is a fast hash for 64-bit integer keys (ids, offsets,
// counters), for callers who do not need HashKey's agreement with the hash
// of the key's bytes:
//
//     HashInteger(x) = Mix13(x + gamma),   gamma = 0x9E3779B97F4A7C15,
//     Mix13(z) = xs31(m2 * xs27(m1 * xs30(z))),  xsK(z) = z ^ (z >> K),
//
// which is SplitMix64's output function (Steele, Lea and Flood, OOPSLA 2014)
// on the state x + gamma. Mix13 is the multiply-xorshift finalizer of
// MurmurHash3's shape with the constants Stafford found to give the least
// avalanche bias. What a filter needs of it, and what the tests check:
//   * It is a bijection of 64-bit values (each step is invertible: the
//     multipliers are odd, an xorshift by K >= 1 undoes itself in steps), so
//     two distinct keys never share a hash; they meet in a filter only
//     through the bucket and fingerprint reductions, as two random hashes
//     do.
//   * Avalanche: flipping any input bit flips each output bit with a
//     probability close to 1/2, for random and for sequential inputs. The
//     bucket comes from the high half of the hash and the fingerprint from
//     the low half, so both must depend on every key bit.
//   * Keys in arithmetic progressions (sequential ids, strides of a power of
//     two) fill a table and give the false-positive rate of random keys.
// What it is not: keyed, or resistant to keys chosen by someone who knows
// it; neither is HashKey with its fixed seed. It costs one add, two
// multiplies and three shifts, with no loads, where XXH3 of 8 bytes mixes
// in secret-key words. Adding gamma first moves the finalizer's fixed point
// at 0 away from the key 0.
//
// Which hasher filled a filter matters as much as its layout: probed with
// another hash, a filter answers at random and forgets every key. The
// dynamic filter's serialization records it (KeyHasher).

// The hash functions a filter may be filled with.
enum class KeyHasher : uint8_t {
  kXxh3 = 0,     // HashKey: XXH3-64 of the key's bytes, seed 0
  kInteger = 1,  // HashInteger: 64-bit integer keys
};
inline constexpr uint8_t kMaxKeyHasherId = 1;

inline const char* KeyHasherName(KeyHasher hasher) {
  return hasher == KeyHasher::kInteger ? "integer" : "xxh3";
}

// Stafford's Mix13, SplitMix64's finalizer.
CUCKOO_ALWAYS_INLINE uint64_t Mix13(uint64_t value) {
  value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ull;
  value = (value ^ (value >> 27)) * 0x94D049BB133111EBull;
  return value ^ (value >> 31);
}

// The integer-key hash (see "Integer keys"). Frozen: it is part of every
// filter serialized with KeyHasher::kInteger.
CUCKOO_ALWAYS_INLINE uint64_t HashInteger(uint64_t key) {
  return Mix13(key + 0x9E3779B97F4A7C15ull);
}

// The hashers as types, for code that takes its hash function as a template
// parameter: each maps a key to a 64-bit hash and names its KeyHasher.
struct Xxh3Hasher {
  static constexpr KeyHasher kId = KeyHasher::kXxh3;
  uint64_t operator()(uint64_t key) const { return HashKey(key); }
  uint64_t operator()(std::string_view key) const {
    return HashKey(key.data(), key.size());
  }
};
struct IntegerHasher {
  static constexpr KeyHasher kId = KeyHasher::kInteger;
  uint64_t operator()(uint64_t key) const { return HashInteger(key); }
};

// Maps a uniform 32-bit value to [0, range) without division.
inline uint32_t FastRange32(uint32_t value, uint32_t range) {
  return static_cast<uint32_t>((static_cast<uint64_t>(value) * range) >> 32);
}

// MurmurHash3's 64-bit finalizer: a bijection with full avalanche.
inline uint64_t Mix64(uint64_t value) {
  value ^= value >> 33;
  value *= 0xff51afd7ed558ccdULL;
  value ^= value >> 33;
  value *= 0xc4ceb9fe1a85ec53ULL;
  value ^= value >> 33;
  return value;
}

// Maps a uniform 64-bit value to [0, range) as floor(value * range / 2^64).
inline uint64_t FastRange64(uint64_t value, uint64_t range) {
#if defined(__SIZEOF_INT128__)
  __extension__ typedef unsigned __int128 Uint128;
  return static_cast<uint64_t>((static_cast<Uint128>(value) * range) >> 64);
#else
  const uint64_t value_low = value & 0xffffffffULL;
  const uint64_t value_high = value >> 32;
  const uint64_t range_low = range & 0xffffffffULL;
  const uint64_t range_high = range >> 32;
  const uint64_t low_low = value_low * range_low;
  const uint64_t high_low = value_high * range_low;
  const uint64_t low_high = value_low * range_high;
  const uint64_t high_high = value_high * range_high;
  const uint64_t middle =
      (low_low >> 32) + (high_low & 0xffffffffULL) + low_high;
  return high_high + (high_low >> 32) + (middle >> 32);
#endif
}

}  // namespace cuckoo
