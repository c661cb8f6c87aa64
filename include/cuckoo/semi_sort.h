// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Semi-sorting of 4-slot buckets (Fan et al., CoNEXT 2014, section 5.2): the
// code that stores the four high nibbles of a bucket's fingerprints in 12 bits
// instead of 16, saving one bit per slot.
//
// Theory
// ------
// The order of fingerprints inside a bucket carries no information: a lookup
// compares against all of them. So a bucket can be stored sorted, and a sorted
// bucket is cheaper to store than an arbitrary one. Take the top 4 bits of each
// of the 4 fingerprints (the "nibbles"; an empty slot is fingerprint 0, so its
// nibble is 0). Sorted, they form a multiset of 4 values from 16, and there are
// C(16 + 4 - 1, 4) = 3876 such multisets, fewer than 2^12 = 4096. So the four
// nibbles fit in a 12-bit code, and the bucket costs 12 + 4 (f - 4) = 4 (f - 1)
// bits for four f-bit fingerprints. The remaining f - 4 low bits of each
// fingerprint are stored in the order of their sorted nibbles.
//
// Ranking: a sorted tuple n0 <= n1 <= n2 <= n3 becomes the strictly increasing
// tuple (n0, n1 + 1, n2 + 2, n3 + 3) over [0, 19), whose rank in the
// combinatorial number system is C(n0,1) + C(n1+1,2) + C(n2+2,3) + C(n3+3,4),
// a bijection onto [0, 3876). Encoding computes that sum from a small binomial
// table; decoding is one lookup in a 4096-entry table of packed nibbles (8 KiB,
// built at compile time). Codes 3876..4095 are never written; they decode to
// all-15 nibbles so that a corrupt code read from untrusted memory is harmless.
//
// A lookup needs less than the nibbles: only which slots hold the query's
// nibble q. A second table answers that in one lookup: for each code, 16
// masks of 4 bits, bit 4 q + s set when slot s holds q (32 KiB, built from
// the first, so corrupt codes answer as their all-15 nibbles do). It saves
// the comparison of four lanes and the gathering of their results.
//
// An insert into a bucket with an empty slot needs only the new code: the
// empty slot's 0 sorts first, and the new nibbles are the other three with
// the new one among them. A third table gives that code for each code
// whose first nibble is 0 and each new nibble (128 KiB, 2 bytes for each of
// 16 x 4096 pairs), instead of rearranging the nibbles and ranking them
// again: the bucket's work after its load is what limits how many inserts
// one core overlaps on a table larger than the caches.
#pragma once

#include <array>
#include <cstdint>

