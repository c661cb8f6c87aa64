// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Tests of the dynamic filter's growth (GrowableHashing, CuckooFilter::Grow,
// and the core's kFull that the filter grows on), of its RedisBloom-style API
// (Reserve, Info, Merge across growths), and of the chunked dump and load. The
// RedisBloom bug classes each have a test here: unchecked chunk bounds (#726,
// #727), huge and negative sizes (#724, #434; also cuckoo_filter_test.cc),
// growth with expansion 0 (#481) and erasing the wrong items after growth
// (#260).
#include <gtest/gtest.h>

#include <cmath>

#include "cuckoo/cuckoo_filter.h"
#include "cuckoo/dynamic_filter_format.h"
#include "test_util.h"

namespace cuckoo {
namespace {

using testing::HashStream;
using testing::RoundTrip;

CuckooFilterOptions GrowingOptions(int f, uint32_t expansion,
                                   uint32_t max_growths,
                                   bool semi_sorted = false) {
  CuckooFilterOptions options;
  options.layout = BucketLayout{4, f, semi_sorted};
  options.expansion = expansion;
  options.max_growths = max_growths;
  return options;
}

// The mapping's three laws: AltBucket is an involution that never returns
// its argument, and moving a slot's top bits into the index puts it where
// Locate at the next level looks, from either of its buckets.
TEST(GrowableHashingTest, MovingBitsAgreesWithLocateAtTheNextLevel) {
  HashStream stream(1);
  for (int f : {4, 12, 16}) {
    for (int e : {1, 2, 3}) {
      const int reserve = e * 4;
      for (int moved = 0; moved + e <= reserve; moved += e) {
        const GrowableHashing level(250, f, reserve, moved);
        const GrowableHashing next = level.AfterMoving(e);
        ASSERT_EQ(next.num_buckets(), level.num_buckets() << e);
        ASSERT_EQ(next.slot_bits(), level.slot_bits() - e);
        for (int i = 0; i < 2000; ++i) {
          const uint64_t hash = stream.Next();
          const KeyPosition here = level.Locate(hash);
          const KeyPosition there = next.Locate(hash);
          ASSERT_LT(here.bucket, level.num_buckets());
          ASSERT_NE(here.bucket, here.alternate);
          ASSERT_EQ(level.AltBucket(here.bucket, here.fingerprint),
                    here.alternate);
          ASSERT_EQ(level.AltBucket(here.alternate, here.fingerprint),
                    here.bucket);
          ASSERT_NE(level.KeyFingerprint(here.fingerprint), 0u);
          ASSERT_LE(here.fingerprint, level.max_fingerprint());
          const GrowableHashing::SlotMove from_primary =
              level.MoveSlot(here.bucket, here.fingerprint, e);
          const GrowableHashing::SlotMove from_alternate =
              level.MoveSlot(here.alternate, here.fingerprint, e);
          ASSERT_EQ(from_primary.bucket, there.bucket);
          ASSERT_EQ(from_alternate.bucket, there.alternate);
          ASSERT_EQ(from_primary.value, there.fingerprint);
          ASSERT_EQ(from_alternate.value, there.fingerprint);
        }
      }
    }
  }
}

TEST(GrowableHashingTest, WithoutReservedBitsItIsTheBaseMapping) {
  HashStream stream(2);
  const GrowableHashing growable(1000, 12, 0, 0);
  const CuckooHashing base(1000, 12);
  for (int i = 0; i < 10000; ++i) {
    const uint64_t hash = stream.Next();
    const KeyPosition a = growable.Locate(hash);
    const KeyPosition b = base.Locate(hash);
    ASSERT_EQ(a.bucket, b.bucket);
    ASSERT_EQ(a.alternate, b.alternate);
    ASSERT_EQ(a.fingerprint, b.fingerprint);
  }
}

// 10^6 keys through 8 growths, a slice of earlier keys erased after each
// growth: every key not erased is found, with its count, and the counts
// add up.
TEST(CuckooFilterGrowthTest, AMillionKeysThroughSixGrowthsWithErasesLoseNone) {
  CuckooFilter filter(2048, GrowingOptions(12, 2, 10));
  HashStream stream(3);
  const std::vector<uint64_t> keys = stream.Take(1000000);
  std::vector<bool> erased(keys.size(), false);
  size_t next_to_erase = 0;
  uint32_t growths_seen = 0;
  uint64_t erases = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(filter.Insert(keys[i]), InsertResult::kOk) << "key #" << i;
    if (filter.Growths() != growths_seen) {
      growths_seen = filter.Growths();
      // Erase every third of the keys inserted since the last erase.
      for (; next_to_erase < i; next_to_erase += 3) {
        ASSERT_TRUE(filter.Erase(keys[next_to_erase]));
        erased[next_to_erase] = true;
        ++erases;
      }
    }
  }
  EXPECT_GE(filter.Growths(), 6u);
  EXPECT_EQ(filter.Size(), keys.size() - erases);
  EXPECT_EQ(filter.Info().items_deleted, erases);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!erased[i]) {
      ASSERT_TRUE(filter.Contains(keys[i])) << "key #" << i;
      ASSERT_GE(filter.Count(keys[i]), 1u);
    }
  }
  // The table is a table of 12-bit slots after its last growth but two.
  EXPECT_EQ(filter.NumBuckets(), 2048u << filter.Growths());
}

