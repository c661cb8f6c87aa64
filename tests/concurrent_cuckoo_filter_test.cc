// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Tests of ConcurrentCuckooFilter: its guarantee (a key whose Insert has
// returned is found by every later lookup, in any thread), erases and
// growth under concurrent readers, and its serialized form. Run under
// ThreadSanitizer by scripts/test.sh --tsan.
#include "cuckoo/concurrent_cuckoo_filter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace cuckoo {
namespace {

using testing::HashStream;
using testing::RoundTrip;

CuckooFilterOptions GrowingOptions() {
  CuckooFilterOptions options;
  options.layout = BucketLayout{4, 12, false};
  options.expansion = 2;
  options.max_growths = 8;
  return options;
}

// Writers insert keys and publish how many they have inserted; readers
// check every published key, so a lookup that misses a key whose Insert
// had returned fails the test. The shards start small and grow while
// readers read; every fourth key is erased again and must stay countable
// for the others.
TEST(ConcurrentCuckooFilterTest, AnInsertedKeyIsFoundByEveryLaterLookup) {
  ConcurrentCuckooFilter filter(256, GrowingOptions(), 16);
  constexpr int kWriters = 2;
  constexpr int kKeysPerWriter = 30000;
  std::vector<std::vector<uint64_t>> keys;
  for (int w = 0; w < kWriters; ++w) {
    keys.push_back(HashStream(100 + w).Take(kKeysPerWriter));
  }
  std::atomic<int> published[kWriters];
  for (std::atomic<int>& p : published) p = 0;
  std::atomic<bool> wrong{false};
  std::atomic<int> writers_done{0};
  // Checks made while a writer was still writing: the ones that test the
  // guarantee under concurrency. Writers go on inserting and erasing extra
  // keys until there are enough of them, however the threads are scheduled
  // (for at most 20 s).
  constexpr uint64_t kOverlappingChecks = 5000;
  std::atomic<uint64_t> overlapping_checks{0};
  std::atomic<uint64_t> extra_erases{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < kKeysPerWriter; ++i) {
        if (filter.Insert(keys[w][i]) != InsertResult::kOk) wrong = true;
        published[w].store(i + 1, std::memory_order_release);
        if (i % 4 == 3 && !filter.Erase(keys[w][i - 1])) wrong = true;
      }
      HashStream extra(300 + w);
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (overlapping_checks.load() < kOverlappingChecks &&
             std::chrono::steady_clock::now() < deadline) {
        const uint64_t key = extra.Next();
        if (filter.Insert(key) != InsertResult::kOk || !filter.Erase(key)) {
          wrong = true;
        }
        ++extra_erases;
      }
      ++writers_done;
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      HashStream pick(200 + r);
      uint64_t checks = 0;
      while (writers_done.load() < kWriters || checks < 10000) {
        const bool overlapping = writers_done.load() < kWriters;
        const int w = static_cast<int>(pick.Next() % kWriters);
        const int count = published[w].load(std::memory_order_acquire);
        if (count == 0) continue;
        const int i = static_cast<int>(pick.Next() % count);
        // Keys at i % 4 == 2 may be erased already; all others stay.
        if (i % 4 != 2 && !filter.Contains(keys[w][i])) wrong = true;
        ++checks;
        overlapping_checks += overlapping;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(wrong);
  EXPECT_GE(overlapping_checks.load(), kOverlappingChecks);
  EXPECT_EQ(filter.Size(), uint64_t{kWriters} * kKeysPerWriter * 3 / 4);
  EXPECT_GE(filter.Info().num_growths, 2u) << "the shards grew meanwhile";
  EXPECT_EQ(filter.Info().items_deleted,
            uint64_t{kWriters} * kKeysPerWriter / 4 + extra_erases.load());
  for (int w = 0; w < kWriters; ++w) {
    for (int i = 0; i < kKeysPerWriter; ++i) {
      if (i % 4 != 2) {
        ASSERT_TRUE(filter.Contains(keys[w][i]));
      }
    }
  }
}

// More reader threads than the filter has reader slots, so that threads
// share slots, half of them reading in batches, while writers insert (the
// shards growing, if they can) and erase: every key whose Insert had
// returned is found, singly and in batches. A writer must wait for every
// reader inside its slots, whichever thread of a slot entered first, and a
// batch must not read a shard whose writer is inside. The writers start once
// every reader has, and go on inserting and erasing extra keys until both
// kinds of reader have made enough checks while a writer was writing (for
// at most 20 s), so that the overlap does not depend on how the threads are
// scheduled.
//
// Readers that do not leave a shard whose writer has raised its flag keep
// re-entering their slots, and the writer, which waits for every slot to
// empty, never gets in: the threads would run until ctest's timeout. So the
// readers, and the writers' extra keys, stop when the writers are not done
// after kWritersDeadline (far beyond the 20 s above and the fraction of a
// second the test takes, sanitizers included), and such a bug fails here
// with its name.
void ExpectReadersInSharedSlotsAndBatchesSeeEveryInsertedKey(
    ConcurrentCuckooFilter& filter) {
  constexpr int kWriters = 2;
  constexpr int kReaders = 40;  // the filter has 32 reader slots
  constexpr int kKeysPerWriter = 20000;
  constexpr int kBatch = 16;
  constexpr uint64_t kOverlappingChecks = 5000;
  constexpr std::chrono::seconds kWritersDeadline{120};
  std::vector<std::vector<uint64_t>> keys;
  for (int w = 0; w < kWriters; ++w) {
    keys.push_back(HashStream(500 + w).Take(kKeysPerWriter));
  }
  std::atomic<int> published[kWriters];
  for (std::atomic<int>& p : published) p = 0;
  std::atomic<bool> wrong{false};
  std::atomic<int> readers_started{0};
  std::atomic<int> writers_done{0};
  std::atomic<bool> readers_stopped{false};
  std::atomic<uint64_t> batched_checks_during_writes{0};
  std::atomic<uint64_t> single_checks_during_writes{0};
  const auto enough_overlap = [&] {
    return batched_checks_during_writes.load() >= kOverlappingChecks &&
           single_checks_during_writes.load() >= kOverlappingChecks;
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      while (readers_started.load() < kReaders) std::this_thread::yield();
      for (int i = 0; i < kKeysPerWriter; ++i) {
        if (filter.Insert(keys[w][i]) != InsertResult::kOk) wrong = true;
        published[w].store(i + 1, std::memory_order_release);
        if (i % 4 == 3 && !filter.Erase(keys[w][i - 1])) wrong = true;
      }
      HashStream extra(700 + w);
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (!enough_overlap() && !readers_stopped.load() &&
             std::chrono::steady_clock::now() < deadline) {
        const uint64_t key = extra.Next();
        if (filter.Insert(key) != InsertResult::kOk || !filter.Erase(key)) {
          wrong = true;
        }
      }
      ++writers_done;
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      HashStream pick(600 + r);
      uint64_t batch[kBatch];
      bool found[kBatch];
      const bool batched = r % 2 == 0;
      std::atomic<uint64_t>& checks_during_writes =
          batched ? batched_checks_during_writes : single_checks_during_writes;
      ++readers_started;
      while (writers_done.load() < kWriters && !readers_stopped.load()) {
        const int w = static_cast<int>(pick.Next() % kWriters);
        const int count = published[w].load(std::memory_order_acquire);
        if (count == 0) {
          std::this_thread::yield();
          continue;
        }
        // Keys at i % 4 == 2 may be erased already; all others stay.
        int n = 0;
        while (n < kBatch) {
          const int i = static_cast<int>(pick.Next() % count);
          if (i % 4 != 2) batch[n++] = keys[w][i];
        }
        if (batched) {
          filter.ContainsBatch(batch, kBatch, found);
        } else {
          for (int k = 0; k < kBatch; ++k) found[k] = filter.Contains(batch[k]);
        }
        for (int k = 0; k < kBatch; ++k) {
          if (!found[k]) wrong = true;
        }
        checks_during_writes += kBatch;
      }
    });
  }
  const auto give_up_at = std::chrono::steady_clock::now() + kWritersDeadline;
  while (writers_done.load() < kWriters &&
         std::chrono::steady_clock::now() < give_up_at) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const bool writers_starved = writers_done.load() < kWriters;
  readers_stopped = true;
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(writers_starved)
      << "the writers were not done after " << kWritersDeadline.count()
      << " s of readers: a reader must leave a shard whose writer is inside";
  EXPECT_FALSE(wrong) << "a key whose Insert had returned was not found";
  EXPECT_GE(batched_checks_during_writes.load(), kOverlappingChecks);
  EXPECT_GE(single_checks_during_writes.load(), kOverlappingChecks);
  EXPECT_EQ(filter.Size(), uint64_t{kWriters} * kKeysPerWriter * 3 / 4);
}

