// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Tests of the plugin's builder and reader through RocksDB's internal
// FilterBitsBuilder/FilterBitsReader interfaces, without a DB: the builder
// contract (reuse across partitions, exact entry counts and their
// de-duplication, space and false-positive estimates, post-verification) and
// the reader's answer on malformed blocks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "cuckoo/sizing.h"
#include "cuckoo_filter_policy.h"
#include "filter_format.h"
#include "rocksdb/table.h"
#include "rocksdb_interfaces.h"
#include "table/block_based/filter_policy_internal.h"

namespace rocksdb_cuckoo {
namespace {

namespace rdb = ROCKSDB_NAMESPACE;

std::string Key(int i) { return "key" + std::to_string(i); }

class FilterBitsTest : public ::testing::Test {
 protected:
  std::unique_ptr<rdb::FilterBitsBuilder> NewBuilder(
      double bits_per_key, bool detect_corruption = false) {
    policy_ = std::make_unique<CuckooFilterPolicy>(bits_per_key);
    return NewBuilderOfPolicy(detect_corruption);
  }

  // A builder of the current policy_.
  std::unique_ptr<rdb::FilterBitsBuilder> NewBuilderOfPolicy(
      bool detect_corruption) {
    table_options_.detect_filter_construct_corruption = detect_corruption;
    // Planned sizes on every version (filter_memory_test.cc tests rounding).
    table_options_.optimize_filters_for_memory = false;
    rdb::FilterBuildingContext context(table_options_);
    return std::unique_ptr<rdb::FilterBitsBuilder>(
        policy_->GetBuilderWithContext(context));
  }

  std::unique_ptr<rdb::FilterBitsReader> NewReader(const rdb::Slice& block) {
    return std::unique_ptr<rdb::FilterBitsReader>(
        policy_->GetFilterBitsReader(block));
  }

  // Fraction of `count` keys never added that the reader matches.
  static double FalsePositiveRate(rdb::FilterBitsReader* reader, int count) {
    int positives = 0;
    for (int i = 0; i < count; ++i) {
      positives += reader->MayMatch("absent" + std::to_string(i));
    }
    return static_cast<double>(positives) / count;
  }

