// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Read paths of a real DB with cuckoo filters: Get and MultiGet over full and
// partitioned filters with and without cache_index_and_filter_blocks, external
// SST files written by SstFileWriter and ingested, prefix Seek/SeekForPrev
// across partitions with and without whole-key filtering, KeyMayExist, and a
// million keys.
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "cuckoo/sizing.h"
#include "db_test_util.h"
#include "rocksdb/slice_transform.h"
#include "rocksdb/sst_file_writer.h"

namespace rocksdb_cuckoo {
namespace {

using testing::AbsentKey;
using testing::DbTest;
using testing::Key;
namespace rdb = ROCKSDB_NAMESPACE;

// Full filters, or partitioned ones cut either way; cached or not.
struct FilterPlacement {
  std::string name;
  std::string table_options;
};
void PrintTo(const FilterPlacement& placement, std::ostream* out) {
  *out << placement.name;
}
std::vector<FilterPlacement> FilterPlacements() {
  std::vector<FilterPlacement> placements = {{"Full", ""}};
  for (const testing::PartitionCutting& cutting :
       testing::PartitionCuttings()) {
    placements.push_back(
        {"Partitioned" + cutting.name,
         ";partition_filters=true;index_type=kTwoLevelIndexSearch;"
         "metadata_block_size=2048" +
             cutting.table_options});
  }
  return placements;
}

class FilterPlacementTest
    : public DbTest,
      public ::testing::WithParamInterface<std::tuple<FilterPlacement, bool>> {
};

TEST_P(FilterPlacementTest, EveryKeyFoundAndAbsentKeysFiltered) {
  const auto& [placement, cached] = GetParam();
  const bool partitioned = !placement.table_options.empty();
  std::string table =
      "filter_policy=cuckoofilter:10;cache_index_and_filter_blocks=";
  table += cached ? "true" : "false";
  table += placement.table_options;
  Open(MakeOptions(table));
  ASSERT_EQ(PolicyInEffect(), "cuckoofilter");
  constexpr uint64_t kKeys = 60000;
  Fill(kKeys);
  const double rate = CheckGets(kKeys);
  CheckMultiGets(kKeys);
  const double expected = cuckoo::ChooseForBitsPerKey(10).expected_fpr;
  // Small partitions round their bucket counts up, which only lowers the
  // load; the rate must stay near the prediction.
  EXPECT_LT(rate, 1.25 * expected);
  EXPECT_GT(rate, 0.5 * expected);
  EXPECT_EQ(AggregatedProperties().num_filter_entries, kKeys);
  if (cached || partitioned) {
    EXPECT_GT(Ticker(rdb::BLOCK_CACHE_FILTER_HIT) +
                  Ticker(rdb::BLOCK_CACHE_FILTER_MISS),
              0u)
        << "filters should be read through the block cache";
  }
}

INSTANTIATE_TEST_SUITE_P(
    FullAndPartitioned, FilterPlacementTest,
    ::testing::Combine(::testing::ValuesIn(FilterPlacements()),
                       ::testing::Bool()),
    [](const ::testing::TestParamInfo<std::tuple<FilterPlacement, bool>>&
           param_info) {
      return std::get<0>(param_info.param).name +
             (std::get<1>(param_info.param) ? "Cached" : "Uncached");
    });

TEST_F(DbTest, IngestedSstFilesCarryTheCuckooFilter) {
  rdb::Options options = MakeOptions("filter_policy=cuckoofilter:12");
  Open(options);
  const std::string file = path_ + "_external.sst";
  rdb::SstFileWriter writer(rdb::EnvOptions(), options);
  ASSERT_TRUE(writer.Open(file).ok());
  constexpr uint64_t kKeys = 20000;
  for (uint64_t i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(writer.Put(Key(i), "v" + std::to_string(i)).ok());
  }
  ASSERT_TRUE(writer.Finish().ok());
  ASSERT_TRUE(
      db_->IngestExternalFile({file}, rdb::IngestExternalFileOptions()).ok());
  std::filesystem::remove(file);
  const rdb::TableProperties props = AggregatedProperties();
  EXPECT_EQ(props.filter_policy_name, "cuckoofilter");
  EXPECT_EQ(props.num_filter_entries, kKeys);
  const double rate = CheckGets(kKeys);
  EXPECT_LT(rate, 1.25 * cuckoo::ChooseForBitsPerKey(12).expected_fpr);
}

// A policy constructed in code with a budget no options string would accept,
// used where nothing validates it (SstFileWriter): the file still gets a
// cuckoo filter, at the nearest allowed budget, and nothing throws.
TEST_F(DbTest, SstFileWriterWithAnUnvalidatedBudgetStillWritesAFilter) {
  Open(MakeOptions("filter_policy=cuckoofilter:10"));
  constexpr uint64_t kKeys = 5000;
  int file_number = 0;
  // Absent keys inside the files' ranges that their filters should answer.
  double expected_useful = 0;
  for (double bits_per_key :
       {0.0, -3.0, 2.0, 1000.0, std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN()}) {
    SCOPED_TRACE(bits_per_key);
    rdb::Options writer_options = MakeOptions("");
    rdb::BlockBasedTableOptions table;
    table.filter_policy = std::make_shared<CuckooFilterPolicy>(bits_per_key);
    writer_options.table_factory.reset(rdb::NewBlockBasedTableFactory(table));
    const std::string file =
        path_ + "_unvalidated" + std::to_string(file_number++) + ".sst";
    rdb::SstFileWriter writer(rdb::EnvOptions(), writer_options);
    ASSERT_TRUE(writer.Open(file).ok());
    // Keys of this round only, so that each file holds its own range.
    const uint64_t first = file_number * kKeys;
    for (uint64_t i = first; i < first + kKeys; ++i) {
      ASSERT_TRUE(writer.Put(Key(i), "v" + std::to_string(i)).ok());
    }
    expected_useful +=
        (kKeys - 1) *
        (1 - cuckoo::ChooseForBitsPerKey(UsableBitsPerKey(bits_per_key))
                 .expected_fpr);
    const rdb::Status finished = writer.Finish();
    ASSERT_TRUE(finished.ok()) << finished.ToString();
    ASSERT_TRUE(
        db_->IngestExternalFile({file}, rdb::IngestExternalFileOptions()).ok());
    std::filesystem::remove(file);
  }
  const rdb::TableProperties props = AggregatedProperties();
  EXPECT_EQ(props.filter_policy_name, "cuckoofilter");
  EXPECT_EQ(props.num_filter_entries, 6 * kKeys);
  statistics_->Reset();
  std::string value;
  for (uint64_t i = kKeys; i < 7 * kKeys; ++i) {
    ASSERT_TRUE(db_->Get(rdb::ReadOptions(), Key(i), &value).ok()) << i;
  }
  for (uint64_t i = kKeys; i < 7 * kKeys - 1; ++i) {
    ASSERT_TRUE(
        db_->Get(rdb::ReadOptions(), AbsentKey(i), &value).IsNotFound());
  }
  // The filters were read, each at its clamped budget: the absent keys they
  // answered are about as many as those budgets predict (within 10%: at 4
  // bits per key a third of the absent keys pass, and small tables vary).
  EXPECT_GT(static_cast<double>(Ticker(rdb::BLOOM_FILTER_USEFUL)),
            0.9 * expected_useful);
}

TEST_F(DbTest, KeyMayExistNeverDeniesAStoredKey) {
  Open(MakeOptions("filter_policy=cuckoofilter:10"));
  constexpr uint64_t kKeys = 20000;
  Fill(kKeys);
  uint64_t denied_absent = 0;
  std::string value;
  for (uint64_t i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(db_->KeyMayExist(rdb::ReadOptions(), Key(i), &value));
    denied_absent +=
        !db_->KeyMayExist(rdb::ReadOptions(), AbsentKey(i), &value);
  }
  EXPECT_GT(denied_absent, kKeys * 98 / 100);
}

TEST_F(DbTest, AMillionKeysWithoutAFalseNegative) {
  Open(MakeOptions("filter_policy=cuckoofilter:16"));
  constexpr uint64_t kKeys = 1000000;
  Fill(kKeys);
  const double rate = CheckGets(kKeys);
  const double expected = cuckoo::ChooseForBitsPerKey(16).expected_fpr;
  EXPECT_NEAR(rate, expected, 0.2 * expected);
}

// Prefix seeks: 8-byte prefixes "p0000000".."p0003998" (even numbers stored,
// odd ones absent), 5 keys each, in many small filter partitions.
class PrefixSeekTest : public DbTest,
                       public ::testing::WithParamInterface<
                           std::tuple<bool, testing::PartitionCutting>> {
 protected:
  static std::string Prefix(int p) {
    char buffer[16];
    std::snprintf(buffer, sizeof(buffer), "p%07d", p);
    return buffer;
  }
  static std::string PrefixKey(int p, int k) {
    return Prefix(p) + "-" + std::to_string(k);
  }
};

TEST_P(PrefixSeekTest, SeekAndSeekForPrevAcrossPartitions) {
  const auto& [whole_key_filtering, cutting] = GetParam();
  rdb::Options options = MakeOptions(
      std::string("filter_policy=cuckoofilter:12;partition_filters=true;"
                  "index_type=kTwoLevelIndexSearch;metadata_block_size=256;"
                  "whole_key_filtering=") +
      (whole_key_filtering ? "true" : "false") + cutting.table_options);
  options.prefix_extractor.reset(rdb::NewFixedPrefixTransform(8));
  Open(options);
  constexpr int kPrefixes = 4000;
  constexpr int kKeysPerPrefix = 5;
  rdb::WriteOptions write;
  write.disableWAL = true;
  for (int p = 0; p < kPrefixes; p += 2) {
    for (int k = 0; k < kKeysPerPrefix; ++k) {
      ASSERT_TRUE(db_->Put(write, PrefixKey(p, k), "v").ok());
    }
  }
  ASSERT_TRUE(db_->Flush(rdb::FlushOptions()).ok());
  statistics_->Reset();

  rdb::ReadOptions read;
  read.prefix_same_as_start = true;
  std::unique_ptr<rdb::Iterator> it(db_->NewIterator(read));
  for (int p = 0; p < kPrefixes; ++p) {
    const bool present = p % 2 == 0;
    it->Seek(Prefix(p));
    ASSERT_EQ(it->Valid(), present) << Prefix(p);
    if (present) {
      ASSERT_EQ(it->key().ToString(), PrefixKey(p, 0));
    }
    it->SeekForPrev(Prefix(p) + "-9");
    ASSERT_EQ(it->Valid(), present) << "SeekForPrev " << Prefix(p);
    if (present) {
      ASSERT_EQ(it->key().ToString(), PrefixKey(p, kKeysPerPrefix - 1));
    }
  }
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();
  // The filter answered most absent prefixes without reading data blocks.
  EXPECT_GT(SeeksFiltered(), kPrefixes / 2 * 9 / 10);

  // Point lookups: with whole-key filtering, absent keys with present
  // prefixes are filtered too.
  std::string value;
  for (int p = 0; p < kPrefixes; p += 2) {
    ASSERT_TRUE(db_->Get(rdb::ReadOptions(), PrefixKey(p, 3), &value).ok());
  }
}

INSTANTIATE_TEST_SUITE_P(
    WholeKeyFiltering, PrefixSeekTest,
    ::testing::Combine(::testing::Bool(),
                       ::testing::ValuesIn(testing::PartitionCuttings())),
    [](const ::testing::TestParamInfo<
        std::tuple<bool, testing::PartitionCutting>>& param_info) {
      return std::string(std::get<0>(param_info.param) ? "WholeKeys"
                                                       : "PrefixesOnly") +
             std::get<1>(param_info.param).name;
    });

}  // namespace
}  // namespace rocksdb_cuckoo