// The FPR after k growths stays under 2 b alpha / ((2^f - 1) 2^(G - k)), the
// documented bound, at each k = 0..6; with 8-bit fingerprints the rates are
// large enough to measure.
TEST(CuckooFilterGrowthTest, FalsePositiveRateStaysUnderTheBoundAtEveryGrowth) {
  constexpr uint32_t kBase = 1024;
  constexpr int kF = 8;
  constexpr uint32_t kG = 6;
  CuckooFilter filter(kBase, GrowingOptions(kF, 2, kG));
  HashStream keys(4);
  HashStream absent(5);
  for (uint32_t k = 0; k <= kG; ++k) {
    // Fill this level to 90% without growing past it.
    const uint64_t target = static_cast<uint64_t>(0.9 * filter.Capacity());
    while (filter.Size() < target) {
      ASSERT_EQ(filter.Insert(keys.Next()), InsertResult::kOk);
    }
    ASSERT_EQ(filter.Growths(), k);
    constexpr int kProbes = 400000;
    int false_positives = 0;
    for (int i = 0; i < kProbes; ++i)
      false_positives += filter.Contains(absent.Next());
    const double fpr = static_cast<double>(false_positives) / kProbes;
    const double alpha = filter.LoadFactor();
    const double bound =
        2.0 * 4 * alpha / ((std::pow(2.0, kF) - 1) * std::pow(2.0, kG - k));
    const double sigma = std::sqrt(bound / kProbes);
    SCOPED_TRACE("k=" + std::to_string(k) + " fpr=" + std::to_string(fpr) +
                 " bound=" + std::to_string(bound));
    EXPECT_LE(fpr, bound + 4 * sigma);
    // And the bound is the real rate, not a loose one: within 25%.
    EXPECT_GE(fpr, 0.75 * bound - 4 * sigma);
    if (k < kG) {
      ASSERT_TRUE(filter.Grow());
    }
  }
  EXPECT_FALSE(filter.Grow()) << "no growth beyond max_growths";
}

// RedisBloom #481: a filter with expansion 0 does not grow; a full one
// reports kFull, with nothing lost and nothing changed.
TEST(CuckooFilterGrowthTest, ExpansionZeroNeverGrowsAndReportsFull) {
  CuckooFilter filter(64, GrowingOptions(12, 0, 6));
  HashStream stream(6);
  std::vector<uint64_t> stored;
  InsertResult result = InsertResult::kOk;
  while (result == InsertResult::kOk) {
    const uint64_t key = stream.Next();
    result = filter.Insert(key);
    if (result == InsertResult::kOk) stored.push_back(key);
  }
  EXPECT_EQ(result, InsertResult::kFull);
  EXPECT_EQ(filter.NumBuckets(), 64u);
  EXPECT_EQ(filter.Growths(), 0u);
  EXPECT_FALSE(filter.Grow());
  for (uint64_t key : stored) ASSERT_TRUE(filter.Contains(key));
  // A growing filter past its limit behaves the same.
  CuckooFilter limited(64, GrowingOptions(12, 2, 2));
  while (limited.Insert(stream.Next()) == InsertResult::kOk) {
  }
  EXPECT_EQ(limited.Growths(), 2u);
  EXPECT_EQ(limited.history().failed_inserts, 1u);
}

