// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// RocksDB's memory contract for filters. optimize_filters_for_memory: with
// the option, each filter block plus the block trailer fills the allocation
// the allocator really gives, the policy's false-positive balance keeps the
// average rate on target, every key still matches, and the space estimate
// still bounds the block; without it, blocks keep their planned size. Runs
// under whichever allocator the process has (ctest runs it once more with
// jemalloc preloaded). Charged construction memory: a flush's filter build
// shows in the block cache's usage and leaves it, and a strict cache too
// small for it gets an always-match filter and loses no key.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cuckoo/sizing.h"
#include "cuckoo/static_builder.h"
#include "cuckoo_filter_policy.h"
#include "db_test_util.h"
#include "filter_format.h"
#include "rocksdb/cache.h"
// Cache itself (GetUsage): in cache.h until RocksDB 8.0, in advanced_cache.h
// from 8.1.
#if __has_include("rocksdb/advanced_cache.h")
#include "rocksdb/advanced_cache.h"
#endif
#include "rocksdb/table.h"
#include "rocksdb_interfaces.h"
#include "table/block_based/filter_policy_internal.h"

namespace rocksdb_cuckoo {
namespace {

namespace rdb = ROCKSDB_NAMESPACE;

// RocksDB holds a block in an allocation of its size plus this trailer.
constexpr size_t kTrailer = 5;

// What the allocator gives for `request` bytes: the least of a few
// allocations held at once, since glibc may hand out a free chunk up to 31
// bytes larger than the request's size class rather than split it.
size_t UsableBytes(size_t request) {
  std::unique_ptr<char[]> probes[4];
  size_t usable = SIZE_MAX;
  for (auto& probe : probes) {
    probe.reset(new char[request]);
    usable = std::min(usable, malloc_usable_size(probe.get()));
  }
  return usable;
}

// Key counts spread log-uniformly over [lo, hi], fixed by the seed.
std::vector<size_t> SpreadOfKeyCounts(int count, double lo, double hi) {
  std::mt19937_64 random(2026);
  std::uniform_real_distribution<double> exponent(std::log(lo), std::log(hi));
  std::vector<size_t> counts;
  for (int i = 0; i < count; ++i) {
    counts.push_back(static_cast<size_t>(std::exp(exponent(random))));
  }
  return counts;
}

class FilterMemoryTest : public ::testing::Test {
 protected:
  std::unique_ptr<rdb::FilterBitsBuilder> NewBuilder(double bits_per_key,
                                                     bool optimize) {
    if (policy_ == nullptr || policy_->bits_per_key() != bits_per_key) {
      policy_ = std::make_unique<CuckooFilterPolicy>(bits_per_key);
    }
    rdb::BlockBasedTableOptions table_options;
    table_options.optimize_filters_for_memory = optimize;
    rdb::FilterBuildingContext context(table_options);
    return std::unique_ptr<rdb::FilterBitsBuilder>(
        policy_->GetBuilderWithContext(context));
  }

  // A block of `n` keys of its own, from `builder`.
  std::string Build(rdb::FilterBitsBuilder* builder, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      builder->AddKey("k" + std::to_string(next_key_++));
    }
    std::unique_ptr<const char[]> buf;
    return builder->Finish(&buf).ToString();
  }

  static DecodedBlock Decode(const std::string& block) {
    return DecodeBlock(reinterpret_cast<const uint8_t*>(block.data()),
                       block.size());
  }

