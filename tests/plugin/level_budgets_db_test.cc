// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// level_budgets=monkey: its options forms and errors, OPTIONS files, and the
// budgets of the filters a real DB writes at each level (plugin/
// level_budgets.h), with every key found and the files readable under the
// uniform policy.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cuckoo/sizing.h"
#include "cuckoo_filter_policy.h"
#include "db_test_util.h"
#include "filter_format.h"
#include "monkey_budgets.h"
#include "rocksdb/convenience.h"
#include "rocksdb/metadata.h"
#include "rocksdb/table_properties.h"
#include "rocksdb_interfaces.h"
#include "table/block_based/filter_policy_internal.h"

namespace rocksdb_cuckoo {
namespace {

namespace rdb = ROCKSDB_NAMESPACE;
using testing::DbTest;
using testing::EnsurePluginRegistered;
using testing::Key;
using testing::StrictConfig;

const CuckooFilterPolicyOptions& OptionsOf(const rdb::FilterPolicy& policy) {
  EXPECT_STREQ(policy.Name(), "cuckoofilter");
  return static_cast<const CuckooFilterPolicy&>(policy).options();
}

TEST(LevelBudgetsOptionsTest, EveryFormGivesTheBudgetsAndGetIdParsesBack) {
  EnsurePluginRegistered();
  struct Case {
    std::string text;
    double bits_per_key;
    std::string level_budgets;
    double multiplier;
    std::string id;
  };
  for (const Case& c : {
           Case{"{id=cuckoofilter;bits_per_key=10;level_budgets=monkey}", 10,
                "monkey", 10, "cuckoofilter:10:monkey:10"},
           Case{"id=cuckoofilter;level_budgets=monkey;"
                "max_bytes_for_level_multiplier=8",
                10, "monkey", 8, "cuckoofilter:10:monkey:8"},
           Case{"cuckoofilter:12:monkey:4", 12, "monkey", 4,
                "cuckoofilter:12:monkey:4"},
           Case{"cuckoofilter:12:monkey", 12, "monkey", 10,
                "cuckoofilter:12:monkey:10"},
           Case{"cuckoofilter:9.5:uniform", 9.5, "uniform", 10,
                "cuckoofilter:9.5"},
           Case{"{id=cuckoofilter:16;level_budgets=uniform}", 16, "uniform", 10,
                "cuckoofilter:16"},
       }) {
    SCOPED_TRACE(c.text);
    std::shared_ptr<const rdb::FilterPolicy> policy;
    rdb::Status s =
        rdb::FilterPolicy::CreateFromString(StrictConfig(), c.text, &policy);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_NE(policy, nullptr);
    EXPECT_EQ(OptionsOf(*policy).bits_per_key, c.bits_per_key);
    EXPECT_EQ(OptionsOf(*policy).level_budgets, c.level_budgets);
    EXPECT_EQ(OptionsOf(*policy).max_bytes_for_level_multiplier, c.multiplier);
    EXPECT_EQ(policy->GetId(), c.id);
    std::shared_ptr<const rdb::FilterPolicy> again;
    s = rdb::FilterPolicy::CreateFromString(StrictConfig(), policy->GetId(),
                                            &again);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(OptionsOf(*again).level_budgets, c.level_budgets);
    EXPECT_EQ(OptionsOf(*again).max_bytes_for_level_multiplier, c.multiplier);
    EXPECT_EQ(again->GetId(), c.id);
  }
}

TEST(LevelBudgetsOptionsTest, BadValuesAreRefusedByName) {
  EnsurePluginRegistered();
  struct Case {
    std::string text;
    std::string message;
  };
  for (const Case& c : {
           Case{"id=cuckoofilter;level_budgets=tiered",
                "level_budgets 'tiered' is not one of uniform, monkey"},
           Case{"cuckoofilter:10:Monkey",
                "level_budgets 'Monkey' is not one of uniform, monkey"},
           Case{"id=cuckoofilter;level_budgets=monkey;"
                "max_bytes_for_level_multiplier=1",
                "max_bytes_for_level_multiplier 1 is outside the allowed "
                "range (1, 1000]"},
           Case{"cuckoofilter:10:monkey:ten",
                "max_bytes_for_level_multiplier 'ten' is not a number"},
           Case{"cuckoofilter:10:monkey:10:7", "has more fields"},
       }) {
    SCOPED_TRACE(c.text);
    std::shared_ptr<const rdb::FilterPolicy> policy;
    rdb::Status s =
        rdb::FilterPolicy::CreateFromString(StrictConfig(), c.text, &policy);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.ToString().find(c.message), std::string::npos)
        << "gave: " << s.ToString();
  }
}

// The parser the MyRocks preload calls directly (myrocks/): the id forms,
// checked, and no other policy's name.
TEST(LevelBudgetsOptionsTest, ParseCuckooFilterIdReadsOnlyItsOwnForms) {
  CuckooFilterPolicyOptions options;
  std::string problem;
  EXPECT_TRUE(
      ParseCuckooFilterId("cuckoofilter:12:monkey:8", &options, &problem));
  EXPECT_EQ(options.bits_per_key, 12.0);
  EXPECT_EQ(options.level_budgets, "monkey");
  EXPECT_EQ(options.max_bytes_for_level_multiplier, 8.0);
  for (const char* other : {"bloomfilter:10:false", "cuckoofilterx:10",
                            "rocksdb_cuckoo.Cuckoo", ""}) {
    SCOPED_TRACE(other);
    CuckooFilterPolicyOptions untouched;
    EXPECT_FALSE(ParseCuckooFilterId(other, &untouched, &problem));
    EXPECT_NE(problem.find("does not name cuckoofilter"), std::string::npos)
        << problem;
    EXPECT_EQ(untouched.bits_per_key, kDefaultBitsPerKey);
  }
  EXPECT_FALSE(ParseCuckooFilterId("cuckoofilter:3", &options, &problem));
  EXPECT_NE(problem.find("outside the allowed range"), std::string::npos);
}

// The filters' entries weigh the levels: once a level's filters have held
// each key's prefix beside it (two entries a key), its next filter gets the
// budget of a level of twice the entries per key, not of one.
class LevelBudgetsEntriesTest : public ::testing::TestWithParam<bool> {
 protected:
  // How a key's prefix reaches the builder.
  enum class Prefixes {
    kNone,
    // AddKey(prefix) right after AddKey(key), on a slice of the key's
    // bytes, as RocksDB adds them before 9.6.
    kAddKey,
    // AddKeyAndAlt(key, prefix), as RocksDB adds them from 9.6.
    kAlt,
  };