TEST(ConcurrentCuckooFilterTest,
     SharedSlotsAndBatchedReadersSeeEveryInsertedKey) {
  ConcurrentCuckooFilter filter(64, GrowingOptions(), 4);
  ExpectReadersInSharedSlotsAndBatchesSeeEveryInsertedKey(filter);
  EXPECT_GE(filter.Info().num_growths, 2u) << "the shards grew meanwhile";
}

// The same with shards that do not grow, which batches probe directly
// (through each shard's probe record) while writers change them.
TEST(ConcurrentCuckooFilterTest,
     SharedSlotsAndDirectBatchesSeeEveryInsertedKey) {
  CuckooFilterOptions options;
  options.layout = BucketLayout{4, 12, false};
  ConcurrentCuckooFilter filter(1u << 14, options, 4);
  ExpectReadersInSharedSlotsAndBatchesSeeEveryInsertedKey(filter);
}

TEST(ConcurrentCuckooFilterTest, BatchesCountsAndIfAbsentAgreeWithSingleCalls) {
  ConcurrentCuckooFilter filter(1024, GrowingOptions(), 8);
  HashStream stream(5);
  const std::vector<uint64_t> keys = stream.Take(2000);
  for (uint64_t key : keys) ASSERT_EQ(filter.Insert(key), InsertResult::kOk);
  EXPECT_EQ(filter.InsertIfAbsent(keys[0]), InsertResult::kMayExist);
  EXPECT_EQ(filter.Count(keys[0]), 1u);
  std::vector<uint64_t> mix = keys;
  const std::vector<uint64_t> absent = stream.Take(2000);
  mix.insert(mix.end(), absent.begin(), absent.end());
  std::unique_ptr<bool[]> out(new bool[mix.size()]);
  filter.ContainsBatch(mix.data(), mix.size(), out.get());
  for (size_t i = 0; i < mix.size(); ++i) {
    ASSERT_EQ(out[i], filter.Contains(mix[i]));
    if (i < keys.size()) {
      ASSERT_TRUE(out[i]);
    }
  }
  filter.Clear();
  EXPECT_EQ(filter.Size(), 0u);
  EXPECT_THROW(ConcurrentCuckooFilter(64, GrowingOptions(), 0),
               std::invalid_argument);
}

