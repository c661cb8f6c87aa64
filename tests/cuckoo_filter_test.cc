// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Tests of the dynamic CuckooFilter: no false negatives in every layout,
// false-positive rates against the formula, delete and duplicate semantics,
// the stash, non-power-of-two sizes, the API and serialization.
#include "cuckoo/cuckoo_filter.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "cuckoo/dynamic_filter_format.h"
#include "cuckoo/sizing.h"
#include "test_util.h"

namespace cuckoo {
namespace {

using testing::HashStream;
using testing::RoundTrip;

CuckooFilterOptions Options(int b, int f, bool semi_sorted, uint64_t seed = 1) {
  CuckooFilterOptions options;
  options.layout = BucketLayout{b, f, semi_sorted};
  options.seed = seed;
  return options;
}

// Inserts keys until the filter reaches `load` or reports full; returns the
// keys that were stored.
std::vector<uint64_t> FillTo(CuckooFilter* filter, double load,
                             HashStream* stream) {
  std::vector<uint64_t> stored;
  while (filter->LoadFactor() < load) {
    const uint64_t key = stream->Next();
    if (filter->Insert(key) != InsertResult::kOk) break;
    stored.push_back(key);
  }
  return stored;
}

// A 32-bucket filter of 12-bit fingerprints whose short walks (20 kicks)
// end in its stash of 8, filled until the stash holds `stashed` entries;
// *stored gets the keys stored.
CuckooFilter FilterWithStashed(uint32_t stashed,
                               std::vector<uint64_t>* stored) {
  CuckooFilterOptions options = Options(4, 12, false);
  options.max_kicks = 20;
  options.stash_capacity = 8;
  CuckooFilter filter(32, options);
  HashStream stream(5);
  while (filter.Stats().stash_size < stashed) {
    const uint64_t key = stream.Next();
    if (filter.Insert(key) == InsertResult::kOk) stored->push_back(key);
  }
  return filter;
}

TEST(CuckooFilterTest, NoFalseNegativesInAnyLayoutWithManySeeds) {
  for (int b : {2, 4, 8}) {
    for (bool semi_sorted : {false, true}) {
      if (semi_sorted && b != 4) continue;
      for (int f = kMinFingerprintBits; f <= kMaxFingerprintBits; ++f) {
        // 256 buckets: the power-of-two arithmetic of compiled tables.
        for (uint64_t seed : {1u, 2u, 3u}) {
          const uint64_t num_buckets = seed == 2 ? 256 : 250;
          SCOPED_TRACE("b=" + std::to_string(b) + " f=" + std::to_string(f) +
                       " semi=" + std::to_string(semi_sorted) +
                       " seed=" + std::to_string(seed));
          CuckooFilter filter(num_buckets, Options(b, f, semi_sorted, seed));
          HashStream stream(seed * 1000 + f);
          std::vector<uint64_t> stored = FillTo(
              &filter, MaxLoadFactor(b, Construction::kDynamic), &stream);
          ASSERT_GT(stored.size(),
                    0.8 * filter.Capacity() *
                        MaxLoadFactor(b, Construction::kDynamic));
          ASSERT_EQ(filter.Size(), stored.size());
          std::vector<uint8_t> batch(stored.size());
          filter.ContainsBatch(stored.data(), stored.size(),
                               reinterpret_cast<bool*>(batch.data()));
          for (size_t i = 0; i < stored.size(); ++i) {
            ASSERT_TRUE(filter.Contains(stored[i])) << "key #" << i;
            ASSERT_TRUE(batch[i]) << "key #" << i;
          }
        }
      }
    }
  }
}

// Lookups compiled for a table (plain 4-slot 8, 12, 16 bits, semi-sorted 13
// bits; power-of-two bucket counts or not) and the lookups for any layout
// answer alike, single, batched and through VisitLookup, also for keys in the
// stash: each must say "present" exactly when Count finds a copy.
TEST(CuckooFilterTest, LookupsAgreeWithCountInEveryLayoutAlsoWithAStash) {
  for (const BucketLayout& layout :
       {BucketLayout{4, 8, false}, BucketLayout{4, 12, false},
        BucketLayout{4, 16, false}, BucketLayout{4, 13, true},
        BucketLayout{2, 16, false}, BucketLayout{8, 9, false}})
    for (uint64_t num_buckets : {64u, 66u}) {
      SCOPED_TRACE(std::to_string(layout.bucket_size) + " slots, " +
                   std::to_string(layout.fingerprint_bits) + " bits" +
                   (layout.semi_sorted ? ", semi-sorted, " : ", ") +
                   std::to_string(num_buckets) + " buckets");
      CuckooFilterOptions options;
      options.layout = layout;
      options.max_kicks = 8;  // short walks: the stash fills
      options.stash_capacity = 64;
      CuckooFilter filter(num_buckets, options);
      HashStream stream(layout.fingerprint_bits);
      std::vector<uint64_t> probes;  // the stored keys first
      for (uint64_t hash = stream.Next();
           filter.Insert(hash) == InsertResult::kOk; hash = stream.Next()) {
        probes.push_back(hash);
      }
      const size_t stored = probes.size();
      EXPECT_GT(filter.Stats().stash_size, 0u);
      for (int i = 0; i < 2000; ++i) probes.push_back(stream.Next());
      std::unique_ptr<bool[]> batched(new bool[probes.size()]);
      filter.ContainsBatch(probes.data(), probes.size(), batched.get());
      std::vector<uint8_t> visited(probes.size());
      filter.VisitLookup([&](const auto& lookup) {
        for (size_t i = 0; i < probes.size(); ++i) {
          visited[i] = lookup.Contains(probes[i]);
        }
      });
      for (size_t i = 0; i < probes.size(); ++i) {
        const bool counted = filter.Count(probes[i]) > 0;
        ASSERT_EQ(filter.Contains(probes[i]), counted) << i;
        ASSERT_EQ(batched[i], counted) << i;
        ASSERT_EQ(visited[i] != 0, counted) << i;
        if (i < stored) {
          ASSERT_TRUE(counted) << "stored key " << i;
        }
      }
    }
}

TEST(CuckooFilterTest, FalsePositiveRateMatchesTheFormula) {
  struct Case {
    int b, f;
    bool semi_sorted;
  };
  for (const Case& c : {Case{4, 8, false}, Case{4, 12, true}, Case{2, 8, false},
                        Case{8, 10, false}, Case{4, 10, true}}) {
    SCOPED_TRACE("b=" + std::to_string(c.b) + " f=" + std::to_string(c.f) +
                 " semi=" + std::to_string(c.semi_sorted));
    CuckooFilter filter(1 << 16, Options(c.b, c.f, c.semi_sorted));
    HashStream stream(42);
    FillTo(&filter, 0.9 * MaxLoadFactor(c.b, Construction::kDynamic), &stream);
    const double expected =
        2.0 * c.b * filter.LoadFactor() / (std::ldexp(1.0, c.f) - 1.0);
    HashStream absent(777);  // a different stream: absent keys
    const int probes = 2000000;
    int false_positives = 0;
    for (int i = 0; i < probes; ++i)
      false_positives += filter.Contains(absent.Next());
    const double measured = static_cast<double>(false_positives) / probes;
    RecordProperty("fpr", std::to_string(measured));
    EXPECT_NEAR(measured, expected, 0.2 * expected)
        << "measured " << measured << " expected " << expected;
    EXPECT_NEAR(measured,
                ExpectedFalsePositiveRate(filter.layout(), filter.LoadFactor()),
                0.2 * expected);
  }
}

// Integer keys in arithmetic progressions, hashed with HashInteger, fill a
// table to the dynamic load limit and give the false-positive rate of random
// keys: sequential ids, and strides that leave the low bits (2^20) or the
// whole low half (2^32) of every key equal. The absent keys probed continue
// each progression. An identity "hash" of the same keys puts every one in
// bucket 0 and fails at the first full bucket pair.
TEST(CuckooFilterTest, IntegerKeysInProgressionsGiveTheRandomKeyRate) {
  constexpr int kFingerprintBits = 12;
  constexpr uint32_t kBuckets = 1 << 14;
  constexpr uint64_t kProbes = 1 << 20;
  CuckooFilterOptions options = Options(4, kFingerprintBits, false);
  options.hasher = KeyHasher::kInteger;
  const uint64_t stored = static_cast<uint64_t>(
      kBuckets * 4 * MaxLoadFactor(4, Construction::kDynamic));
  for (uint64_t stride : {uint64_t{1}, uint64_t{1} << 20, uint64_t{1} << 32,
                          uint64_t{0x9E3779B97F4A7C15}}) {
    SCOPED_TRACE("stride " + std::to_string(stride));
    CuckooFilter filter(kBuckets, options);
    for (uint64_t i = 0; i < stored; ++i) {
      ASSERT_EQ(filter.Insert(HashInteger(i * stride)), InsertResult::kOk)
          << "key " << i << " of " << stored;
    }
    uint64_t false_positives = 0;
    for (uint64_t i = stored; i < stored + kProbes; ++i) {
      false_positives += filter.Contains(HashInteger(i * stride));
    }
    const double expected =
        ExpectedFalsePositiveRate(filter.layout(), filter.LoadFactor());
    const double measured =
        static_cast<double>(false_positives) / static_cast<double>(kProbes);
    // About 1900 expected false positives: the bound is 4.5 of their
    // standard deviations.
    EXPECT_NEAR(measured, expected, 0.1 * expected);
  }
  CuckooFilter identity(kBuckets, options);
  uint64_t identity_stored = 0;
  while (identity.Insert(identity_stored) == InsertResult::kOk) {
    ++identity_stored;
  }
  EXPECT_LT(identity_stored, 2 * 4 + options.stash_capacity + 1);
}

TEST(CuckooFilterTest, DuplicatesAreCountedAndErasedOneAtATime) {
  CuckooFilter filter(1000, Options(4, 16, true));
  const uint64_t key = 0xABCDEF0123456789ull;
  EXPECT_EQ(filter.Count(key), 0u);
  EXPECT_FALSE(filter.Erase(key));
  for (uint32_t copies = 1; copies <= 3; ++copies) {
    ASSERT_EQ(filter.Insert(key), InsertResult::kOk);
    EXPECT_EQ(filter.Count(key), copies);
  }
  EXPECT_EQ(filter.Size(), 3u);
  EXPECT_TRUE(filter.Erase(key));
  EXPECT_EQ(filter.Count(key), 2u);
  EXPECT_TRUE(filter.Contains(key));
  EXPECT_TRUE(filter.Erase(key));
  EXPECT_TRUE(filter.Erase(key));
  EXPECT_FALSE(filter.Contains(key));
  EXPECT_FALSE(filter.Erase(key));
  EXPECT_EQ(filter.Size(), 0u);
}

TEST(CuckooFilterTest, ABucketPairHoldsTwoBucketsOfCopiesThenTheStash) {
  CuckooFilterOptions options = Options(4, 12, false);
  options.stash_capacity = 2;
  CuckooFilter filter(100, options);
  const uint64_t key = 12345;
  for (int i = 0; i < 8 + 2; ++i) {
    ASSERT_EQ(filter.Insert(key), InsertResult::kOk) << "copy " << i;
  }
  EXPECT_EQ(filter.Stats().stash_size, 2u);
  EXPECT_EQ(filter.Insert(key), InsertResult::kFull);
  EXPECT_EQ(filter.Count(key), 10u);
  EXPECT_EQ(filter.history().failed_inserts, 1u);
}

TEST(CuckooFilterTest, AFailedInsertLosesNoStoredKeyAndChangesNothing) {
  for (bool semi_sorted : {false, true}) {
    CuckooFilterOptions options = Options(4, 12, semi_sorted);
    options.max_kicks = 50;
    options.stash_capacity = 3;
    CuckooFilter filter(64, options);
    HashStream stream(9);
    std::vector<uint64_t> stored;
    int failures = 0;
    // Keep inserting well past the point where the table is full: every walk
    // then ends with a homeless fingerprint that belongs to an older key.
    for (int i = 0; i < 2000; ++i) {
      const uint64_t key = stream.Next();
      const std::vector<uint8_t> before = SerializeCuckooFilter(filter);
      if (filter.Insert(key) == InsertResult::kOk) {
        stored.push_back(key);
        continue;
      }
      ++failures;
      // Only the failure counter may differ: compare the table, stash and size.
      std::string error;
      auto previous =
          DeserializeCuckooFilter(before.data(), before.size(), &error);
      ASSERT_TRUE(previous.has_value()) << error;
      ASSERT_EQ(previous->Size(), filter.Size());
      for (uint64_t k : stored) ASSERT_EQ(previous->Count(k), filter.Count(k));
    }
    EXPECT_GT(failures, 1000);
    EXPECT_EQ(filter.Stats().stash_size, 3u);
    EXPECT_EQ(filter.Size(), stored.size());
    for (uint64_t key : stored) ASSERT_TRUE(filter.Contains(key));
    EXPECT_GT(filter.LoadFactor(), 0.9);
  }
}

// When both buckets of a new key are full, the path search frees a slot
// with the fewest moves: up to the dynamic filter's load limit almost every
// insert moves at most kPathSearchDepth (5) stored fingerprints, where a
// random walk at 90-95% load takes tens of kicks. Every key stays findable.
TEST(CuckooFilterTest, InsertsNearTheLoadLimitMoveFewFingerprints) {
  for (const BucketLayout& layout :
       {BucketLayout{4, 12, false}, BucketLayout{4, 13, true},
        BucketLayout{8, 10, false}, BucketLayout{4, 14, false}}) {
    for (uint64_t num_buckets : {4096u, 4094u}) {
      SCOPED_TRACE("b=" + std::to_string(layout.bucket_size) +
                   " f=" + std::to_string(layout.fingerprint_bits) +
                   " semi=" + std::to_string(layout.semi_sorted) +
                   " buckets=" + std::to_string(num_buckets));
      CuckooFilter filter(num_buckets,
                          Options(layout.bucket_size, layout.fingerprint_bits,
                                  layout.semi_sorted, num_buckets));
      HashStream stream(num_buckets + layout.fingerprint_bits);
      const double limit =
          MaxLoadFactor(layout.bucket_size, Construction::kDynamic);
      std::vector<uint64_t> stored = FillTo(&filter, limit - 0.05, &stream);
      uint64_t late_inserts = 0, long_paths = 0;
      while (filter.LoadFactor() < limit) {
        const uint64_t kicks_before = filter.history().total_kicks;
        const uint64_t key = stream.Next();
        ASSERT_EQ(filter.Insert(key), InsertResult::kOk);
        stored.push_back(key);
        ++late_inserts;
        long_paths += filter.history().total_kicks - kicks_before > 5;
      }
      EXPECT_EQ(filter.Stats().stash_size, 0u);
      EXPECT_LE(long_paths, late_inserts / 200) << late_inserts;
      for (uint64_t key : stored) ASSERT_TRUE(filter.Contains(key));
    }
  }
}

// In tables of a few buckets the path search meets the same buckets and the
// same fingerprints again and again, and the walk and the stash take over
// when it fails. Filling far past full loses no key.
TEST(CuckooFilterTest, TinyTablesFilledPastFullLoseNoKey) {
  // Short fingerprints, so that equal ones meet too; compiled tables
  // (plain 8-bit, semi-sorted 5-bit) and the generic one.
  for (const BucketLayout& layout :
       {BucketLayout{2, 6, false}, BucketLayout{4, 6, false},
        BucketLayout{8, 6, false}, BucketLayout{4, 8, false},
        BucketLayout{4, 5, true}}) {
    const int b = layout.bucket_size;
    for (uint64_t num_buckets : {2u, 4u, 6u, 8u}) {
      for (uint64_t seed = 1; seed <= 20; ++seed) {
        SCOPED_TRACE("b=" + std::to_string(b) +
                     " f=" + std::to_string(layout.fingerprint_bits) +
                     " semi=" + std::to_string(layout.semi_sorted) +
                     " buckets=" + std::to_string(num_buckets) +
                     " seed=" + std::to_string(seed));
        CuckooFilterOptions options =
            Options(b, layout.fingerprint_bits, layout.semi_sorted, seed);
        options.stash_capacity = 1;
        CuckooFilter filter(num_buckets, options);
        HashStream stream(seed);
        std::vector<uint64_t> stored;
        for (int i = 0; i < 4 * b * static_cast<int>(num_buckets); ++i) {
          const uint64_t key = stream.Next();
          if (filter.Insert(key) == InsertResult::kOk) stored.push_back(key);
          ASSERT_EQ(filter.Size(), stored.size());
        }
        for (uint64_t key : stored) ASSERT_TRUE(filter.Contains(key));
        for (uint64_t key : stored) ASSERT_TRUE(filter.Erase(key));
        EXPECT_EQ(filter.Size(), 0u);
      }
    }
  }
}

TEST(CuckooFilterTest, ErasingMovesStashEntriesBackIntoTheTable) {
  std::vector<uint64_t> stored;
  CuckooFilter filter = FilterWithStashed(4, &stored);
  EXPECT_GE(filter.history().peak_stash_size, 4u);
  // Erase half of the keys: slots free up and the stash empties.
  for (size_t i = 0; i < stored.size(); i += 2)
    ASSERT_TRUE(filter.Erase(stored[i]));
  EXPECT_EQ(filter.Stats().stash_size, 0u);
  for (size_t i = 1; i < stored.size(); i += 2)
    ASSERT_TRUE(filter.Contains(stored[i]));
}

TEST(CuckooFilterTest, InsertEraseChurnOnNonPowerOfTwoSizes) {
  for (uint64_t buckets : {3u, 1000u, 1001u, 12346u}) {
    CuckooFilter filter(buckets, Options(4, 16, true, buckets));
    EXPECT_EQ(filter.NumBuckets() % 2, 0u);
    HashStream stream(buckets);
    std::vector<uint64_t> live = FillTo(&filter, 0.85, &stream);
    for (int round = 0; round < 5; ++round) {
      // Erase a third, insert as many new ones, check every live key.
      std::vector<uint64_t> kept;
      for (size_t i = 0; i < live.size(); ++i) {
        if (i % 3 == static_cast<size_t>(round % 3)) {
          ASSERT_TRUE(filter.Erase(live[i]));
        } else {
          kept.push_back(live[i]);
        }
      }
      live = kept;
      std::vector<uint64_t> added = FillTo(&filter, 0.85, &stream);
      live.insert(live.end(), added.begin(), added.end());
      ASSERT_EQ(filter.Size(), live.size());
      for (uint64_t key : live) ASSERT_TRUE(filter.Contains(key));
    }
    for (uint64_t key : live) ASSERT_TRUE(filter.Erase(key));
    EXPECT_EQ(filter.Size(), 0u);
    EXPECT_EQ(filter.Stats().empty_buckets, filter.NumBuckets());
  }
}

TEST(CuckooFilterTest, SameSeedSameFilter) {
  auto build = [](uint64_t seed) {
    CuckooFilter filter(500, Options(4, 12, true, seed));
    HashStream stream(1);
    FillTo(&filter, 0.95, &stream);
    return SerializeCuckooFilter(filter);
  };
  EXPECT_EQ(build(7), build(7));
  EXPECT_NE(build(7), build(8));
}

TEST(CuckooFilterTest, StatisticsDescribeTheTable) {
  CuckooFilter filter(100, Options(4, 12, false));
  EXPECT_EQ(filter.Stats().empty_buckets, 100u);
  HashStream stream(3);
  FillTo(&filter, 0.95, &stream);
  const CuckooFilterStats stats = filter.Stats();
  uint64_t buckets = 0, items = 0;
  for (size_t fill = 0; fill < stats.bucket_occupancy.size(); ++fill) {
    buckets += stats.bucket_occupancy[fill];
    items += fill * stats.bucket_occupancy[fill];
  }
  EXPECT_EQ(buckets, filter.NumBuckets());
  EXPECT_EQ(items + stats.stash_size, filter.Size());
  EXPECT_EQ(stats.full_buckets, stats.bucket_occupancy[4]);
  EXPECT_EQ(stats.max_bucket_fill, 4);
  EXPECT_GT(filter.history().total_kicks, 0u);
  EXPECT_NEAR(filter.BitsPerKey(), 8.0 * filter.SizeInBytes() / filter.Size(),
              1e-9);
  filter.Clear();
  EXPECT_EQ(filter.Size(), 0u);
  EXPECT_EQ(filter.Stats().empty_buckets, 100u);
}

TEST(CuckooFilterTest, RejectsInvalidOptions) {
  EXPECT_THROW(CuckooFilter(10, Options(3, 12, false)), std::invalid_argument);
  EXPECT_THROW(CuckooFilter(10, Options(4, 40, false)), std::invalid_argument);
  EXPECT_THROW(CuckooFilter(10, Options(2, 12, true)), std::invalid_argument);
  CuckooFilterOptions no_stash = Options(4, 12, false);
  no_stash.stash_capacity = 0;
  EXPECT_THROW(CuckooFilter(10, no_stash), std::invalid_argument);
  CuckooFilterOptions huge_stash = Options(4, 12, false);
  huge_stash.stash_capacity = kMaxStashCapacity + 1;
  EXPECT_THROW(CuckooFilter(10, huge_stash), std::invalid_argument);
  CuckooFilterOptions endless_walks = Options(4, 12, false);
  endless_walks.max_kicks = kMaxKicksLimit + 1;
  EXPECT_THROW(CuckooFilter(10, endless_walks), std::invalid_argument);
  endless_walks.max_kicks = kMaxKicksLimit;
  EXPECT_NO_THROW(CuckooFilter(10, endless_walks));
  CuckooFilterOptions unknown_hasher = Options(4, 12, false);
  unknown_hasher.hasher = static_cast<KeyHasher>(kMaxKeyHasherId + 1);
  EXPECT_THROW(CuckooFilter(10, unknown_hasher), std::invalid_argument);
}

// RedisBloom's RESERVE overflowed on huge sizes (#724) and took negative
// capacities (#434): here a bucket count beyond 2^32 - 2, or a negative
// number converted to it, is refused before anything is allocated.
TEST(CuckooFilterTest, RejectsHugeAndNegativeSizesBeforeAllocating) {
  EXPECT_THROW(CuckooFilter(uint64_t{1} << 40), std::length_error);
  EXPECT_THROW(CuckooFilter(static_cast<uint64_t>(int64_t{-1})),
               std::length_error);
  EXPECT_THROW(CuckooFilter(kMaxNumBuckets + 1), std::length_error);
  // The smallest size is two buckets.
  EXPECT_EQ(CuckooFilter(0).NumBuckets(), 2u);
}

TEST(CuckooFilterApiTest, InsertIfAbsentSkipsWhatTheFilterAlreadyMatches) {
  CuckooFilter filter(1024, Options(4, 12, false));
  HashStream stream(5);
  const std::vector<uint64_t> stored = FillTo(&filter, 0.5, &stream);
  for (uint64_t key : stored) {
    ASSERT_EQ(filter.InsertIfAbsent(key), InsertResult::kMayExist);
  }
  EXPECT_EQ(filter.Size(), stored.size());
  // Fresh keys: inserted, except the false positives, at about the rate
  // of a lookup of absent keys (at most 2 b / 2^f = 0.2% here).
  size_t skipped = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t key = stream.Next();
    const bool matched = filter.Contains(key);
    const InsertResult result = filter.InsertIfAbsent(key);
    ASSERT_EQ(result, matched ? InsertResult::kMayExist : InsertResult::kOk);
    skipped += matched;
    ASSERT_TRUE(filter.Contains(key));
  }
  EXPECT_LT(skipped, 20u);
  EXPECT_EQ(filter.Size(), stored.size() + 1000 - skipped);
}

// Also across growths, and in layouts with and without a compiled table.
TEST(CuckooFilterApiTest, BatchedInsertsGiveWhatOneByOneInsertsGive) {
  HashStream stream(6);
  std::vector<uint64_t> keys(3000);
  for (uint64_t& key : keys) key = stream.Next();
  keys[10] = keys[3];  // a duplicate, for the IfAbsent variant
  CuckooFilterOptions growing = Options(4, 12, false);
  growing.expansion = 2;
  growing.max_growths = 2;
  for (const CuckooFilterOptions& options :
       {Options(4, 10, false), Options(4, 12, false), growing}) {
    for (bool if_absent : {false, true}) {
      SCOPED_TRACE("f=" + std::to_string(options.layout.fingerprint_bits) +
                   " expansion=" + std::to_string(options.expansion) +
                   " if_absent=" + std::to_string(if_absent));
      CuckooFilter one_by_one(256, options);
      CuckooFilter batched(256, options);
      std::vector<InsertResult> results(keys.size());
      const size_t stored =
          if_absent
              ? batched.InsertManyIfAbsent(keys.data(), keys.size(),
                                           results.data())
              : batched.InsertMany(keys.data(), keys.size(), results.data());
      size_t expected_stored = 0;
      for (size_t i = 0; i < keys.size(); ++i) {
        const InsertResult expected = if_absent
                                          ? one_by_one.InsertIfAbsent(keys[i])
                                          : one_by_one.Insert(keys[i]);
        ASSERT_EQ(results[i], expected) << i;
        expected_stored += expected == InsertResult::kOk;
      }
      EXPECT_EQ(stored, expected_stored);
      // 3000 keys in 1024 slots, 4096 after two growths: without growth the
      // tail did not fit; with it, the filter grew twice on the way.
      if (options.expansion == 0) {
        EXPECT_LT(stored, keys.size());
      } else {
        EXPECT_EQ(batched.Info().num_growths, 2u);
      }
      EXPECT_EQ(SerializeCuckooFilter(batched),
                SerializeCuckooFilter(one_by_one));
      if (if_absent) {
        EXPECT_EQ(results[10], InsertResult::kMayExist);
      }
    }
  }
}

TEST(CuckooFilterApiTest, MergeAddsEveryKeyOfTheOtherFilterOrNothing) {
  for (const BucketLayout& layout :
       {BucketLayout{4, 12, false}, BucketLayout{4, 13, true},
        BucketLayout{2, 16, false}}) {
    CuckooFilterOptions options;
    options.layout = layout;
    CuckooFilter a(512, options);
    options.seed = 99;  // other options may differ
    CuckooFilter b(512, options);
    HashStream stream(layout.fingerprint_bits);
    const std::vector<uint64_t> in_a = FillTo(&a, 0.3, &stream);
    const std::vector<uint64_t> in_b = FillTo(&b, 0.3, &stream);
    ASSERT_EQ(a.Merge(b), InsertResult::kOk);
    EXPECT_EQ(a.Size(), in_a.size() + in_b.size());
    for (uint64_t key : in_a) ASSERT_TRUE(a.Contains(key));
    for (uint64_t key : in_b) {
      ASSERT_TRUE(a.Contains(key));
      ASSERT_GE(a.Count(key), b.Count(key));
    }
    // Erasing b's keys again leaves a's.
    for (uint64_t key : in_b) ASSERT_TRUE(a.Erase(key));
    EXPECT_EQ(a.Size(), in_a.size());
    for (uint64_t key : in_a) ASSERT_TRUE(a.Contains(key));

    // Too much to hold: nothing changes.
    CuckooFilter full(512, options);
    FillTo(&full, 0.9, &stream);
    CuckooFilter other(512, options);
    FillTo(&other, 0.5, &stream);
    const std::vector<uint8_t> before = SerializeCuckooFilter(full);
    EXPECT_EQ(full.Merge(other), InsertResult::kFull);
    EXPECT_EQ(SerializeCuckooFilter(full), before);
  }
  CuckooFilter small(64, Options(4, 12, false));
  EXPECT_THROW(small.Merge(CuckooFilter(128, Options(4, 12, false))),
               std::invalid_argument);
  EXPECT_THROW(small.Merge(CuckooFilter(64, Options(4, 13, false))),
               std::invalid_argument);
  CuckooFilterOptions integer_keys = Options(4, 12, false);
  integer_keys.hasher = KeyHasher::kInteger;
  EXPECT_THROW(small.Merge(CuckooFilter(64, integer_keys)),
               std::invalid_argument)
      << "the same bucket pair means another key under another hash";
}

// The other filter's stash is merged too: the keys that only its stash holds
// are found in the result, as many times as in the source.
TEST(CuckooFilterApiTest, MergeTakesTheOtherFiltersStash) {
  std::vector<uint64_t> stored;
  const CuckooFilter source = FilterWithStashed(4, &stored);
  CuckooFilter merged(32, source.options());
  ASSERT_EQ(merged.Merge(source), InsertResult::kOk);
  EXPECT_EQ(merged.Size(), source.Size());
  for (uint64_t key : stored) {
    ASSERT_EQ(merged.Count(key), source.Count(key)) << "key " << key;
  }
}

// A filter's parts, as a loader reads them, make the same filter again,
// grown or not, with a stash or not.
TEST(CuckooFilterRestoreTest, AFiltersOwnPartsMakeTheSameFilter) {
  std::vector<uint64_t> stashed_keys;
  const CuckooFilter stashed = FilterWithStashed(3, &stashed_keys);
  CuckooFilterOptions options = Options(4, 10, false);
  options.expansion = 2;
  options.max_growths = 3;
  CuckooFilter grown(16, options);
  HashStream stream(21);
  std::vector<uint64_t> grown_keys;
  while (grown.Growths() < 2) {
    grown_keys.push_back(stream.Next());
    ASSERT_EQ(grown.Insert(grown_keys.back()), InsertResult::kOk);
  }
  using FilterAndKeys =
      std::pair<const CuckooFilter*, const std::vector<uint64_t>*>;
  for (const auto& [filter, keys] : {FilterAndKeys{&stashed, &stashed_keys},
                                     FilterAndKeys{&grown, &grown_keys}}) {
    std::string error;
    std::optional<CuckooFilter> back = CuckooFilter::Restore(
        filter->options(), filter->Growths(), filter->table(),
        std::vector<StashEntry>(filter->stash().begin(), filter->stash().end()),
        filter->history(), &error);
    ASSERT_TRUE(back.has_value()) << error;
    EXPECT_EQ(SerializeCuckooFilter(*back), SerializeCuckooFilter(*filter));
    for (uint64_t key : *keys) ASSERT_EQ(back->Count(key), filter->Count(key));
  }
}

// A defragmenter moves the table, the stash and the walk log: the filter
// answers from the new storage as before and keeps working; one that moves
// nothing changes nothing. (Under ASan, any use of the old storage fails.)
TEST(CuckooFilterRelocateTest, MovedStorageKeepsEveryKey) {
  std::vector<uint64_t> stored;
  CuckooFilter filter = FilterWithStashed(3, &stored);
  const FilterState& state = filter.state();
  ASSERT_GT(state.walk_log.capacity(), 0u);
  const std::map<const void*, size_t> sizes = {
      {state.table.bytes().data(), state.table.bytes().capacity()},
      {state.stash.data(), state.stash.capacity() * sizeof(StashEntry)},
      {state.walk_log.data(), state.walk_log.capacity() * sizeof(KickStep)}};
  const std::vector<uint8_t> before = SerializeCuckooFilter(filter);
  auto leave = [](void*) -> void* { return nullptr; };
  EXPECT_EQ(filter.RelocateStorage(leave), 0);
  // The old storage is freed at the end, so that no new one takes its place.
  std::vector<void*> old_storage;
  auto move = [&](void* old) -> void* {
    const size_t size = sizes.at(old);
    void* moved = ::operator new(size);
    std::memcpy(moved, old, size);
    old_storage.push_back(old);
    return moved;
  };
  const int moved = filter.RelocateStorage(move);
  for (void* old : old_storage) ::operator delete(old);
  ASSERT_EQ(moved, 3);
  EXPECT_EQ(sizes.count(state.table.bytes().data()) +
                sizes.count(state.stash.data()) +
                sizes.count(state.walk_log.data()),
            0u);
  EXPECT_EQ(filter.table().view().data(), filter.table().bytes().data());
  EXPECT_EQ(SerializeCuckooFilter(filter), before);
  for (uint64_t key : stored) ASSERT_TRUE(filter.Contains(key));
  // Walks (through the moved walk log) and the stash still work.
  HashStream stream(77);
  while (filter.Stats().stash_size < 8) {
    const uint64_t key = stream.Next();
    if (filter.Insert(key) == InsertResult::kOk) stored.push_back(key);
  }
  for (uint64_t key : stored) ASSERT_TRUE(filter.Contains(key));
  for (uint64_t key : stored) ASSERT_TRUE(filter.Erase(key));
  EXPECT_EQ(filter.Size(), 0u);
}

// Parts that no filter has are refused with a reason, and nothing throws.
TEST(CuckooFilterRestoreTest, RefusesPartsNoFilterHas) {
  std::vector<uint64_t> stored;
  const CuckooFilter filter = FilterWithStashed(3, &stored);
  auto expect_refused =
      [&](const CuckooFilterOptions& options, uint32_t growths,
          const BucketTable& table, const std::vector<StashEntry>& stash,
          const CuckooFilterHistory& history, const std::string& what) {
        std::string error;
        EXPECT_FALSE(CuckooFilter::Restore(options, growths, table, stash,
                                           history, &error))
            << what;
        EXPECT_NE(error.find(what), std::string::npos) << error;
      };
  const CuckooFilterOptions& options = filter.options();
  const BucketTable& table = filter.table();
  const std::vector<StashEntry> stash(filter.stash().begin(),
                                      filter.stash().end());
  ASSERT_EQ(stash.size(), 3u);
  CuckooFilterHistory history = filter.history();
  history.items += 1;
  expect_refused(options, 0, table, stash, history, "item count");
  history = filter.history();
  history.peak_stash_size = 2;
  expect_refused(options, 0, table, stash, history, "stash size 3 / peak 2");
  std::vector<StashEntry> bad_stash = stash;
  bad_stash[1].bucket = filter.NumBuckets();
  expect_refused(options, 0, table, bad_stash, filter.history(),
                 "stash entry 1 is out of range");
  bad_stash = stash;
  bad_stash[2].fingerprint = 0;
  expect_refused(options, 0, table, bad_stash, filter.history(),
                 "stash entry 2 is out of range");
  expect_refused(options, 1, table, stash, filter.history(),
                 "1 growths exceed the limit of 0");
  CuckooFilterOptions other = options;
  other.layout.fingerprint_bits = 13;
  expect_refused(other, 0, table, stash, filter.history(), "slots or size");
  other = options;
  other.stash_capacity = 0;
  expect_refused(other, 0, table, stash, filter.history(), "stash capacity 0");
  BucketTable padded = table;
  padded.mutable_bytes().back() = 1;
  expect_refused(options, 0, padded, stash, filter.history(), "padding");
}

TEST(CuckooFilterSerializationTest, RoundTripPreservesEverything) {
  for (bool semi_sorted : {false, true}) {
    CuckooFilterOptions options = Options(4, 13, semi_sorted);
    options.max_kicks = 30;
    CuckooFilter filter(300, options);
    HashStream stream(11);
    std::vector<uint64_t> stored;
    for (int i = 0; i < 1300; ++i) {
      const uint64_t key = stream.Next();
      if (filter.Insert(key) == InsertResult::kOk) stored.push_back(key);
    }
    ASSERT_GT(filter.Stats().stash_size, 0u) << "the test wants a used stash";
    std::optional<CuckooFilter> back = RoundTrip(filter);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->Size(), filter.Size());
    for (uint64_t key : stored) ASSERT_TRUE(back->Contains(key));
    // The generator state travels too: both continue identically.
    HashStream more(12);
    for (int i = 0; i < 50; ++i) {
      const uint64_t key = more.Next();
      ASSERT_EQ(filter.Insert(key), back->Insert(key));
    }
    EXPECT_EQ(SerializeCuckooFilter(*back), SerializeCuckooFilter(filter));
  }
}