  // Builds a filter of `keys` keys, each with its own 9-byte prefix, at
  // `level`; returns the block's size.
  size_t Build(int level, bool bottommost, int keys, Prefixes prefixes) {
    rdb::BlockBasedTableOptions table_options;
    table_options.optimize_filters_for_memory = false;
    rdb::FilterBuildingContext context(table_options);
    context.level_at_creation = level;
    context.is_bottommost = bottommost;
    std::unique_ptr<rdb::FilterBitsBuilder> builder(
        policy_->GetBuilderWithContext(context));
    for (int i = 0; i < keys; ++i) {
      char key[32];
      std::snprintf(key, sizeof(key), "p%08d/suffix", i);
      const rdb::Slice whole(key), prefix(key, 9);
      switch (prefixes) {
        case Prefixes::kNone:
          builder->AddKey(whole);
          break;
        case Prefixes::kAddKey:
          builder->AddKey(whole);
          builder->AddKey(prefix);
          break;
        case Prefixes::kAlt:
#ifdef ROCKSDB_CUCKOO_HAS_ADD_KEY_AND_ALT
          builder->AddKeyAndAlt(whole, prefix);
#endif
          break;
      }
    }
    std::unique_ptr<const char[]> buf;
    return builder->Finish(&buf).size();
  }

  static uint64_t PlannedBytes(double budget, uint64_t entries) {
    const cuckoo::FilterConfig config = cuckoo::ChooseForBitsPerKey(budget);
    return TableBlockBytes(config.layout,
                           PlannedGeometry(config, entries).num_buckets);
  }

