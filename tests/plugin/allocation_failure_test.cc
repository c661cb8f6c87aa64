// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The builder's allocations, seen from a replaced global operator new: it
// counts the bytes live and their peak, and makes large allocations fail on
// request. Accounting: the build adds at most its working memory to the key
// hashes, and the block comes only after the hashes are gone. Fault
// injection: when Finish meets a real std::bad_alloc while it builds the
// table, the builder must write an always-match block (every read stays
// correct), log why to the DB's info log, count it on the policy, and build
// normally again once memory is back. Its own executable, since the
// replacement is global.
#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "cuckoo_filter_policy.h"
#include "filter_format.h"
#include "rocksdb/env.h"
#include "rocksdb/table.h"
#include "table/block_based/filter_policy_internal.h"

namespace {

// Allocations of at least this many bytes fail while failures_left > 0.
std::atomic<size_t> fail_from_bytes{~size_t{0}};
std::atomic<int> failures_left{0};
// Bytes allocated through operator new and not yet freed, as the allocator
// gives them (malloc_usable_size), and the most of them since the last
// ResetPeak.
std::atomic<int64_t> live_bytes{0};
std::atomic<int64_t> peak_bytes{0};

void ResetPeak() { peak_bytes = live_bytes.load(); }

}  // namespace

void* operator new(size_t size) {
  if (size >= fail_from_bytes.load(std::memory_order_relaxed) &&
      failures_left.fetch_sub(1, std::memory_order_relaxed) > 0) {
    throw std::bad_alloc();
  }
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  const int64_t live =
      live_bytes.fetch_add(static_cast<int64_t>(malloc_usable_size(p))) +
      static_cast<int64_t>(malloc_usable_size(p));
  int64_t peak = peak_bytes.load(std::memory_order_relaxed);
  while (live > peak && !peak_bytes.compare_exchange_weak(peak, live)) {
  }
  return p;
}
void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  live_bytes.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)));
  std::free(p);
}
void operator delete(void* p, size_t) noexcept { operator delete(p); }

namespace rocksdb_cuckoo {
namespace {

namespace rdb = ROCKSDB_NAMESPACE;

// An info log that keeps its lines.
class CapturingLogger : public rdb::Logger {
 public:
  using rdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char line[1024];
    std::vsnprintf(line, sizeof(line), format, ap);
    lines.emplace_back(line);
  }
  std::vector<std::string> lines;
};

std::string Key(int i) { return "key" + std::to_string(i); }

TEST(AllocationFailureTest, BuilderWritesAnAlwaysMatchBlockLogsAndRecovers) {
  constexpr int kKeys = 300000;
  CuckooFilterPolicy policy(10);
  CapturingLogger info_log;
  info_log.SetInfoLogLevel(rdb::InfoLogLevel::INFO_LEVEL);
  rdb::BlockBasedTableOptions table_options;
  // Without rounding (the default from 9.2), whose probe of the allocator
  // would take the injected failure and simply not round.
  table_options.optimize_filters_for_memory = false;
  rdb::FilterBuildingContext context(table_options);
  context.info_log = &info_log;
  std::unique_ptr<rdb::FilterBitsBuilder> builder(
      policy.GetBuilderWithContext(context));
  ASSERT_NE(builder, nullptr);
  const size_t lines_before = info_log.lines.size();

  for (int i = 0; i < kKeys; ++i) builder->AddKey(Key(i));
  // The table and the build's work arrays are far above 64 KiB each; the
  // key hashes are stored in small chunks.
  fail_from_bytes = 64 << 10;
  failures_left = 1;
  std::unique_ptr<const char[]> buf;
  rdb::Status status;
  const rdb::Slice block = builder->Finish(&buf, &status);
  fail_from_bytes = ~size_t{0};
  ASSERT_EQ(failures_left.load(), 0) << "no allocation failed";
  EXPECT_TRUE(status.ok()) << status.ToString();

  const DecodedBlock decoded =
      DecodeBlock(reinterpret_cast<const uint8_t*>(block.data()), block.size());
  EXPECT_FALSE(decoded.has_table);
  EXPECT_EQ(decoded.reason, "always-match block");
  std::unique_ptr<rdb::FilterBitsReader> reader(
      policy.GetFilterBitsReader(block));
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(reader->MayMatch(Key(i)));
    ASSERT_TRUE(reader->MayMatch("absent" + std::to_string(i)));
  }
  EXPECT_EQ(policy.fallback_counts().unbuilt_filters, 1u);
  EXPECT_EQ(policy.fallback_counts().always_match_readers, 1u);
  ASSERT_EQ(info_log.lines.size(), lines_before + 1);
  EXPECT_NE(info_log.lines.back().find("cannot build a filter for 300000 keys"),
            std::string::npos)
      << info_log.lines.back();