// Rewrites the checksum so that validation beyond it is exercised.
void Reseal(std::vector<uint8_t>* bytes) {
  const size_t body = bytes->size() - 8;
  byte_io::Store<uint64_t>(bytes->data() + body,
                           XXH3_64bits(bytes->data(), body));
}

// The key hasher travels with the filter (bits 1-2 of the flags byte), and a
// reader refuses one it does not know rather than guess.
TEST(CuckooFilterSerializationTest, RecordsTheKeyHasher) {
  for (bool semi_sorted : {false, true}) {
    CuckooFilterOptions options = Options(4, 13, semi_sorted);
    options.hasher = KeyHasher::kInteger;
    CuckooFilter filter(64, options);
    for (uint64_t key = 0; key < 100; ++key) {
      ASSERT_EQ(filter.Insert(HashInteger(key)), InsertResult::kOk);
    }
    std::vector<uint8_t> bytes = SerializeCuckooFilter(filter);
    EXPECT_EQ(bytes[8], semi_sorted ? 3 : 2);
    std::string error;
    std::optional<CuckooFilter> back =
        DeserializeCuckooFilter(bytes.data(), bytes.size(), &error);
    ASSERT_TRUE(back.has_value()) << error;
    EXPECT_EQ(back->options().hasher, KeyHasher::kInteger);
    for (uint64_t key = 0; key < 100; ++key) {
      ASSERT_TRUE(back->Contains(HashInteger(key)));
    }
    bytes[8] = static_cast<uint8_t>(bytes[8] & 1);
    Reseal(&bytes);
    back = DeserializeCuckooFilter(bytes.data(), bytes.size(), &error);
    ASSERT_TRUE(back.has_value()) << error;
    EXPECT_EQ(back->options().hasher, KeyHasher::kXxh3);
    for (uint8_t unknown : {2, 3}) {
      bytes[8] = static_cast<uint8_t>((bytes[8] & 1) | unknown << 1);
      Reseal(&bytes);
      EXPECT_FALSE(DeserializeCuckooFilter(bytes.data(), bytes.size(), &error));
      EXPECT_NE(
          error.find("key hasher " + std::to_string(unknown) + " is unknown"),
          std::string::npos)
          << error;
    }
  }
}

