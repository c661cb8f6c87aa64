// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Tests of the static build path and of sizing.
#include "cuckoo/static_builder.h"

#include <gtest/gtest.h>

#include <optional>

#include "cuckoo/sizing.h"
#include "test_util.h"

namespace cuckoo {
namespace {

using testing::HashStream;

bool TableContains(const BucketTable& table, uint64_t hash) {
  const CuckooHashing hashing(table.num_buckets(),
                              table.layout().fingerprint_bits);
  return AnyLayoutTable::Contains(table.view(), hashing.Locate(hash));
}

TEST(StaticBuilderTest, ReachesNinetyFivePercentLoadAtFourSlotsFirstTime) {
  for (size_t n : {1000u, 10000u, 100000u, 1000000u}) {
    for (bool semi_sorted : {false, true}) {
      SCOPED_TRACE("n=" + std::to_string(n) +
                   " semi=" + std::to_string(semi_sorted));
      HashStream stream(n + semi_sorted);
      std::vector<uint64_t> keys = stream.Take(n);
      StaticBuildStats stats;
      BucketTable table = BuildStaticTable(
          keys, BucketLayout{4, 12, semi_sorted}, 0.95, &stats);
      EXPECT_EQ(stats.attempts, 1u) << "the first attempt must place every key";
      const double keys_per_slot =
          static_cast<double>(n) / (4.0 * table.num_buckets());
      EXPECT_GE(keys_per_slot, 0.95 - 4.0 / n);
      // Every key has its own entry but for the rare complete collisions
      // (same buckets and fingerprint), which share one: about 2b * 0.95 /
      // 2^12 of the keys.
      EXPECT_EQ(stats.stored_entries + stats.shared_entries, n);
      EXPECT_EQ(stats.placed_greedily + stats.placed_by_search,
                stats.stored_entries);
      EXPECT_LE(stats.shared_entries, 0.004 * n + 2);
      EXPECT_GT(stats.placed_by_search, 0u);
      RecordProperty("keys_per_slot_" + std::to_string(n),
                     std::to_string(keys_per_slot));
      for (uint64_t key : keys) ASSERT_TRUE(TableContains(table, key));
    }
  }
}

TEST(StaticBuilderTest, HighLoadsForTwoAndEightSlots) {
  for (int b : {2, 8}) {
    HashStream stream(b);
    std::vector<uint64_t> keys = stream.Take(100000);
    StaticBuildStats stats;
    const double load = MaxLoadFactor(b, Construction::kStatic);
    BucketTable table =
        BuildStaticTable(keys, BucketLayout{b, 10, false}, load, &stats);
    EXPECT_EQ(stats.attempts, 1u) << "b=" << b;
    EXPECT_GE(1e5 / (static_cast<double>(b) * table.num_buckets()),
              load - 0.001);
    for (uint64_t key : keys) ASSERT_TRUE(TableContains(table, key));
  }
}

TEST(StaticBuilderTest, EveryWorkSlotWidthAndBucketSizePlacesEveryKey) {
  // 16-bit work slots up to f = 16 and 32-bit above; one-word buckets
  // (4 x 16, 2 x 32 bits) are scanned word-parallel, the others slot by slot.
  for (int b : {2, 4, 8}) {
    for (int f : {6, 16, 17, 32}) {
      SCOPED_TRACE("b=" + std::to_string(b) + " f=" + std::to_string(f));
      HashStream stream(100 * b + f);
      const std::vector<uint64_t> keys = stream.Take(30000);
      StaticBuildStats stats;
      const double load = MaxLoadFactor(b, Construction::kStatic) - 0.01;
      const BucketTable table =
          BuildStaticTable(keys, BucketLayout{b, f, false}, load, &stats);
      EXPECT_EQ(stats.stored_entries + stats.shared_entries, keys.size());
      EXPECT_GT(stats.placed_by_search, 0u);
      for (uint64_t key : keys) ASSERT_TRUE(TableContains(table, key));
    }
  }
}

TEST(StaticBuilderTest, BeyondTheThresholdItGrowsInsteadOfDroppingKeys) {
  HashStream stream(77);
  std::vector<uint64_t> keys = stream.Take(20000);
  StaticBuildStats stats;
  BucketTable table =
      BuildStaticTable(keys, BucketLayout{4, 8, true}, 1.0, &stats);
  EXPECT_GT(stats.attempts, 1u);
  const double keys_per_slot = 20000.0 / (4.0 * table.num_buckets());
  EXPECT_LT(keys_per_slot, 1.0);
  EXPECT_GT(keys_per_slot, 0.95);
  for (uint64_t key : keys) ASSERT_TRUE(TableContains(table, key));
}

TEST(StaticBuilderTest, RepeatedKeysShareEntriesAndTheBuildIsDeterministic) {
  HashStream stream(3);
  std::vector<uint64_t> keys = stream.Take(5000);
  // Every key twice, far apart, then one key 1000 times: more copies than
  // its two buckets have slots.
  std::vector<uint64_t> repeated = keys;
  repeated.insert(repeated.end(), keys.begin(), keys.end());
  repeated.insert(repeated.end(), 1000, keys[17]);
  StaticBuildStats with_repeats, distinct, again;
  const BucketLayout layout{4, 12, true};
  const BucketTable table_repeated =
      BuildStaticTable(repeated, layout, 0.95, &with_repeats);
  const BucketTable table_distinct =
      BuildStaticTable(keys, layout, 0.95, &distinct);
  EXPECT_EQ(with_repeats.input_hashes, 11000u);
  EXPECT_EQ(with_repeats.stored_entries, distinct.stored_entries);
  EXPECT_EQ(with_repeats.shared_entries, 6000u + distinct.shared_entries);
  for (uint64_t key : keys) ASSERT_TRUE(TableContains(table_repeated, key));
  // Sized for 11000 keys first, then rebuilt at the size of what it stores.
  EXPECT_EQ(with_repeats.attempts, 2u);
  EXPECT_LE(table_repeated.num_buckets(), table_distinct.num_buckets() + 2);
  EXPECT_EQ(BuildStaticTable(keys, layout, 0.95, &again).bytes(),
            table_distinct.bytes());
}

TEST(StaticBuilderTest, EmptyInputGivesAnEmptyTable) {
  std::vector<uint64_t> none;
  BucketTable table = BuildStaticTable(none, BucketLayout{4, 12, true}, 0.95);
  EXPECT_EQ(table.num_buckets(), 2u);
  HashStream stream(1);
  for (int i = 0; i < 1000; ++i)
    EXPECT_FALSE(TableContains(table, stream.Next()));
  EXPECT_THROW(BuildStaticTable(none, BucketLayout{4, 12, true}, 0.0),
               std::invalid_argument);
  EXPECT_THROW(BuildStaticTable(none, BucketLayout{5, 12, false}, 0.9),
               std::invalid_argument);
}

TEST(StaticBuilderTest, MeasuredFalsePositiveRateMatchesTheFormula) {
  for (double bits_per_key : {10.0, 16.0}) {
    const FilterConfig config = ChooseForBitsPerKey(bits_per_key);
    HashStream stream(bits_per_key);
    std::vector<uint64_t> hashes = stream.Take(200000);
    StaticBuildStats stats;
    BucketTable table =
        BuildStaticTable(hashes, config.layout, config.load_factor, &stats);
    EXPECT_LE(8.0 * TableDataBytes(config.layout, table.num_buckets()) / 200000,
              bits_per_key + 0.01);
    const int probes = bits_per_key < 12 ? 2000000 : 20000000;
    int false_positives = 0;
    for (int i = 0; i < probes; ++i)
      false_positives += TableContains(table, stream.Next());
    const double measured = static_cast<double>(false_positives) / probes;
    const double expected =
        ExpectedFalsePositiveRate(config.layout, stats.load_factor);
    RecordProperty("fpr_at_" + std::to_string(static_cast<int>(bits_per_key)),
                   std::to_string(measured));
    EXPECT_NEAR(measured, expected, 0.2 * expected)
        << bits_per_key << " bits/key";
  }
}

TEST(SizingTest, BudgetChoiceIsTheBestLayoutWithinTheBudget) {
  for (double budget : {6.0, 8.0, 10.0, 12.0, 16.0, 20.0, 30.0}) {
    const FilterConfig best = ChooseForBitsPerKey(budget);
    EXPECT_LE(best.bits_per_key, budget + 1e-9);
    EXPECT_LE(best.load_factor,
              MaxLoadFactor(best.layout.bucket_size, Construction::kStatic));
    // No valid layout within the budget does better.
    for (int b : {2, 4, 8}) {
      for (int f = kMinFingerprintBits; f <= kMaxFingerprintBits; ++f) {
        for (bool semi : {false, true}) {
          if (semi && b != 4) continue;
          const BucketLayout layout{b, f, semi};
          const double load = layout.BitsPerSlot() / budget;
          if (load > MaxLoadFactor(b, Construction::kStatic)) continue;
          EXPECT_GE(ExpectedFalsePositiveRate(layout, load), best.expected_fpr);
        }
      }
    }
  }
  // Semi-sorted 4-slot buckets win at the budgets the project targets.
  EXPECT_TRUE(ChooseForBitsPerKey(10).layout.semi_sorted);
  EXPECT_EQ(ChooseForBitsPerKey(10).layout.fingerprint_bits, 10);
  EXPECT_EQ(ChooseForBitsPerKey(16).layout.fingerprint_bits, 16);
}

// A filter sized to a number of bytes: the table fits them, its load is one
// the build sustains, no layout that fits does better, and nothing is
// offered when nothing fits.
TEST(SizingTest, ByteBudgetChoiceIsTheBestTableThatFits) {
  for (uint64_t entries : {1u, 7u, 1000u, 123457u}) {
    for (double bits_per_key : {4.5, 8.0, 10.0, 10.7, 16.0, 40.0}) {
      const uint64_t data_bytes =
          static_cast<uint64_t>(entries * bits_per_key / 8);
      const std::optional<TableGeometry> chosen =
          ChooseForTableBytes(data_bytes, entries);
      SCOPED_TRACE(std::to_string(entries) + " entries in " +
                   std::to_string(data_bytes) + " bytes");
      if (!chosen) {
        // Only a budget below the smallest table has none: two 4-slot
        // semi-sorted buckets of 4-bit fingerprints (3 bytes), at most 95%
        // full (3 bits per slot).
        EXPECT_TRUE(data_bytes < 3 || data_bytes * 8.0 / entries < 3 / 0.95);
        continue;
      }
      EXPECT_LE(TableDataBytes(chosen->layout, chosen->num_buckets),
                data_bytes);
      EXPECT_EQ(chosen->num_buckets % 2, 0u);
      EXPECT_LE(chosen->load_factor, MaxLoadFactor(chosen->layout.bucket_size,
                                                   Construction::kStatic));
      EXPECT_DOUBLE_EQ(
          chosen->expected_fpr,
          ExpectedFalsePositiveRate(chosen->layout, chosen->load_factor));
      // Two more buckets of its layout would not fit.
      EXPECT_GT(TableDataBytes(chosen->layout, chosen->num_buckets + 2),
                data_bytes);
      // The budget's own layout, with as many buckets as fit, is no better.
      const FilterConfig config = ChooseForBitsPerKey(bits_per_key);
      const uint64_t buckets =
          (data_bytes * 8 / config.layout.BitsPerBucket()) & ~uint64_t{1};
      if (buckets >= 2) {
        const TableGeometry same_layout =
            GeometryOf(config.layout, static_cast<uint32_t>(buckets), entries);
        if (same_layout.load_factor <=
            MaxLoadFactor(config.layout.bucket_size, Construction::kStatic)) {
          EXPECT_LE(chosen->expected_fpr, same_layout.expected_fpr);
        }
      }
    }
  }
  EXPECT_FALSE(ChooseForTableBytes(1000, 0));
  EXPECT_FALSE(ChooseForTableBytes(0, 10));
  EXPECT_FALSE(ChooseForTableBytes(100, 1000));
}

// A table built at a caller's bucket count has that count, holds every key,
// and an invalid count is refused.
TEST(StaticBuilderTest, BuildsAtTheGivenBucketCount) {
  HashStream stream(77);
  const std::vector<uint64_t> keys = stream.Take(20000);
  const BucketLayout layout{4, 10, true};
  for (uint32_t buckets : {5400u, 5800u, 9000u}) {
    const StaticPlacement placement =
        PlaceStaticWithBuckets(keys, layout, buckets);
    const BucketTable table = placement.ToTable();
    EXPECT_EQ(table.num_buckets(), buckets);
    EXPECT_EQ(placement.stats().attempts, 1u);
    for (uint64_t key : keys) ASSERT_TRUE(TableContains(table, key));
  }
  EXPECT_THROW(PlaceStaticWithBuckets(keys, layout, 5401),
               std::invalid_argument);
  EXPECT_THROW(PlaceStaticWithBuckets(keys, layout, 0), std::invalid_argument);
}

TEST(SizingTest, FalsePositiveTargetChoiceIsTheSmallestThatReachesIt) {
  for (double target : {0.05, 0.01, 0.001, 1e-4, 1e-6}) {
    const FilterConfig config = ChooseForFalsePositiveRate(target);
    EXPECT_LE(config.expected_fpr, target);
    // One bit less per slot would miss the target.
    BucketLayout smaller = config.layout;
    smaller.fingerprint_bits -= 1;
    EXPECT_GT(ExpectedFalsePositiveRate(smaller, config.load_factor), target);
  }
  EXPECT_NEAR(ChooseForFalsePositiveRate(0.001).bits_per_key, 12.63, 0.01);
  EXPECT_THROW(ChooseForFalsePositiveRate(0.0), std::invalid_argument);
  EXPECT_THROW(ChooseForFalsePositiveRate(1.0), std::invalid_argument);
  EXPECT_THROW(ChooseForBitsPerKey(-1), std::invalid_argument);
  EXPECT_THROW(ChooseForBitsPerKey(std::nan("")), std::invalid_argument);
}

TEST(SizingTest, FixedBucketSizeTakesTheNarrowestFingerprintForTheRate) {
  for (int bucket_size : {2, 4, 8}) {
    const double load = MaxLoadFactor(bucket_size, Construction::kDynamic);
    for (double target : {0.1, 0.01, 1e-4, 1e-7}) {
      const std::optional<int> bits = NarrowestFingerprintForRate(
          bucket_size, target, kMaxFingerprintBits, Construction::kDynamic);
      ASSERT_TRUE(bits.has_value());
      EXPECT_LE(ExpectedFalsePositiveRate({bucket_size, *bits, false}, load),
                target);
      if (*bits > kMinFingerprintBits) {
        EXPECT_GT(
            ExpectedFalsePositiveRate({bucket_size, *bits - 1, false}, load),
            target);
      }
      // A limit below the width the rate needs leaves nothing.
      EXPECT_FALSE(NarrowestFingerprintForRate(bucket_size, target, *bits - 1,
                                               Construction::kDynamic)
                       .has_value());
    }
  }
}

TEST(SizingTest, RateChoiceKeepsToTheNarrowestWidthAllowed) {
  // A loose rate that 4-bit fingerprints reach gets wider ones when they
  // are the narrowest allowed, and still the fewest bits per key among them.
  const FilterConfig free = ChooseForFalsePositiveRate(0.5);
  ASSERT_LT(free.layout.fingerprint_bits, 8);
  const FilterConfig floored =
      ChooseForFalsePositiveRate(0.5, Construction::kStatic, 8);
  EXPECT_GE(floored.layout.fingerprint_bits, 8);
  internal::ForEachLayout([&](const BucketLayout& layout) {
    if (layout.fingerprint_bits < 8) return;
    EXPECT_GE(internal::MakeConfig(layout, MaxLoadFactor(layout.bucket_size,
                                                         Construction::kStatic))
                  .bits_per_key,
              floored.bits_per_key);
  });
  // Any number of slots, as for comparing with other filters.
  EXPECT_DOUBLE_EQ(FalsePositiveRate(4, 12, 0.9),
                   ExpectedFalsePositiveRate({4, 12, false}, 0.9));
  EXPECT_NEAR(FalsePositiveRate(1, 8, 1.0), 2.0 / 255, 1e-4);
}

TEST(SizingTest, ExpectedRateIsTheClassicApproximationForSmallRates) {
  const BucketLayout layout{4, 16, false};
  EXPECT_NEAR(ExpectedFalsePositiveRate(layout, 0.95), 8 * 0.95 / 65535.0,
              1e-8);
}

}  // namespace
}  // namespace cuckoo