// The split of work between the core and the filter (filter_core.h): the
// core never grows; an insert with no room is kFull with the table, stash
// and item count as they were and no failure counted, and the filter that
// owns the state grows and retries. Run on a growable filter's state.
TEST(CuckooFilterGrowthTest, TheCoreReportsFullAndTheFilterGrows) {
  CuckooFilterOptions options = GrowingOptions(12, 2, 6);
  options.max_kicks = 50;
  options.stash_capacity = 2;
  FilterState state = CuckooFilter(64, options).state();
  using Core = FilterCore<AnyLayoutTable, GrowableMapping>;
  CuckooFilter filter(64, options);
  HashStream stream(8);
  std::vector<uint64_t> stored;
  int full = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t key = stream.Next();
    ASSERT_EQ(filter.Insert(key), InsertResult::kOk);
    const FilterState before = state;
    const InsertResult result = Core::Insert(state, key);
    if (result == InsertResult::kOk) {
      stored.push_back(key);
      continue;
    }
    ASSERT_EQ(result, InsertResult::kFull);
    ++full;
    ASSERT_EQ(state.table.bytes(), before.table.bytes());
    ASSERT_EQ(state.stash.size(), before.stash.size());
    for (size_t s = 0; s < state.stash.size(); ++s) {
      ASSERT_EQ(state.stash[s].bucket, before.stash[s].bucket);
      ASSERT_EQ(state.stash[s].fingerprint, before.stash[s].fingerprint);
    }
    ASSERT_EQ(state.history.items, before.history.items);
  }
  EXPECT_GT(full, 500);
  EXPECT_EQ(state.history.failed_inserts, 0u);
  EXPECT_EQ(state.hashing.moved_bits(), 0);
  EXPECT_EQ(state.history.items, stored.size());
  for (uint64_t key : stored) ASSERT_TRUE(Core::Contains(state, key));
  EXPECT_GE(filter.Growths(), 2u);
  EXPECT_EQ(filter.Size(), 1000u);
  EXPECT_EQ(filter.history().failed_inserts, 0u);
}

// A key inserted more times than its two buckets and the stash hold: the
// copies past them are refused without a growth, which would move every
// copy to the same two buckets of a larger table (RedisBloom's CF.ADD of
// one item, over and over). The filter still grows for other keys, and
// refuses the copy again after growing. Through Insert and InsertMany, for
// plain and semi-sorted buckets.
TEST(CuckooFilterGrowthTest, CopiesPastTheirBucketsAreRefusedWithoutGrowing) {
  for (bool semi_sorted : {false, true}) {
    SCOPED_TRACE(semi_sorted);
    CuckooFilterOptions options = GrowingOptions(13, 2, 5, semi_sorted);
    options.stash_capacity = 3;
    const int room = 2 * options.layout.bucket_size;  // the pair's slots
    HashStream stream(semi_sorted ? 41 : 40);
    CuckooFilter filter(1024, options);
    const uint64_t key = stream.Next();
    const size_t bytes = filter.SizeInBytes();
    for (int i = 0; i < room + 3; ++i) {
      ASSERT_EQ(filter.Insert(key), InsertResult::kOk) << i;
    }
    EXPECT_EQ(filter.stash().size(), 3u);
    EXPECT_EQ(filter.Insert(key), InsertResult::kFull);
    EXPECT_EQ(filter.Growths(), 0u);
    EXPECT_EQ(filter.SizeInBytes(), bytes);
    EXPECT_EQ(filter.history().failed_inserts, 1u);
    EXPECT_EQ(filter.Count(key), static_cast<uint32_t>(room + 3));
    // A batch of copies stops at the same place, and the batch's other keys
    // are stored.
    const std::vector<uint64_t> batch = {key, stream.Next(), key,
                                         stream.Next()};
    std::vector<InsertResult> results(batch.size());
    EXPECT_EQ(filter.InsertMany(batch.data(), batch.size(), results.data()),
              2u);
    EXPECT_EQ(results[0], InsertResult::kFull);
    EXPECT_EQ(results[1], InsertResult::kOk);
    EXPECT_EQ(results[2], InsertResult::kFull);
    EXPECT_EQ(results[3], InsertResult::kOk);
    EXPECT_EQ(filter.Growths(), 0u);
    EXPECT_EQ(filter.history().failed_inserts, 3u);
    // Other keys fill the filter until it grows (the stash is full of the
    // copies, so their first failed walk grows it), and the copies stay.
    while (filter.Growths() == 0) {
      ASSERT_EQ(filter.Insert(stream.Next()), InsertResult::kOk);
    }
    EXPECT_EQ(filter.Count(key), static_cast<uint32_t>(room + 3));
    EXPECT_EQ(filter.Insert(key), InsertResult::kFull);
    EXPECT_EQ(filter.Growths(), 1u);
    // Erasing one copy makes room for one.
    ASSERT_TRUE(filter.Erase(key));
    EXPECT_EQ(filter.Insert(key), InsertResult::kOk);
    EXPECT_EQ(filter.Count(key), static_cast<uint32_t>(room + 3));
  }
}