  // Memory is back: the same builder writes a real filter.
  for (int i = 0; i < kKeys; ++i) builder->AddKey(Key(i));
  std::unique_ptr<const char[]> buf2;
  const rdb::Slice good = builder->Finish(&buf2, &status);
  ASSERT_TRUE(
      DecodeBlock(reinterpret_cast<const uint8_t*>(good.data()), good.size())
          .has_table);
  std::unique_ptr<rdb::FilterBitsReader> good_reader(
      policy.GetFilterBitsReader(good));
  int false_positives = 0;
  for (int i = 0; i < kKeys; i += 100)
    ASSERT_TRUE(good_reader->MayMatch(Key(i)));
  for (int i = 0; i < 10000; ++i) {
    false_positives += good_reader->MayMatch("absent" + std::to_string(i));
  }
  EXPECT_LT(false_positives, 200);
  EXPECT_EQ(policy.fallback_counts().unbuilt_filters, 1u);
}

// From the first AddKey to the end of Finish, the build holds the key hashes
// plus at most its working memory (cuckoo::StaticBuildWorkingBytes, which
// the block cache is charged), under 2 bytes per key at 10 bits per key: the
// work array takes the fingerprint's bits, and the block is allocated once
// the hashes are let go. With detect_filter_construct_corruption the hashes
// are kept for MaybePostVerify, and the block comes on top of them.
TEST(BuildMemoryTest, TheBuildHoldsTheHashesOrTheBlockNeverBoth) {
  constexpr int kKeys = 200000;
  for (bool verify : {false, true}) {
    SCOPED_TRACE(verify ? "detect_filter_construct_corruption"
                        : "default options");
    CuckooFilterPolicy policy(10);
    rdb::BlockBasedTableOptions table_options;
    table_options.optimize_filters_for_memory = false;
    table_options.detect_filter_construct_corruption = verify;
    rdb::FilterBuildingContext context(table_options);
    std::unique_ptr<rdb::FilterBitsBuilder> builder(
        policy.GetBuilderWithContext(context));
    std::vector<std::string> keys;
    for (int i = 0; i < kKeys; ++i) keys.push_back(Key(i));

    const int64_t before_keys = live_bytes.load();
    for (const std::string& key : keys) builder->AddKey(key);
    const int64_t hashes = live_bytes.load() - before_keys;
    ResetPeak();
    std::unique_ptr<const char[]> buf;
    rdb::Status status;
    const rdb::Slice block = builder->Finish(&buf, &status);
    ASSERT_TRUE(status.ok()) << status.ToString();
    const int64_t added = peak_bytes.load() - before_keys - hashes;

    const cuckoo::TableGeometry geometry =
        PlannedGeometry(cuckoo::ChooseForBitsPerKey(10), kKeys);
    ASSERT_EQ(block.size(),
              TableBlockBytes(geometry.layout, geometry.num_buckets));
    const int64_t working =
        static_cast<int64_t>(cuckoo::StaticBuildWorkingBytes(
            geometry.layout, geometry.num_buckets, kKeys));
    // Allocator rounding and the few small allocations of a build.
    constexpr int64_t kSlack = 16 << 10;
    const int64_t kept_block = verify ? static_cast<int64_t>(block.size()) : 0;
    EXPECT_GT(hashes, int64_t{8} * kKeys);
    EXPECT_LE(added, working + kept_block + kSlack)
        << "hashes " << hashes << ", working " << working << ", block "
        << block.size();
    EXPECT_LT(added, int64_t{2} * kKeys + kept_block)
        << "hashes " << hashes << ", block " << block.size();
    if (verify) {
      ASSERT_TRUE(builder->MaybePostVerify(block).ok());
    }
  }
}

}  // namespace
}  // namespace rocksdb_cuckoo
