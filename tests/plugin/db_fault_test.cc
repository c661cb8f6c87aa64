// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Fault tests with a real DB: a filter block damaged on disk (RocksDB's block
// checksum catches it), and blocks that pass the checksum but carry a header
// this reader does not accept (a newer format version, an impossible
// geometry, a truncated table). Every read must stay correct; the filter is
// simply not used, and the policy reports it once and counts it. And faults
// while a filter is built, which detect_filter_construct_corruption must
// turn into a failed flush that loses no key.
#include <gtest/gtest.h>

#include <deque>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>

#include "db_test_util.h"
#include "filter_format.h"
#include "rocksdb_interfaces.h"
#include "table/block_based/filter_policy_internal.h"

namespace rocksdb_cuckoo {
namespace {

using testing::AbsentKey;
using testing::DbTest;
using testing::Key;
namespace rdb = ROCKSDB_NAMESPACE;

// Wraps the cuckoo builder and alters each finished block, as a buggy or
// newer writer would; RocksDB then stores it with a valid checksum under the
// same metaindex name.
class MangledBuilder : public rdb::FilterBitsBuilder {
 public:
  using Mangle = std::function<std::string(std::string)>;
  MangledBuilder(rdb::FilterBitsBuilder* inner, Mangle mangle)
      : inner_(inner), mangle_(std::move(mangle)) {}
  using rdb::FilterBitsBuilder::Finish;
  void AddKey(const rdb::Slice& key) override { inner_->AddKey(key); }
#ifdef ROCKSDB_CUCKOO_HAS_ADD_KEY_AND_ALT
  void AddKeyAndAlt(const rdb::Slice& key, const rdb::Slice& alt) override {
    inner_->AddKeyAndAlt(key, alt);
  }
#endif
#if ROCKSDB_CUCKOO_VERSION_AT_LEAST(10, 9)
  size_t CalculateSpace(size_t num_entries) override {
    return inner_->CalculateSpace(num_entries);
  }
  double EstimatedFpRate(size_t num_entries, size_t bytes) override {
    return inner_->EstimatedFpRate(num_entries, bytes);
  }
#endif
  size_t EstimateEntriesAdded() override {
    return inner_->EstimateEntriesAdded();
  }
  rdb::Slice Finish(std::unique_ptr<const char[]>* buf) override {
    std::unique_ptr<const char[]> original;
    const std::string block = mangle_(inner_->Finish(&original).ToString());
    char* copy = new char[block.size()];
    std::memcpy(copy, block.data(), block.size());
    buf->reset(copy);
    return rdb::Slice(copy, block.size());
  }
  size_t ApproximateNumEntries(size_t bytes) override {
    return inner_->ApproximateNumEntries(bytes);
  }
  rdb::Status MaybePostVerify(const rdb::Slice& filter_content) override {
    return inner_->MaybePostVerify(filter_content);
  }

 private:
  std::unique_ptr<rdb::FilterBitsBuilder> inner_;
  Mangle mangle_;
};

class MangledPolicy : public CuckooFilterPolicy {
 public:
  explicit MangledPolicy(MangledBuilder::Mangle mangle)
      : mangle_(std::move(mangle)) {}
  rdb::FilterBitsBuilder* GetBuilderWithContext(
      const rdb::FilterBuildingContext& context) const override {
    return new MangledBuilder(
        CuckooFilterPolicy::GetBuilderWithContext(context), mangle_);
  }

 private:
  MangledBuilder::Mangle mangle_;
};

class FaultTest : public DbTest {
 protected:
  static constexpr uint64_t kKeys = 20000;

  // Reads every key back (all must be found) and the absent ones; returns
  // how many absent lookups the filter answered.
  uint64_t ReadAllAndCountFiltered() {
    statistics_->Reset();
    std::string value;
    for (uint64_t i = 0; i < kKeys; ++i) {
      EXPECT_TRUE(db_->Get(rdb::ReadOptions(), Key(i), &value).ok())
          << "lost " << Key(i);
      EXPECT_TRUE(
          db_->Get(rdb::ReadOptions(), AbsentKey(i), &value).IsNotFound());
    }
    return Ticker(rdb::BLOOM_FILTER_USEFUL);
  }

  void WriteWith(std::shared_ptr<const rdb::FilterPolicy> policy) {
    rdb::Options options = MakeOptions("");
    rdb::BlockBasedTableOptions table;
    table.filter_policy = std::move(policy);
    options.table_factory.reset(rdb::NewBlockBasedTableFactory(table));
    Open(options);
    Fill(kKeys);
    db_.reset();
  }

  void ReopenWithCuckoo() {
    Open(MakeOptions("filter_policy=cuckoofilter:10"));
  }