TEST(CuckooFilterGrowthTest, RejectsExpansionsAndLimitsItCannotHonour) {
  auto make = [](int f, uint32_t expansion, uint32_t max_growths,
                 uint64_t buckets = 64) {
    CuckooFilter filter(buckets, GrowingOptions(f, expansion, max_growths));
  };
  for (uint32_t expansion : {1u, 3u, 6u, 0x80000001u}) {
    try {
      make(12, expansion, 2);
      ADD_FAILURE() << "expansion " << expansion << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("power of two"), std::string::npos)
          << e.what();
    }
  }
  // 12-bit fingerprints leave 20 bits: 21 growths by 2, or 7 by 8, are too
  // many; 20 and 6 fit.
  EXPECT_THROW(make(12, 2, 21), std::invalid_argument);
  EXPECT_THROW(make(12, 8, 7), std::invalid_argument);
  EXPECT_THROW(make(12, 2, 0xFFFFFFFFu), std::invalid_argument);
  EXPECT_NO_THROW(make(12, 2, 20));
  EXPECT_NO_THROW(make(12, 8, 6));
  // 2^20 buckets grown 12 times would pass 2^32 buckets.
  EXPECT_THROW(make(12, 2, 12, uint64_t{1} << 20), std::length_error);
  EXPECT_NO_THROW(make(12, 2, 11, uint64_t{1} << 20));
}

// RedisBloom #260: after growth, erasing keys removes those keys: a second
// set of keys stays whole, and the erased ones read as absent except for
// false positives.
TEST(CuckooFilterGrowthTest, ErasingAfterGrowthRemovesTheRightItems) {
  for (bool semi_sorted : {false, true}) {
    CuckooFilter filter(128, GrowingOptions(13, 2, 5, semi_sorted));
    HashStream stream(7);
    const std::vector<uint64_t> erased = stream.Take(3000);
    const std::vector<uint64_t> kept = stream.Take(3000);
    for (size_t i = 0; i < erased.size(); ++i) {
      ASSERT_EQ(filter.Insert(erased[i]), InsertResult::kOk);
      ASSERT_EQ(filter.Insert(kept[i]), InsertResult::kOk);
    }
    ASSERT_GE(filter.Growths(), 3u);
    for (uint64_t key : erased) ASSERT_TRUE(filter.Erase(key));
    for (uint64_t key : kept) ASSERT_TRUE(filter.Contains(key));
    EXPECT_EQ(filter.Size(), kept.size());
    int still_present = 0;
    for (uint64_t key : erased) still_present += filter.Contains(key);
    EXPECT_LT(still_present, 30) << "erased keys that still match";
  }
}

TEST(CuckooFilterGrowthTest, GrowingKeepsTheStashEntries) {
  CuckooFilterOptions options = GrowingOptions(12, 4, 3);
  options.max_kicks = 4;
  options.stash_capacity = 64;
  CuckooFilter filter(32, options);
  HashStream stream(8);
  std::vector<uint64_t> stored;
  while (filter.Stats().stash_size < 8 && filter.Growths() == 0) {
    stored.push_back(stream.Next());
    ASSERT_EQ(filter.Insert(stored.back()), InsertResult::kOk);
  }
  ASSERT_GT(filter.Stats().stash_size, 0u);
  ASSERT_TRUE(filter.Grow());
  EXPECT_EQ(filter.Stats().stash_size, 0u) << "a doubled table has room";
  EXPECT_EQ(filter.Size(), stored.size());
  for (uint64_t key : stored) ASSERT_TRUE(filter.Contains(key));
}

