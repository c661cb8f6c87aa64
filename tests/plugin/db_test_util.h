// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Shared by the plugin's DB tests: strict options parsing, key naming, and a
// fixture that opens a DB, fills it, and reads the filter tickers.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cuckoo_filter_policy.h"
#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/statistics.h"
#include "rocksdb/table.h"
#include "rocksdb/table_properties.h"
#include "rocksdb/utilities/object_registry.h"
#include "rocksdb/utilities/options_util.h"
#include "rocksdb_interfaces.h"

namespace rocksdb_cuckoo {
namespace testing {

namespace rdb = ROCKSDB_NAMESPACE;

// Registers the plugin once for the whole process, as an application would.
inline void EnsurePluginRegistered() {
  static const int registered =
      cuckoo_filter_register(*rdb::ObjectLibrary::Default(), "cuckoo");
  (void)registered;
}

// Options parsing that fails loudly instead of silently dropping a policy.
inline rdb::ConfigOptions StrictConfig() {
  rdb::ConfigOptions config;
  config.ignore_unsupported_options = false;
  config.ignore_unknown_options = false;
  config.input_strings_escaped = false;
  return config;
}

inline std::string Key(uint64_t i) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "key%012llu",
                static_cast<unsigned long long>(i));
  return buffer;
}
// Sorts between Key(i) and Key(i + 1): inside the SST's key range, so the
// filter (not the range check) decides.
inline std::string AbsentKey(uint64_t i) { return Key(i) + "x"; }

// How partitioned filters are cut, as table options to append: from RocksDB
// 9.6 either with the index partitions (decouple_partitioned_filters=false)
// or on their own (true, the default since 10.6). Tests of partitioned
// filters run with each; before 9.6 there is only the first.
struct PartitionCutting {
  std::string name;
  std::string table_options;
};
inline void PrintTo(const PartitionCutting& cutting, std::ostream* out) {
  *out << cutting.name;
}
inline std::vector<PartitionCutting> PartitionCuttings() {
#if ROCKSDB_CUCKOO_VERSION_AT_LEAST(9, 6)
  return {{"WithIndex", ";decouple_partitioned_filters=false"},
          {"Decoupled", ";decouple_partitioned_filters=true"}};
#else
  return {{"WithIndex", ""}};
#endif
}

// The filter policy that the latest OPTIONS file of the DB at `path` names,
// loaded with strict options; null (with a test failure) when it has none.
inline std::shared_ptr<const rdb::FilterPolicy> StoredFilterPolicy(
    const std::string& path) {
  rdb::DBOptions db_options;
  std::vector<rdb::ColumnFamilyDescriptor> families;
  rdb::Status s =
      rdb::LoadLatestOptions(StrictConfig(), path, &db_options, &families);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(families.size(), 1u);
  if (!s.ok() || families.empty()) return nullptr;
  auto* table =
      families[0]
          .options.table_factory->GetOptions<rdb::BlockBasedTableOptions>();
  EXPECT_NE(table, nullptr);
  if (table == nullptr) return nullptr;
  EXPECT_NE(table->filter_policy, nullptr) << "the policy was dropped";
  return table->filter_policy;
}

class DbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EnsurePluginRegistered();
    // Unique per test (ctest runs tests in parallel), without the slashes
    // of parameterized names.
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name =
        std::string(info->test_suite_name()) + "." + info->name();
    std::replace(name.begin(), name.end(), '/', '_');
    path_ = ::testing::TempDir() + "cuckoo_db_" + name;
    std::filesystem::remove_all(path_);
  }
  void TearDown() override {
    db_.reset();
    std::filesystem::remove_all(path_);
  }

  rdb::Options MakeOptions(const std::string& table_options) {
    rdb::BlockBasedTableOptions base;
    rdb::BlockBasedTableOptions table;
    rdb::Status s = rdb::GetBlockBasedTableOptionsFromString(
        StrictConfig(), base, table_options, &table);
    EXPECT_TRUE(s.ok()) << s.ToString();
    rdb::Options options;
    options.create_if_missing = true;
#ifdef ROCKSDB_CUCKOO_HAS_FAIL_IF_OPTIONS_FILE_ERROR
    options.fail_if_options_file_error = true;
#endif
    options.statistics = rdb::CreateDBStatistics();
    options.table_factory.reset(rdb::NewBlockBasedTableFactory(table));
    options.disable_auto_compactions = true;
    return options;
  }

  void Open(const rdb::Options& options) {
    db_.reset();
    rdb::Status s = OpenDb(options, path_, &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
    statistics_ = options.statistics;
  }

  std::string PolicyInEffect() {
    auto* table = db_->GetOptions()
                      .table_factory->GetOptions<rdb::BlockBasedTableOptions>();
    if (table == nullptr || table->filter_policy == nullptr) return "none";
    return table->filter_policy->Name();
  }

  void Fill(uint64_t count) {
    rdb::WriteOptions write;
    write.disableWAL = true;
    for (uint64_t i = 0; i < count; ++i) {
      ASSERT_TRUE(db_->Put(write, Key(i), "v" + std::to_string(i)).ok());
    }
    ASSERT_TRUE(db_->Flush(rdb::FlushOptions()).ok());
  }

  uint64_t Ticker(rdb::Tickers ticker) {
    return statistics_->getTickerCount(ticker);
  }

  // Iterator seeks the prefix filter answered: counted with the point
  // lookups' prefix ticker until RocksDB 8.3, in the *_LEVEL_SEEK_FILTERED
  // tickers from then on (facebook/rocksdb#11460).
  uint64_t SeeksFiltered() {
#if ROCKSDB_CUCKOO_VERSION_AT_LEAST(8, 3)
    return Ticker(rdb::LAST_LEVEL_SEEK_FILTERED) +
           Ticker(rdb::NON_LAST_LEVEL_SEEK_FILTERED);
#else
    return Ticker(rdb::BLOOM_FILTER_PREFIX_USEFUL);
#endif
  }

  // Gets every present key (must be found) and the absent keys between
  // them; returns the false-positive rate seen by the filter.
  double CheckGets(uint64_t count) {
    statistics_->Reset();
    rdb::ReadOptions read;
    std::string value;
    for (uint64_t i = 0; i < count; ++i) {
      rdb::Status s = db_->Get(read, Key(i), &value);
      EXPECT_TRUE(s.ok()) << "false negative for " << Key(i) << ": "
                          << s.ToString();
      if (!s.ok()) return -1;
      EXPECT_EQ(value, "v" + std::to_string(i));
    }
    EXPECT_EQ(Ticker(rdb::BLOOM_FILTER_FULL_TRUE_POSITIVE), count);
    // AbsentKey(count - 1) sorts after the last key; lookups outside a
    // file's key range can be pruned before its filter, so stop before it.
    const uint64_t absent = count - 1;
    for (uint64_t i = 0; i < absent; ++i) {
      EXPECT_TRUE(db_->Get(read, AbsentKey(i), &value).IsNotFound());
    }
    const double useful = static_cast<double>(Ticker(rdb::BLOOM_FILTER_USEFUL));
    const double false_positives =
        static_cast<double>(Ticker(rdb::BLOOM_FILTER_FULL_POSITIVE) -
                            Ticker(rdb::BLOOM_FILTER_FULL_TRUE_POSITIVE));
    EXPECT_EQ(useful + false_positives, static_cast<double>(absent))
        << "every absent lookup must reach the filter";
    return false_positives / (useful + false_positives);
  }

  // MultiGet in batches of 32 keys, half present and half absent (the
  // batched MayMatch path): every present key found, nearly every absent one
  // rejected by the filter.
  void CheckMultiGets(uint64_t count) {
    statistics_->Reset();
    rdb::ReadOptions read;
    for (uint64_t begin = 0; begin < count; begin += 16) {
      std::vector<std::string> keys;
      for (uint64_t i = begin; i < begin + 16 && i + 1 < count; ++i) {
        keys.push_back(Key(i));
        keys.push_back(AbsentKey(i));
      }
      std::vector<rdb::Slice> slices(keys.begin(), keys.end());
      std::vector<rdb::PinnableSlice> values(keys.size());
      std::vector<rdb::Status> statuses(keys.size());
      db_->MultiGet(read, db_->DefaultColumnFamily(), slices.size(),
                    slices.data(), values.data(), statuses.data());
      for (size_t k = 0; k < keys.size(); k += 2) {
        ASSERT_TRUE(statuses[k].ok()) << "false negative for " << keys[k]
                                      << ": " << statuses[k].ToString();
        ASSERT_TRUE(statuses[k + 1].IsNotFound()) << keys[k + 1];
      }
    }
    EXPECT_EQ(Ticker(rdb::BLOOM_FILTER_FULL_TRUE_POSITIVE), count - 1);
    EXPECT_GT(Ticker(rdb::BLOOM_FILTER_USEFUL), (count - 1) * 98 / 100);
  }

  rdb::TableProperties AggregatedProperties() {
    rdb::TablePropertiesCollection all;
    EXPECT_TRUE(db_->GetPropertiesOfAllTables(&all).ok());
    rdb::TableProperties sum;
    for (const auto& [file, props] : all) {
      sum.filter_size += props->filter_size;
      sum.num_filter_entries += props->num_filter_entries;
      sum.num_entries += props->num_entries;
      sum.filter_policy_name = props->filter_policy_name;
    }
    return sum;
  }

  std::string path_;
  std::unique_ptr<rdb::DB> db_;
  std::shared_ptr<rdb::Statistics> statistics_;
};

}  // namespace testing
}  // namespace rocksdb_cuckoo
