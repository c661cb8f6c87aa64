// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The committed golden filter blocks (tests/format/golden) through RocksDB's
// own interfaces: the policy's builder must write them byte for byte from
// their keys, also as the second partition of one builder, and its reader
// must match every key and the recorded number of absent keys, single and
// batched, from unaligned memory. Also built against RocksDB 6.29's headers
// for the MyRocks preload (myrocks/CMakeLists.txt): the same bytes there.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cuckoo_filter_policy.h"
#include "golden_blocks.h"
#include "rocksdb/table.h"
#include "table/block_based/filter_policy_internal.h"

namespace rocksdb_cuckoo {
namespace {

namespace rdb = ROCKSDB_NAMESPACE;
using cuckoo_golden::GoldenBlockSpec;

class GoldenBlockTest : public ::testing::Test {
 protected:
  std::unique_ptr<rdb::FilterBitsBuilder> NewBuilder(
      const GoldenBlockSpec& spec) {
    policy_ = std::make_unique<CuckooFilterPolicy>(spec.bits_per_key);
    // The golden blocks have their planned sizes: rounding them to the
    // allocator (the default from RocksDB 9.2) would not be reproducible.
    table_options_.optimize_filters_for_memory = false;
    rdb::FilterBuildingContext context(table_options_);
    return std::unique_ptr<rdb::FilterBitsBuilder>(
        policy_->GetBuilderWithContext(context));
  }

  static std::string Finish(rdb::FilterBitsBuilder* builder,
                            const GoldenBlockSpec& spec) {
    for (const std::string& key : cuckoo_golden::KeysOf(spec)) {
      builder->AddKey(key);
    }
    std::unique_ptr<const char[]> buf;
#if ROCKSDB_CUCKOO_LEGACY_6_29
    // 6.29's builders have no Finish with a status (myrocks/).
    const rdb::Slice block = builder->Finish(&buf);
#else
    rdb::Status status;
    const rdb::Slice block = builder->Finish(&buf, &status);
    EXPECT_TRUE(status.ok()) << status.ToString();
#endif
    return std::string(block.data(), block.size());
  }

  static std::string Committed(const GoldenBlockSpec& spec) {
    const std::vector<uint8_t> bytes = cuckoo_golden::ReadFileBytes(
        cuckoo_golden::BlockPath(cuckoo_golden::GoldenDir(), spec.name));
    return std::string(bytes.begin(), bytes.end());
  }

  const GoldenBlockSpec& Spec(const std::string& name) const {
    for (const GoldenBlockSpec& spec : cuckoo_golden::kGoldenBlocks) {
      if (spec.name == name) return spec;
    }
    ADD_FAILURE() << "no golden block " << name;
    return cuckoo_golden::kGoldenBlocks[0];
  }

  rdb::BlockBasedTableOptions table_options_;
  std::unique_ptr<CuckooFilterPolicy> policy_;
  const std::vector<cuckoo_golden::ManifestEntry> manifest_ =
      cuckoo_golden::ReadManifest(cuckoo_golden::GoldenDir());
};

TEST_F(GoldenBlockTest, BuilderWritesTheCommittedBlocks) {
  for (const GoldenBlockSpec& spec : cuckoo_golden::kGoldenBlocks) {
    auto builder = NewBuilder(spec);
    EXPECT_TRUE(Finish(builder.get(), spec) == Committed(spec)) << spec.name;
  }
}

TEST_F(GoldenBlockTest, SecondPartitionOfOneBuilderIsTheCommittedBlock) {
  const GoldenBlockSpec& second = Spec("partition2-10");
  auto builder = NewBuilder(second);
  const std::string first =
      Finish(builder.get(), cuckoo_golden::kFirstPartition);
  EXPECT_TRUE(first == Committed(Spec("keys2000-10")));
  EXPECT_TRUE(Finish(builder.get(), second) == Committed(second));
}

TEST_F(GoldenBlockTest, ReaderMatchesEveryKeyAndTheRecordedAbsentKeys) {
  for (const GoldenBlockSpec& spec : cuckoo_golden::kGoldenBlocks) {
    SCOPED_TRACE(spec.name);
    policy_ = std::make_unique<CuckooFilterPolicy>(spec.bits_per_key);
    // One byte in, so that no load is aligned.
    const std::string committed = Committed(spec);
    std::string unaligned = " " + committed;
    const rdb::Slice block(unaligned.data() + 1, committed.size());
    std::unique_ptr<rdb::FilterBitsReader> reader(
        policy_->GetFilterBitsReader(block));

    const std::vector<std::string> keys = cuckoo_golden::KeysOf(spec);
    for (const std::string& key : keys)
      ASSERT_TRUE(reader->MayMatch(key)) << key;

    std::vector<std::string> absent;
    for (uint32_t i = 0; i < cuckoo_golden::kAbsentKeys; ++i) {
      absent.push_back(cuckoo_golden::AbsentKey(i));
    }
    uint64_t single_matches = 0;
    for (const std::string& key : absent)
      single_matches += reader->MayMatch(key);
    EXPECT_EQ(single_matches,
              cuckoo_golden::FindEntry(manifest_, spec.name).absent_matches);

    // The MultiGet path gives the same answers.
    std::vector<rdb::Slice> slices(absent.begin(), absent.end());
    std::vector<rdb::Slice*> pointers;
    for (rdb::Slice& slice : slices) pointers.push_back(&slice);
    std::unique_ptr<bool[]> may_match(new bool[absent.size()]);
    reader->MayMatch(static_cast<int>(absent.size()), pointers.data(),
                     may_match.get());
    uint64_t batched_matches = 0;
    for (size_t i = 0; i < absent.size(); ++i) batched_matches += may_match[i];
    EXPECT_EQ(batched_matches, single_matches);
  }
}

}  // namespace
}  // namespace rocksdb_cuckoo