  // The policy instance of the open DB, made from the options string.
  std::shared_ptr<const CuckooFilterPolicy> OpenPolicy() {
    const auto* table =
        db_->GetOptions()
            .table_factory->GetOptions<rdb::BlockBasedTableOptions>();
    EXPECT_NE(table, nullptr);
    EXPECT_STREQ(table->filter_policy->Name(),
                 CuckooFilterPolicy::kClassName());
    return std::static_pointer_cast<const CuckooFilterPolicy>(
        table->filter_policy);
  }
};

constexpr char kReaderReport[] =
    "rocksdb-cuckoo: a cuckoofilter block is not used";

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

TEST_F(FaultTest, TheUnalteredBlockIsUsed) {
  WriteWith(std::make_shared<MangledPolicy>([](std::string b) { return b; }));
  ::testing::internal::CaptureStderr();
  ReopenWithCuckoo();
  EXPECT_GT(ReadAllAndCountFiltered(), kKeys * 98 / 100);
  EXPECT_EQ(
      Occurrences(::testing::internal::GetCapturedStderr(), kReaderReport), 0u);
  EXPECT_EQ(OpenPolicy()->fallback_counts().always_match_readers, 0u);
}

TEST_F(FaultTest, BlocksWithUnacceptableHeadersMatchEverything) {
  const std::pair<const char*, MangledBuilder::Mangle> cases[] = {
      {"newer format version",
       [](std::string b) {
         b[4] = 2;
         return b;
       }},
      {"unknown block kind",
       [](std::string b) {
         b[5] = 9;
         return b;
       }},
      {"huge bucket count",
       [](std::string b) {
         b[15] = '\x7f';
         return b;
       }},
      {"truncated table",
       [](std::string b) { return b.substr(0, b.size() / 2); }},
      {"header only",
       [](std::string b) { return b.substr(0, kBlockHeaderBytes); }},
      {"unknown key hash",
       [](std::string b) {
         b[9] = 1;
         return b;
       }},
  };
  for (const auto& [what, mangle] : cases) {
    SCOPED_TRACE(what);
    std::filesystem::remove_all(path_);
    WriteWith(std::make_shared<MangledPolicy>(mangle));
    ::testing::internal::CaptureStderr();
    ReopenWithCuckoo();
    EXPECT_EQ(ReadAllAndCountFiltered(), 0u) << "the filter must not be used";
    // Reported once, with the reason; every such reader counted.
    const std::string report = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(Occurrences(report, kReaderReport), 1u) << report;
    EXPECT_NE(report.find("): its file is read without the filter"),
              std::string::npos)
        << report;
    EXPECT_GE(OpenPolicy()->fallback_counts().always_match_readers, 1u);
    EXPECT_EQ(OpenPolicy()->fallback_counts().unbuilt_filters, 0u);
  }
}

// With detect_filter_construct_corruption: a bit flipped in a held key hash
// before the build or after the build has read the hashes, or in the table
// once it is built, fails the flush with Corruption; after a reopen (the WAL
// holds the writes) every key written before is read.
TEST_F(FaultTest, FaultsDuringTheBuildFailTheFlushAndLoseNoKey) {
  struct Case {
    const char* what;
    std::function<std::shared_ptr<CuckooFilterPolicy>()> policy;
  };
  auto flipping_hashes_at = [](BuildStage flip_at) {
    auto policy = std::make_shared<CuckooFilterPolicy>(10);
    policy->SetBuildFaultHookForTesting(
        [flip_at](BuildStage stage, std::deque<uint64_t>* hashes) {
          if (stage == flip_at && !hashes->empty()) {
            (*hashes)[hashes->size() / 3] ^= uint64_t{1} << 40;
          }
        });
    return policy;
  };
  const Case cases[] = {
      {"a held hash, before the build",
       [&] { return flipping_hashes_at(BuildStage::kBeforeBuild); }},
      {"a held hash, after the build read it",
       [&] { return flipping_hashes_at(BuildStage::kAfterBuild); }},
      {"the built table",
       [] {
         return std::make_shared<MangledPolicy>([](std::string block) {
           // A low bit of the first bucket's first fingerprint.
           const size_t at = kBlockHeaderBytes + 2;
           block.replace(at, 1, 1, static_cast<char>(block.at(at) ^ 0x10));
           return block;
         });
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::filesystem::remove_all(path_);
    rdb::Options options =
        MakeOptions("detect_filter_construct_corruption=true");
    rdb::BlockBasedTableOptions table;
    table.filter_policy = c.policy();
    table.detect_filter_construct_corruption = true;
    // The planned geometry on every version, so that the flipped table bit
    // is in a full bucket's fingerprint.
    table.optimize_filters_for_memory = false;
    options.table_factory.reset(rdb::NewBlockBasedTableFactory(table));
    Open(options);
    for (uint64_t i = 0; i < kKeys; ++i) {
      ASSERT_TRUE(db_->Put(rdb::WriteOptions(), Key(i), "v").ok());
    }
    const rdb::Status flushed = db_->Flush(rdb::FlushOptions());
    EXPECT_TRUE(flushed.IsCorruption()) << flushed.ToString();
    db_.reset();
    ReopenWithCuckoo();
    EXPECT_GT(ReadAllAndCountFiltered(), kKeys * 98 / 100);
  }
}

TEST_F(FaultTest, ADamagedFilterBlockOnDiskIsCaughtByTheChecksum) {
  WriteWith(std::make_shared<CuckooFilterPolicy>(10));
  // Flip one byte inside the filter's table, found by the block's magic.
  int damaged_files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(path_)) {
    if (entry.path().extension() != ".sst") continue;
    std::fstream file(entry.path(),
                      std::ios::in | std::ios::out | std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(file)),
                      std::istreambuf_iterator<char>());
    const size_t magic = bytes.find("CKFB");
    ASSERT_NE(magic, std::string::npos);
    const size_t target = magic + kBlockHeaderBytes + 100;
    file.seekp(static_cast<std::streamoff>(target));
    file.put(static_cast<char>(bytes[target] ^ 0x5A));
    ++damaged_files;
  }
  ASSERT_GT(damaged_files, 0);
  ReopenWithCuckoo();
  EXPECT_EQ(ReadAllAndCountFiltered(), 0u);
}

}  // namespace
}  // namespace rocksdb_cuckoo
