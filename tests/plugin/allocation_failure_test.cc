// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Fault injection for the builder's fallback: this program replaces the
// global operator new, and makes large allocations fail on request, so that
// Finish meets a real std::bad_alloc while it builds the table. The builder
// must then write an always-match block (every read stays correct), log why
// to the DB's info log, count it on the policy, and build normally again
// once memory is back. Its own executable, since the replacement is global.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "cuckoo_filter_block.h"
#include "cuckoo_filter_policy.h"
#include "rocksdb/env.h"
#include "rocksdb/table.h"
#include "table/block_based/filter_policy_internal.h"

namespace {

// Allocations of at least this many bytes fail while failures_left > 0.
std::atomic<size_t> fail_from_bytes{~size_t{0}};
std::atomic<int> failures_left{0};

}  // namespace

void* operator new(size_t size) {
  if (size >= fail_from_bytes.load(std::memory_order_relaxed) &&
      failures_left.fetch_sub(1, std::memory_order_relaxed) > 0) {
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

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

}  // namespace
}  // namespace rocksdb_cuckoo