  std::shared_ptr<const rdb::FilterPolicy> policy_;
};

TEST_P(LevelBudgetsEntriesTest, LevelsAreWeighedByTheirEntriesPerKey) {
  const Prefixes prefixes = GetParam() ? Prefixes::kAlt : Prefixes::kAddKey;
#ifndef ROCKSDB_CUCKOO_HAS_ADD_KEY_AND_ALT
  if (prefixes == Prefixes::kAlt) {
    GTEST_SKIP() << "RocksDB before 9.6 has no AddKeyAndAlt";
  }
#endif
  EnsurePluginRegistered();
  ASSERT_TRUE(rdb::FilterPolicy::CreateFromString(
                  StrictConfig(),
                  "{id=cuckoofilter;bits_per_key=10;level_budgets=monkey}",
                  &policy_)
                  .ok());
  constexpr int kKeys = 20000;
  // The bottom (L6) holds keys alone; then L5, one level above it, holds
  // each key with its prefix: built for equal entries per key, as nothing
  // was learned of L5 before.
  Build(6, true, kKeys, Prefixes::kNone);
  const double by_keys =
      monkey::ChooseLevelBudgets(10, 10, 2, kMinBitsPerKey, kMaxBitsPerKey)
          .bits_per_key[1];
  EXPECT_EQ(Build(5, false, kKeys, prefixes), PlannedBytes(by_keys, 2 * kKeys));
  // The next L5 filter: L5 weighs twice its keys' share.
  const double by_entries =
      monkey::ChooseBudgetsForShares(10, {0.0, std::log(2.0 / 10.0)},
                                     kMinBitsPerKey, kMaxBitsPerKey)
          .bits_per_key[1];
  ASSERT_NE(PlannedBytes(by_entries, kKeys), PlannedBytes(by_keys, kKeys));
  EXPECT_EQ(Build(5, false, kKeys, Prefixes::kNone),
            PlannedBytes(by_entries, kKeys));
}

INSTANTIATE_TEST_SUITE_P(AddKeyOrAlt, LevelBudgetsEntriesTest,
                         ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? "AddKeyAndAlt" : "AddKey";
                         });

class LevelBudgetsDbTest : public DbTest {
 protected:
  rdb::Options MonkeyOptions(const std::string& extra_table_options = "") {
    rdb::Options options = MakeOptions(
        "filter_policy={id=cuckoofilter;bits_per_key=10;"
        "level_budgets=monkey};optimize_filters_for_memory=false" +
        extra_table_options);
    options.num_levels = 7;
    options.level_compaction_dynamic_level_bytes = false;
    return options;
  }

  // Writes keys [begin, end) and flushes them into one L0 file.
  void WriteAndFlush(uint64_t begin, uint64_t end) {
    rdb::WriteOptions write;
    write.disableWAL = true;
    for (uint64_t i = begin; i < end; ++i) {
      ASSERT_TRUE(db_->Put(write, Key(i), "v" + std::to_string(i)).ok());
    }
    ASSERT_TRUE(db_->Flush(rdb::FlushOptions()).ok());
  }

