// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Integration tests of the plugin against a real RocksDB: registration and
// options strings under strict ConfigOptions, Get/MultiGet with full and
// partitioned filters, the false-positive rate from RocksDB's tickers next to
// the built-in Bloom filter's, OPTIONS file round trips, reopening under other
// policies, construction verification, and the low-budget warning.
#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "cuckoo/sizing.h"
#include "db_test_util.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/slice_transform.h"
#include "rocksdb/utilities/options_util.h"

namespace rocksdb_cuckoo {
namespace {

using testing::AbsentKey;
using testing::DbTest;
using testing::EnsurePluginRegistered;
using testing::Key;
using testing::StrictConfig;
namespace rdb = ROCKSDB_NAMESPACE;

TEST(RegistrationTest, EveryOptionsFormGivesTheCuckooPolicy) {
  EnsurePluginRegistered();
  struct Case {
    std::string text;
    double bits_per_key;
  };
  for (const Case& c :
       {Case{"cuckoofilter", kDefaultBitsPerKey}, Case{"cuckoofilter:12", 12},
        Case{"cuckoofilter:9.5", 9.5},
        Case{"id=cuckoofilter;bits_per_key=16", 16},
        Case{"{id=cuckoofilter;bits_per_key=20}", 20},
        Case{"id=cuckoofilter:12;bits_per_key=14", 14}}) {
    std::shared_ptr<const rdb::FilterPolicy> policy;
    rdb::Status s =
        rdb::FilterPolicy::CreateFromString(StrictConfig(), c.text, &policy);
    ASSERT_TRUE(s.ok()) << c.text << ": " << s.ToString();
    ASSERT_NE(policy, nullptr) << c.text;
    ASSERT_STREQ(policy->Name(), "cuckoofilter");
    auto* cuckoo = static_cast<const CuckooFilterPolicy*>(policy.get());
    EXPECT_EQ(cuckoo->bits_per_key(), c.bits_per_key) << c.text;
    // GetId parses back to an equivalent policy.
    std::shared_ptr<const rdb::FilterPolicy> again;
    ASSERT_TRUE(rdb::FilterPolicy::CreateFromString(StrictConfig(),
                                                    policy->GetId(), &again)
                    .ok())
        << policy->GetId();
    EXPECT_EQ(
        static_cast<const CuckooFilterPolicy*>(again.get())->bits_per_key(),
        c.bits_per_key);
    EXPECT_EQ(again->GetId(), policy->GetId());
  }
}

TEST(RegistrationTest, BadValuesGiveClearErrors) {
  EnsurePluginRegistered();
  struct Case {
    std::string text;
    std::string message;
  };
  for (const Case& c :
       {Case{"cuckoofilter:0",
             "bits_per_key 0 is outside the allowed range [4, 64]"},
        Case{"cuckoofilter:100",
             "bits_per_key 100 is outside the allowed range [4, 64]"},
        Case{"id=cuckoofilter;bits_per_key=2", "bits_per_key 2 is outside"},
        // RocksDB's wording varies by release ("Could not find option: bits",
        // "Extra option not recognized: bits"); both name the option.
        Case{"id=cuckoofilter;bits=12", "option"},
        Case{"id=cuckoofilter;bits=12", ": bits"},
        Case{"cuckoofilter:abc", "Could not load FilterPolicy"},
        Case{"cuckoo_filter:12", "Could not load FilterPolicy"}}) {
    std::shared_ptr<const rdb::FilterPolicy> policy;
    rdb::Status s =
        rdb::FilterPolicy::CreateFromString(StrictConfig(), c.text, &policy);
    EXPECT_FALSE(s.ok()) << c.text;
    EXPECT_NE(s.ToString().find(c.message), std::string::npos)
        << c.text << " gave: " << s.ToString();
  }
}

TEST(RegistrationTest, CompatibilityNameIsOurOwn) {
  CuckooFilterPolicy policy;
  EXPECT_STRNE(policy.CompatibilityName(), "rocksdb.BuiltinBloomFilter");
  EXPECT_STREQ(policy.CompatibilityName(), "rocksdb_cuckoo.Cuckoo");
}

TEST_F(DbTest, NoFalseNegativesAndFalsePositiveRatesAgainstBloom) {
  constexpr uint64_t kKeys = 200000;
  for (int bits : {10, 16}) {
    double rates[2];
    double bits_per_key[2];
    const std::string policies[2] = {
        "cuckoofilter:" + std::to_string(bits),
        "bloomfilter:" + std::to_string(bits) + ":false"};
    for (int p = 0; p < 2; ++p) {
      SCOPED_TRACE(policies[p]);
      std::filesystem::remove_all(path_);
      Open(MakeOptions("filter_policy=" + policies[p]));
      ASSERT_EQ(PolicyInEffect(), p == 0 ? "cuckoofilter" : "bloomfilter");
      Fill(kKeys);
      rates[p] = CheckGets(kKeys);
      const rdb::TableProperties props = AggregatedProperties();
      ASSERT_EQ(props.num_filter_entries, kKeys);
      bits_per_key[p] = 8.0 * props.filter_size / kKeys;
      if (p == 0) {
        EXPECT_EQ(props.filter_policy_name, "cuckoofilter");
        const cuckoo::FilterConfig config = cuckoo::ChooseForBitsPerKey(bits);
        EXPECT_LE(bits_per_key[p], bits + 0.01);
        EXPECT_NEAR(rates[p], config.expected_fpr, 0.2 * config.expected_fpr);
      }
    }
    std::printf(
        "[ result ] %d bits/key: cuckoo FPR %.4f%% at %.3f bits/key, "
        "bloom FPR %.4f%% at %.3f bits/key, ratio %.3f\n",
        bits, 100 * rates[0], bits_per_key[0], 100 * rates[1], bits_per_key[1],
        rates[0] / rates[1]);
    RecordProperty("cuckoo_fpr_" + std::to_string(bits),
                   std::to_string(rates[0]));
    RecordProperty("bloom_fpr_" + std::to_string(bits),
                   std::to_string(rates[1]));
    EXPECT_LT(rates[0], rates[1]);
  }
}

TEST_F(DbTest, MultiGetFindsEveryKeyAndFiltersAbsentOnes) {
  Open(MakeOptions("filter_policy=cuckoofilter:12"));
  ASSERT_EQ(PolicyInEffect(), "cuckoofilter");
  constexpr uint64_t kKeys = 50000;
  Fill(kKeys);
  CheckMultiGets(kKeys);
}

TEST_F(DbTest, PartitionedFiltersWithTinyPartitions) {
  Open(
      MakeOptions("filter_policy=cuckoofilter:10;partition_filters=true;"
                  "index_type=kTwoLevelIndexSearch;metadata_block_size=1024;"
                  "cache_index_and_filter_blocks=true"));
  ASSERT_EQ(PolicyInEffect(), "cuckoofilter");
  constexpr uint64_t kKeys = 100000;
  Fill(kKeys);
  const double rate = CheckGets(kKeys);
  const rdb::TableProperties props = AggregatedProperties();
  EXPECT_EQ(props.num_filter_entries, kKeys);
  EXPECT_LT(rate, 2 * cuckoo::ChooseForBitsPerKey(10).expected_fpr);
}

TEST_F(DbTest, OptionsFileRoundTripsThePolicyExactly) {
  // fail_if_options_file_error makes Open fail if the persisted OPTIONS do
  // not parse back to an equivalent policy.
  for (const std::string bits : {"14", "10.1234567", "9.6"}) {
    SCOPED_TRACE(bits);
    std::filesystem::remove_all(path_);
    Open(MakeOptions("filter_policy={id=cuckoofilter;bits_per_key=" + bits +
                     "}"));
    Fill(1000);
    db_.reset();
    const std::shared_ptr<const rdb::FilterPolicy> stored =
        testing::StoredFilterPolicy(path_);
    ASSERT_NE(stored, nullptr);
    ASSERT_STREQ(stored->Name(), "cuckoofilter");
    EXPECT_EQ(
        static_cast<const CuckooFilterPolicy*>(stored.get())->bits_per_key(),
        std::stod(bits));
    EXPECT_EQ(stored->GetId(), "cuckoofilter:" + bits);
  }
}

TEST_F(DbTest, ReopeningUnderOtherPoliciesKeepsEveryReadCorrect) {
  constexpr uint64_t kKeys = 20000;
  Open(MakeOptions("filter_policy=cuckoofilter:12"));
  Fill(kKeys);
  for (const std::string& policy :
       {std::string("bloomfilter:10:false"), std::string("nullptr"),
        std::string("cuckoofilter:12")}) {
    SCOPED_TRACE(policy);
    Open(MakeOptions("filter_policy=" + policy));
    statistics_->Reset();
    std::string value;
    for (uint64_t i = 0; i < kKeys; ++i) {
      ASSERT_TRUE(db_->Get(rdb::ReadOptions(), Key(i), &value).ok());
      ASSERT_TRUE(
          db_->Get(rdb::ReadOptions(), AbsentKey(i), &value).IsNotFound());
    }
    // Only the cuckoo policy finds (and uses) the cuckoo filter blocks.
    const bool cuckoo = policy.rfind("cuckoofilter", 0) == 0;
    EXPECT_EQ(Ticker(rdb::BLOOM_FILTER_USEFUL) > 0, cuckoo);
  }
  // Rewrite under Bloom, then read under cuckoo: no filter, still correct.
  Open(MakeOptions("filter_policy=bloomfilter:10:false"));
  ASSERT_TRUE(
      db_->CompactRange(rdb::CompactRangeOptions(), nullptr, nullptr).ok());
  Open(MakeOptions("filter_policy=cuckoofilter:12"));
  statistics_->Reset();
  std::string value;
  for (uint64_t i = 0; i < kKeys; i += 7) {
    ASSERT_TRUE(db_->Get(rdb::ReadOptions(), Key(i), &value).ok());
  }
  EXPECT_EQ(Ticker(rdb::BLOOM_FILTER_USEFUL), 0u);
}

TEST_F(DbTest, ConstructionVerificationPassesAndAdversarialKeysWork) {
  rdb::Options options = MakeOptions(
      "filter_policy=cuckoofilter:10;detect_filter_construct_corruption=true");
  options.prefix_extractor.reset(rdb::NewFixedPrefixTransform(3));
  Open(options);
  rdb::WriteOptions write;
  // The empty key, many versions of one key, keys that are their own prefix.
  ASSERT_TRUE(db_->Put(write, "", "empty").ok());
  std::vector<const rdb::Snapshot*> snapshots;
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(db_->Put(write, "same", std::to_string(i)).ok());
    snapshots.push_back(db_->GetSnapshot());
  }
  for (const char* key : {"a", "ab", "abc", "abcd", "abd"}) {
    ASSERT_TRUE(db_->Put(write, key, key).ok());
  }
  for (int i = 0; i < 5000; ++i) ASSERT_TRUE(db_->Put(write, Key(i), "v").ok());
  ASSERT_TRUE(db_->Flush(rdb::FlushOptions()).ok());
  std::string value;
  ASSERT_TRUE(db_->Get(rdb::ReadOptions(), "", &value).ok());
  EXPECT_EQ(value, "empty");
  ASSERT_TRUE(db_->Get(rdb::ReadOptions(), "same", &value).ok());
  EXPECT_EQ(value, "49");
  for (const char* key : {"a", "ab", "abc", "abcd", "abd"}) {
    ASSERT_TRUE(db_->Get(rdb::ReadOptions(), key, &value).ok()) << key;
  }
  for (int i = 0; i < 5000; ++i)
    ASSERT_TRUE(db_->Get(rdb::ReadOptions(), Key(i), &value).ok());
  for (const rdb::Snapshot* snapshot : snapshots)
    db_->ReleaseSnapshot(snapshot);
}

// Keeps every line of the DB's info log (background threads write it too).
class CapturingLogger : public rdb::Logger {
 public:
  CapturingLogger() : rdb::Logger(rdb::InfoLogLevel::INFO_LEVEL) {}
  using rdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char line[1024];
    std::vsnprintf(line, sizeof(line), format, ap);
    std::lock_guard<std::mutex> lock(mutex_);
    lines_.emplace_back(line);
  }
  int CountContaining(const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex_);
    int count = 0;
    for (const std::string& line : lines_) {
      count += line.find(text) != std::string::npos;
    }
    return count;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

TEST_F(DbTest, BudgetsWhereBloomWinsWarnInTheInfoLog) {
  for (int bits : {8, 10}) {
    SCOPED_TRACE(bits);
    std::filesystem::remove_all(path_);
    rdb::Options options =
        MakeOptions("filter_policy=cuckoofilter:" + std::to_string(bits));
    auto logger = std::make_shared<CapturingLogger>();
    options.info_log = logger;
    Open(options);
    ASSERT_EQ(PolicyInEffect(), "cuckoofilter");
    Fill(1000);
    CheckGets(1000);
    const int warnings =
        logger->CountContaining("[cuckoofilter] " + std::to_string(bits) +
                                " bits/key: below about 9 bits per key");
    if (bits < 9) {
      EXPECT_GE(warnings, 1);
    } else {
      EXPECT_EQ(warnings, 0);
    }
  }
}

}  // namespace
}  // namespace rocksdb_cuckoo
