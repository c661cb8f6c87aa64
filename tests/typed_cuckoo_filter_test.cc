// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Tests of TypedCuckooFilter: it is the runtime CuckooFilter of its layout
// and hasher, operation for operation and byte for byte, for power-of-two
// and other bucket counts and with its stash in use; it loads what a
// runtime filter saved, and refuses filters of another layout, hasher or
// growth.
#include "cuckoo/typed_cuckoo_filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "cuckoo/dynamic_filter_format.h"
#include "test_util.h"

namespace cuckoo {
namespace {

using testing::HashStream;

// Small tables with short walks and a stash, so that the stash fills and
// inserts fail before the keys run out.
CuckooFilterOptions SmallWalks(uint64_t seed) {
  CuckooFilterOptions options;
  options.max_kicks = 20;
  options.stash_capacity = 6;
  options.seed = seed;
  return options;
}

// Runs the same inserts, lookups, counts and erases on the typed filter and
// on a runtime filter given the same hashes, and compares every answer and
// the serialized bytes along the way.
template <typename Typed>
void ExpectTypedIsRuntime(uint32_t num_buckets) {
  using Hasher = typename Typed::HasherType;
  SCOPED_TRACE("buckets " + std::to_string(num_buckets) + ", layout " +
               std::to_string(Typed::Layout().bucket_size) + "x" +
               std::to_string(Typed::Layout().fingerprint_bits) +
               (Typed::Layout().semi_sorted ? " semi-sorted" : ""));
  const CuckooFilterOptions options = SmallWalks(num_buckets);
  Typed typed(num_buckets, options);
  CuckooFilterOptions runtime_options = options;
  runtime_options.layout = Typed::Layout();
  runtime_options.hasher = Hasher::kId;
  CuckooFilter runtime(num_buckets, runtime_options);
  const Hasher hash;

  HashStream stream(num_buckets);
  std::vector<uint64_t> keys;
  bool filled = false;
  while (!filled) {
    const uint64_t key = stream.Next() >> (keys.size() % 3 * 20);
    const InsertResult result = typed.Insert(key);
    ASSERT_EQ(result, runtime.Insert(hash(key))) << "insert " << keys.size();
    filled = result == InsertResult::kFull;
    if (!filled) keys.push_back(key);
  }
  ASSERT_GT(typed.Stats().stash_size, 0u) << "the test wants a used stash";
  ASSERT_EQ(typed.Serialize(), SerializeCuckooFilter(runtime));

  std::vector<uint64_t> probes = keys;
  for (uint64_t key : HashStream(7).Take(2000)) probes.push_back(key);
  std::vector<uint8_t> batched(probes.size());
  typed.ContainsBatch(probes.data(), probes.size(),
                      reinterpret_cast<bool*>(batched.data()));
  for (size_t i = 0; i < probes.size(); ++i) {
    const bool contains = typed.Contains(probes[i]);
    ASSERT_EQ(contains, runtime.Contains(hash(probes[i]))) << i;
    ASSERT_EQ(batched[i] != 0, contains) << i;
    ASSERT_EQ(typed.Count(probes[i]), runtime.Count(hash(probes[i]))) << i;
    if (i < keys.size()) {
      ASSERT_TRUE(contains) << "stored key " << i;
    }
  }

  // Erase every other stored key: the stash drains back into the table.
  for (size_t i = 0; i < keys.size(); i += 2) {
    ASSERT_EQ(typed.Erase(keys[i]), runtime.Erase(hash(keys[i]))) << i;
  }
  for (size_t i = 1; i < keys.size(); i += 2) {
    ASSERT_TRUE(typed.Contains(keys[i])) << i;
  }
  EXPECT_EQ(typed.Size(), runtime.Size());
  EXPECT_EQ(typed.Serialize(), SerializeCuckooFilter(runtime));
}

TEST(TypedCuckooFilterTest, IsTheRuntimeFilterOfItsLayoutAndHasher) {
  for (uint32_t num_buckets : {64u, 70u}) {
    ExpectTypedIsRuntime<PlainCuckooFilter<8>>(num_buckets);
    ExpectTypedIsRuntime<PlainCuckooFilter<12, IntegerHasher>>(num_buckets);
    ExpectTypedIsRuntime<PlainCuckooFilter<16>>(num_buckets);
    ExpectTypedIsRuntime<SemiSortedCuckooFilter<13, IntegerHasher>>(
        num_buckets);
    ExpectTypedIsRuntime<SemiSortedCuckooFilter<9>>(num_buckets);
    // Layouts the runtime filter reads without a compiled type: RedisBloom's
    // 2-slot 8-bit buckets, and 8 slots of 8 bits.
    ExpectTypedIsRuntime<
        TypedCuckooFilter<CompiledPlainCodec<2, 8>, IntegerHasher>>(
        num_buckets);
    ExpectTypedIsRuntime<TypedCuckooFilter<CompiledPlainCodec<8, 8>>>(
        num_buckets);
  }
  constexpr BucketCounts kPowerOfTwo = BucketCounts::kPowerOfTwo;
  for (uint32_t num_buckets : {2u, 64u}) {
    ExpectTypedIsRuntime<PlainCuckooFilter<8, Xxh3Hasher, kPowerOfTwo>>(
        num_buckets);
    ExpectTypedIsRuntime<PlainCuckooFilter<12, IntegerHasher, kPowerOfTwo>>(
        num_buckets);
    ExpectTypedIsRuntime<
        SemiSortedCuckooFilter<13, IntegerHasher, kPowerOfTwo>>(num_buckets);
    ExpectTypedIsRuntime<TypedCuckooFilter<CompiledPlainCodec<2, 8>,
                                           IntegerHasher, kPowerOfTwo>>(
        num_buckets);
  }
}

// InsertMany and InsertManyIfAbsent give what Insert and InsertIfAbsent one
// by one give, result for result and byte for byte, through a stash and
// kFull, with duplicates, and in calls of fewer keys than the batch fetches
// ahead as well as more.
template <typename Typed>
void ExpectBatchedInsertsAreOneByOne(uint32_t num_buckets) {
  SCOPED_TRACE("buckets " + std::to_string(num_buckets) + ", layout " +
               std::to_string(Typed::Layout().bucket_size) + "x" +
               std::to_string(Typed::Layout().fingerprint_bits) +
               (Typed::Layout().semi_sorted ? " semi-sorted" : ""));
  HashStream stream(num_buckets + 1);
  std::vector<uint64_t> keys;
  const size_t slots = size_t{num_buckets} * Typed::Layout().bucket_size;
  while (keys.size() < slots + slots / 4) {
    keys.push_back(keys.size() % 7 == 6 ? keys[keys.size() / 2]
                                        : stream.Next());
  }
  for (bool if_absent : {false, true}) {
    SCOPED_TRACE(if_absent ? "if absent" : "always");
    Typed one_by_one(num_buckets, SmallWalks(num_buckets));
    Typed batched(num_buckets, SmallWalks(num_buckets));
    std::vector<InsertResult> results(keys.size());
    size_t stored = 0;
    size_t done = 0;
    for (size_t call = 0; done < keys.size(); ++call) {
      const size_t n = std::min<size_t>(keys.size() - done, call % 5 * 4 + 1);
      stored += if_absent ? batched.InsertManyIfAbsent(keys.data() + done, n,
                                                       results.data() + done)
                          : batched.InsertMany(keys.data() + done, n,
                                               results.data() + done);
      done += n;
    }
    size_t expected_stored = 0;
    bool full = false;
    bool skipped = false;
    for (size_t i = 0; i < keys.size(); ++i) {
      const InsertResult expected = if_absent
                                        ? one_by_one.InsertIfAbsent(keys[i])
                                        : one_by_one.Insert(keys[i]);
      ASSERT_EQ(results[i], expected) << "key " << i;
      expected_stored += expected == InsertResult::kOk;
      full |= expected == InsertResult::kFull;
      skipped |= expected == InsertResult::kMayExist;
    }
    EXPECT_TRUE(full) << "the test wants a full filter";
    EXPECT_EQ(skipped, if_absent);
    EXPECT_EQ(stored, expected_stored);
    EXPECT_GT(batched.Stats().stash_size, 0u);
    EXPECT_EQ(batched.Serialize(), one_by_one.Serialize());
  }
}

TEST(TypedCuckooFilterTest, BatchedInsertsGiveWhatOneByOneInsertsGive) {
  constexpr BucketCounts kPowerOfTwo = BucketCounts::kPowerOfTwo;
  ExpectBatchedInsertsAreOneByOne<PlainCuckooFilter<12, IntegerHasher>>(70);
  ExpectBatchedInsertsAreOneByOne<
      PlainCuckooFilter<12, IntegerHasher, kPowerOfTwo>>(64);
  ExpectBatchedInsertsAreOneByOne<SemiSortedCuckooFilter<13>>(70);
  ExpectBatchedInsertsAreOneByOne<
      SemiSortedCuckooFilter<13, IntegerHasher, kPowerOfTwo>>(64);
  ExpectBatchedInsertsAreOneByOne<
      TypedCuckooFilter<CompiledPlainCodec<2, 8>, IntegerHasher, kPowerOfTwo>>(
      128);
}

// A filter of power-of-two bucket counts rounds a requested count up, and
// reads the bytes of a filter of any even count that happens to have 2^k
// buckets, and the other way round: the two kinds map keys alike.
TEST(TypedCuckooFilterTest, PowerOfTwoBucketCountsRoundUpAndShareTheFormat) {
  using AnyEven = PlainCuckooFilter<12, IntegerHasher>;
  using PowerOfTwo =
      PlainCuckooFilter<12, IntegerHasher, BucketCounts::kPowerOfTwo>;
  EXPECT_EQ(AnyEven(70).NumBuckets(), 70u);
  EXPECT_EQ(PowerOfTwo(70).NumBuckets(), 128u);
  EXPECT_EQ(PowerOfTwo(1).NumBuckets(), 2u);
  EXPECT_EQ(PowerOfTwo(256).NumBuckets(), 256u);
  const uint32_t reserved = AnyEven::Reserve(10000).NumBuckets();
  ASSERT_FALSE(CuckooHashing::IsPowerOfTwo(reserved)) << reserved;
  const uint32_t rounded = PowerOfTwo::Reserve(10000).NumBuckets();
  EXPECT_TRUE(CuckooHashing::IsPowerOfTwo(rounded)) << rounded;
  EXPECT_GE(rounded, reserved);
  EXPECT_LT(rounded, 2 * reserved);

  std::string error;
  AnyEven any_even(256);
  PowerOfTwo power_of_two(256);
  const std::vector<uint64_t> keys = HashStream(3).Take(900);
  for (uint64_t key : keys) {
    ASSERT_EQ(any_even.Insert(key), InsertResult::kOk);
    ASSERT_EQ(power_of_two.Insert(key), InsertResult::kOk);
  }
  const std::vector<uint8_t> bytes = any_even.Serialize();
  ASSERT_EQ(power_of_two.Serialize(), bytes);
  std::optional<PowerOfTwo> as_power_of_two =
      PowerOfTwo::Deserialize(bytes.data(), bytes.size(), &error);
  ASSERT_TRUE(as_power_of_two.has_value()) << error;
  std::optional<AnyEven> as_any_even =
      AnyEven::Deserialize(bytes.data(), bytes.size(), &error);
  ASSERT_TRUE(as_any_even.has_value()) << error;
  for (uint64_t key : keys) {
    ASSERT_TRUE(as_power_of_two->Contains(key)) << key;
    ASSERT_TRUE(as_any_even->Contains(key)) << key;
  }
  for (size_t i = 0; i < keys.size(); i += 2) {
    ASSERT_TRUE(as_power_of_two->Erase(keys[i])) << i;
    ASSERT_TRUE(as_any_even->Erase(keys[i])) << i;
  }
  EXPECT_EQ(as_power_of_two->Serialize(), as_any_even->Serialize());

  const std::vector<uint8_t> uneven = AnyEven(70).Serialize();
  EXPECT_TRUE(AnyEven::Deserialize(uneven.data(), uneven.size(), &error))
      << error;
  EXPECT_FALSE(PowerOfTwo::Deserialize(uneven.data(), uneven.size(), &error));
  EXPECT_NE(error.find("70 buckets"), std::string::npos) << error;
}

TEST(TypedCuckooFilterTest, ByteStringKeysHashAsTheRuntimeFiltersKeys) {
  PlainCuckooFilter<12> typed(128);
  CuckooFilter runtime(128, CuckooFilterOptions{});
  for (int i = 0; i < 300; ++i) {
    const std::string key = "key-" + std::to_string(i);
    ASSERT_EQ(typed.Insert(std::string_view(key)),
              runtime.Insert(HashKey(key.data(), key.size())));
    ASSERT_TRUE(typed.Contains(std::string_view(key)));
  }
  EXPECT_EQ(typed.Serialize(), SerializeCuckooFilter(runtime));
}

// Bytes saved by either filter load into the other; bytes of another
// layout, hasher or growth are refused with the reason.
TEST(TypedCuckooFilterTest, LoadsOnlyFiltersOfItsOwnType) {
  using Filter = SemiSortedCuckooFilter<13, IntegerHasher>;
  Filter typed(256);
  for (uint64_t key = 0; key < 800; ++key) {
    ASSERT_EQ(typed.Insert(key), InsertResult::kOk);
  }
  const std::vector<uint8_t> bytes = typed.Serialize();
  std::string error;
  std::optional<CuckooFilter> runtime =
      DeserializeCuckooFilter(bytes.data(), bytes.size(), &error);
  ASSERT_TRUE(runtime.has_value()) << error;
  EXPECT_EQ(runtime->options().hasher, KeyHasher::kInteger);
  std::optional<Filter> back =
      Filter::Deserialize(bytes.data(), bytes.size(), &error);
  ASSERT_TRUE(back.has_value()) << error;
  for (uint64_t key = 0; key < 800; ++key) ASSERT_TRUE(back->Contains(key));
  EXPECT_EQ(back->Serialize(), bytes);

  auto refused = [&](const CuckooFilter& other, const std::string& why) {
    const std::vector<uint8_t> other_bytes = SerializeCuckooFilter(other);
    EXPECT_FALSE(
        Filter::Deserialize(other_bytes.data(), other_bytes.size(), &error));
    EXPECT_NE(error.find(why), std::string::npos) << error;
  };
  CuckooFilterOptions options;
  options.layout = Filter::Layout();
  refused(CuckooFilter(256, options), "filled with the xxh3 key hasher");
  options.hasher = KeyHasher::kInteger;
  options.layout.semi_sorted = false;
  refused(CuckooFilter(256, options), "layout");
  options.layout = Filter::Layout();
  options.expansion = 2;
  refused(CuckooFilter(256, options), "may grow");
  EXPECT_THROW(Filter(256, options), std::invalid_argument);
  options.expansion = 0;
  EXPECT_TRUE(Filter::FromFilter(CuckooFilter(256, options), &error)) << error;
}

// The type decides the layout and the hasher, whatever the options say.
TEST(TypedCuckooFilterTest, TheTypeDecidesLayoutAndHasher) {
  CuckooFilterOptions options;
  options.layout = BucketLayout{2, 30, false};
  options.hasher = KeyHasher::kXxh3;
  const PlainCuckooFilter<16, IntegerHasher> typed(100, options);
  EXPECT_EQ(typed.options().layout, (BucketLayout{4, 16, false}));
  EXPECT_EQ(typed.options().hasher, KeyHasher::kInteger);
  const auto reserved = SemiSortedCuckooFilter<13>::Reserve(1000);
  EXPECT_EQ(reserved.options().layout, (BucketLayout{4, 13, true}));
  EXPECT_GE(reserved.Capacity(), 1000u);
}

}  // namespace
}  // namespace cuckoo