namespace cuckoo {
namespace semi_sort {

inline constexpr int kCodeBits = 12;
inline constexpr uint32_t kNumCodes = 3876;
inline constexpr int kNibbleBits = 4;

namespace internal {

// Binomial coefficients C(n, k) for n < 19, k <= 4.
struct BinomialTable {
  uint16_t value[19][5];
};

constexpr BinomialTable MakeBinomialTable() {
  BinomialTable table{};
  for (int n = 0; n < 19; ++n) {
    table.value[n][0] = 1;
    for (int k = 1; k <= 4; ++k) {
      table.value[n][k] =
          n == 0 ? 0
                 : static_cast<uint16_t>(table.value[n - 1][k - 1] +
                                         table.value[n - 1][k]);
    }
  }
  return table;
}

inline constexpr BinomialTable kBinomial = MakeBinomialTable();

constexpr uint32_t RankSorted(uint32_t n0, uint32_t n1, uint32_t n2,
                              uint32_t n3) {
  return kBinomial.value[n0][1] + kBinomial.value[n1 + 1][2] +
         kBinomial.value[n2 + 2][3] + kBinomial.value[n3 + 3][4];
}

struct DecodeTable {
  // Packed nibbles: nibble s in bits [4s, 4s + 4), ascending.
  uint16_t packed[1u << kCodeBits];
};

constexpr DecodeTable MakeDecodeTable() {
  DecodeTable table{};
  for (uint32_t code = 0; code < (1u << kCodeBits); ++code) {
    table.packed[code] = 0xFFFF;
  }
  for (uint32_t n3 = 0; n3 < 16; ++n3) {
    for (uint32_t n2 = 0; n2 <= n3; ++n2) {
      for (uint32_t n1 = 0; n1 <= n2; ++n1) {
        for (uint32_t n0 = 0; n0 <= n1; ++n0) {
          table.packed[RankSorted(n0, n1, n2, n3)] =
              static_cast<uint16_t>(n0 | (n1 << 4) | (n2 << 8) | (n3 << 12));
        }
      }
    }
  }
  return table;
}

inline constexpr DecodeTable kDecode = MakeDecodeTable();

struct SlotsByNibbleTable {
  // Bit 4 q + s set when slot s of the code's decoded nibbles holds q.
  uint64_t masks[1u << kCodeBits];
};

constexpr SlotsByNibbleTable MakeSlotsByNibbleTable() {
  SlotsByNibbleTable table{};
  for (uint32_t code = 0; code < (1u << kCodeBits); ++code) {
    for (uint32_t slot = 0; slot < 4; ++slot) {
      const uint32_t nibble = (kDecode.packed[code] >> (4 * slot)) & 0xFu;
      table.masks[code] |= uint64_t{1} << (4 * nibble + slot);
    }
  }
  return table;
}

inline constexpr SlotsByNibbleTable kSlotsByNibble = MakeSlotsByNibbleTable();

struct CodeAfterInsertTable {
  // Entry 16 c + q: the code of code c's nibbles with the first (a 0)
  // dropped and q added; 0 where c's first nibble is not 0.
  uint16_t code[(1u << kCodeBits) * 16];
};

// Filled only where the first nibble is 0 (816 of the 4096 codes): a
// smaller constant to evaluate in every translation unit.
constexpr CodeAfterInsertTable MakeCodeAfterInsertTable() {
  CodeAfterInsertTable table{};
  for (uint32_t n3 = 0; n3 < 16; ++n3) {
    for (uint32_t n2 = 0; n2 <= n3; ++n2) {
      for (uint32_t n1 = 0; n1 <= n2; ++n1) {
        const uint32_t code = RankSorted(0, n1, n2, n3);
        for (uint32_t q = 0; q < 16; ++q) {
          const uint32_t new_code = q <= n1   ? RankSorted(q, n1, n2, n3)
                                    : q <= n2 ? RankSorted(n1, q, n2, n3)
                                    : q <= n3 ? RankSorted(n1, n2, q, n3)
                                              : RankSorted(n1, n2, n3, q);
          table.code[code * 16 + q] = static_cast<uint16_t>(new_code);
        }
      }
    }
  }
  return table;
}

inline constexpr CodeAfterInsertTable kCodeAfterInsert =
    MakeCodeAfterInsertTable();

}  // namespace internal

// The 12-bit code of four nibbles given in ascending order.
inline uint32_t EncodeSortedNibbles(uint32_t n0, uint32_t n1, uint32_t n2,
                                    uint32_t n3) {
  return internal::RankSorted(n0, n1, n2, n3);
}

// The four ascending nibbles of a code, packed 4 bits each (nibble s at bits
// [4s, 4s + 4)). Any 12-bit input is safe.
inline uint32_t DecodeNibbles(uint32_t code) {
  return internal::kDecode.packed[code & ((1u << kCodeBits) - 1)];
}

// The code of a bucket after an insert into its empty slot: code's nibbles,
// the first of which must be 0 (an empty slot sorts first), with that 0
// dropped and nibble & 15 added. One lookup in a 128 KiB table, for the
// insert's work after its bucket's load (see SemiSortedCodec's
// InsertByLanes).
inline uint32_t CodeAfterInsert(uint32_t code, uint32_t nibble) {
  return internal::kCodeAfterInsert
      .code[(code & ((1u << kCodeBits) - 1)) * 16 + (nibble & 0xFu)];
}

// The slots (bit s for slot s, in DecodeNibbles' order) whose nibble is
// nibble & 15, for a code: one lookup in a 32 KiB table.
inline uint32_t SlotsWithNibble(uint32_t code, uint32_t nibble) {
  return static_cast<uint32_t>(
             internal::kSlotsByNibble.masks[code & ((1u << kCodeBits) - 1)] >>
             (4 * (nibble & 0xFu))) &
         0xFu;
}

}  // namespace semi_sort
}  // namespace cuckoo