  rdb::BlockBasedTableOptions table_options_;
  std::unique_ptr<CuckooFilterPolicy> policy_;
};

TEST_F(FilterBitsTest, BuildsMatchesAndCountsDistinctKeys) {
  auto builder = NewBuilder(12);
  // Sorted keys with adjacent duplicates, and the same keys again later.
  for (int i = 0; i < 10000; ++i) {
    builder->AddKey(Key(i));
    if (i % 3 == 0) builder->AddKey(Key(i));
  }
  for (int i = 0; i < 10000; i += 10) builder->AddKey(Key(i));
  // Adjacent repeats are not counted; later ones are, as in RocksDB's own
  // builders, and share an entry in the table.
  EXPECT_EQ(builder->EstimateEntriesAdded(), 11000u);
  std::unique_ptr<const char[]> buf;
  rdb::Status status;
  const rdb::Slice block = builder->Finish(&buf, &status);
  ASSERT_TRUE(status.ok());
  EXPECT_TRUE(builder->MaybePostVerify(block).ok());
  const DecodedBlock decoded =
      DecodeBlock(reinterpret_cast<const uint8_t*>(block.data()), block.size());
  ASSERT_TRUE(decoded.has_table) << decoded.reason;
  // One entry per key but for the rare complete collisions, which share one.
  EXPECT_LE(decoded.num_keys, 10000u);
  EXPECT_GE(decoded.num_keys, 9950u);
  // Sized for the distinct keys, not for the repeats.
  EXPECT_LE(8.0 * block.size() / 10000, 12.0 + 0.05);
  auto reader = NewReader(block);
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(reader->MayMatch(Key(i))) << i;
  const double expected = cuckoo::ChooseForBitsPerKey(12).expected_fpr;
  EXPECT_NEAR(FalsePositiveRate(reader.get(), 400000), expected,
              0.25 * expected);
}

TEST_F(FilterBitsTest, FinishResetsTheBuilderForTheNextPartition) {
  auto builder = NewBuilder(10);
  std::vector<std::unique_ptr<const char[]>> buffers(3);
  std::vector<rdb::Slice> blocks;
  for (int partition = 0; partition < 3; ++partition) {
    for (int i = partition * 1000; i < (partition + 1) * 1000; ++i) {
      builder->AddKey(Key(i));
    }
    EXPECT_EQ(builder->EstimateEntriesAdded(), 1000u);
    blocks.push_back(builder->Finish(&buffers[partition]));
    EXPECT_EQ(builder->EstimateEntriesAdded(), 0u);
  }
  for (int partition = 0; partition < 3; ++partition) {
    auto reader = NewReader(blocks[partition]);
    int own = 0, others = 0;
    for (int i = 0; i < 3000; ++i) {
      const bool match = reader->MayMatch(Key(i));
      if (i / 1000 == partition) {
        own += match;
      } else {
        others += match;
      }
    }
    EXPECT_EQ(own, 1000) << "partition " << partition;
    EXPECT_LT(others, 2000 * 0.02)
        << "partition " << partition << " kept keys of another";
  }
}

TEST_F(FilterBitsTest, EmptyFilterMatchesNothingAndEmptyKeyWorks) {
  auto builder = NewBuilder(10);
  std::unique_ptr<const char[]> buf;
  const rdb::Slice empty = builder->Finish(&buf);
  EXPECT_GT(empty.size(), 0u) << "a zero-length block would read as no filter";
  auto reader = NewReader(empty);
  EXPECT_EQ(FalsePositiveRate(reader.get(), 10000), 0.0);
  EXPECT_FALSE(reader->MayMatch(""));

  builder->AddKey("");
  std::unique_ptr<const char[]> buf2;
  auto with_empty_key = NewReader(builder->Finish(&buf2));
  EXPECT_TRUE(with_empty_key->MayMatch(""));
}

TEST_F(FilterBitsTest, BatchedLookupWritesEveryOutput) {
  auto builder = NewBuilder(16);
  for (int i = 0; i < 5000; ++i) builder->AddKey(Key(i));
  std::unique_ptr<const char[]> buf;
  auto reader = NewReader(builder->Finish(&buf));
  for (int num_keys : {0, 1, 7, 31, 32}) {
    std::vector<std::string> keys;
    for (int i = 0; i < num_keys; ++i) {
      keys.push_back(i % 2 ? Key(i * 13) : "absent" + std::to_string(i));
    }
    std::vector<rdb::Slice> slices(keys.begin(), keys.end());
    std::vector<rdb::Slice*> pointers;
    for (rdb::Slice& slice : slices) pointers.push_back(&slice);
    // Garbage in the outputs, as RocksDB leaves all but the first.
    bool outputs[32];
    std::memset(outputs, 0x5A, sizeof(outputs));
    reader->MayMatch(num_keys, pointers.data(), outputs);
    for (int i = 0; i < num_keys; ++i) {
      const unsigned char byte = reinterpret_cast<unsigned char*>(outputs)[i];
      ASSERT_TRUE(byte == 0 || byte == 1) << "output " << i << " not written";
      EXPECT_EQ(outputs[i], reader->MayMatch(keys[i])) << i;
    }
  }
}

TEST_F(FilterBitsTest, PostVerificationCatchesACorruptedFilter) {
  auto builder = NewBuilder(10, /*detect_corruption=*/true);
  for (int i = 0; i < 2000; ++i) builder->AddKey(Key(i));
  std::unique_ptr<const char[]> buf;
  const rdb::Slice block = builder->Finish(&buf);
  // Zero the table: every key is then missing.
  std::string damaged(block.data(), block.size());
  std::memset(&damaged[kBlockHeaderBytes], 0,
              damaged.size() - kBlockHeaderBytes);
  const rdb::Status status = builder->MaybePostVerify(damaged);
  EXPECT_TRUE(status.IsCorruption()) << status.ToString();
  // The hashes are released: a second call has nothing to verify.
  EXPECT_TRUE(builder->MaybePostVerify(damaged).ok());

  // Without the option nothing is retained, so nothing is verified.
  auto unverified = NewBuilder(10, /*detect_corruption=*/false);
  for (int i = 0; i < 2000; ++i) unverified->AddKey(Key(i));
  std::unique_ptr<const char[]> buf2;
  unverified->Finish(&buf2);
  EXPECT_TRUE(unverified->MaybePostVerify(damaged).ok());
}

// detect_filter_construct_corruption checks the held key hashes against the
// checksum taken as they arrived, after the build's last read of them: a bit
// flipped before the build, or after it read them, fails Finish with
// Corruption and an always-match block. Without the option nothing is
// checked (the filter is built from what the hashes say).
TEST_F(FilterBitsTest, ChecksumCatchesAHashChangedDuringTheBuild) {
  for (BuildStage flip_at :
       {BuildStage::kBeforeBuild, BuildStage::kAfterBuild}) {
    for (bool detect : {true, false}) {
      SCOPED_TRACE(std::string(flip_at == BuildStage::kBeforeBuild
                                   ? "before the build"
                                   : "after the build") +
                   (detect ? ", detecting" : ", not detecting"));
      policy_ = std::make_unique<CuckooFilterPolicy>(10);
      int calls = 0;
      bool armed = true;
      policy_->SetBuildFaultHookForTesting(
          [&](BuildStage stage, std::deque<uint64_t>* hashes) {
            ++calls;
            if (armed && stage == flip_at) {
              (*hashes)[hashes->size() / 2] ^= 1u << 7;
            }
          });
      auto builder = NewBuilderOfPolicy(detect);
      for (int i = 0; i < 5000; ++i) builder->AddKey(Key(i));
      std::unique_ptr<const char[]> buf;
      rdb::Status status;
      const rdb::Slice block = builder->Finish(&buf, &status);
      EXPECT_EQ(calls, 2);
      const DecodedBlock decoded = DecodeBlock(
          reinterpret_cast<const uint8_t*>(block.data()), block.size());
      if (detect) {
        EXPECT_TRUE(status.IsCorruption()) << status.ToString();
        EXPECT_FALSE(decoded.has_table) << "not an always-match block";
      } else {
        EXPECT_TRUE(status.ok()) << status.ToString();
        EXPECT_TRUE(decoded.has_table) << decoded.reason;
      }
      // The builder is reset either way: its next filter is whole.
      armed = false;
      for (int i = 0; i < 100; ++i) builder->AddKey(Key(i));
      std::unique_ptr<const char[]> buf2;
      rdb::Status next_status;
      builder->Finish(&buf2, &next_status);
      EXPECT_TRUE(next_status.ok()) << next_status.ToString();
    }
  }
  // Nothing altered: the checksum agrees, across partitions of one builder.
  auto builder = NewBuilder(10, /*detect_corruption=*/true);
  for (int partition = 0; partition < 3; ++partition) {
    for (int i = 0; i < 1000; ++i) builder->AddKey(Key(partition * 1000 + i));
    std::unique_ptr<const char[]> buf;
    rdb::Status status;
    const rdb::Slice block = builder->Finish(&buf, &status);
    EXPECT_TRUE(status.ok()) << status.ToString();
    EXPECT_TRUE(builder->MaybePostVerify(block).ok());
  }
}

TEST_F(FilterBitsTest, ApproximateNumEntriesIsMonotoneAndConsistent) {
  auto builder = NewBuilder(10);
  size_t previous = 0;
  for (size_t bytes : {0u, 16u, 100u, 1000u, 3687u, 10000u, 1000000u}) {
    const size_t entries = builder->ApproximateNumEntries(bytes);
    EXPECT_GE(entries, previous);
    previous = entries;
  }
  // A filter for that many keys is about that size.
  const size_t entries = builder->ApproximateNumEntries(100000);
  for (size_t i = 0; i < entries; ++i)
    builder->AddKey(Key(static_cast<int>(i)));
  std::unique_ptr<const char[]> buf;
  const rdb::Slice block = builder->Finish(&buf);
  EXPECT_NEAR(static_cast<double>(block.size()), 100000.0, 100000.0 * 0.01);
}

// CalculateSpace must never be below what Finish writes (RocksDB 10.9+ sums
// it into the file-size estimate that target_file_size_is_upper_bound
// enforces), and should not be far above it. One builder serves every key
// count in turn, as it serves a file's partitions.
TEST_F(FilterBitsTest, SpaceEstimateIsNeverBelowTheFinishedBlock) {
  std::vector<size_t> counts;
  for (size_t n = 0; n <= 1200; ++n) counts.push_back(n);
  for (size_t n = 1201; n < 1000000; n = n * 3 / 2) counts.push_back(n);
  counts.push_back(1000000);
  for (double bits_per_key : {4.0, 8.0, 10.0, 12.0, 16.0, 23.0, 64.0}) {
    auto builder = NewBuilder(bits_per_key);
    const cuckoo::FilterConfig config =
        cuckoo::ChooseForBitsPerKey(bits_per_key);
    int key = 0;
    for (size_t n : counts) {
      if (n > 20000 && bits_per_key != 10.0 && bits_per_key != 16.0) break;
      for (size_t i = 0; i < n; ++i) builder->AddKey(Key(key++));
      const size_t entries = builder->EstimateEntriesAdded();
      ASSERT_EQ(entries, n);
      const uint64_t estimate = MaxBlockBytes(config, entries);
#if ROCKSDB_CUCKOO_VERSION_AT_LEAST(10, 9)
      ASSERT_EQ(builder->CalculateSpace(entries), estimate);
#endif
      std::unique_ptr<const char[]> buf;
      const rdb::Slice block = builder->Finish(&buf);
      ASSERT_LE(block.size(), estimate)
          << n << " keys at " << bits_per_key << " bits/key";
      // Not far above the budget: the table at its planned load (up to 2
      // buckets of rounding) plus the allowance for growth, four steps of
      // about 1.6% and 2 or 3 buckets each.
      const double bucket_bytes = config.layout.BitsPerBucket() / 8.0;
      const double budget_bytes = n * config.bits_per_key / 8.0;
      ASSERT_LE(static_cast<double>(estimate),
                budget_bytes * 1.066 + kBlockHeaderBytes +
                    cuckoo::kTablePaddingBytes + 14 * bucket_bytes + 1)
          << n << " keys at " << bits_per_key << " bits/key";
    }
  }
}

// EstimatedFpRate, from the entry count and the block size alone, agrees with
// the rate measured on absent keys.
TEST_F(FilterBitsTest, EstimatedFalsePositiveRateMatchesTheMeasuredOne) {
  constexpr int kKeys = 50000;
  constexpr int kProbes = 2000000;
  for (double bits_per_key : {6.0, 10.0, 13.0, 16.0}) {
    auto builder = NewBuilder(bits_per_key);
    for (int i = 0; i < kKeys; ++i) builder->AddKey(Key(i));
    std::unique_ptr<const char[]> buf;
    const rdb::Slice block = builder->Finish(&buf);
    const double estimate = BlockFalsePositiveRate(
        cuckoo::ChooseForBitsPerKey(bits_per_key), kKeys, block.size());
#if ROCKSDB_CUCKOO_VERSION_AT_LEAST(10, 9)
    EXPECT_EQ(builder->EstimatedFpRate(kKeys, block.size()), estimate);
#endif
    auto reader = NewReader(block);
    const double measured = FalsePositiveRate(reader.get(), kProbes);
    // Five standard deviations of the count of false positives.
    const double sigma = std::sqrt(estimate * kProbes) / kProbes;
    EXPECT_NEAR(measured, estimate, 5 * sigma) << bits_per_key << " bits/key";
  }
  // Degenerate blocks: empty, too small for a table.
  const cuckoo::FilterConfig config = cuckoo::ChooseForBitsPerKey(10);
  EXPECT_EQ(BlockFalsePositiveRate(config, 0, kBlockHeaderBytes), 0.0);
  EXPECT_EQ(BlockFalsePositiveRate(config, 10, kBlockHeaderBytes), 1.0);
}

#ifdef ROCKSDB_CUCKOO_HAS_ADD_KEY_AND_ALT
// RocksDB 9.6+: a key and its prefix per call, de-duplicated three ways
// (key/previous key, alt/previous alt, key/alt, also across adjacent calls),
// as the contract in filter_policy_internal.h spells out.
TEST_F(FilterBitsTest, AddKeyAndAltDeduplicatesThreeWays) {
  auto builder = NewBuilder(12);
  // A whole key that is its own prefix: one entry.
  builder->AddKeyAndAlt("p1", "p1");
  EXPECT_EQ(builder->EstimateEntriesAdded(), 1u);
  // Its next key shares the prefix: only the key is new.
  builder->AddKeyAndAlt("p1a", "p1");
  EXPECT_EQ(builder->EstimateEntriesAdded(), 2u);
  // Versions of one key, one after another: nothing new.
  builder->AddKeyAndAlt("p1a", "p1");
  builder->AddKeyAndAlt("p1a", "p1");
  EXPECT_EQ(builder->EstimateEntriesAdded(), 2u);
  // A new key and prefix: two entries.
  builder->AddKeyAndAlt("p2a", "p2");
  EXPECT_EQ(builder->EstimateEntriesAdded(), 4u);
  // The key equals the previous alt (a key that is its own prefix, after
  // keys with that prefix, as a reverse comparator orders them).
  builder->AddKeyAndAlt("p2", "p2");
  EXPECT_EQ(builder->EstimateEntriesAdded(), 4u);
  // The alt equals the previous key (a plain AddKey of the prefix first).
  builder->AddKey("p3");
  EXPECT_EQ(builder->EstimateEntriesAdded(), 5u);
  builder->AddKeyAndAlt("p3a", "p3");
  EXPECT_EQ(builder->EstimateEntriesAdded(), 6u);
  // A plain AddKey is compared with the previous key.
  builder->AddKey("p3a");
  EXPECT_EQ(builder->EstimateEntriesAdded(), 6u);
  builder->AddKey("p4");
  EXPECT_EQ(builder->EstimateEntriesAdded(), 7u);

  std::unique_ptr<const char[]> buf;
  const rdb::Slice block = builder->Finish(&buf);
  auto reader = NewReader(block);
  for (const char* entry : {"p1", "p1a", "p2", "p2a", "p3", "p3a", "p4"}) {
    EXPECT_TRUE(reader->MayMatch(entry)) << entry;
  }
  const DecodedBlock decoded =
      DecodeBlock(reinterpret_cast<const uint8_t*>(block.data()), block.size());
  ASSERT_TRUE(decoded.has_table);
  EXPECT_EQ(decoded.num_keys, 7u);

  // Finish forgets the last key and alt: the next partition starts afresh.
  builder->AddKeyAndAlt("p4a", "p4");
  EXPECT_EQ(builder->EstimateEntriesAdded(), 2u);
}
#endif

TEST_F(FilterBitsTest, MalformedBlocksMatchEverything) {
  auto builder = NewBuilder(10);
  for (int i = 0; i < 3000; ++i) builder->AddKey(Key(i));
  std::unique_ptr<const char[]> buf;
  const rdb::Slice good_slice = builder->Finish(&buf);
  const std::string good(good_slice.data(), good_slice.size());
  ASSERT_LT(FalsePositiveRate(NewReader(good).get(), 10000), 0.02);

  std::vector<std::pair<std::string, std::string>> bad;
  bad.emplace_back("empty", "");
  bad.emplace_back("truncated header", good.substr(0, 10));
  bad.emplace_back("truncated table", good.substr(0, good.size() - 1));
  bad.emplace_back("longer", good + "x");
  auto mutate = [&](const std::string& what, size_t offset, uint8_t value) {
    std::string block = good;
    block[offset] = static_cast<char>(value);
    bad.emplace_back(what, block);
  };
  mutate("magic", 0, 'X');
  mutate("newer version", 4, 2);
  mutate("unknown kind", 5, 7);
  mutate("bucket size", 6, 3);
  mutate("fingerprint bits", 7, 40);
  mutate("flags", 8, 0x82);
  mutate("key hash", 9, 1);
  mutate("reserved", 10, 1);
  mutate("odd bucket count", 12, static_cast<uint8_t>(good[12] | 1));
  mutate("huge bucket count", 15, 0xFF);
  bad.emplace_back("always match", [] {
    const std::vector<uint8_t> block = EncodeAlwaysMatchBlock();
    return std::string(block.begin(), block.end());
  }());
  for (const auto& [what, block] : bad) {
    const DecodedBlock decoded = DecodeBlock(
        reinterpret_cast<const uint8_t*>(block.data()), block.size());
    EXPECT_FALSE(decoded.has_table) << what;
    EXPECT_FALSE(decoded.reason.empty()) << what;
    auto reader = NewReader(block);
    EXPECT_EQ(FalsePositiveRate(reader.get(), 1000), 1.0) << what;
    bool outputs[3] = {false, false, false};
    rdb::Slice keys[3] = {"a", "b", "c"};
    rdb::Slice* pointers[3] = {&keys[0], &keys[1], &keys[2]};
    reader->MayMatch(3, pointers, outputs);
    EXPECT_TRUE(outputs[0] && outputs[1] && outputs[2]) << what;
  }
}

TEST_F(FilterBitsTest, ReaderWorksOnUnalignedMemory) {
  auto builder = NewBuilder(10);
  for (int i = 0; i < 1000; ++i) builder->AddKey(Key(i));
  std::unique_ptr<const char[]> buf;
  const rdb::Slice block = builder->Finish(&buf);
  for (size_t shift = 1; shift < 8; ++shift) {
    std::string storage(shift, '\0');
    storage.append(block.data(), block.size());
    auto reader = NewReader(rdb::Slice(storage.data() + shift, block.size()));
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(reader->MayMatch(Key(i)));
  }
}

}  // namespace
}  // namespace rocksdb_cuckoo
