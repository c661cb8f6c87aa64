// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Little-endian bit strings and the word-parallel lane tests that every
// bucket codec is built from: unaligned 8-byte loads and stores (and 4-byte
// loads) in a fixed byte order, reads and writes of fields up to 57 bits at
// any bit offset, the copy of a value into every lane, and the zero-lane
// tests that compare every slot of a bucket at once.
//
// Bit k of a bit string is bit k % 8 of byte k / 8, on every machine. A
// field is read with one unaligned 8-byte load, so a buffer holding a bit
// string is followed by 7 readable bytes (kTablePaddingBytes in
// bucket_layout.h): a field starting in its last byte still has 7 bytes
// after it.
#pragma once

#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "cuckoo/compiler.h"

namespace cuckoo {
namespace bits {

inline constexpr uint64_t Mask(int width) {
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

// Whether one 8-byte load reads a whole field of `width` bits wherever a
// field of that width can start: fields of a string of equal fields start
// at multiples of gcd(width, 8) bits, so at most 8 - gcd(width, 8) bits into
// their first byte. True up to 57 bits, and for 58, 60 and 64.
inline constexpr bool FieldFitsOneLoad(int width) {
  return 8 - std::gcd(width, 8) + width <= 64;
}

// A 2-, 4- or 8-byte word in little-endian byte order, on any host.
template <typename Word>
CUCKOO_ALWAYS_INLINE Word LittleEndian(Word value) {
  static_assert(std::is_same_v<Word, uint16_t> ||
                std::is_same_v<Word, uint32_t> ||
                std::is_same_v<Word, uint64_t>);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  if constexpr (sizeof(Word) == 8) {
    value = __builtin_bswap64(value);
  } else if constexpr (sizeof(Word) == 4) {
    value = __builtin_bswap32(value);
  } else {
    value = __builtin_bswap16(value);
  }
#endif
  return value;
}

// The word at p, little-endian on every host.
template <typename Word>
CUCKOO_ALWAYS_INLINE Word LoadLittleEndian(const uint8_t* p) {
  Word value;
  std::memcpy(&value, p, sizeof(value));
  return LittleEndian(value);
}
CUCKOO_ALWAYS_INLINE uint64_t LoadLittleEndian64(const uint8_t* p) {
  return LoadLittleEndian<uint64_t>(p);
}

template <typename Word>
CUCKOO_ALWAYS_INLINE void StoreLittleEndian(uint8_t* p, Word value) {
  value = LittleEndian(value);
  std::memcpy(p, &value, sizeof(value));
}
CUCKOO_ALWAYS_INLINE void StoreLittleEndian64(uint8_t* p, uint64_t value) {
  StoreLittleEndian<uint64_t>(p, value);
}

// The 8 bytes holding bit `position` onward, shifted so that bit `position`
// is bit 0: 57 to 64 valid bits, the rest of the load above them.
CUCKOO_ALWAYS_INLINE uint64_t LoadAt(const uint8_t* data, uint64_t position) {
  return LoadLittleEndian64(data + (position >> 3)) >> (position & 7);
}

// LoadAt(data, position) for field `index` of a string of equal fields
// starting at bit `position`. kWholeBytes is the fields' width in bytes when
// it is whole and known at compile time, else 0: the load then starts at
// byte index * kWholeBytes, which GCC derives from the bit position and
// clang does not.
template <int kWholeBytes>
CUCKOO_ALWAYS_INLINE uint64_t LoadFieldAt(const uint8_t* data, uint32_t index,
                                          uint64_t position) {
  if constexpr (kWholeBytes != 0) {
    return LoadLittleEndian64(data + uint64_t{index} * kWholeBytes);
  } else {
    return LoadAt(data, position);
  }
}

// Reads `width` <= 57 bits starting at bit `position` (or up to 64 where
// FieldFitsOneLoad says the position allows it).
CUCKOO_ALWAYS_INLINE uint64_t Read(const uint8_t* data, uint64_t position,
                                   int width) {
  return LoadAt(data, position) & Mask(width);
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
CUCKOO_ALWAYS_INLINE void Flip(uint8_t* data, uint64_t position,
                               uint64_t change) {
  uint8_t* p = data + (position >> 3);
  StoreLittleEndian64(p, LoadLittleEndian64(p) ^ (change << (position & 7)));
}

// A word of `lanes` lanes of `width` bits with bit 0 of each set: the
// multiplier that copies a value into every lane, and the `ones` of the
// lane tests below (whose `tops` are ones << (width - 1)).
inline constexpr uint64_t LaneOnes(int lanes, int width) {
  uint64_t ones = 0;
  for (int lane = 0; lane < lanes; ++lane) {
    ones |= uint64_t{1} << (lane * width);
  }
  return ones;
}

// `value` (which fits in one lane) copied into every lane of `ones`. A
// compiler turns a multiply by a constant with few bits set into shifts and
// adds: for 12- and 16-bit lanes, four or five instructions where one
// multiply does, on paths whose cost is their instruction count. A
// constant that fits an instruction's 32-bit immediate is left to the
// compiler, which multiplies by it directly; a larger one goes through an
// empty asm, which hides its value and leaves one multiply. A value known
// only at run time is multiplied as it is.
CUCKOO_ALWAYS_INLINE uint64_t Broadcast(uint64_t value, uint64_t ones) {
  if (__builtin_constant_p(ones) && ones > 0x7FFFFFFFu) {
    __asm__("" : "+r"(ones));
  }
  return value * ones;
}

// ZeroLanes: the top bit of every zero lane of `word`, for lanes described
// by their bottom (`ones`) and top (`tops`) bits. Exact: adding 2^(w-1) - 1 to
// the low w - 1 bits of a lane sets its top bit unless they are all zero, and
// never carries into the next lane.
//
// ZeroLaneTops: the same without the last mask, so at the lanes' tops the
// same bits, and anything elsewhere. For a caller that masks the result by some
// of the tops anyway (the semi-sorted match, by the tops of the slots that
// hold the query's nibble), one operation fewer.
CUCKOO_ALWAYS_INLINE uint64_t ZeroLaneTops(uint64_t word, uint64_t ones,
                                           uint64_t tops) {
  const uint64_t low_mask = tops - ones;
  return ~(((word & low_mask) + low_mask) | word);
}
CUCKOO_ALWAYS_INLINE uint64_t ZeroLanes(uint64_t word, uint64_t ones,
                                        uint64_t tops) {
  return ZeroLaneTops(word, ones, tops) & tops;
}

// Nonzero exactly when some lane of `word` is zero: one operation fewer than
// ZeroLanes, and bits above the top lane may hold anything. If no lane is
// zero, subtracting `ones` borrows nowhere, and a lane's top bit is set in
// v - 1 only when v > 2^(w-1), where ~v clears it. If some lane is zero, the
// lowest one becomes all ones with nothing borrowed into it, and its top bit
// survives ~v. Lanes above a zero one may be flagged falsely (a borrow),
// which is why this only answers whether one exists; borrows go upward, so
// the bits above the top lane change nothing.
CUCKOO_ALWAYS_INLINE uint64_t AnyZeroLane(uint64_t word, uint64_t ones,
                                          uint64_t tops) {
  return (word - ones) & ~word & tops;
}

}  // namespace bits
}  // namespace cuckoo
