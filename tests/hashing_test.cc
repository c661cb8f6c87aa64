// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Tests of the key hash, partial-key cuckoo hashing, semi-sort coding and the
// packed bucket table.
#include "cuckoo/hashing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cuckoo/bucket_table.h"
#include "cuckoo/semi_sort.h"
#include "cuckoo/table_types.h"
#include "test_util.h"

namespace cuckoo {
namespace {

using testing::HashStream;

TEST(CuckooHashingTest,
     AltBucketIsAnInvolutionWithoutFixedPointsForAnyEvenCount) {
  for (uint32_t num_buckets :
       {2u, 4u, 6u, 10u, 1000u, 1002u, 12346u, 65536u, 1048578u}) {
    for (int fingerprint_bits : {4, 8, 13, 32}) {
      CuckooHashing hashing(num_buckets, fingerprint_bits);
      HashStream stream(num_buckets * 31 + fingerprint_bits);
      for (int i = 0; i < 20000; ++i) {
        const uint64_t hash = stream.Next();
        const uint32_t bucket = hashing.PrimaryBucket(hash);
        const uint32_t fingerprint = hashing.Fingerprint(hash);
        ASSERT_LT(bucket, num_buckets);
        ASSERT_GE(fingerprint, 1u);
        ASSERT_LE(fingerprint, hashing.max_fingerprint());
        const uint32_t alt = hashing.AltBucket(bucket, fingerprint);
        ASSERT_LT(alt, num_buckets);
        ASSERT_NE(alt, bucket) << "m=" << num_buckets;
        ASSERT_EQ(hashing.AltBucket(alt, fingerprint), bucket)
            << "m=" << num_buckets << " fp=" << fingerprint;
      }
    }
  }
}

// LocateCompiled is Locate: with any even bucket count, and with the
// power-of-two arithmetic for 2^k buckets, at the edges of the hash range
// too.
template <int kFingerprintBits>
void ExpectCompiledLocateIsLocate() {
  for (uint32_t num_buckets : {2u, 4u, 6u, 1000u, 1024u, 1u << 18,
                               (1u << 18) + 2, 1u << 31, 0xFFFFFFFEu}) {
    const CuckooHashing hashing(num_buckets, kFingerprintBits);
    ASSERT_EQ(hashing.power_of_two(), CuckooHashing::IsPowerOfTwo(num_buckets));
    HashStream stream(num_buckets + kFingerprintBits);
    std::vector<uint64_t> hashes = {0, ~uint64_t{0}, 0xFFFFFFFF00000000ull,
                                    0x00000000FFFFFFFFull};
    for (int i = 0; i < 20000; ++i) hashes.push_back(stream.Next());
    for (uint64_t hash : hashes) {
      const KeyPosition expected = hashing.Locate(hash);
      const KeyPosition compiled =
          hashing.power_of_two()
              ? hashing.LocateCompiled<kFingerprintBits, true>(hash)
              : hashing.LocateCompiled<kFingerprintBits, false>(hash);
      ASSERT_EQ(compiled.bucket, expected.bucket) << num_buckets;
      ASSERT_EQ(compiled.alternate, expected.alternate) << num_buckets;
      ASSERT_EQ(compiled.fingerprint, expected.fingerprint);
      if (hashing.power_of_two()) {
        ASSERT_EQ(hashing.AltBucketCompiled<true>(expected.alternate,
                                                  expected.fingerprint),
                  expected.bucket);
      }
    }
  }
}

TEST(CuckooHashingTest, CompiledLocateIsLocate) {
  ExpectCompiledLocateIsLocate<5>();
  ExpectCompiledLocateIsLocate<8>();
  ExpectCompiledLocateIsLocate<12>();
  ExpectCompiledLocateIsLocate<13>();
  ExpectCompiledLocateIsLocate<16>();
}

TEST(CuckooHashingTest, IntegerKeysHashAsTheirLittleEndianBytes) {
  HashStream stream(64);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t key = stream.Next();
    uint8_t bytes[8];
    for (int b = 0; b < 8; ++b) bytes[b] = static_cast<uint8_t>(key >> (8 * b));
    ASSERT_EQ(HashKey(key), HashKey(bytes, sizeof(bytes)));
  }
  EXPECT_NE(HashKey(uint64_t{1}), HashKey(uint64_t{2}));
}

// HashInteger is SplitMix64's output function on the state key + gamma: the
// first value of the SplitMix64 stream seeded with the key.
TEST(IntegerHashTest, IsTheFirstOutputOfSplitMix64SeededWithTheKey) {
  std::vector<uint64_t> keys = {0, 1, ~uint64_t{0}};
  for (uint64_t key : HashStream(65).Take(1000)) keys.push_back(key);
  for (uint64_t key : keys) {
    ASSERT_EQ(HashInteger(key), HashStream(key).Next()) << key;
    ASSERT_EQ(IntegerHasher()(key), HashInteger(key));
    ASSERT_EQ(Xxh3Hasher()(key), HashKey(key));
  }
  EXPECT_EQ(Xxh3Hasher()(std::string_view("key")), HashKey("key", 3));
  EXPECT_NE(HashInteger(0), 0u) << "the key 0 is not the mixer's fixed point";
}

// The largest distance from 1/2, over every input bit i and output bit j,
// of the fraction of keys whose hash flips bit j when bit i of the key flips.
template <typename Hash>
double WorstAvalancheBias(const std::vector<uint64_t>& keys, Hash hash) {
  double worst = 0;
  std::vector<uint32_t> flips(64 * 64, 0);
  for (uint64_t key : keys) {
    const uint64_t base = hash(key);
    for (int i = 0; i < 64; ++i) {
      const uint64_t changed = base ^ hash(key ^ (uint64_t{1} << i));
      for (int j = 0; j < 64; ++j) flips[i * 64 + j] += (changed >> j) & 1;
    }
  }
  for (uint32_t count : flips) {
    worst = std::max(worst, std::abs(static_cast<double>(count) /
                                         static_cast<double>(keys.size()) -
                                     0.5));
  }
  return worst;
}

// Every key bit reaches every hash bit (the bucket comes from the high half,
// the fingerprint from the low half), for random keys and for sequential
// ones. With 4096 keys a cell's fraction has a standard deviation of 0.008;
// the bound is 7 of those. A multiply alone, whose low output bits never see
// the high input bits, is far outside it.
TEST(IntegerHashTest, EveryKeyBitFlipsEveryHashBitHalfTheTime) {
  constexpr size_t kKeys = 4096;
  constexpr double kBound = 0.055;
  std::vector<uint64_t> sequential(kKeys);
  for (size_t i = 0; i < kKeys; ++i) sequential[i] = i;
  const std::vector<uint64_t> random = HashStream(66).Take(kKeys);
  const auto integer_hash = [](uint64_t key) { return HashInteger(key); };
  EXPECT_LT(WorstAvalancheBias(sequential, integer_hash), kBound);
  EXPECT_LT(WorstAvalancheBias(random, integer_hash), kBound);
  const auto multiply_only = [](uint64_t key) {
    return key * 0x9E3779B97F4A7C15ull;
  };
  EXPECT_GT(WorstAvalancheBias(random, multiply_only), 0.4);
}

TEST(CuckooHashingTest, FingerprintsCoverTheirRangeUniformly) {
  CuckooHashing hashing(2, 4);
  HashStream stream(7);
  std::vector<int> histogram(16, 0);
  const int draws = 150000;
  for (int i = 0; i < draws; ++i)
    ++histogram[hashing.Fingerprint(stream.Next())];
  EXPECT_EQ(histogram[0], 0) << "fingerprint 0 is reserved for empty slots";
  for (int value = 1; value < 16; ++value) {
    EXPECT_NEAR(histogram[value], draws / 15.0, draws / 15.0 * 0.05) << value;
  }
}

TEST(CuckooHashingTest, ValidBucketCountRoundsUpToEven) {
  EXPECT_EQ(ValidBucketCount(0), 2u);
  EXPECT_EQ(ValidBucketCount(1), 2u);
  EXPECT_EQ(ValidBucketCount(7), 8u);
  EXPECT_EQ(ValidBucketCount(8), 8u);
  EXPECT_THROW(ValidBucketCount(kMaxNumBuckets + 1), std::length_error);
}

TEST(SemiSortTest, EveryMultisetHasAUniqueCodeThatDecodesBack) {
  std::set<uint32_t> codes;
  for (uint32_t n3 = 0; n3 < 16; ++n3) {
    for (uint32_t n2 = 0; n2 <= n3; ++n2) {
      for (uint32_t n1 = 0; n1 <= n2; ++n1) {
        for (uint32_t n0 = 0; n0 <= n1; ++n0) {
          const uint32_t code = semi_sort::EncodeSortedNibbles(n0, n1, n2, n3);
          ASSERT_LT(code, semi_sort::kNumCodes);
          EXPECT_TRUE(codes.insert(code).second);
          EXPECT_EQ(semi_sort::DecodeNibbles(code),
                    n0 | (n1 << 4) | (n2 << 8) | (n3 << 12));
        }
      }
    }
  }
  EXPECT_EQ(codes.size(), semi_sort::kNumCodes);
  for (uint32_t code = semi_sort::kNumCodes; code < 4096; ++code) {
    EXPECT_EQ(semi_sort::DecodeNibbles(code), 0xFFFFu);
  }
}

// The slots holding a nibble, for every code (unwritten ones answer as their
// all-15 nibbles) and every nibble, against the decoded nibbles one by one.
TEST(SemiSortTest, SlotsWithNibbleAreTheDecodedSlotsEqualToIt) {
  for (uint32_t code = 0; code < 4096; ++code) {
    const uint32_t nibbles = semi_sort::DecodeNibbles(code);
    for (uint32_t nibble = 0; nibble < 16; ++nibble) {
      uint32_t expected = 0;
      for (uint32_t slot = 0; slot < 4; ++slot) {
        if (((nibbles >> (4 * slot)) & 0xFu) == nibble) expected |= 1u << slot;
      }
      ASSERT_EQ(semi_sort::SlotsWithNibble(code, nibble), expected)
          << "code " << code << ", nibble " << nibble;
    }
  }
}

// The insert's code table against sorting and encoding: every bucket with
// an empty slot (first nibble 0) and every new nibble.
TEST(SemiSortTest, CodeAfterInsertIsTheCodeOfTheSortedNewNibbles) {
  for (uint32_t n3 = 0; n3 < 16; ++n3) {
    for (uint32_t n2 = 0; n2 <= n3; ++n2) {
      for (uint32_t n1 = 0; n1 <= n2; ++n1) {
        const uint32_t code = semi_sort::EncodeSortedNibbles(0, n1, n2, n3);
        for (uint32_t nibble = 0; nibble < 16; ++nibble) {
          uint32_t sorted[4] = {n1, n2, n3, nibble};
          std::sort(sorted, sorted + 4);
          EXPECT_EQ(semi_sort::CodeAfterInsert(code, nibble),
                    semi_sort::EncodeSortedNibbles(sorted[0], sorted[1],
                                                   sorted[2], sorted[3]))
              << n1 << " " << n2 << " " << n3 << " + " << nibble;
        }
      }
    }
  }
}

std::vector<BucketLayout> AllLayouts() {
  std::vector<BucketLayout> layouts;
  for (int b : {2, 4, 8}) {
    for (int f = kMinFingerprintBits; f <= kMaxFingerprintBits; ++f) {
      layouts.push_back({b, f, false});
      if (b == 4) layouts.push_back({b, f, true});
    }
  }
  return layouts;
}

std::string Describe(const BucketLayout& layout) {
  return "b=" + std::to_string(layout.bucket_size) +
         " f=" + std::to_string(layout.fingerprint_bits) +
         (layout.semi_sorted ? " semi-sorted" : "");
}

TEST(BucketLayoutTest, ValidateRejectsWhatTheTableCannotStore) {
  EXPECT_EQ(BucketLayout({4, 12, true}).Validate(), "");
  EXPECT_NE(BucketLayout({3, 12, false}).Validate(), "");
  EXPECT_NE(BucketLayout({4, 3, false}).Validate(), "");
  EXPECT_NE(BucketLayout({4, 33, false}).Validate(), "");
  EXPECT_NE(BucketLayout({8, 12, true}).Validate(), "");
  EXPECT_EQ(BucketLayout({4, 10, true}).BitsPerBucket(), 36);
  EXPECT_EQ(BucketLayout({4, 10, false}).BitsPerBucket(), 40);
}

TEST(BucketTableTest, WritesReadBackAndLookupsAgreeWithAScanInEveryLayout) {
  for (const BucketLayout& layout : AllLayouts()) {
    SCOPED_TRACE(Describe(layout));
    const uint32_t num_buckets = 34;
    BucketTable table(layout, num_buckets);
    ASSERT_EQ(table.bytes().size(),
              TableDataBytes(layout, num_buckets) + kTablePaddingBytes);
    const uint32_t max_fp = layout.fingerprint_bits == 32
                                ? 0xFFFFFFFFu
                                : (1u << layout.fingerprint_bits) - 1;
    HashStream stream(layout.fingerprint_bits * 8 + layout.bucket_size);
    std::vector<std::vector<uint32_t>> expected(num_buckets);
    for (uint32_t bucket = 0; bucket < num_buckets; ++bucket) {
      std::vector<uint32_t> slots(layout.bucket_size);
      for (uint32_t& slot : slots) {
        // A mix of empty slots, extreme values and random ones.
        const uint64_t r = stream.Next();
        slot = (r % 5 == 0)   ? 0
               : (r % 5 == 1) ? max_fp
                              : static_cast<uint32_t>((r >> 8) % max_fp) + 1;
      }
      for (uint32_t slot : slots) {
        if (slot != 0) {
          ASSERT_TRUE(table.Replace(bucket, 0, slot));
        }
      }
      std::stable_partition(slots.begin(), slots.end(),
                            [](uint32_t slot) { return slot != 0; });
      expected[bucket] = slots;
    }
    for (uint32_t bucket = 0; bucket < num_buckets; ++bucket) {
      std::vector<uint32_t> read(layout.bucket_size);
      table.view().Load(bucket, read.data());
      std::vector<uint32_t> want = expected[bucket];
      if (layout.semi_sorted) {
        std::sort(want.begin(), want.end());
      }
      ASSERT_EQ(read, want) << "bucket " << bucket;
      // Probe stored values, their one-bit neighbours, and random values.
      std::vector<uint32_t> probes;
      for (uint32_t value : want) {
        if (value == 0) continue;
        probes.push_back(value);
        probes.push_back(value ^ 1u);
        probes.push_back(value ^ (1u << (layout.fingerprint_bits - 1)));
      }
      for (int i = 0; i < 8; ++i) {
        probes.push_back(static_cast<uint32_t>(stream.Next() % max_fp) + 1);
      }
      for (uint32_t probe : probes) {
        if (probe == 0 || probe > max_fp) continue;
        const int count =
            static_cast<int>(std::count(want.begin(), want.end(), probe));
        const BucketTableView& view = table.view();
        EXPECT_EQ(view.codec().Contains(view.data(), bucket, probe), count > 0)
            << "bucket " << bucket << " probe " << probe;
        EXPECT_EQ(view.codec().Count(view.data(), bucket, probe), count);
      }
    }
    for (size_t i = TableDataBytes(layout, num_buckets);
         i < table.bytes().size(); ++i) {
      EXPECT_EQ(table.bytes()[i], 0) << "padding byte " << i;
    }
  }
}

// Replace and Swap (word-parallel for plain one-word buckets,
// through the slot array otherwise) against a model of each bucket's slots.
TEST(BucketTableTest, InPlaceUpdatesMatchASlotModelInEveryLayout) {
  for (const BucketLayout& layout : AllLayouts()) {
    SCOPED_TRACE(Describe(layout));
    const uint32_t num_buckets = 6;
    BucketTable table(layout, num_buckets);
    const uint32_t max_fp = layout.fingerprint_bits == 32
                                ? 0xFFFFFFFFu
                                : (1u << layout.fingerprint_bits) - 1;
    HashStream stream(layout.fingerprint_bits * 16 + layout.bucket_size);
    auto read = [&](uint32_t bucket) {
      std::vector<uint32_t> slots(layout.bucket_size);
      table.view().Load(bucket, slots.data());
      return slots;
    };
    auto sorted = [](std::vector<uint32_t> slots) {
      std::sort(slots.begin(), slots.end());
      return slots;
    };
    for (int step = 0; step < 600; ++step) {
      const uint64_t r = stream.Next();
      const uint32_t bucket = static_cast<uint32_t>(r % num_buckets);
      const uint32_t fp = (r >> 40) % 3 == 0
                              ? max_fp
                              : static_cast<uint32_t>((r >> 8) % max_fp) + 1;
      std::vector<uint32_t> before = read(bucket);
      switch ((r >> 4) % 3) {
        case 0: {  // insert: the lowest empty slot takes it
          const auto empty = std::find(before.begin(), before.end(), 0u);
          ASSERT_EQ(table.Replace(bucket, 0, fp), empty != before.end());
          if (empty != before.end()) *empty = fp;
          break;
        }
        case 1: {  // replace or remove a stored fingerprint, or a missing one
          const uint32_t from =
              (r >> 50) % 4 == 0 ? fp : before[(r >> 20) % before.size()];
          const uint32_t to = (r >> 30) % 2 ? 0 : fp;
          const auto hit = std::find(before.begin(), before.end(), from);
          ASSERT_EQ(table.Replace(bucket, from, to), hit != before.end());
          if (hit != before.end()) *hit = to;
          break;
        }
        default: {  // swap a slot
          const int slot = static_cast<int>((r >> 20) % before.size());
          ASSERT_EQ(table.Swap(bucket, slot, fp), before[slot]);
          before[slot] = fp;
        }
      }
      if (layout.semi_sorted) {
        ASSERT_EQ(read(bucket), sorted(before)) << "step " << step;
      } else {
        ASSERT_EQ(read(bucket), before) << "step " << step;
      }
    }
    // Nothing outside the buckets changed.
    for (size_t i = TableDataBytes(layout, num_buckets);
         i < table.bytes().size(); ++i) {
      EXPECT_EQ(table.bytes()[i], 0) << "padding byte " << i;
    }
  }
}

// A codec writes what the slot-by-slot codec (the reference: one field at a
// time, no lane arithmetic) writes, bit for bit, and nothing of the
// neighbouring buckets, under random Replace, Swap and Store; and it reads
// (Load, MatchBits, Contains, Count, Occupancy) what the reference reads.
template <typename Codec>
void ExpectCodecAgreesWithSlotBySlot(const Codec& codec,
                                     const BucketLayout& layout) {
  const SlotBySlotCodec reference(layout);
  const int bucket_size = layout.bucket_size;
  const uint32_t num_buckets = 40;
  const size_t bytes = TableDataBytes(layout, num_buckets) + kTablePaddingBytes;
  std::vector<uint8_t> expected(bytes, 0);
  std::vector<uint8_t> actual(bytes, 0);
  const int f = layout.fingerprint_bits;
  HashStream stream(300 + 2 * f + layout.semi_sorted + 100 * bucket_size);
  const uint32_t max_fp = static_cast<uint32_t>(bits::Mask(f));
  const std::string where = "layout " + std::to_string(bucket_size) + "x" +
                            std::to_string(f) +
                            (layout.semi_sorted ? " semi-sorted" : "");
  for (int i = 0; i < 2000; ++i) {
    const uint64_t r = stream.Next();
    const uint32_t bucket = static_cast<uint32_t>(r % num_buckets);
    // Small values, so that Replace finds them again.
    const uint32_t value = static_cast<uint32_t>((r >> 32) % 6) + 1;
    const uint32_t other = static_cast<uint32_t>((r >> 40) % max_fp) + 1;
    switch ((r >> 56) % 5) {
      case 0:
        ASSERT_EQ(codec.Replace(actual.data(), bucket, 0, value),
                  reference.Replace(expected.data(), bucket, 0, value))
            << where;
        break;
      case 4:
        // Any value into an empty slot, as an insert writes it: in a
        // semi-sorted bucket it may sort before, between or after the
        // values held.
        ASSERT_EQ(codec.Replace(actual.data(), bucket, 0, other),
                  reference.Replace(expected.data(), bucket, 0, other))
            << where;
        break;
      case 1:
        ASSERT_EQ(codec.Replace(actual.data(), bucket, value, 0),
                  reference.Replace(expected.data(), bucket, value, 0))
            << where;
        break;
      case 2: {
        uint32_t slots[kMaxBucketSize] = {};
        for (int slot = 0; slot < bucket_size; ++slot) {
          slots[slot] = static_cast<uint32_t>(stream.Next() % (max_fp + 1ull));
        }
        codec.Store(actual.data(), bucket, slots);
        reference.Store(expected.data(), bucket, slots);
        break;
      }
      default: {
        const int slot = static_cast<int>((r >> 8) % bucket_size);
        ASSERT_EQ(codec.Swap(actual.data(), bucket, slot, other),
                  reference.Swap(expected.data(), bucket, slot, other))
            << where;
      }
    }
    ASSERT_EQ(actual, expected) << where << ", operation " << i;
    uint32_t loaded[kMaxBucketSize] = {};
    uint32_t read[kMaxBucketSize] = {};
    codec.Load(actual.data(), bucket, loaded);
    reference.Load(expected.data(), bucket, read);
    for (int slot = 0; slot < bucket_size; ++slot) {
      ASSERT_EQ(loaded[slot], read[slot]) << where << ", operation " << i;
    }
    ASSERT_EQ(codec.Occupancy(actual.data(), bucket),
              reference.Occupancy(expected.data(), bucket))
        << where;
    // Probes: each stored value, its neighbours in the lowest and the top
    // bit, 0 (the empty slots) and a random value.
    std::vector<uint32_t> probes = {0, other};
    for (int slot = 0; slot < bucket_size; ++slot) {
      probes.push_back(read[slot]);
      probes.push_back(read[slot] ^ 1u);
      probes.push_back(read[slot] ^ (1u << (f - 1)));
    }
    for (uint32_t probe : probes) {
      const int count = reference.Count(expected.data(), bucket, probe);
      ASSERT_EQ(codec.Count(actual.data(), bucket, probe), count)
          << where << ", probe " << probe;
      ASSERT_EQ(codec.MatchBits(actual.data(), bucket, probe) != 0, count > 0)
          << where << ", probe " << probe;
      ASSERT_EQ(codec.Contains(actual.data(), bucket, probe), count > 0)
          << where << ", probe " << probe;
    }
  }
}

// The compiled codecs, their lane constants compile-time constants, and the
// codecs of whole 16- and 32-bit slots.
TEST(BucketCodecTest, CompiledCodecsAgreeWithTheSlotBySlotCodec) {
  const auto check = [](auto codec, const BucketLayout& layout) {
    ASSERT_TRUE(decltype(codec)::Matches(layout));
    ExpectCodecAgreesWithSlotBySlot(codec, layout);
  };
  check(CompiledPlainCodec<4, 8>{}, {4, 8, false});
  check(CompiledPlainCodec<4, 12>{}, {4, 12, false});
  check(CompiledPlainCodec<4, 16>{}, {4, 16, false});
  check(CompiledPlainCodec<2, 32>{}, {2, 32, false});
  check(CompiledPlainCodec<8, 7>{}, {8, 7, false});
  check(CompiledPlainCodec<4, 15>{}, {4, 15, false});
  check(CompiledSemiSortedCodec<5>{}, {4, 5, true});
  check(CompiledSemiSortedCodec<7>{}, {4, 7, true});
  check(CompiledSemiSortedCodec<9>{}, {4, 9, true});
  check(CompiledSemiSortedCodec<13>{}, {4, 13, true});
  check(CompiledSemiSortedCodec<15>{}, {4, 15, true});
  check(CompiledSemiSortedCodec<16>{}, {4, 16, true});
  check(WholeSlotCodec<2, 16>{}, {2, 16, false});
  check(WholeSlotCodec<8, 16>{}, {8, 16, false});
  check(WholeSlotCodec<4, 32>{}, {4, 32, false});
  check(WholeSlotCodec<8, 32>{}, {8, 32, false});
}

// The static build's codec operations, on buckets filled from their first
// slot as StoreInEmptier fills them, against a model of each bucket's
// fingerprints in slot order: StoreInEmptier refuses a fingerprint that one
// of the two buckets holds, stores into the emptier (the first on a tie) and
// refuses when both are full; Fill is the bucket's size and Load its slots.
template <typename Codec>
void ExpectEmptierStoresMatchTheModel(const Codec& codec) {
  const int slots = Codec::kSlots;
  const uint32_t num_buckets = 16;
  const BucketLayout layout{slots, Codec::kFingerprintBits, false};
  std::vector<uint8_t> table(
      TableDataBytes(layout, num_buckets) + kTablePaddingBytes, 0);
  std::vector<std::vector<uint32_t>> model(num_buckets);
  HashStream stream(900 + 10 * slots + Codec::kFingerprintBits);
  const uint32_t max_fp =
      static_cast<uint32_t>(bits::Mask(Codec::kFingerprintBits));
  const std::string where =
      std::to_string(slots) + "x" + std::to_string(Codec::kFingerprintBits);
  int outcomes[3] = {};
  for (int i = 0; i < 600; ++i) {
    const uint64_t r = stream.Next();
    const uint32_t bucket = static_cast<uint32_t>(r % num_buckets);
    const uint32_t alternate = static_cast<uint32_t>((r >> 8) % num_buckets);
    // Few distinct values, so that some are already held; the widest too.
    const uint32_t fingerprint =
        (r >> 60) == 0 ? max_fp : static_cast<uint32_t>((r >> 20) % 40) + 1;
    const auto holds = [&](uint32_t b) {
      return std::count(model[b].begin(), model[b].end(), fingerprint) != 0;
    };
    EmptierStore expected = EmptierStore::kFull;
    uint32_t into = bucket;
    if (holds(bucket) || holds(alternate)) {
      expected = EmptierStore::kHeld;
    } else if (std::min(model[bucket].size(), model[alternate].size()) <
               static_cast<size_t>(slots)) {
      expected = EmptierStore::kStored;
      into =
          model[alternate].size() < model[bucket].size() ? alternate : bucket;
      model[into].push_back(fingerprint);
    }
    ASSERT_EQ(
        codec.StoreInEmptier(table.data(), bucket, alternate, fingerprint),
        expected)
        << where << ", operation " << i;
    ++outcomes[static_cast<int>(expected)];
    for (uint32_t b : {bucket, alternate}) {
      ASSERT_EQ(codec.Fill(table.data(), b), static_cast<int>(model[b].size()))
          << where;
      uint32_t loaded[kMaxBucketSize] = {};
      codec.Load(table.data(), b, loaded);
      for (int slot = 0; slot < slots; ++slot) {
        const uint32_t want =
            slot < static_cast<int>(model[b].size()) ? model[b][slot] : 0;
        ASSERT_EQ(loaded[slot], want) << where << ", slot " << slot;
      }
    }
  }
  // Every outcome occurred.
  for (int count : outcomes) EXPECT_GT(count, 0) << where;
  // Nothing past the buckets was written.
  for (size_t i = TableDataBytes(layout, num_buckets); i < table.size(); ++i) {
    EXPECT_EQ(table[i], 0) << where << ", padding byte " << i;
  }
}

TEST(BucketCodecTest, EmptierStoresFillTheEmptierBucket) {
  ExpectEmptierStoresMatchTheModel(CompiledPlainCodec<4, 12>{});
  ExpectEmptierStoresMatchTheModel(CompiledPlainCodec<4, 13>{});
  ExpectEmptierStoresMatchTheModel(CompiledPlainCodec<4, 16>{});
  ExpectEmptierStoresMatchTheModel(CompiledPlainCodec<2, 32>{});
  ExpectEmptierStoresMatchTheModel(WholeSlotCodec<2, 16>{});
  ExpectEmptierStoresMatchTheModel(WholeSlotCodec<8, 16>{});
  ExpectEmptierStoresMatchTheModel(WholeSlotCodec<4, 32>{});
  ExpectEmptierStoresMatchTheModel(WholeSlotCodec<8, 32>{});
}

// The runtime codec, for every layout: the word codecs with their lane
// constants computed at run time, and the slot-by-slot codec for the rest.
TEST(BucketCodecTest, EveryLayoutsRuntimeCodecAgreesWithTheSlotBySlotCodec) {
  for (int f = kMinFingerprintBits; f <= kMaxFingerprintBits; ++f) {
    for (int bucket_size : {2, 4, 8}) {
      const BucketLayout layout{bucket_size, f, false};
      ExpectCodecAgreesWithSlotBySlot(AnyBucketCodec(layout), layout);
    }
    const BucketLayout semi_sorted{4, f, true};
    ExpectCodecAgreesWithSlotBySlot(AnyBucketCodec(semi_sorted), semi_sorted);
  }
}

// ZeroLanes flags exactly the zero lanes, ZeroLaneTops does at the lanes'
// tops, and AnyZeroLane answers whether one exists, for four lanes (as in
// the compiled buckets) of 4 to 16 bits with any bits above the top lane,
// and words with zero, one or several zero lanes (also the top one, whose
// borrow leaves the lanes).
TEST(BucketTableTest, AnyZeroLaneIsWhetherAZeroLaneExists) {
  HashStream stream(77);
  constexpr int kLanes = 4;
  for (int width = 4; width <= 16; ++width) {
    uint64_t ones = 0;
    for (int lane = 0; lane < kLanes; ++lane)
      ones |= uint64_t{1} << (lane * width);
    const uint64_t tops = ones << (width - 1);
    const uint64_t lanes_mask = bits::Mask(kLanes * width);
    for (int i = 0; i < 20000; ++i) {
      uint64_t word = stream.Next();
      // Clear each lane with probability 1/4, and sometimes set every bit
      // of a lane or of those above the lanes.
      const uint64_t choices = stream.Next();
      for (int lane = 0; lane < kLanes; ++lane) {
        const uint64_t lane_bits = bits::Mask(width) << (lane * width);
        switch ((choices >> (4 * lane)) & 7) {
          case 0:
          case 1:
            word &= ~lane_bits;
            break;
          case 2:
            word |= lane_bits;
            break;
          default:
            break;
        }
      }
      if (choices >> 63) word |= ~lanes_mask;
      uint64_t zero_lane_tops = 0;
      for (int lane = 0; lane < kLanes; ++lane) {
        if (((word >> (lane * width)) & bits::Mask(width)) == 0) {
          zero_lane_tops |= uint64_t{1} << (lane * width + width - 1);
        }
      }
      ASSERT_EQ(bits::ZeroLanes(word & lanes_mask, ones, tops), zero_lane_tops)
          << "width " << width << " word " << word;
      ASSERT_EQ(bits::ZeroLaneTops(word, ones, tops) & tops, zero_lane_tops)
          << "width " << width << " word " << word;
      ASSERT_EQ(bits::AnyZeroLane(word, ones, tops) != 0, zero_lane_tops != 0)
          << "width " << width << " word " << word;
    }
  }
}

// The compiled semi-sorted buckets answer as the slots say: for every stored
// fingerprint, for neighbours that differ in a low bit or in the nibble, and
// for random values; and as the view answers.
template <int kFingerprintBits>
void ExpectSemiSortedLayoutAgreesWithSlots() {
  using Bucket = CompiledSemiSortedCodec<kFingerprintBits>;
  const BucketLayout layout{4, kFingerprintBits, true};
  ASSERT_TRUE(Bucket::Matches(layout));
  const uint32_t num_buckets = 64;
  BucketTable table(layout, num_buckets);
  HashStream stream(100 + kFingerprintBits);
  const uint32_t max_fp = static_cast<uint32_t>(bits::Mask(kFingerprintBits));
  for (int i = 0; i < 230; ++i) {
    const uint64_t r = stream.Next();
    table.Replace(static_cast<uint32_t>(r % num_buckets), 0,
                  static_cast<uint32_t>((r >> 32) % max_fp) + 1);
  }
  for (uint32_t bucket = 0; bucket < num_buckets; ++bucket) {
    std::vector<uint32_t> stored;
    table.view().ForEachSlot(bucket, [&](int, uint32_t fp) {
      if (fp != 0) stored.push_back(fp);
    });
    std::vector<uint32_t> probes;
    for (uint32_t fp : stored) {
      probes.push_back(fp);
      probes.push_back(fp ^ 1u);
      probes.push_back(fp ^ (1u << (kFingerprintBits - 1)));
    }
    for (int i = 0; i < 20; ++i) {
      probes.push_back(static_cast<uint32_t>(stream.Next() % max_fp) + 1);
    }
    for (uint32_t probe : probes) {
      if (probe == 0 || probe > max_fp) continue;
      const bool expected =
          std::find(stored.begin(), stored.end(), probe) != stored.end();
      ASSERT_EQ(Bucket{}.Contains(table.bytes().data(), bucket, probe),
                expected)
          << "f=" << kFingerprintBits << " bucket " << bucket << " probe "
          << probe;
      ASSERT_EQ(
          table.view().codec().Contains(table.view().data(), bucket, probe),
          expected);
    }
  }
}

TEST(BucketTableTest, CompiledSemiSortedLayoutsAgreeWithTheSlots) {
  ExpectSemiSortedLayoutAgreesWithSlots<5>();
  ExpectSemiSortedLayoutAgreesWithSlots<6>();
  ExpectSemiSortedLayoutAgreesWithSlots<7>();
  ExpectSemiSortedLayoutAgreesWithSlots<8>();
  ExpectSemiSortedLayoutAgreesWithSlots<9>();
  ExpectSemiSortedLayoutAgreesWithSlots<10>();
  ExpectSemiSortedLayoutAgreesWithSlots<11>();
  ExpectSemiSortedLayoutAgreesWithSlots<12>();
  ExpectSemiSortedLayoutAgreesWithSlots<13>();
  ExpectSemiSortedLayoutAgreesWithSlots<14>();
  ExpectSemiSortedLayoutAgreesWithSlots<15>();
  ExpectSemiSortedLayoutAgreesWithSlots<16>();
}

TEST(BucketTableTest, EveryCompiledLayoutIsChosenForItsOwnLayoutOnly) {
  int compiled = 0;
  for (int b : {2, 4, 8}) {
    for (bool semi_sorted : {false, true}) {
      for (int f = kMinFingerprintBits; f <= kMaxFingerprintBits; ++f) {
        const BucketLayout layout{b, f, semi_sorted};
        if (!layout.Validate().empty()) continue;
        const bool found = VisitCompiledBucket(layout, [&](auto bucket) {
          EXPECT_TRUE(decltype(bucket)::Matches(layout));
        });
        compiled += found;
      }
    }
  }
  EXPECT_EQ(compiled, 4 + 12);
}

// VisitTable picks a compiled table for a compiled layout whose mapping has
// the slots' fingerprint width, with power-of-two arithmetic exactly when the
// bucket count is a power of two; AnyLayoutTable otherwise.
TEST(BucketTableTest, VisitTableChoosesTheArithmeticOfTheBucketCount) {
  struct Choice {
    bool compiled = false;
    bool power_of_two = false;
  };
  auto choose = [](const BucketLayout& layout, const CuckooHashing& hashing) {
    Choice choice;
    int visits = 0;
    VisitTable(layout, hashing, [&](auto table) {
      ++visits;
      using Table = decltype(table);
      if constexpr (!std::is_same_v<Table, AnyLayoutTable>) {
        choice.compiled = true;
        choice.power_of_two =
            std::is_same_v<Table,
                           CompiledTable<typename Table::CodecType, true>>;
        EXPECT_TRUE(Table::CodecType::Matches(layout));
      }
    });
    EXPECT_EQ(visits, 1);
    return choice;
  };
  const BucketLayout plain12{4, 12, false};
  Choice choice = choose(plain12, CuckooHashing(1u << 18, 12));
  EXPECT_TRUE(choice.compiled && choice.power_of_two);
  choice = choose(plain12, CuckooHashing((1u << 18) + 2, 12));
  EXPECT_TRUE(choice.compiled && !choice.power_of_two);
  // Slots wider than the mapping's fingerprints (a filter that may grow).
  EXPECT_FALSE(choose(plain12, CuckooHashing(1u << 18, 8)).compiled);
  EXPECT_FALSE(
      choose(BucketLayout{4, 20, false}, CuckooHashing(64, 20)).compiled);
  choice = choose(BucketLayout{4, 10, true}, CuckooHashing(4096, 10));
  EXPECT_TRUE(choice.compiled && choice.power_of_two);
}

TEST(BucketTableTest, ViewReadsUnalignedMemoryItDoesNotOwn) {
  const BucketLayout layout{4, 13, true};
  BucketTable table(layout, 10);
  for (uint32_t slot : {77u, 8000u, 5u}) ASSERT_TRUE(table.Replace(9, 0, slot));
  std::vector<uint8_t> shifted(table.bytes().size() + 1);
  std::memcpy(shifted.data() + 1, table.bytes().data(), table.bytes().size());
  BucketTableView view(layout, 10, shifted.data() + 1);
  const auto holds = [&view](uint32_t bucket, uint32_t fingerprint) {
    return view.codec().Contains(view.data(), bucket, fingerprint);
  };
  EXPECT_TRUE(holds(9, 8000));
  EXPECT_TRUE(holds(9, 77));
  EXPECT_FALSE(holds(9, 78));
  EXPECT_FALSE(holds(8, 77));
}

}  // namespace
}  // namespace cuckoo
