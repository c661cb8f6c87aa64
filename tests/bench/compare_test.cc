// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Tests of the comparison's layers (bench/compare/): the paired statistics,
// the interpolation of the equal-FPR view, and the LSM shape, built for two
// policies on real DBs and read with the comparison's own workload runner.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include "compare/fpr_curve.h"
#include "compare/keys.h"
#include "compare/lsm_shape.h"
#include "compare/paired_stats.h"
#include "compare/workloads.h"
#include "cuckoo_filter_policy.h"
#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/slice_transform.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/object_registry.h"
#include "rocksdb_interfaces.h"

namespace filter_compare {
namespace {

namespace rdb = ROCKSDB_NAMESPACE;

TEST(PairedStatsTest, MedianAndQuantilesOfKnownSets) {
  EXPECT_EQ(Median({5, 1, 3}), 3);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isnan(Median({})));
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  EXPECT_EQ(Quantile(hundred, 0.5), 50);
  EXPECT_EQ(Quantile(hundred, 0.99), 99);
  EXPECT_EQ(Quantile(hundred, 1.0), 100);
  EXPECT_EQ(Quantile(hundred, 0.0), 1);
}

TEST(PairedStatsTest, RatiosArePairedByRepetition) {
  // Unpaired medians would give 4 / 2 = 2; the pairs say 2, 2 and 3.
  const PairedRatio ratio = RatioOf({2, 4, 6}, {1, 2, 2});
  ASSERT_TRUE(ratio.valid);
  EXPECT_EQ(ratio.pairs, 3);
  EXPECT_EQ(ratio.median, 2);
  EXPECT_EQ(ratio.low, 2);
  EXPECT_EQ(ratio.high, 3);
  EXPECT_FALSE(ratio.WithinNoise());
  EXPECT_TRUE(RatioOf({0.9, 1.2, 1.0}, {1, 1, 1}).WithinNoise());
  // A repetition without a positive baseline or a measured value is skipped.
  const PairedRatio partial = RatioOf({1, -1, 3}, {0, 1, 1});
  EXPECT_EQ(partial.pairs, 1);
  EXPECT_EQ(partial.median, 3);
  EXPECT_FALSE(RatioOf({1, 2}, {0, 0}).valid);
}

FprPoint Point(int budget, double bits, uint64_t false_positives) {
  FprPoint point;
  point.budget = budget;
  point.bits_per_key = bits;
  point.false_positives = false_positives;
  point.probes = 1 << 20;
  return point;
}

TEST(FprCurveTest, InterpolatesOnLogFpr) {
  // 2^-8 and 2^-10 at 8 and 10 bits per key: 2^-9 lies at 9, and 2^-8.5 at
  // 8.5, which linear interpolation of the rate itself would not give.
  const std::vector<FprPoint> points = {Point(8, 8, 1 << 12),
                                        Point(10, 10, 1 << 10)};
  auto nine = BitsPerKeyFor(points, std::pow(2.0, -9));
  ASSERT_TRUE(nine.has_value());
  EXPECT_NEAR(nine->bits_per_key, 9.0, 1e-9);
  EXPECT_EQ(nine->lower_budget, 8);
  EXPECT_EQ(nine->upper_budget, 10);
  EXPECT_TRUE(nine->precise);
  EXPECT_NEAR(BitsPerKeyFor(points, std::pow(2.0, -8.5))->bits_per_key, 8.5,
              1e-9);
  // No extrapolation beyond the grid.
  EXPECT_FALSE(BitsPerKeyFor(points, std::pow(2.0, -11)).has_value());
  EXPECT_FALSE(BitsPerKeyFor(points, std::pow(2.0, -7)).has_value());
}

TEST(FprCurveTest, SkipsPointsWithoutFalsePositivesAndFlagsImprecision) {
  const std::vector<FprPoint> points = {Point(8, 8, 400), Point(9, 9, 50),
                                        Point(10, 10, 0)};
  auto between = BitsPerKeyFor(points, 100.0 / (1 << 20));
  ASSERT_TRUE(between.has_value());
  EXPECT_FALSE(between->precise);  // 50 false positives at 9 bits
  EXPECT_FALSE(BitsPerKeyFor(points, 10.0 / (1 << 20)).has_value());
}

class LsmShapeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static const int registered = rocksdb_cuckoo::cuckoo_filter_register(
        *rdb::ObjectLibrary::Default(), "cuckoo");
    (void)registered;
    dir_ = std::filesystem::temp_directory_path() /
           ("compare_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    shape_.num_keys = 20000;
    shape_.levels = 4;
    shape_.fanout = 4;
    shape_.target_file_bytes = 256 << 10;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<rdb::DB> Build(const std::string& policy,
                                 const LsmShapeOptions& shape,
                                 std::shared_ptr<rdb::Statistics> statistics) {
    rdb::ConfigOptions strict;
    strict.ignore_unsupported_options = false;
    rdb::BlockBasedTableOptions table;
    EXPECT_TRUE(rdb::GetBlockBasedTableOptionsFromString(
                    strict, rdb::BlockBasedTableOptions(),
                    "filter_policy=" + policy, &table)
                    .ok());
    rdb::Options options;
    options.create_if_missing = true;
    options.statistics = std::move(statistics);
    options.table_factory.reset(rdb::NewBlockBasedTableFactory(table));
    options.prefix_extractor.reset(rdb::NewFixedPrefixTransform(kPrefixBytes));
    ApplyShapeOptions(shape, &options);
    std::unique_ptr<rdb::DB> db;
    const rdb::Status open =
        rocksdb_cuckoo::OpenDb(options, (dir_ / policy).string(), &db);
    EXPECT_TRUE(open.ok()) << open.ToString();
    if (!open.ok()) return nullptr;
    const rdb::Status built = BuildLsm(db.get(), keys_, shape);
    EXPECT_TRUE(built.ok()) << built.ToString();
    return db;
  }

  std::filesystem::path dir_;
  LsmShapeOptions shape_;
  KeyScheme keys_{8};
};

TEST_F(LsmShapeTest, EveryPolicyGetsTheSameLevelsFilesAndKeyRanges) {
  auto bloom = Build("bloomfilter:10:false", shape_, nullptr);
  auto cuckoo = Build("cuckoofilter:16", shape_, nullptr);
  ASSERT_TRUE(bloom && cuckoo);
  const LsmShape expected = DescribeLsm(bloom.get());
  EXPECT_EQ(ShapeDifference(expected, DescribeLsm(cuckoo.get())), "");

  // All four levels populated, each with the keys assigned to it, and the
  // bottom one split by the target file size.
  ASSERT_EQ(expected.size(), 4u);
  std::vector<uint64_t> assigned(4, 0);
  for (uint64_t i = 0; i < shape_.num_keys; ++i) {
    ++assigned[static_cast<size_t>(LevelOfKey(i, shape_))];
  }
  for (size_t l = 0; l < expected.size(); ++l) {
    EXPECT_EQ(expected[l].level, static_cast<int>(l));
    EXPECT_EQ(expected[l].Entries(), assigned[l]) << "L" << l;
  }
  EXPECT_GT(assigned[3], assigned[2]);
  EXPECT_GT(expected[3].files.size(), 1u);

  // Another assignment of keys to levels is told apart.
  LsmShapeOptions other = shape_;
  other.seed = 2;
  auto reshuffled = Build("cuckoofilter:10", other, nullptr);
  ASSERT_TRUE(reshuffled);
  EXPECT_NE(ShapeDifference(expected, DescribeLsm(reshuffled.get())), "");
}

TEST_F(LsmShapeTest, AnAbsentKeyConsultsAFilterOnEveryLevel) {
  auto statistics = rdb::CreateDBStatistics();
  auto db = Build("cuckoofilter:16", shape_, statistics);
  ASSERT_TRUE(db);
  EnablePerfCounters();
  WorkloadRun run;
  run.workload = Workload::kReadMissing;
  run.ops = 4000;
  run.num_keys = shape_.num_keys;
  run.key_seed = 7;
  const Sample missing =
      RunWorkload(db.get(), statistics.get(), keys_, run, "test");
  EXPECT_EQ(missing.ops, 4000u);
  // Each level spans nearly the whole key range: about 4 checks per lookup.
  EXPECT_GT(missing.FilterChecksPerLookup(), 3.5);
  EXPECT_LE(missing.FilterChecksPerLookup(), 4.0);
  EXPECT_GE(missing.false_positive_rate, 0.0);
  EXPECT_LT(missing.false_positive_rate, 0.01);
  EXPECT_FALSE(missing.latency_us.empty());

  // Stored keys, in batches: every one found (a miss would exit).
  run.workload = Workload::kMultiReadRandom;
  run.ops = 640;
  const Sample multi =
      RunWorkload(db.get(), statistics.get(), keys_, run, "test");
  EXPECT_EQ(multi.ops, 640u);
  EXPECT_EQ(multi.latency_us.size(), 20u);  // every call of 32 keys
}

}  // namespace
}  // namespace filter_compare