  std::unique_ptr<CuckooFilterPolicy> policy_;
  uint64_t next_key_ = 0;
};

// Every block plus its trailer fills its allocation: two more buckets of its
// layout would not fit in it, unless the allocator gave over 4/3 of the
// request (such a size class is not worth filling, as in RocksDB).
TEST_F(FilterMemoryTest, BlocksFillTheirAllocation) {
  for (double bits_per_key : {10.0, 16.0}) {
    auto builder = NewBuilder(bits_per_key, /*optimize=*/true);
    for (size_t n : SpreadOfKeyCounts(120, 200, 40000)) {
      const std::string block = Build(builder.get(), n);
      const DecodedBlock decoded = Decode(block);
      ASSERT_TRUE(decoded.has_table) << decoded.reason;
      const size_t held = block.size() + kTrailer;
      const size_t usable = UsableBytes(held);
      const bool room_for_two_more_buckets =
          TableBlockBytes(decoded.layout, decoded.num_buckets + 2) + kTrailer <=
          usable;
      EXPECT_TRUE(!room_for_two_more_buckets || usable - usable / 4 > held)
          << n << " keys at " << bits_per_key << " bits/key: a block of "
          << block.size() << " bytes in an allocation of " << usable;
    }
  }
}

// Rounding sizes to the allocator never raises the average expected FPR
// above the average of the filters' targets (the planned tables'), and does
// not buy accuracy with much more memory either: the balance spends
// surpluses on smaller tables.
TEST_F(FilterMemoryTest, AverageFalsePositiveRateStaysOnTarget) {
  const cuckoo::FilterConfig config = cuckoo::ChooseForBitsPerKey(10);
  auto builder = NewBuilder(10, /*optimize=*/true);
  double target_sum = 0.0;
  double built_sum = 0.0;
  uint64_t keys = 0;
  uint64_t planned_bytes = 0;
  uint64_t built_bytes = 0;
  for (size_t n : SpreadOfKeyCounts(300, 1000, 30000)) {
    const std::string block = Build(builder.get(), n);
    const DecodedBlock decoded = Decode(block);
    ASSERT_TRUE(decoded.has_table) << decoded.reason;
    const cuckoo::TableGeometry planned = PlannedGeometry(config, n);
    target_sum += planned.expected_fpr;
    built_sum +=
        cuckoo::GeometryOf(decoded.layout, decoded.num_buckets, n).expected_fpr;
    keys += n;
    planned_bytes += TableBlockBytes(planned.layout, planned.num_buckets);
    built_bytes += block.size();
  }
  EXPECT_LE(built_sum, target_sum * (1 + 1e-6));
  EXPECT_GE(built_sum, target_sum * 0.85);
  // Memory held, block plus trailer rounded by the allocator: never more
  // than the planned blocks would hold, within a few bytes per filter.
  std::printf(
      "[ result ] mean FPR %.4f%% (target %.4f%%), %.3f bits/key "
      "stored (planned %.3f)\n",
      100 * built_sum / 300, 100 * target_sum / 300, 8.0 * built_bytes / keys,
      8.0 * planned_bytes / keys);
}

// Every key of a rounded filter matches, and its measured FPR is the one its
// geometry predicts.
TEST_F(FilterMemoryTest, RoundedFiltersMatchEveryKey) {
  auto builder = NewBuilder(10, /*optimize=*/true);
  constexpr int kKeys = 30000;
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) {
    keys.push_back("key" + std::to_string(i));
    builder->AddKey(keys.back());
  }
  std::unique_ptr<const char[]> buf;
  const rdb::Slice block = builder->Finish(&buf);
  std::unique_ptr<rdb::FilterBitsReader> reader(
      policy_->GetFilterBitsReader(block));
  for (const std::string& key : keys) ASSERT_TRUE(reader->MayMatch(key));
  const DecodedBlock decoded = Decode(block.ToString());
  const double expected =
      cuckoo::GeometryOf(decoded.layout, decoded.num_buckets, kKeys)
          .expected_fpr;
  constexpr int kProbes = 1000000;
  int positives = 0;
  for (int i = 0; i < kProbes; ++i) {
    positives += reader->MayMatch("absent" + std::to_string(i));
  }
  const double sigma = std::sqrt(expected * kProbes) / kProbes;
  EXPECT_NEAR(static_cast<double>(positives) / kProbes, expected, 5 * sigma);
}

