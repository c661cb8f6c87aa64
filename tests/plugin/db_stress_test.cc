// Concurrency: reader threads doing Get, MultiGet and prefix iteration while
// a writer keeps adding keys and flushing, and compactions rebuild the
// filters of full and partitioned tables. Every key acknowledged before a
// read started must be found. Run in the ThreadSanitizer build as well.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "db_test_util.h"
#include "rocksdb/slice_transform.h"

namespace rocksdb_cuckoo {
namespace {

using testing::DbTest;
using testing::Key;
namespace rdb = ROCKSDB_NAMESPACE;

class StressTest : public DbTest, public ::testing::WithParamInterface<bool> {};

TEST_P(StressTest, ReadersNeverMissAcknowledgedKeysWhileFiltersAreRebuilt) {
  const bool partitioned = GetParam();
  rdb::Options options = MakeOptions(
      partitioned ? "filter_policy=cuckoofilter:12;partition_filters=true;"
                    "index_type=kTwoLevelIndexSearch;metadata_block_size=512;"
                    "cache_index_and_filter_blocks=true"
                  : "filter_policy=cuckoofilter:12");
  options.disable_auto_compactions = false;
  options.level0_file_num_compaction_trigger = 2;
  options.write_buffer_size = 256 << 10;
  options.prefix_extractor.reset(rdb::NewFixedPrefixTransform(6));
  Open(options);

  constexpr uint64_t kKeys = 60000;
  std::atomic<uint64_t> acknowledged{0};
  std::atomic<bool> done{false};
  std::atomic<uint64_t> misses{0};
  std::atomic<uint64_t> reads{0};

  std::thread writer([&] {
    // Failures are recorded, and `done` is set in any case so that the
    // readers stop.
    rdb::WriteOptions write;
    for (uint64_t i = 0; i < kKeys; ++i) {
      rdb::Status s = db_->Put(write, Key(i), "v");
      if (s.ok() && i % 7000 == 6999) s = db_->Flush(rdb::FlushOptions());
      if (s.ok() && i % 20000 == 19999) {
        s = db_->CompactRange(rdb::CompactRangeOptions(), nullptr, nullptr);
      }
      if (!s.ok()) {
        ADD_FAILURE() << "writer: " << s.ToString();
        break;
      }
      acknowledged.store(i + 1, std::memory_order_release);
    }
    done = true;
  });

  auto reader = [&](int seed) {
    uint64_t state = seed;
    std::string value;
    while (!done.load()) {
      const uint64_t limit = acknowledged.load(std::memory_order_acquire);
      if (limit == 0) continue;
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const uint64_t i = (state >> 17) % limit;
      switch (state % 3) {
        case 0:
          if (!db_->Get(rdb::ReadOptions(), Key(i), &value).ok()) ++misses;
          break;
        case 1: {
          std::string keys[4] = {Key(i), Key(i / 2), Key(i / 3), Key(i / 5)};
          rdb::Slice slices[4] = {keys[0], keys[1], keys[2], keys[3]};
          rdb::PinnableSlice values[4];
          rdb::Status statuses[4];
          db_->MultiGet(rdb::ReadOptions(), db_->DefaultColumnFamily(), 4,
                        slices, values, statuses);
          for (const rdb::Status& status : statuses) misses += !status.ok();
          break;
        }
        default: {
          rdb::ReadOptions read;
          read.prefix_same_as_start = true;
          std::unique_ptr<rdb::Iterator> it(db_->NewIterator(read));
          it->Seek(Key(i));
          if (!it->Valid() || it->key() != Key(i)) ++misses;
          break;
        }
      }
      ++reads;
    }
  };
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) readers.emplace_back(reader, r + 1);
  writer.join();
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(misses.load(), 0u) << "of " << reads.load() << " reads";
  EXPECT_GT(reads.load(), 1000u);
  std::string value;
  for (uint64_t i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(db_->Get(rdb::ReadOptions(), Key(i), &value).ok()) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(FullAndPartitioned, StressTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param_info) {
                           return param_info.param ? "Partitioned" : "Full";
                         });

}  // namespace
}  // namespace rocksdb_cuckoo