// ContainsBatch runs its loops compiled for the table type the shards start
// with; a shard that grew has another, and is asked one key at a time. Both
// kinds answer as Contains does.
TEST(ConcurrentCuckooFilterTest, BatchedLookupsAnswerForShardsOfEveryType) {
  CuckooFilterOptions options = GrowingOptions();
  // Slots of 12 + 4 reserved bits: 16-bit slots have a compiled codec, and
  // after a growth the 15-bit ones are read through the runtime codec, a
  // table type of another kind.
  options.max_growths = 4;
  constexpr uint32_t kShards = 8;
  constexpr uint64_t kBuckets = kShards * 8;
  ConcurrentCuckooFilter filter(kBuckets, options, kShards);
  HashStream stream(7);
  std::vector<uint64_t> mix;
  while (filter.Info().num_buckets < kBuckets * 3 / 2) {
    mix.push_back(stream.Next());
    ASSERT_EQ(filter.Insert(mix.back()), InsertResult::kOk);
  }
  // Some shards grew, and some (with fewer than twice their buckets in all)
  // did not.
  ASSERT_LT(filter.Info().num_buckets, 2 * kBuckets);
  const size_t stored = mix.size();
  const std::vector<uint64_t> absent = stream.Take(4 * stored);
  mix.insert(mix.end(), absent.begin(), absent.end());
  std::unique_ptr<bool[]> out(new bool[mix.size()]);
  filter.ContainsBatch(mix.data(), mix.size(), out.get());
  size_t false_positives = 0;
  for (size_t i = 0; i < mix.size(); ++i) {
    ASSERT_EQ(out[i], filter.Contains(mix[i])) << "key " << i;
    if (i < stored) {
      ASSERT_TRUE(out[i]) << "stored key " << i;
    }
    false_positives += i >= stored && out[i];
  }
  EXPECT_LT(false_positives, absent.size() / 10);
}

