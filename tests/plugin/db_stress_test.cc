// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Concurrency: reader threads doing Get, MultiGet and prefix iteration while
// a writer keeps adding keys and flushing, and compactions rebuild the
// filters of full and partitioned tables. Every key acknowledged before a
// read started must be found, and many reads must overlap a running flush or
// compaction (an EventListener tells), or the test has not tested that. Run
// in the ThreadSanitizer build as well.
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "db_test_util.h"
#include "rocksdb/listener.h"
#include "rocksdb/slice_transform.h"

namespace rocksdb_cuckoo {
namespace {

using testing::DbTest;
using testing::Key;
namespace rdb = ROCKSDB_NAMESPACE;

// Counts the flushes and compactions that have begun and ended. A read
// overlaps one when a job was running as it started, or one began before it
// ended.
class BackgroundJobTracker : public rdb::EventListener {
 public:
  void OnFlushBegin(rdb::DB*, const rdb::FlushJobInfo&) override { Begin(); }
  void OnFlushCompleted(rdb::DB*, const rdb::FlushJobInfo&) override { End(); }
  void OnCompactionBegin(rdb::DB*, const rdb::CompactionJobInfo&) override {
    Begin();
  }
  void OnCompactionCompleted(rdb::DB*, const rdb::CompactionJobInfo&) override {
    End();
  }

  struct Snapshot {
    uint64_t begun;
    uint64_t ended;
  };
  Snapshot Now() const {
    // Read ended first: then begun >= ended holds for the pair.
    const uint64_t ended = ended_.load(std::memory_order_acquire);
    return Snapshot{begun_.load(std::memory_order_acquire), ended};
  }
  static bool Overlapped(const Snapshot& before, const Snapshot& after) {
    return before.begun > before.ended || after.begun > before.begun;
  }
  uint64_t begun() const { return begun_.load(); }

 private:
  void Begin() { begun_.fetch_add(1, std::memory_order_acq_rel); }
  void End() { ended_.fetch_add(1, std::memory_order_acq_rel); }
  std::atomic<uint64_t> begun_{0};
  std::atomic<uint64_t> ended_{0};
};

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
  auto jobs = std::make_shared<BackgroundJobTracker>();
  options.listeners.push_back(jobs);
  Open(options);

  constexpr uint64_t kKeys = 60000;
  std::atomic<uint64_t> acknowledged{0};
  std::atomic<bool> done{false};
  std::atomic<uint64_t> misses{0};
  std::atomic<uint64_t> reads{0};
  std::atomic<uint64_t> overlapping_reads{0};

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
      const BackgroundJobTracker::Snapshot before = jobs->Now();
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
      if (BackgroundJobTracker::Overlapped(before, jobs->Now())) {
        ++overlapping_reads;
      }
    }
  };
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) readers.emplace_back(reader, r + 1);
  writer.join();
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(misses.load(), 0u) << "of " << reads.load() << " reads";
  EXPECT_GT(reads.load(), 1000u);
  // 8 flushes and 3 manual compactions at least, plus automatic ones.
  EXPECT_GE(jobs->begun(), 11u);
  EXPECT_GE(overlapping_reads.load(), 100u)
      << "of " << reads.load() << " reads, over " << jobs->begun()
      << " flushes and compactions";
  std::cout << "[ stress   ] " << reads.load() << " reads, "
            << overlapping_reads.load() << " during one of " << jobs->begun()
            << " flushes and compactions\n";
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