TEST(CuckooFilterApiTest, ReserveHoldsItsCapacityAndRejectsNonsense) {
  for (int b : {2, 4, 8}) {
    CuckooFilterOptions options;
    options.layout = BucketLayout{b, 12, false};
    CuckooFilter filter = CuckooFilter::Reserve(10000, options);
    HashStream stream(9);
    for (int i = 0; i < 10000; ++i) {
      ASSERT_EQ(filter.Insert(stream.Next()), InsertResult::kOk) << i;
    }
  }
  EXPECT_THROW(CuckooFilter::Reserve(0), std::invalid_argument);
  CuckooFilterOptions three_slots;
  three_slots.layout.bucket_size = 3;
  EXPECT_THROW(CuckooFilter::Reserve(100, three_slots), std::invalid_argument);
  EXPECT_THROW(CuckooFilter::Reserve(static_cast<uint64_t>(-1)),
               std::length_error);
}

TEST(CuckooFilterApiTest, InfoReportsRedisBloomsFields) {
  CuckooFilterOptions options = GrowingOptions(12, 2, 4);
  options.max_kicks = 321;
  CuckooFilter filter(64, options);
  HashStream stream(10);
  const std::vector<uint64_t> keys = stream.Take(1000);
  for (uint64_t key : keys) ASSERT_EQ(filter.Insert(key), InsertResult::kOk);
  for (size_t i = 0; i < 100; ++i) ASSERT_TRUE(filter.Erase(keys[i]));
  const CuckooFilterInfo info = filter.Info();
  EXPECT_EQ(info.items_stored, 900u);
  EXPECT_EQ(info.items_deleted, 100u);
  EXPECT_EQ(info.num_growths, filter.Growths());
  EXPECT_GE(info.num_growths, 2u);
  EXPECT_EQ(info.num_buckets, 64u << info.num_growths);
  EXPECT_EQ(info.bucket_size, 4);
  EXPECT_EQ(info.expansion, 2u);
  EXPECT_EQ(info.max_iterations, 321u);
  EXPECT_EQ(info.size_in_bytes, filter.SizeInBytes());
}

// Replicas that grew differently still merge: the smaller is grown first.
TEST(CuckooFilterApiTest, MergeAcrossGrowthsKeepsEveryKey) {
  const CuckooFilterOptions options = GrowingOptions(12, 2, 6);
  CuckooFilter small(64, options);
  CuckooFilter large(64, options);
  HashStream stream(11);
  const std::vector<uint64_t> a = stream.Take(200);
  const std::vector<uint64_t> b = stream.Take(3000);
  for (uint64_t key : a) ASSERT_EQ(small.Insert(key), InsertResult::kOk);
  for (uint64_t key : b) ASSERT_EQ(large.Insert(key), InsertResult::kOk);
  ASSERT_LT(small.Growths(), large.Growths());
  CuckooFilter merged = small;
  ASSERT_EQ(merged.Merge(large), InsertResult::kOk);
  EXPECT_EQ(merged.Size(), a.size() + b.size());
  for (uint64_t key : a) ASSERT_TRUE(merged.Contains(key));
  for (uint64_t key : b) ASSERT_TRUE(merged.Contains(key));
  CuckooFilterOptions other = options;
  other.max_growths = 5;
  CuckooFilter different(64, other);
  EXPECT_THROW(merged.Merge(different), std::invalid_argument);
}

// A filter that has grown twice, erased keys and holds stash entries.
CuckooFilter GrownFilterWithAStash(uint64_t seed, bool semi_sorted = true) {
  CuckooFilterOptions options = GrowingOptions(12, 2, 4, semi_sorted);
  options.max_kicks = 8;
  options.stash_capacity = 16;
  CuckooFilter filter(40, options);
  HashStream stream(seed);
  std::vector<uint64_t> keys;
  while (filter.Growths() < 2) {
    keys.push_back(stream.Next());
    EXPECT_EQ(filter.Insert(keys.back()), InsertResult::kOk);
  }
  for (size_t i = 0; i < 20; ++i) EXPECT_TRUE(filter.Erase(keys[i]));
  while (filter.Stats().stash_size == 0) {
    EXPECT_EQ(filter.Insert(stream.Next()), InsertResult::kOk);
  }
  return filter;
}