// Inserts keys from `stream` into `filter`, appending those stored to
// *stored, until `failures` inserts have returned kFull: a shard's insert
// fails only when its stash is full.
void InsertUntilFailures(ConcurrentCuckooFilter& filter, HashStream& stream,
                         int failures, std::vector<uint64_t>* stored) {
  while (failures > 0) {
    const uint64_t key = stream.Next();
    if (filter.Insert(key) == InsertResult::kOk) {
      stored->push_back(key);
    } else {
      --failures;
    }
  }
}

// Erases every third of *stored from `filter`, and keeps the others.
void EraseEveryThird(ConcurrentCuckooFilter& filter,
                     std::vector<uint64_t>* stored) {
  std::vector<uint64_t> kept;
  for (size_t i = 0; i < stored->size(); ++i) {
    if (i % 3 == 0) {
      ASSERT_TRUE(filter.Erase((*stored)[i])) << i;
    } else {
      kept.push_back((*stored)[i]);
    }
  }
  *stored = kept;
}

// Shards that do not grow are probed directly by a batch, which reads no
// stash: a shard whose stash holds keys must be asked through its filter.
// Short walks fill the stashes; every key whose Insert returned kOk is found
// by the batch, before and after erases drain the stashes again, and after
// the filter is saved and loaded.
TEST(ConcurrentCuckooFilterTest, BatchedLookupsFindKeysInTheShardsStashes) {
  CuckooFilterOptions options;
  options.layout = BucketLayout{4, 12, false};
  options.max_kicks = 2;
  constexpr uint32_t kShards = 4;
  ConcurrentCuckooFilter filter(kShards * 16, options, kShards);
  HashStream stream(8);
  std::vector<uint64_t> stored;
  InsertUntilFailures(filter, stream, 2, &stored);
  auto expect_all_found = [&](const ConcurrentCuckooFilter& f,
                              const std::vector<uint64_t>& keys) {
    std::unique_ptr<bool[]> out(new bool[keys.size()]);
    f.ContainsBatch(keys.data(), keys.size(), out.get());
    for (size_t i = 0; i < keys.size(); ++i) {
      ASSERT_TRUE(out[i]) << "stored key " << i << " of " << keys.size();
    }
  };
  expect_all_found(filter, stored);
  std::unique_ptr<ConcurrentCuckooFilter> loaded = RoundTrip(filter);
  ASSERT_NE(loaded, nullptr);
  expect_all_found(*loaded, stored);
  EraseEveryThird(filter, &stored);
  expect_all_found(filter, stored);
}

// With the default shard count, a batch finds each key's shard with that
// count compiled in, and while every shard's record has bytes it probes
// them with no test of the record. Batches answer as Contains does, and
// find every stored key: with no stash in use, with full stashes (whose
// shards' records are null), after erases, and after Clear.
TEST(ConcurrentCuckooFilterTest,
     BatchesOfTheDefaultShardCountAnswerAsContains) {
  CuckooFilterOptions options;
  options.layout = BucketLayout{4, 12, false};
  options.max_kicks = 2;
  constexpr uint32_t kShards = ConcurrentCuckooFilter::kDefaultShards;
  ConcurrentCuckooFilter filter(kShards * 16, options);
  ASSERT_EQ(filter.NumShards(), kShards);
  HashStream stream(9);
  const std::vector<uint64_t> absent = stream.Take(8192);
  std::vector<uint64_t> stored;
  auto expect_batches_answer_as_contains = [&](const char* when) {
    std::vector<uint64_t> mix = stored;
    mix.insert(mix.end(), absent.begin(), absent.end());
    std::unique_ptr<bool[]> out(new bool[mix.size()]);
    filter.ContainsBatch(mix.data(), mix.size(), out.get());
    size_t false_positives = 0;
    for (size_t i = 0; i < mix.size(); ++i) {
      ASSERT_EQ(out[i], filter.Contains(mix[i])) << when << ": key " << i;
      if (i < stored.size()) {
        ASSERT_TRUE(out[i]) << when << ": stored key " << i;
      }
      false_positives += i >= stored.size() && out[i];
    }
    EXPECT_LT(false_positives, absent.size() / 50) << when;
  };
  const auto insert_until = [&](size_t count) {
    while (stored.size() < count) {
      const uint64_t key = stream.Next();
      ASSERT_EQ(filter.Insert(key), InsertResult::kOk);
      stored.push_back(key);
    }
  };
  insert_until(kShards * 16 * 4 / 2);
  expect_batches_answer_as_contains("half full");
  InsertUntilFailures(filter, stream, 4, &stored);
  expect_batches_answer_as_contains("stashes full");
  EraseEveryThird(filter, &stored);
  expect_batches_answer_as_contains("after erases");
  filter.Clear();
  stored.clear();
  insert_until(kShards * 16 * 4 / 2);
  expect_batches_answer_as_contains("half full again after Clear");
}

