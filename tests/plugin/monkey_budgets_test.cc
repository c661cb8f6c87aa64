// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// monkey::ChooseLevelBudgets, ChooseBudgetsForShares and
// BitsPerKeyForFalsePositiveRate: the budgets meet the average, favour the
// upper levels, and lower the sum of the levels' false-positive rates below
// uniform budgets'.
#include "monkey_budgets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace rocksdb_cuckoo {
namespace monkey {
namespace {

constexpr double kMin = 4.0;
constexpr double kMax = 64.0;

double WeightedAverage(const std::vector<double>& budgets, double ratio) {
  double total = 0.0;
  double weighted = 0.0;
  for (size_t d = 0; d < budgets.size(); ++d) {
    const double share = std::pow(ratio, -static_cast<double>(d));
    total += share;
    weighted += share * budgets[d];
  }
  return weighted / total;
}

TEST(LevelBudgetsTest, BitsForARateReachItAndGrowAsItFalls) {
  double previous = 0.0;
  for (double fpr = 0.2; fpr > 1e-6; fpr /= 1.7) {
    SCOPED_TRACE(fpr);
    const double bits = BitsPerKeyForFalsePositiveRate(fpr);
    EXPECT_LE(ChooseForBitsPerKey(bits).expected_fpr, fpr);
    // Not more than needed: a little less misses the rate.
    EXPECT_GT(ChooseForBitsPerKey(bits * 0.999).expected_fpr, fpr);
    EXPECT_GE(bits, previous);
    previous = bits;
  }
}

TEST(LevelBudgetsTest, BudgetsMeetTheAverageAndFavourTheUpperLevels) {
  for (double average : {8.0, 10.0, 12.0, 16.0, 20.0}) {
    for (int levels = 1; levels <= 7; ++levels) {
      SCOPED_TRACE(std::to_string(average) + " bits/key, " +
                   std::to_string(levels) + " levels");
      const LevelBudgets budgets =
          ChooseLevelBudgets(average, 10, levels, kMin, kMax);
      ASSERT_EQ(budgets.bits_per_key.size(), static_cast<size_t>(levels));
      EXPECT_NEAR(WeightedAverage(budgets.bits_per_key, 10), average,
                  average * 1e-9);
      for (int d = 1; d < levels; ++d) {
        EXPECT_GE(budgets.bits_per_key[d], budgets.bits_per_key[d - 1]);
      }
      // Better than uniform budgets, or uniform where no split is better.
      if (budgets.expected_fpr_sum == budgets.uniform_fpr_sum) {
        for (double bits : budgets.bits_per_key) EXPECT_EQ(bits, average);
        continue;
      }
      ASSERT_GE(levels, 2);
      EXPECT_LT(budgets.bits_per_key[0], average);
      EXPECT_GT(budgets.bits_per_key[levels - 1], average);
      EXPECT_LT(budgets.expected_fpr_sum, budgets.uniform_fpr_sum);
      // Three levels or more always gain.
      if (levels >= 3) {
        EXPECT_LT(budgets.expected_fpr_sum, 0.8 * budgets.uniform_fpr_sum);
      }
    }
  }
}

// The theory's figure: at 10 bits/key, ratio 10 and 5 levels, about a third
// of uniform's sum of rates; deeper LSMs gain more.
TEST(LevelBudgetsTest, FiveLevelsWasteAboutAThirdOfUniformsReads) {
  const LevelBudgets five = ChooseLevelBudgets(10, 10, 5, kMin, kMax);
  EXPECT_LT(five.expected_fpr_sum / five.uniform_fpr_sum, 0.40);
  EXPECT_GT(five.expected_fpr_sum / five.uniform_fpr_sum, 0.20);
  const LevelBudgets seven = ChooseLevelBudgets(10, 10, 7, kMin, kMax);
  EXPECT_LT(seven.expected_fpr_sum / seven.uniform_fpr_sum,
            five.expected_fpr_sum / five.uniform_fpr_sum);
  // The bottom gives up about log2(10) / (9 * 0.95) = 0.39 bits per key.
  EXPECT_GT(five.bits_per_key[0], 10 - 0.6);
  EXPECT_LT(five.bits_per_key[0], 10 - 0.2);
}

// The real curve's steps (see "The real curve has steps"): the chosen
// budgets are never worse than the proportional rule's, and where the
// proportional bottom level sits past a kink, moving it to the kink cuts the
// sum of rates by a quarter or more.
TEST(LevelBudgetsTest, TheBottomAtAKinkBeatsTheProportionalRule) {
  for (double average : {8.0, 10.0, 12.0, 14.0, 16.0, 20.0}) {
    for (int levels = 2; levels <= 6; ++levels) {
      SCOPED_TRACE(std::to_string(average) + " bits/key, " +
                   std::to_string(levels) + " levels");
      const LevelBudgets chosen =
          ChooseLevelBudgets(average, 10, levels, kMin, kMax);
      const std::vector<double> proportional = internal::ProportionalBudgets(
          average, GeometricLogWeights(10, levels), kMin, kMax,
          Construction::kStatic);
      EXPECT_LE(
          chosen.expected_fpr_sum,
          internal::FalsePositiveRateSum(proportional, Construction::kStatic));
    }
  }
  const LevelBudgets three = ChooseLevelBudgets(16, 10, 3, kMin, kMax);
  const double proportional_three = internal::FalsePositiveRateSum(
      internal::ProportionalBudgets(16, GeometricLogWeights(10, 3), kMin, kMax,
                                    Construction::kStatic),
      Construction::kStatic);
  EXPECT_LT(three.expected_fpr_sum, 0.8 * proportional_three);
  EXPECT_LT(three.expected_fpr_sum, 0.55 * three.uniform_fpr_sum);
  const LevelBudgets five = ChooseLevelBudgets(14, 10, 5, kMin, kMax);
  EXPECT_LT(five.expected_fpr_sum, 0.3 * five.uniform_fpr_sum);
}

// Shares of the entries: upper levels whose filters also hold their keys'
// prefixes (more entries per key) get fewer bits per entry than for equal
// entries per key, the average over the entries is met, and the sum of
// rates stays below uniform's.
TEST(LevelBudgetsTest, SharesOfEntriesWeighTheLevels) {
  // The main job's shape: 5 levels in ratio 10, 8 keys a prefix, so about
  // 1.14 entries per key at the bottom and up to 2 above.
  const std::vector<double> per_key = {1.14, 1.69, 1.96, 2.0, 2.0};
  std::vector<double> log_weights = GeometricLogWeights(10, 5);
  std::vector<double> shares;
  double total = 0.0;
  for (size_t d = 0; d < per_key.size(); ++d) {
    log_weights[d] += std::log(per_key[d]);
    shares.push_back(std::exp(log_weights[d]));
    total += shares.back();
  }
  for (double average : {10.0, 16.0}) {
    SCOPED_TRACE(average);
    const LevelBudgets by_entries =
        ChooseBudgetsForShares(average, log_weights, kMin, kMax);
    const LevelBudgets by_keys = ChooseLevelBudgets(average, 10, 5, kMin, kMax);
    double weighted = 0.0;
    for (size_t d = 0; d < shares.size(); ++d) {
      weighted += shares[d] / total * by_entries.bits_per_key[d];
    }
    EXPECT_NEAR(weighted, average, average * 1e-9);
    EXPECT_LT(by_entries.expected_fpr_sum, by_entries.uniform_fpr_sum);
    // The key shares' budgets spend more than the average on these entries.
    double spent_by_keys = 0.0;
    for (size_t d = 0; d < shares.size(); ++d) {
      spent_by_keys += shares[d] / total * by_keys.bits_per_key[d];
    }
    EXPECT_GT(spent_by_keys, average * 1.005);
    for (size_t d = 1; d < shares.size(); ++d) {
      EXPECT_LE(by_entries.bits_per_key[d], by_keys.bits_per_key[d]);
    }
  }
  EXPECT_THROW(ChooseBudgetsForShares(10, {}, kMin, kMax),
               std::invalid_argument);
  EXPECT_THROW(
      ChooseBudgetsForShares(10, {0.0, std::numeric_limits<double>::infinity()},
                             kMin, kMax),
      std::invalid_argument);
}

TEST(LevelBudgetsTest, OtherRatiosAndBounds) {
  for (double ratio : {2.0, 4.0, 100.0}) {
    SCOPED_TRACE(ratio);
    const LevelBudgets budgets = ChooseLevelBudgets(12, ratio, 5, kMin, kMax);
    EXPECT_NEAR(WeightedAverage(budgets.bits_per_key, ratio), 12, 12e-9);
    EXPECT_LT(budgets.expected_fpr_sum, budgets.uniform_fpr_sum);
  }
  // A cap near the average: the upper levels stop at it, and the bottom
  // keeps the average on budget.
  const LevelBudgets capped = ChooseLevelBudgets(10, 10, 5, kMin, 11);
  for (double bits : capped.bits_per_key) {
    EXPECT_GE(bits, kMin);
    EXPECT_LE(bits, 11);
  }
  EXPECT_EQ(capped.bits_per_key[4], 11);
  EXPECT_NEAR(WeightedAverage(capped.bits_per_key, 10), 10, 1e-8);
  // An average the bounds cannot meet: every level at the nearest bound.
  const LevelBudgets low = ChooseLevelBudgets(3, 10, 3, kMin, kMax);
  for (double bits : low.bits_per_key) EXPECT_EQ(bits, kMin);
}

// Deep LSMs and large ratios: the deepest levels' shares underflow.
TEST(LevelBudgetsTest, DeepLevelsAndLargeRatiosStayFinite) {
  for (double ratio : {10.0, 100.0, 1e6}) {
    SCOPED_TRACE(ratio);
    const LevelBudgets budgets = ChooseLevelBudgets(10, ratio, 64, kMin, kMax);
    ASSERT_EQ(budgets.bits_per_key.size(), 64u);
    EXPECT_NEAR(WeightedAverage(budgets.bits_per_key, ratio), 10, 1e-8);
    EXPECT_EQ(budgets.bits_per_key[63], kMax);
    EXPECT_LT(budgets.expected_fpr_sum, budgets.uniform_fpr_sum);
  }
}

TEST(LevelBudgetsTest, BadInputThrows) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(ChooseLevelBudgets(10, 1, 3, kMin, kMax), std::invalid_argument);
  EXPECT_THROW(ChooseLevelBudgets(10, 0.5, 3, kMin, kMax),
               std::invalid_argument);
  EXPECT_THROW(ChooseLevelBudgets(10, 10, 0, kMin, kMax),
               std::invalid_argument);
  EXPECT_THROW(ChooseLevelBudgets(nan, 10, 3, kMin, kMax),
               std::invalid_argument);
  EXPECT_THROW(ChooseLevelBudgets(10, nan, 3, kMin, kMax),
               std::invalid_argument);
  EXPECT_THROW(ChooseLevelBudgets(10, 10, 3, kMax, kMin),
               std::invalid_argument);
  EXPECT_THROW(BitsPerKeyForFalsePositiveRate(0), std::invalid_argument);
  EXPECT_THROW(BitsPerKeyForFalsePositiveRate(1), std::invalid_argument);
  EXPECT_THROW(BitsPerKeyForFalsePositiveRate(nan), std::invalid_argument);
}

}  // namespace
}  // namespace monkey
}  // namespace rocksdb_cuckoo