TEST(CuckooFilterSerializationTest, GrownFiltersRoundTripAndKeepGrowing) {
  CuckooFilter filter = GrownFilterWithAStash(12);
  std::optional<CuckooFilter> back = RoundTrip(filter);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->Growths(), filter.Growths());
  EXPECT_EQ(back->Info().items_deleted, filter.Info().items_deleted);
  HashStream more(13);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t key = more.Next();
    ASSERT_EQ(filter.Insert(key), back->Insert(key));
  }
  EXPECT_GT(back->Growths(), 2u);
  EXPECT_EQ(SerializeCuckooFilter(*back), SerializeCuckooFilter(filter));
}

// Filters written before growth existed (format version 1: no growth
// fields, no "items deleted") still load.
TEST(CuckooFilterSerializationTest, ReadsFormatVersion1) {
  CuckooFilterOptions options;
  options.layout = BucketLayout{4, 12, false};
  CuckooFilter filter(100, options);
  HashStream stream(14);
  const std::vector<uint64_t> keys = stream.Take(300);
  for (uint64_t key : keys) ASSERT_EQ(filter.Insert(key), InsertResult::kOk);
  std::vector<uint8_t> v2 = SerializeCuckooFilter(filter);
  std::vector<uint8_t> v1(v2.begin(), v2.begin() + 72);
  v1.insert(v1.end(), v2.begin() + 80, v2.end() - 8);
  v1[4] = 1;
  v1.resize(v1.size() + 8);
  byte_io::Store<uint64_t>(v1.data() + v1.size() - 8,
                           XXH3_64bits(v1.data(), v1.size() - 8));
  std::string error;
  std::optional<CuckooFilter> back =
      DeserializeCuckooFilter(v1.data(), v1.size(), &error);
  ASSERT_TRUE(back.has_value()) << error;
  for (uint64_t key : keys) ASSERT_TRUE(back->Contains(key));
  EXPECT_EQ(SerializeCuckooFilter(*back), v2) << "and is written as version 2";
  v1[9] = 1;  // version 1 has no growth fields
  byte_io::Store<uint64_t>(v1.data() + v1.size() - 8,
                           XXH3_64bits(v1.data(), v1.size() - 8));
  EXPECT_FALSE(DeserializeCuckooFilter(v1.data(), v1.size(), &error));
  EXPECT_NE(error.find("reserved"), std::string::npos) << error;
}

TEST(CuckooFilterSerializationTest, RejectsGrowthFieldsNoWriterProduces) {
  CuckooFilter filter = GrownFilterWithAStash(15);
  const std::vector<uint8_t> good = SerializeCuckooFilter(filter);
  auto rejected = [&](std::vector<uint8_t> bad, const std::string& what) {
    byte_io::Store<uint64_t>(bad.data() + bad.size() - 8,
                             XXH3_64bits(bad.data(), bad.size() - 8));
    std::string error;
    EXPECT_FALSE(DeserializeCuckooFilter(bad.data(), bad.size(), &error))
        << what;
    EXPECT_NE(error.find(what), std::string::npos) << error;
  };
  std::vector<uint8_t> bad = good;
  bad[11] = bad[10] + 1;  // more growths than the limit
  rejected(bad, "growth fields");
  bad = good;
  bad[9] = 21;  // an expansion of 2^21 with 12-bit fingerprints
  rejected(bad, "growth fields");
  bad = good;
  bad[11] -= 1;  // growths that disagree with the slot width: the size
  rejected(bad, "bytes but the header describes");
  // Values with growth bits but a key fingerprint of 0: no key has one.
  bad = good;
  byte_io::Store<uint32_t>(bad.data() + 80 + 4, uint32_t{1} << 12);
  rejected(bad, "stash entry 0 is out of range");
  const CuckooFilter plain = GrownFilterWithAStash(15, false);
  bad = SerializeCuckooFilter(plain);
  const size_t table = 80 + 8 * plain.Stats().stash_size;
  // Slot 0 of bucket 0: the first 14 bits (12 + 4 - 2 growths).
  bad[table] = 0;
  bad[table + 1] = static_cast<uint8_t>((bad[table + 1] & 0xC0) | 0x10);
  rejected(bad, "key fingerprint of 0");
}

