// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The dynamic filter under allocation failures, seen from a replaced global
// operator new that fails on request. An insert that cannot allocate must
// leave the filter holding every key it held, and a growth that fails must
// leave the filter as a held growth (HoldGrowth) leaves it: that is what lets
// a server replicate the failed insert as one that may not grow. Its own
// executable, since the replacement is global.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "cuckoo/cuckoo_filter.h"
#include "cuckoo/dynamic_filter_format.h"
#include "test_util.h"

namespace {

// Allocations of at least this many bytes fail while failing is set.
std::atomic<size_t> fail_from_bytes{0};
std::atomic<bool> failing{false};

}  // namespace

void* operator new(size_t size) {
  if (failing.load(std::memory_order_relaxed) &&
      size >= fail_from_bytes.load(std::memory_order_relaxed)) {
    throw std::bad_alloc();
  }
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
// Not inlined: GCC would see free() meet a pointer from operator new.
__attribute__((noinline)) void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept { operator delete(p); }

namespace cuckoo {
namespace {

using testing::HashStream;

// Makes every allocation of at least `bytes` fail while it lives.
class FailingAllocations {
 public:
  explicit FailingAllocations(size_t bytes) {
    fail_from_bytes = bytes;
    failing = true;
  }
  ~FailingAllocations() { failing = false; }
};

CuckooFilterOptions Options(uint32_t expansion) {
  CuckooFilterOptions options;
  options.layout = BucketLayout{4, 12, false};
  options.expansion = expansion;
  options.max_kicks = 500;
  return options;
}

// A filter fills while no allocation can succeed: an insert whose buckets
// are full is refused the room for its walk before it changes anything
// (were it taken during the walk, a step that could not be logged would lose
// the fingerprint it had just evicted), and every key stored stays found.
TEST(CuckooFilterAllocationFailureTest,
     AnInsertThatCannotAllocateChangesNothing) {
  CuckooFilter filter(1024, Options(0));
  HashStream stream(11);
  std::vector<uint64_t> stored;
  stored.reserve(filter.Capacity());
  int refused = 0;
  {
    const FailingAllocations failing(1);
    for (uint64_t i = 0; i < filter.Capacity(); ++i) {
      const uint64_t key = stream.Next();
      const CuckooFilterHistory before = filter.history();
      try {
        if (filter.Insert(key) == InsertResult::kOk) stored.push_back(key);
      } catch (const std::bad_alloc&) {
        ++refused;
        // Refused before anything changed.
        ASSERT_EQ(filter.history().generator_state, before.generator_state);
        ASSERT_EQ(filter.history().total_kicks, before.total_kicks);
        ASSERT_EQ(filter.history().items, before.items);
      }
    }
  }
  EXPECT_GT(refused, 0) << "no insert needed a walk: the test tests nothing";
  for (uint64_t key : stored) ASSERT_TRUE(filter.Contains(key)) << key;
}

// A full filter that may grow: its growth fails on one copy and is held on
// the other. Both end in the same bytes, and hold every key.
TEST(CuckooFilterAllocationFailureTest, AFailedGrowthLeavesAHeldGrowthsState) {
  CuckooFilter filter(1 << 14, Options(2));
  HashStream stream(12);
  std::vector<uint64_t> stored;
  while (filter.LoadFactor() < 0.90) {
    const uint64_t key = stream.Next();
    ASSERT_EQ(filter.Insert(key), InsertResult::kOk);
    stored.push_back(key);
  }
  // From here, a copy before each insert, until the insert that grows.
  CuckooFilter before = filter;
  uint64_t growing_key = 0;
  for (;;) {
    before = filter;
    growing_key = stream.Next();
    ASSERT_EQ(filter.Insert(growing_key), InsertResult::kOk);
    if (filter.Growths() > 0) break;
    stored.push_back(growing_key);
  }
  CuckooFilter failed = before;
  CuckooFilter held = before;
  {
    // Only the grown table is as large as the table.
    const FailingAllocations failing(before.SizeInBytes());
    EXPECT_THROW(failed.Insert(growing_key), std::bad_alloc);
  }
  held.HoldGrowth(true);
  EXPECT_EQ(held.Insert(growing_key), InsertResult::kFull);
  EXPECT_FALSE(held.Grow());
  held.HoldGrowth(false);
  EXPECT_EQ(failed.Growths(), 0u);
  EXPECT_EQ(held.Growths(), 0u);
  EXPECT_EQ(failed.history().failed_inserts,
            before.history().failed_inserts + 1);
  EXPECT_EQ(SerializeCuckooFilter(failed), SerializeCuckooFilter(held));
  for (uint64_t key : stored) {
    ASSERT_TRUE(failed.Contains(key)) << key;
    ASSERT_TRUE(held.Contains(key)) << key;
  }
  // Released, it grows again.
  EXPECT_TRUE(held.Grow());
}

}  // namespace
}  // namespace cuckoo