TEST(ConcurrentCuckooFilterTest, SerializesEveryShardAndRejectsDamage) {
  ConcurrentCuckooFilter filter(512, GrowingOptions(), 4);
  HashStream stream(6);
  const std::vector<uint64_t> keys = stream.Take(5000);
  for (uint64_t key : keys) ASSERT_EQ(filter.Insert(key), InsertResult::kOk);
  std::unique_ptr<ConcurrentCuckooFilter> back = RoundTrip(filter);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->NumShards(), 4u);
  for (uint64_t key : keys) ASSERT_TRUE(back->Contains(key));
  const std::vector<uint8_t> bytes = filter.Serialize();
  std::string error;
  for (size_t size : {size_t{0}, size_t{10}, bytes.size() - 1}) {
    EXPECT_EQ(ConcurrentCuckooFilter::Deserialize(bytes.data(), size, &error),
              nullptr);
    EXPECT_FALSE(error.empty());
  }
  std::vector<uint8_t> bad = bytes;
  bad[bytes.size() / 2] ^= 4;
  EXPECT_EQ(ConcurrentCuckooFilter::Deserialize(bad.data(), bad.size(), &error),
            nullptr);
  EXPECT_NE(error.find("checksum"), std::string::npos) << error;
}

// Every shard records the key hasher; a file whose shards disagree, which no
// writer produces, is refused rather than probed with one hash for both.
TEST(ConcurrentCuckooFilterTest, ShardsShareOneRecordedKeyHasher) {
  CuckooFilterOptions options = GrowingOptions();
  options.hasher = KeyHasher::kInteger;
  ConcurrentCuckooFilter filter(64, options, 2);
  for (uint64_t key = 0; key < 100; ++key) {
    ASSERT_EQ(filter.Insert(HashInteger(key)), InsertResult::kOk);
  }
  std::vector<uint8_t> bytes = filter.Serialize();
  std::string error;
  std::unique_ptr<ConcurrentCuckooFilter> back =
      ConcurrentCuckooFilter::Deserialize(bytes.data(), bytes.size(), &error);
  ASSERT_NE(back, nullptr) << error;
  EXPECT_EQ(back->hasher(), KeyHasher::kInteger);
  for (uint64_t key = 0; key < 100; ++key) {
    ASSERT_TRUE(back->Contains(HashInteger(key)));
  }
  const size_t first_length = byte_io::Load<uint64_t>(bytes.data() + 8);
  const size_t second = 8 + 8 + first_length + 8;
  const size_t second_length =
      byte_io::Load<uint64_t>(bytes.data() + second - 8);
  bytes[second + 8] &= 1;  // shard 1 now says XXH3
  const size_t second_checksum = second + second_length - 8;
  byte_io::Store<uint64_t>(
      bytes.data() + second_checksum,
      XXH3_64bits(bytes.data() + second, second_checksum - second));
  byte_io::Store<uint64_t>(bytes.data() + bytes.size() - 8,
                           XXH3_64bits(bytes.data(), bytes.size() - 8));
  EXPECT_EQ(
      ConcurrentCuckooFilter::Deserialize(bytes.data(), bytes.size(), &error),
      nullptr);
  EXPECT_NE(error.find("shard 1 was filled with another key hasher"),
            std::string::npos)
      << error;
}

}  // namespace
}  // namespace cuckoo