// The chunked dump gives the serialized bytes, cut anywhere; the chunk
// loader rebuilds the same filter.
TEST(CuckooFilterChunkTest, DumpAndLoadInChunksOfAnySize) {
  CuckooFilter filter = GrownFilterWithAStash(16);
  const std::vector<uint8_t> whole = SerializeCuckooFilter(filter);
  for (size_t chunk_bytes : {size_t{1}, size_t{7}, size_t{80}, size_t{100},
                             whole.size() - 1, whole.size(), size_t{1} << 20}) {
    SCOPED_TRACE("chunks of " + std::to_string(chunk_bytes));
    CuckooFilterDumper dumper(filter, chunk_bytes);
    CuckooFilterChunkLoader loader;
    std::vector<uint8_t> chunk;
    std::vector<uint8_t> payloads;
    uint64_t chunks = 0;
    std::string error;
    while (dumper.Next(&chunk)) {
      ++chunks;
      payloads.insert(payloads.end(), chunk.begin() + 40, chunk.end() - 8);
      ASSERT_TRUE(loader.Load(chunk.data(), chunk.size(), &error)) << error;
    }
    EXPECT_EQ(chunks, dumper.num_chunks());
    EXPECT_EQ(payloads, whole);
    ASSERT_TRUE(loader.complete());
    std::optional<CuckooFilter> back = loader.Finish(&error);
    ASSERT_TRUE(back.has_value()) << error;
    EXPECT_EQ(SerializeCuckooFilter(*back), whole);
  }
  EXPECT_THROW(CuckooFilterDumper(filter, 0), std::invalid_argument);
  // Its three parts make the same bytes, the table not copied, and so does
  // a dumper given the checksum kept from before.
  const CuckooFilterDumper dumper(filter, 64,
                                  CuckooFilterDumper::ImageChecksum(filter));
  std::vector<uint8_t> parts;
  std::vector<const uint8_t*> starts;
  dumper.ForEachPart([&](const uint8_t* data, size_t size) {
    starts.push_back(data);
    parts.insert(parts.end(), data, data + size);
  });
  EXPECT_EQ(parts, whole);
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_EQ(starts[1], filter.table().bytes().data());
}

// RedisBloom #726/#727: LOADCHUNK trusted the chunk's offset and size. Every
// kind of bad chunk is refused with a reason, changes nothing, and the right
// chunk can follow; the filter in the end is the original.
TEST(CuckooFilterChunkTest, RefusesBadChunksAndLosesNothing) {
  CuckooFilter filter = GrownFilterWithAStash(17);
  CuckooFilterDumper dumper(filter, 64);
  std::vector<std::vector<uint8_t>> chunks;
  std::vector<uint8_t> chunk;
  while (dumper.Next(&chunk)) chunks.push_back(chunk);
  ASSERT_GE(chunks.size(), 4u);
  CuckooFilter other_filter = GrownFilterWithAStash(18);
  CuckooFilterDumper other_dumper(other_filter, 64);
  std::vector<uint8_t> foreign;
  other_dumper.Next(&foreign);
  other_dumper.Next(&foreign);  // the other dump's chunk 1

  auto reseal = [](std::vector<uint8_t> bytes) {
    byte_io::Store<uint64_t>(bytes.data() + bytes.size() - 8,
                             XXH3_64bits(bytes.data(), bytes.size() - 8));
    return bytes;
  };
  CuckooFilterChunkLoader loader;
  std::string error;
  auto refused = [&](const std::vector<uint8_t>& bad, const std::string& what) {
    error.clear();
    EXPECT_FALSE(loader.Load(bad.data(), bad.size(), &error)) << what;
    EXPECT_NE(error.find(what), std::string::npos) << error;
  };
  refused(chunks[1], "arrived where chunk 0 was expected");
  std::optional<CuckooFilter> early = CuckooFilterChunkLoader().Finish(&error);
  EXPECT_FALSE(early.has_value());
  ASSERT_TRUE(loader.Load(chunks[0].data(), chunks[0].size(), &error)) << error;
  refused(chunks[0], "arrived where chunk 1 was expected");
  refused(foreign, "another dump");
  std::vector<uint8_t> bad = chunks[1];
  bad[45] ^= 1;
  refused(bad, "checksum mismatch");
  bad = chunks[1];
  bad.resize(20);
  refused(bad, "shorter than its frame");
  bad = chunks[1];
  byte_io::Store<uint32_t>(bad.data() + 32, 0x7FFFFFFF);  // payload size
  refused(reseal(bad), "describes a payload");
  bad = chunks[1];
  byte_io::Store<uint64_t>(bad.data() + 16, uint64_t{1} << 40);  // offset
  refused(reseal(bad), "starts at byte");
  bad = chunks[1];
  byte_io::Store<uint32_t>(bad.data() + 4, 1000);  // beyond the dump
  refused(reseal(bad), "arrived where chunk 1 was expected");
  bad = chunks[1];
  bad[0] = 'X';
  refused(bad, "bad magic");
  for (size_t i = 1; i < chunks.size(); ++i) {
    ASSERT_FALSE(loader.complete());
    ASSERT_TRUE(loader.Load(chunks[i].data(), chunks[i].size(), &error))
        << error;
  }
  refused(chunks.back(), "arrived where chunk");
  std::optional<CuckooFilter> back = loader.Finish(&error);
  ASSERT_TRUE(back.has_value()) << error;
  EXPECT_EQ(SerializeCuckooFilter(*back), SerializeCuckooFilter(filter));
}