// The space estimate bounds the rounded block too (RocksDB 10.9+ adds it to
// the file-size estimate).
TEST_F(FilterMemoryTest, SpaceEstimateBoundsRoundedBlocks) {
  for (double bits_per_key : {4.0, 10.0, 16.0, 64.0}) {
    auto builder = NewBuilder(bits_per_key, /*optimize=*/true);
    const cuckoo::FilterConfig config =
        cuckoo::ChooseForBitsPerKey(bits_per_key);
    for (size_t n : {1, 2, 3, 10, 57, 300, 1000, 4097, 20000}) {
      for (size_t i = 0; i < n; ++i) {
        builder->AddKey("k" + std::to_string(next_key_++));
      }
#if ROCKSDB_CUCKOO_VERSION_AT_LEAST(10, 9)
      const size_t estimate = builder->CalculateSpace(n);
#else
      const size_t estimate = 0;
#endif
      std::unique_ptr<const char[]> buf;
      const size_t size = builder->Finish(&buf).size();
#if ROCKSDB_CUCKOO_VERSION_AT_LEAST(10, 9)
      EXPECT_LE(size, estimate) << n << " keys at " << bits_per_key;
#endif
      // Never larger than 4/3 of the planned block and trailer, plus the
      // growth allowance.
      EXPECT_LE(size, (MaxBlockBytes(config, n) + kTrailer) * 4 / 3 + 1)
          << n << " keys at " << bits_per_key << " (estimate " << estimate
          << ")";
    }
  }
}

// Without the option, a block is the planned table whatever the allocator.
TEST_F(FilterMemoryTest, WithoutTheOptionBlocksKeepThePlannedSize) {
  const cuckoo::FilterConfig config = cuckoo::ChooseForBitsPerKey(10);
  auto builder = NewBuilder(10, /*optimize=*/false);
  for (size_t n : SpreadOfKeyCounts(40, 200, 40000)) {
    const std::string block = Build(builder.get(), n);
    const cuckoo::TableGeometry planned = PlannedGeometry(config, n);
    EXPECT_EQ(block.size(),
              TableBlockBytes(planned.layout, planned.num_buckets))
        << n << " keys";
  }
}

// Through a real DB: files of several sizes, written with the option, hold
// filters that fill their allocations, and every key is found.
class FilterMemoryDbTest : public testing::DbTest {};

TEST_F(FilterMemoryDbTest, FlushedFiltersFillTheirAllocationAndFindEveryKey) {
  Open(MakeOptions(
      "filter_policy=cuckoofilter:10;optimize_filters_for_memory=true"));
  ASSERT_EQ(PolicyInEffect(), "cuckoofilter");
  uint64_t written = 0;
  for (uint64_t count : {3000, 11000, 26000}) {
    rdb::WriteOptions write;
    write.disableWAL = true;
    for (uint64_t i = 0; i < count; ++i, ++written) {
      ASSERT_TRUE(
          db_->Put(write, testing::Key(written), "v" + std::to_string(written))
              .ok());
    }
    ASSERT_TRUE(db_->Flush(rdb::FlushOptions()).ok());
  }
  rdb::TablePropertiesCollection all;
  ASSERT_TRUE(db_->GetPropertiesOfAllTables(&all).ok());
  ASSERT_EQ(all.size(), 3u);
  for (const auto& [file, props] : all) {
    const size_t held = props->filter_size + kTrailer;
    const size_t usable = UsableBytes(held);
    // Within one bucket pair of 10-bit semi-sorted buckets (9 bytes) or
    // whatever layout fills it; no layout's bucket pair exceeds 64 bytes.
    EXPECT_LT(usable - held, 64u) << file;
  }
  rdb::ReadOptions read;
  std::string value;
  for (uint64_t i = 0; i < written; ++i) {
    ASSERT_TRUE(db_->Get(read, testing::Key(i), &value).ok()) << i;
  }
}

// Charging kFilterConstruction to a block cache with a strict capacity.
class FilterChargeDbTest : public testing::DbTest {
 protected:
  static constexpr uint64_t kKeys = 200000;

  void OpenCharged(size_t cache_capacity, const std::string& table_options) {
    cache_ = rdb::NewLRUCache(cache_capacity, /*num_shard_bits=*/0,
                              /*strict_capacity_limit=*/true);
    rdb::Options options = MakeOptions(table_options);
    rdb::BlockBasedTableOptions table =
        *options.table_factory->GetOptions<rdb::BlockBasedTableOptions>();
    table.filter_policy = policy_;
    table.block_cache = cache_;
    table.optimize_filters_for_memory = false;
    // Assigned, not inserted: the factory has filled in every role.
    table.cache_usage_options
        .options_overrides[rdb::CacheEntryRole::kFilterConstruction] = {
        rdb::CacheEntryRoleOptions::Decision::kEnabled};
    options.table_factory.reset(rdb::NewBlockBasedTableFactory(table));
    Open(options);
  }