TEST(CuckooFilterSerializationTest, RejectsEveryCorruptionWithAReason) {
  CuckooFilter filter(64, Options(4, 12, true));
  HashStream stream(13);
  FillTo(&filter, 0.9, &stream);
  const std::vector<uint8_t> good = SerializeCuckooFilter(filter);
  std::string error;
  // Every truncation.
  for (size_t size = 0; size < good.size(); ++size) {
    EXPECT_FALSE(DeserializeCuckooFilter(good.data(), size, &error));
    EXPECT_FALSE(error.empty());
  }
  // Every single-bit flip is caught (by the checksum at least).
  for (size_t byte = 0; byte < good.size(); ++byte) {
    for (int bit = 0; bit < 8; bit += 3) {
      std::vector<uint8_t> bad = good;
      bad[byte] ^= static_cast<uint8_t>(1u << bit);
      error.clear();
      EXPECT_FALSE(DeserializeCuckooFilter(bad.data(), bad.size(), &error))
          << "byte " << byte;
      EXPECT_NE(error, "");
    }
  }
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_FALSE(DeserializeCuckooFilter(longer.data(), longer.size(), &error));
  EXPECT_FALSE(DeserializeCuckooFilter(nullptr, 0, &error));
}

TEST(CuckooFilterSerializationTest, RejectsWellSealedButInconsistentContents) {
  CuckooFilter filter(64, Options(4, 12, true));
  HashStream stream(14);
  FillTo(&filter, 0.5, &stream);
  const std::vector<uint8_t> good = SerializeCuckooFilter(filter);
  std::string error;
  auto expect_rejected = [&](std::vector<uint8_t> bad,
                             const std::string& what) {
    Reseal(&bad);
    error.clear();
    EXPECT_FALSE(DeserializeCuckooFilter(bad.data(), bad.size(), &error))
        << what;
    EXPECT_NE(error.find(what), std::string::npos) << error;
  };
  std::vector<uint8_t> bad = good;
  bad[4] = 3;  // format version 3
  expect_rejected(bad, "unsupported format version 3");
  bad = good;
  bad[7] = 40;  // fingerprint bits
  expect_rejected(bad, "fingerprint width");
  bad = good;
  byte_io::Store<uint64_t>(bad.data() + 32, filter.Size() + 1);
  expect_rejected(bad, "item count");
  bad = good;
  byte_io::Store<uint32_t>(bad.data() + 12, 63);  // odd bucket count
  expect_rejected(bad, "even");
  bad = good;
  // Set a semi-sort code to 4095 in bucket 0 (first 12 bits of the table).
  bad[80] = 0xFF;
  bad[81] |= 0x0F;
  expect_rejected(bad, "semi-sort code");
  bad = good;
  bad[bad.size() - 9] = 1;  // last padding byte
  expect_rejected(bad, "padding");
  // Limits that no writer produces: 2^32 - 1 kicks would make every later
  // Insert into a walk of 4e9 steps.
  bad = good;
  byte_io::Store<uint32_t>(bad.data() + 16, 0xFFFFFFFFu);
  expect_rejected(bad, "max_kicks 4294967295");
  bad = good;
  byte_io::Store<uint32_t>(bad.data() + 16, kMaxKicksLimit + 1);
  expect_rejected(bad, "max_kicks");
  bad = good;
  byte_io::Store<uint32_t>(bad.data() + 20, kMaxStashCapacity + 1);
  expect_rejected(bad, "capacity");
  bad = good;  // a peak above the capacity
  byte_io::Store<uint32_t>(bad.data() + 28,
                           filter.options().stash_capacity + 1);
  expect_rejected(bad, "peak");
}

}  // namespace
}  // namespace cuckoo