// A dump whose header chunk describes a table other than the dump's size
// is refused before the table is allocated; a missing last chunk leaves
// Finish with a reason.
TEST(CuckooFilterChunkTest, RefusesAHeaderThatDisagreesWithTheDumpSize) {
  CuckooFilter filter = GrownFilterWithAStash(19);
  CuckooFilterDumper dumper(filter, 200);
  std::vector<std::vector<uint8_t>> chunks;
  std::vector<uint8_t> chunk;
  while (dumper.Next(&chunk)) chunks.push_back(chunk);
  std::vector<uint8_t> bad = chunks[0];
  // The bucket count field of the serialized header (payload offset 12).
  byte_io::Store<uint32_t>(bad.data() + 40 + 12, 0xFFFFFFF0u);
  byte_io::Store<uint64_t>(bad.data() + bad.size() - 8,
                           XXH3_64bits(bad.data(), bad.size() - 8));
  CuckooFilterChunkLoader loader;
  std::string error;
  EXPECT_FALSE(loader.Load(bad.data(), bad.size(), &error));
  EXPECT_FALSE(error.empty());
  for (size_t i = 0; i + 1 < chunks.size(); ++i) {
    ASSERT_TRUE(loader.Load(chunks[i].data(), chunks[i].size(), &error))
        << error;
  }
  EXPECT_FALSE(loader.Finish(&error).has_value());
  EXPECT_NE(error.find("chunks loaded"), std::string::npos) << error;
}

// CF.SCANDUMP dumps one chunk per call: a dumper that seeks to chunk k gives
// what the k-th Next gives, and nothing past the last chunk.
TEST(CuckooFilterChunkTest, SeekGivesTheChunkThatNextGives) {
  CuckooFilter filter = GrownFilterWithAStash(20);
  CuckooFilterDumper dumper(filter, 100);
  std::vector<std::vector<uint8_t>> chunks;
  std::vector<uint8_t> chunk;
  while (dumper.Next(&chunk)) chunks.push_back(chunk);
  ASSERT_GE(chunks.size(), 3u);
  for (uint64_t k : {uint64_t{2}, uint64_t{0}, uint64_t{chunks.size() - 1}}) {
    CuckooFilterDumper seeking(filter, 100);
    seeking.Seek(k);
    ASSERT_TRUE(seeking.Next(&chunk));
    EXPECT_EQ(chunk, chunks[k]) << "chunk " << k;
  }
  for (uint64_t past : {uint64_t{chunks.size()}, uint64_t{1} << 40}) {
    CuckooFilterDumper seeking(filter, 100);
    seeking.Seek(past);
    EXPECT_FALSE(seeking.Next(&chunk));
  }
}

// A server bounds what CF.LOADCHUNK may allocate: a dump larger than the
// loader's limit is refused at its first chunk, and one within it loads.
TEST(CuckooFilterChunkTest, RefusesADumpLargerThanTheLimit) {
  CuckooFilter filter = GrownFilterWithAStash(21);
  const uint64_t size = SerializeCuckooFilter(filter).size();
  CuckooFilterDumper dumper(filter, 100);
  std::vector<uint8_t> first;
  ASSERT_TRUE(dumper.Next(&first));
  std::string error;
  CuckooFilterChunkLoader small(size - 1);
  EXPECT_FALSE(small.Load(first.data(), first.size(), &error));
  EXPECT_NE(error.find("exceeds the limit"), std::string::npos) << error;
  CuckooFilterChunkLoader enough(size);
  EXPECT_TRUE(enough.Load(first.data(), first.size(), &error)) << error;
}

}  // namespace
}  // namespace cuckoo