  // Compacts the L0 files into `level`.
  void CompactL0Into(int level) {
    std::vector<std::string> l0;
    std::vector<rdb::LiveFileMetaData> files;
    db_->GetLiveFilesMetaData(&files);
    for (const rdb::LiveFileMetaData& file : files) {
      if (file.level == 0) l0.push_back(file.name);
    }
    ASSERT_FALSE(l0.empty());
    rdb::Status s = db_->CompactFiles(rdb::CompactionOptions(), l0, level);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // An LSM with files at L3 (the bottom), L2, L1 and L0, each level a tenth
  // of the one below, the keys of each level spread over the whole range
  // (every 10th key, then every 100th, ...), so that every level overlaps
  // the ones below. Key i is present when i % 10000 is a multiple of the
  // level's stride.
  void BuildFourLevels() {
    constexpr uint64_t kKeys = 100000;
    for (const auto& [stride, level] :
         std::vector<std::pair<uint64_t, int>>{{1, 3}, {10, 2}, {100, 1}}) {
      rdb::WriteOptions write;
      write.disableWAL = true;
      for (uint64_t i = 0; i < kKeys; i += stride) {
        ASSERT_TRUE(db_->Put(write, Key(i), "v" + std::to_string(i)).ok());
      }
      ASSERT_TRUE(db_->Flush(rdb::FlushOptions()).ok());
      CompactL0Into(level);
    }
    rdb::WriteOptions write;
    write.disableWAL = true;
    for (uint64_t i = 0; i < kKeys; i += 1000) {
      ASSERT_TRUE(db_->Put(write, Key(i), "v" + std::to_string(i)).ok());
    }
    ASSERT_TRUE(db_->Flush(rdb::FlushOptions()).ok());
  }

  struct LevelFilters {
    uint64_t filter_bytes = 0;
    uint64_t keys = 0;
    double BitsPerKey() const { return filter_bytes * 8.0 / keys; }
  };
  // Each level's filter bytes and keys, summed over its files.
  std::map<int, LevelFilters> FiltersByLevel() {
    std::vector<rdb::LiveFileMetaData> files;
    db_->GetLiveFilesMetaData(&files);
    rdb::TablePropertiesCollection properties;
    EXPECT_TRUE(db_->GetPropertiesOfAllTables(&properties).ok());
    std::map<int, LevelFilters> levels;
    for (const rdb::LiveFileMetaData& file : files) {
      for (const auto& [path, table] : properties) {
        if (path.size() < file.name.size() ||
            path.compare(path.size() - file.name.size(), file.name.size(),
                         file.name) != 0) {
          continue;
        }
        EXPECT_EQ(table->filter_policy_name, "cuckoofilter");
        levels[file.level].filter_bytes += table->filter_size;
        levels[file.level].keys += table->num_entries;
      }
    }
    return levels;
  }

  // Every key written is found, and absent keys between them are filtered.
  void ExpectEveryKey() {
    statistics_->Reset();
    std::string value;
    for (uint64_t i = 0; i < 100000; ++i) {
      const rdb::Status s = db_->Get(rdb::ReadOptions(), Key(i), &value);
      ASSERT_TRUE(s.ok()) << "false negative for " << Key(i) << ": "
                          << s.ToString();
      ASSERT_TRUE(db_->Get(rdb::ReadOptions(), testing::AbsentKey(i), &value)
                      .IsNotFound());
    }
    EXPECT_GT(Ticker(rdb::BLOOM_FILTER_USEFUL), 100000u * 3);
  }
};

// Upper levels get more bits per key, the bottom fewer than the average,
// each file the budget that ChooseLevelBudgets gives its level in the LSM
// the policy had seen when the file was written.
TEST_F(LevelBudgetsDbTest, EachLevelGetsItsBudgetAndEveryKeyIsFound) {
  Open(MonkeyOptions());
  ASSERT_EQ(PolicyInEffect(), "cuckoofilter");
  BuildFourLevels();
  const std::map<int, LevelFilters> levels = FiltersByLevel();
  ASSERT_EQ(levels.size(), 4u);
  // One file a level, written with, in turn: L0 and L3 seen (L3 at the bottom,
  // of 2 levels); L0, L2, L3 (L2 one above, of 3); L0 to L3 (L1 two above, of
  // 4); and the last flush, L0, three above of 4.
  const struct {
    int level;
    int depth;
    int distance;
  } expected[] = {{3, 2, 0}, {2, 3, 1}, {1, 4, 2}, {0, 4, 3}};
  for (const auto& e : expected) {
    SCOPED_TRACE("L" + std::to_string(e.level));
    const double budget = monkey::ChooseLevelBudgets(
                              10, 10, e.depth, kMinBitsPerKey, kMaxBitsPerKey)
                              .bits_per_key[e.distance];
    ASSERT_EQ(levels.count(e.level), 1u);
    const LevelFilters& filters = levels.at(e.level);
    // The block the builder plans at that budget (a build that has to grow
    // adds under 2%).
    const cuckoo::FilterConfig config = cuckoo::ChooseForBitsPerKey(budget);
    const uint64_t planned = TableBlockBytes(
        config.layout, PlannedGeometry(config, filters.keys).num_buckets);
    EXPECT_GE(filters.filter_bytes, planned);
    EXPECT_LE(filters.filter_bytes, planned * 102 / 100);
  }
  EXPECT_LT(levels.at(3).BitsPerKey(), 10.0);
  EXPECT_GT(levels.at(2).BitsPerKey(), levels.at(3).BitsPerKey());
  EXPECT_GT(levels.at(1).BitsPerKey(), levels.at(2).BitsPerKey());
  EXPECT_GT(levels.at(0).BitsPerKey(), levels.at(1).BitsPerKey());
  ExpectEveryKey();

  // The uniform policy reads the same files: each block records its layout.
  db_.reset();
  Open(MakeOptions("filter_policy=cuckoofilter:10"));
  ExpectEveryKey();
}

// A flush is never the bottom (RocksDB writes L0 files as not bottommost):
// the first flush of an empty DB is one level above a bottom the policy has
// not seen, in a 2-level LSM.
TEST_F(LevelBudgetsDbTest, TheFirstFlushIsAboveTheBottom) {
  Open(MonkeyOptions());
  Fill(20000);
  const std::map<int, LevelFilters> levels = FiltersByLevel();
  ASSERT_EQ(levels.size(), 1u);
  ASSERT_EQ(levels.count(0), 1u);
  const cuckoo::FilterConfig config = cuckoo::ChooseForBitsPerKey(
      monkey::ChooseLevelBudgets(10, 10, 2, kMinBitsPerKey, kMaxBitsPerKey)
          .bits_per_key[1]);
  const uint64_t planned = TableBlockBytes(
      config.layout, PlannedGeometry(config, 20000).num_buckets);
  EXPECT_GE(levels.at(0).filter_bytes, planned);
  EXPECT_LE(levels.at(0).filter_bytes, planned * 102 / 100);
  CheckGets(20000);
}

// Partitioned filters: one builder writes every partition of a file, with
// the file's budget.
TEST_F(LevelBudgetsDbTest, PartitionedFiltersFindEveryKey) {
  Open(
      MonkeyOptions(";partition_filters=true;index_type=kTwoLevelIndexSearch;"
                    "metadata_block_size=1024"));
  BuildFourLevels();
  const std::map<int, LevelFilters> levels = FiltersByLevel();
  ASSERT_EQ(levels.size(), 4u);
  EXPECT_GT(levels.at(1).BitsPerKey(), levels.at(3).BitsPerKey());
  ExpectEveryKey();
  std::vector<std::string> keys;
  for (uint64_t i = 0; i < 1000; ++i) keys.push_back(Key(i * 97));
  std::vector<rdb::Slice> slices(keys.begin(), keys.end());
  std::vector<std::string> values;
  const std::vector<rdb::Status> statuses =
      db_->MultiGet(rdb::ReadOptions(), slices, &values);
  for (size_t i = 0; i < statuses.size(); ++i) {
    EXPECT_TRUE(statuses[i].ok()) << keys[i];
  }
}

TEST_F(LevelBudgetsDbTest, OptionsFileKeepsTheBudgets) {
  Open(
      MakeOptions("filter_policy={id=cuckoofilter;bits_per_key=12;"
                  "level_budgets=monkey;max_bytes_for_level_multiplier=8}"));
  Fill(1000);
  db_.reset();
  const std::shared_ptr<const rdb::FilterPolicy> stored =
      testing::StoredFilterPolicy(path_);
  ASSERT_NE(stored, nullptr);
  EXPECT_EQ(OptionsOf(*stored).level_budgets, "monkey");
  EXPECT_EQ(OptionsOf(*stored).bits_per_key, 12);
  EXPECT_EQ(OptionsOf(*stored).max_bytes_for_level_multiplier, 8);
  EXPECT_EQ(stored->GetId(), "cuckoofilter:12:monkey:8");
}

// Universal compaction has no levels of sizes in a fixed ratio: the average
// budget, and the info log says why.
TEST_F(LevelBudgetsDbTest, UniversalCompactionGetsTheAverageBudget) {
  rdb::Options options = MonkeyOptions();
  options.compaction_style = rdb::kCompactionStyleUniversal;
  Open(options);
  Fill(20000);
  const std::map<int, LevelFilters> levels = FiltersByLevel();
  ASSERT_EQ(levels.size(), 1u);
  const cuckoo::FilterConfig average = cuckoo::ChooseForBitsPerKey(10);
  const uint64_t planned = TableBlockBytes(
      average.layout, PlannedGeometry(average, 20000).num_buckets);
  EXPECT_GE(levels.begin()->second.filter_bytes, planned);
  EXPECT_LE(levels.begin()->second.filter_bytes, planned * 102 / 100);
  db_.reset();
  std::ifstream log(path_ + "/LOG");
  const std::string text((std::istreambuf_iterator<char>(log)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("[cuckoofilter] level_budgets=monkey sizes filters by "
                      "level for leveled compaction"),
            std::string::npos);
}

}  // namespace
}  // namespace rocksdb_cuckoo