  void WriteAndFlush() {
    rdb::WriteOptions write;
    write.disableWAL = true;
    for (uint64_t i = 0; i < kKeys; ++i) {
      ASSERT_TRUE(db_->Put(write, testing::Key(i), "v").ok());
    }
    ASSERT_TRUE(db_->Flush(rdb::FlushOptions()).ok());
  }

  // Every key found; returns how many absent lookups the filter answered.
  uint64_t ReadAll() {
    statistics_->Reset();
    std::string value;
    for (uint64_t i = 0; i < kKeys; ++i) {
      EXPECT_TRUE(db_->Get(rdb::ReadOptions(), testing::Key(i), &value).ok())
          << "lost " << testing::Key(i);
      EXPECT_TRUE(db_->Get(rdb::ReadOptions(), testing::AbsentKey(i), &value)
                      .IsNotFound());
    }
    return Ticker(rdb::BLOOM_FILTER_USEFUL);
  }

  std::shared_ptr<CuckooFilterPolicy> policy_ =
      std::make_shared<CuckooFilterPolicy>(10);
  std::shared_ptr<rdb::Cache> cache_;
};

// While the table is built the cache holds the hashes' reservations (256 KiB
// per 32768 hashes, as RocksDB's builders reserve them) and the build's
// working memory, rounded up to whole 256 KiB entries, but not yet the block,
// which is allocated after the placement, in place of hashes that go first;
// once the flush is done, nothing.
TEST_F(FilterChargeDbTest, TheBuildIsChargedWhileItRunsAndReleasedAfter) {
  size_t usage_during_build = 0;
  policy_->SetBuildFaultHookForTesting(
      [&](BuildStage stage, std::deque<uint64_t>*) {
        if (stage == BuildStage::kAfterBuild) {
          usage_during_build = cache_->GetUsage();
        }
      });
  OpenCharged(64 << 20, "");
  ASSERT_EQ(PolicyInEffect(), "cuckoofilter");
  const size_t before = cache_->GetUsage();
  WriteAndFlush();
  constexpr size_t kEntry = 256 * 1024;
  const size_t hash_entries = (kKeys + 16384) / 32768;
  const cuckoo::TableGeometry geometry =
      PlannedGeometry(cuckoo::ChooseForBitsPerKey(10), kKeys);
  const size_t working = cuckoo::StaticBuildWorkingBytes(
      geometry.layout, geometry.num_buckets, kKeys);
  const size_t charged = usage_during_build - before;
  EXPECT_GE(charged, hash_entries * kEntry + working);
  // Whole entries, each with its handle's metadata.
  EXPECT_LE(charged, hash_entries * kEntry + working + kEntry +
                         (hash_entries + working / kEntry + 2) * 1024);
  EXPECT_EQ(cache_->GetUsage(), before);
  EXPECT_GT(ReadAll(), kKeys * 98 / 100);
  EXPECT_EQ(policy_->fallback_counts().unbuilt_filters, 0u);
}

// A strict cache too small for the build's working memory (128 KiB, less
// than one 256 KiB reservation entry): the filter is written as always-match,
// the flush succeeds, every key is found, and the policy counts it. Also
// with partitioned filters, where one builder builds every partition of the
// file.
TEST_F(FilterChargeDbTest, ACacheTooSmallForTheBuildLosesNoKey) {
  for (const std::string& table_options :
       {std::string(),
        std::string("partition_filters=true;index_type=kTwoLevelIndexSearch;"
                    "metadata_block_size=4096")}) {
    SCOPED_TRACE(table_options.empty() ? "full filter" : "partitioned");
    std::filesystem::remove_all(path_);
    policy_ = std::make_shared<CuckooFilterPolicy>(10);
    OpenCharged(128 << 10, table_options);
    WriteAndFlush();
    EXPECT_EQ(ReadAll(), 0u) << "an always-match filter rejects nothing";
    EXPECT_GE(policy_->fallback_counts().unbuilt_filters, 1u);
    db_.reset();
  }
}

}  // namespace
}  // namespace rocksdb_cuckoo
