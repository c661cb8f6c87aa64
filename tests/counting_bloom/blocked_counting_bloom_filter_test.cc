// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Tests for counting_bloom::BlockedCountingBloomFilter: the counting contract
// (no false negatives, safe removal: no underflow, sticky saturation, repeated
// probes; packed counters against a reference model; bad arguments), then
// the blocked filter's own: its probes, batched lookup, measured false
// positive rate against its model, sizing, limits, accessors.

#include "blocked_counting_bloom_filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "test_util.h"

namespace counting_bloom {
namespace {

using SplitMix64 = cuckoo::testing::HashStream;

std::vector<uint64_t> MakeHashes(uint64_t seed, size_t count) {
  SplitMix64 generator(seed);
  std::vector<uint64_t> hashes(count);
  for (uint64_t& hash : hashes) {
    hash = generator.Next();
  }
  return hashes;
}

// Seed for keys that are never added; distinct from the small seeds used
// for stored keys, so the streams do not overlap.
constexpr uint64_t kAbsentKeySeed = 0x5eed0fab5e47c0deULL;

bool HasDistinctPositions(const std::vector<uint64_t>& positions) {
  return std::set<uint64_t>(positions.begin(), positions.end()).size() ==
         positions.size();
}

// The fraction of `num_queries` keys never added that `filter` contains.
template <typename Filter>
double MeasureFalsePositiveRate(const Filter& filter, uint64_t num_queries) {
  SplitMix64 absent_keys(kAbsentKeySeed);
  uint64_t false_positives = 0;
  for (uint64_t i = 0; i < num_queries; ++i) {
    if (filter.Contains(absent_keys.Next())) {
      ++false_positives;
    }
  }
  return static_cast<double>(false_positives) /
         static_cast<double>(num_queries);
}

// The rate of an unblocked counting Bloom filter of m counters, k probes
// and n keys: (1 - e^(-k n / m))^k.
double UnblockedRate(uint64_t m, int k, uint64_t n) {
  return std::pow(
      1.0 - std::exp(-k * static_cast<double>(n) / static_cast<double>(m)), k);
}

// ----------------------------------------------------------------------
// The counting contract: no false negatives, Remove that refuses
// what cannot be present and never underflows, sticky saturation, repeated
// probes counted as often as they repeat, counters that follow a reference
// model, and the arguments the filter refuses.
// ----------------------------------------------------------------------

// Counter values predicted from ProbePositions, with the documented
// saturating and sticky rules, independent of the packed storage.
class ReferenceCounters {
 public:
  ReferenceCounters(uint64_t num_counters, int counter_bits)
      : values_(num_counters, 0), max_value_((1 << counter_bits) - 1) {}

  void Add(const std::vector<uint64_t>& positions) {
    for (uint64_t position : positions) {
      if (values_[position] < max_value_) {
        ++values_[position];
      }
    }
    ++num_keys_;
  }

  bool Remove(const std::vector<uint64_t>& positions) {
    if (num_keys_ == 0) {
      return false;
    }
    std::vector<int> after = values_;
    for (uint64_t position : positions) {
      if (after[position] != max_value_) {
        --after[position];
        if (after[position] < 0) {
          return false;
        }
      }
    }
    values_ = after;
    --num_keys_;
    return true;
  }

  bool Contains(const std::vector<uint64_t>& positions) const {
    for (uint64_t position : positions) {
      if (values_[position] == 0) {
        return false;
      }
    }
    return true;
  }

  int Value(uint64_t position) const { return values_[position]; }

  uint64_t NumSaturated() const {
    uint64_t count = 0;
    for (int value : values_) {
      count += value == max_value_ ? 1 : 0;
    }
    return count;
  }

  uint64_t NumKeys() const { return num_keys_; }

 private:
  std::vector<int> values_;
  int max_value_;
  uint64_t num_keys_ = 0;
};

using Filter = BlockedCountingBloomFilter;

// Two blocks: a key's probes often land twice on one counter, and keys
// share counters, so saturation and refused removals happen often.
Filter Crowded(int num_hashes, int counter_bits) {
  return Filter(2, num_hashes, counter_bits);
}

// Finds a hash whose probe positions in `filter` are all distinct; false if
// none turns up within a generous number of tries.
bool FindHashWithDistinctPositions(const Filter& filter, uint64_t* hash) {
  SplitMix64 generator(41);
  for (int attempt = 0; attempt < 10000; ++attempt) {
    *hash = generator.Next();
    if (HasDistinctPositions(filter.ProbePositions(*hash))) {
      return true;
    }
  }
  return false;
}

// Finds a hash whose probes hit some counter at least twice, and that
// counter; false if none turns up.
bool FindHashWithRepeatedPosition(const Filter& filter, uint64_t seed,
                                  uint64_t* hash, uint64_t* repeated_position) {
  SplitMix64 generator(seed);
  for (int attempt = 0; attempt < 100000; ++attempt) {
    *hash = generator.Next();
    const std::vector<uint64_t> positions = filter.ProbePositions(*hash);
    for (size_t i = 0; i < positions.size(); ++i) {
      for (size_t j = i + 1; j < positions.size(); ++j) {
        if (positions[i] == positions[j]) {
          *repeated_position = positions[i];
          return true;
        }
      }
    }
  }
  return false;
}

TEST(CountingFilterContractTest, NoFalseNegativesAcrossSeedsAndCounterWidths) {
  constexpr size_t kNumKeys = 100000;
  for (int counter_bits : {4, 8}) {
    for (uint64_t seed : {1, 2, 3}) {
      Filter filter(Filter::ForCapacity(kNumKeys, 0.01, counter_bits));
      const std::vector<uint64_t> hashes = MakeHashes(seed, kNumKeys);
      for (uint64_t hash : hashes) {
        filter.Add(hash);
      }
      ASSERT_EQ(filter.Size(), kNumKeys);
      size_t false_negatives = 0;
      for (uint64_t hash : hashes) {
        if (!filter.Contains(hash)) {
          ++false_negatives;
        }
      }
      EXPECT_EQ(false_negatives, 0u)
          << "counter_bits=" << counter_bits << " seed=" << seed;
    }
  }
}

TEST(CountingFilterContractTest,
     RemoveOfAbsentKeyReturnsFalseAndChangesNothing) {
  for (int counter_bits : {4, 8}) {
    Filter filter(Filter::ForCapacity(10000, 0.01, counter_bits));
    EXPECT_FALSE(filter.Remove(12345)) << "empty filter";

    const std::vector<uint64_t> stored = MakeHashes(11, 10000);
    for (uint64_t hash : stored) {
      filter.Add(hash);
    }
    const Filter before = filter;

    SplitMix64 absent_keys(kAbsentKeySeed);
    int removals_tried = 0;
    while (removals_tried < 1000) {
      const uint64_t hash = absent_keys.Next();
      if (filter.Contains(hash)) {
        continue;
      }
      ++removals_tried;
      EXPECT_FALSE(filter.Remove(hash));
    }
    EXPECT_TRUE(filter == before) << "counter_bits=" << counter_bits;
    EXPECT_EQ(filter.Size(), stored.size());
    for (uint64_t hash : stored) {
      ASSERT_TRUE(filter.Contains(hash));
    }
  }
}

TEST(CountingFilterContractTest, RemovingHalfKeepsTheRestAndDropsTheRemoved) {
  constexpr size_t kNumKeys = 100000;
  for (int counter_bits : {4, 8}) {
    Filter filter(Filter::ForCapacity(kNumKeys, 0.01, counter_bits));
    const std::vector<uint64_t> hashes = MakeHashes(21, kNumKeys);
    for (uint64_t hash : hashes) {
      filter.Add(hash);
    }
    for (size_t i = 0; i < kNumKeys / 2; ++i) {
      ASSERT_TRUE(filter.Remove(hashes[i]));
    }
    EXPECT_EQ(filter.Size(), kNumKeys / 2);

    for (size_t i = kNumKeys / 2; i < kNumKeys; ++i) {
      ASSERT_TRUE(filter.Contains(hashes[i])) << "lost remaining key " << i;
    }
    size_t removed_still_contained = 0;
    for (size_t i = 0; i < kNumKeys / 2; ++i) {
      if (filter.Contains(hashes[i])) {
        ++removed_still_contained;
      }
    }
    const double removed_rate = static_cast<double>(removed_still_contained) /
                                static_cast<double>(kNumKeys / 2);
    const double expected = filter.ExpectedFalsePositiveRate();
    std::cout << "[ REMOVED  ] counter_bits=" << counter_bits
              << " removed keys still contained: " << removed_rate
              << " (expected false positive rate at half load " << expected
              << ")\n";
    EXPECT_LE(removed_rate, 3.0 * expected);
  }
}

TEST(CountingFilterContractTest, RemoveAllRestoresTheEmptyFilter) {
  for (int counter_bits : {4, 8}) {
    Filter filter(Filter::ForCapacity(5000, 0.01, counter_bits));
    const Filter empty = filter;
    const std::vector<uint64_t> hashes = MakeHashes(31, 5000);
    for (uint64_t hash : hashes) {
      filter.Add(hash);
    }
    EXPECT_TRUE(filter != empty);
    for (uint64_t hash : hashes) {
      ASSERT_TRUE(filter.Remove(hash));
    }
    EXPECT_TRUE(filter == empty) << "counter_bits=" << counter_bits;
  }
}

TEST(CountingFilterContractTest, InvalidArgumentsThrow) {
  EXPECT_THROW(Filter::ForCapacity(0, 0.01), std::invalid_argument);
  EXPECT_THROW(Filter::ForCapacity(100, 0.0), std::invalid_argument);
  EXPECT_THROW(Filter::ForCapacity(100, 1.0), std::invalid_argument);
  EXPECT_THROW(Filter::ForCapacity(100, -0.5), std::invalid_argument);
  EXPECT_THROW(Filter::ForCapacity(100, 1.5), std::invalid_argument);
  EXPECT_THROW(Filter::ForCapacity(100, std::nan("")), std::invalid_argument);
  EXPECT_THROW(Filter::ForCapacity(100, 0.01, 5), std::invalid_argument);
  EXPECT_THROW(Filter::ForCapacity(100, 0.01, 16), std::invalid_argument);
  EXPECT_THROW(Filter(0, 3), std::invalid_argument);
  EXPECT_THROW(Filter(100, 0), std::invalid_argument);
  EXPECT_THROW(Filter(100, 31), std::invalid_argument);
  EXPECT_THROW(Filter(100, 3, 0), std::invalid_argument);
  EXPECT_THROW(Filter(100, 3, 2), std::invalid_argument);
  EXPECT_THROW(Filter(100, 3, 16), std::invalid_argument);
  EXPECT_NO_THROW(Filter(1, 1, 4));
  EXPECT_NO_THROW(Filter(100, 30, 8));

  try {
    Filter(100, 3, 7);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("counter_bits must be 4 or 8"),
              std::string::npos)
        << error.what();
  }
}

// Adds one key more times than a counter can count, removes it as many
// times, then removes every other key: the key's counters stay saturated
// (so it is still present), and no other counter underflowed.
void ExpectSaturationIsSticky(int counter_bits, int repeats) {
  SCOPED_TRACE(std::to_string(counter_bits) + "-bit counters");
  Filter filter(Filter::ForCapacity(1000, 0.01, counter_bits));
  const std::vector<uint64_t> others = MakeHashes(43, 500);
  for (uint64_t hash : others) {
    filter.Add(hash);
  }
  ASSERT_EQ(filter.SaturatedCounters(), 0u);

  uint64_t hash = 0;
  ASSERT_TRUE(FindHashWithDistinctPositions(filter, &hash));
  const std::vector<uint64_t> positions = filter.ProbePositions(hash);
  const uint64_t num_probes = positions.size();
  ASSERT_EQ(num_probes, static_cast<uint64_t>(filter.NumHashes()));
  for (int i = 0; i < repeats; ++i) {
    filter.Add(hash);
  }
  EXPECT_EQ(filter.SaturatedCounters(), num_probes);
  EXPECT_EQ(filter.Size(), others.size() + static_cast<uint64_t>(repeats));
  for (uint64_t position : positions) {
    EXPECT_EQ(filter.CounterValue(position), filter.MaxCounterValue());
  }

  for (int i = 0; i < repeats; ++i) {
    ASSERT_TRUE(filter.Remove(hash)) << "remove " << i;
  }
  EXPECT_TRUE(filter.Contains(hash)) << "saturated counters must be sticky";
  EXPECT_EQ(filter.SaturatedCounters(), num_probes);
  EXPECT_EQ(filter.Size(), others.size());
  for (uint64_t other : others) {
    ASSERT_TRUE(filter.Contains(other));
  }
  for (uint64_t other : others) {
    ASSERT_TRUE(filter.Remove(other));
  }
  EXPECT_EQ(filter.Size(), 0u);
  EXPECT_FALSE(filter.Remove(hash)) << "an empty filter holds no key";

  // Only the key's counters are nonzero, at their maximum: an underflow
  // (0 - 1 wraps to the maximum in a packed counter) would have left some
  // other counter nonzero.
  const std::set<uint64_t> saturated(positions.begin(), positions.end());
  for (uint64_t index = 0; index < filter.NumCounters(); ++index) {
    ASSERT_EQ(filter.CounterValue(index),
              saturated.count(index) != 0 ? filter.MaxCounterValue() : 0u)
        << "counter " << index;
  }
  filter.Clear();
  EXPECT_EQ(filter.SaturatedCounters(), 0u);
  EXPECT_FALSE(filter.Contains(hash));
}

TEST(CountingFilterContractTest, FourBitCountersSaturateAndStaySaturated) {
  ExpectSaturationIsSticky(4, 20);
}

TEST(CountingFilterContractTest, EightBitCountersSaturateAndStaySaturated) {
  ExpectSaturationIsSticky(8, 300);
}

TEST(CountingFilterContractTest, FourBitCountersSaturateExactlyAtFifteen) {
  Filter filter(1000, 5, 4);
  uint64_t hash = 0;
  ASSERT_TRUE(FindHashWithDistinctPositions(filter, &hash));
  for (int i = 0; i < 14; ++i) {
    filter.Add(hash);
  }
  EXPECT_EQ(filter.SaturatedCounters(), 0u);
  filter.Add(hash);
  EXPECT_EQ(filter.SaturatedCounters(),
            static_cast<uint64_t>(filter.NumHashes()));
}

TEST(CountingFilterContractTest, EightBitCountersDoNotSaturateAtTwenty) {
  Filter filter(Filter::ForCapacity(1000, 0.01, 8));
  const Filter empty = filter;
  uint64_t hash = 0;
  ASSERT_TRUE(FindHashWithDistinctPositions(filter, &hash));
  for (int i = 0; i < 20; ++i) {
    filter.Add(hash);
  }
  EXPECT_EQ(filter.SaturatedCounters(), 0u);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(filter.Remove(hash));
  }
  EXPECT_FALSE(filter.Contains(hash));
  EXPECT_TRUE(filter == empty);
}

// A key whose probes land twice on one counter adds 2 to it, and removing
// it takes 2 off: every counter holds exactly its number of probes.
TEST(CountingFilterContractTest, RepeatedProbePositionsAreCountedTwice) {
  for (int counter_bits : {4, 8}) {
    Filter filter = Crowded(6, counter_bits);
    const Filter empty = filter;
    uint64_t key = 0;
    uint64_t repeated_position = 0;
    ASSERT_TRUE(
        FindHashWithRepeatedPosition(filter, 59, &key, &repeated_position));
    const std::vector<uint64_t> positions = filter.ProbePositions(key);
    filter.Add(key);
    EXPECT_GE(filter.CounterValue(repeated_position), 2u);
    for (uint64_t index = 0; index < filter.NumCounters(); ++index) {
      const auto probes = static_cast<uint32_t>(
          std::count(positions.begin(), positions.end(), index));
      ASSERT_EQ(filter.CounterValue(index), probes) << "counter " << index;
    }
    EXPECT_TRUE(filter.Remove(key));
    EXPECT_TRUE(filter == empty);
    EXPECT_FALSE(filter.Contains(key));
  }
}

TEST(CountingFilterContractTest,
     RemoveRefusesWhenRepeatedProbeCounterIsTooLow) {
  // Build a state where the key's repeated counter is exactly 1 and its
  // other counters are nonzero: Contains is true, yet the key was never
  // added, and decrementing twice would underflow.
  Filter filter = Crowded(4, 4);
  uint64_t key = 0;
  uint64_t repeated_position = 0;
  ASSERT_TRUE(
      FindHashWithRepeatedPosition(filter, 61, &key, &repeated_position));
  const std::vector<uint64_t> key_positions = filter.ProbePositions(key);

  SplitMix64 generator(63);
  ReferenceCounters reference(filter.NumCounters(), 4);
  for (int attempt = 0; !(reference.Contains(key_positions) &&
                          reference.Value(repeated_position) == 1);
       ++attempt) {
    ASSERT_LT(attempt, 100000) << "could not build the test state";
    const uint64_t other = generator.Next();
    if (other == key) {
      continue;
    }
    const std::vector<uint64_t> positions = filter.ProbePositions(other);
    int hits_on_repeated = 0;
    for (uint64_t position : positions) {
      hits_on_repeated += position == repeated_position ? 1 : 0;
    }
    if (reference.Value(repeated_position) + hits_on_repeated > 1) {
      continue;
    }
    filter.Add(other);
    reference.Add(positions);
  }

  ASSERT_TRUE(filter.Contains(key));
  const Filter before = filter;
  EXPECT_FALSE(filter.Remove(key));
  EXPECT_TRUE(filter == before);

  // Once the key is actually added, its repeated counter holds at least 3
  // and the removal goes through, restoring the previous state exactly.
  filter.Add(key);
  EXPECT_GE(filter.CounterValue(repeated_position), 3u);
  EXPECT_TRUE(filter.Remove(key));
  EXPECT_TRUE(filter == before);
}

TEST(CountingFilterContractTest, PackedCountersMatchReferenceModel) {
  for (int counter_bits : {4, 8}) {
    SCOPED_TRACE(std::to_string(counter_bits) + "-bit counters");
    // Counters share bytes or words, probes collide, and saturation and
    // refused removals all happen.
    Filter filter = Crowded(3, counter_bits);
    ReferenceCounters reference(filter.NumCounters(), counter_bits);
    const std::vector<uint64_t> pool = MakeHashes(51, 40);
    // Saturate the counters of a few keys first.
    const int repeats = counter_bits == 4 ? 20 : 300;
    for (size_t i = 0; i < 3; ++i) {
      for (int r = 0; r < repeats; ++r) {
        filter.Add(pool[i]);
        reference.Add(filter.ProbePositions(pool[i]));
      }
    }
    ASSERT_GT(reference.NumSaturated(), 0u);
    SplitMix64 choices(53);
    int successful_removes = 0;
    int refused_removes = 0;
    for (int step = 0; step < 20000; ++step) {
      const uint64_t choice = choices.Next();
      const uint64_t hash = pool[choice % pool.size()];
      const std::vector<uint64_t> positions = filter.ProbePositions(hash);
      // Remove more often than Add, so counters keep returning to zero.
      if ((choice >> 32) % 5 < 2) {
        filter.Add(hash);
        reference.Add(positions);
      } else {
        const bool removed = filter.Remove(hash);
        ASSERT_EQ(removed, reference.Remove(positions)) << "step " << step;
        if (removed) {
          ++successful_removes;
        } else {
          ++refused_removes;
        }
      }
      ASSERT_EQ(filter.Size(), reference.NumKeys());
      ASSERT_EQ(filter.SaturatedCounters(), reference.NumSaturated());
      for (uint64_t index = 0; index < filter.NumCounters(); ++index) {
        ASSERT_EQ(static_cast<int>(filter.CounterValue(index)),
                  reference.Value(index))
            << "step " << step << " counter " << index;
      }
      for (uint64_t probe_hash : pool) {
        ASSERT_EQ(filter.Contains(probe_hash),
                  reference.Contains(filter.ProbePositions(probe_hash)))
            << "step " << step;
      }
    }
    EXPECT_GT(successful_removes, 1000);
    EXPECT_GT(refused_removes, 1000);
  }
}

// ----------------------------------------------------------------------
// BlockedCountingBloomFilter
// ----------------------------------------------------------------------

// The false positive rate of one filter state for a uniformly random absent
// key: a query picks a block uniformly and hits a nonzero counter with each
// of its k independent uniform offsets, so its rate is the mean over blocks
// of (nonzero counters / B)^k. `variance` is the variance of that per-block
// rate across blocks, so variance / NumBlocks() is the squared standard
// error of `mean` as an estimate of the expected rate (conservative: block
// loads are negatively correlated).
struct StateRate {
  double mean = 0.0;
  double variance = 0.0;
};

StateRate FalsePositiveRateOfState(const BlockedCountingBloomFilter& filter) {
  const uint64_t per_block = filter.CountersPerBlock();
  double sum = 0.0;
  double sum_of_squares = 0.0;
  for (uint64_t block = 0; block < filter.NumBlocks(); ++block) {
    uint64_t nonzero = 0;
    for (uint64_t offset = 0; offset < per_block; ++offset) {
      nonzero += filter.CounterValue(block * per_block + offset) != 0 ? 1 : 0;
    }
    const double rate =
        std::pow(static_cast<double>(nonzero) / per_block, filter.NumHashes());
    sum += rate;
    sum_of_squares += rate * rate;
  }
  const double blocks = static_cast<double>(filter.NumBlocks());
  StateRate state;
  state.mean = sum / blocks;
  state.variance =
      std::max(0.0, sum_of_squares / blocks - state.mean * state.mean);
  return state;
}

TEST(BlockedCountingBloomFilterTest, AllProbesOfAKeyLieInOneBlock) {
  for (int counter_bits : {4, 8}) {
    for (int num_hashes : {1, 6, 9, 10, 11, 30}) {
      BlockedCountingBloomFilter filter(1000, num_hashes, counter_bits);
      ASSERT_EQ(filter.CountersPerBlock(), counter_bits == 4 ? 128u : 64u);
      std::set<uint64_t> blocks_used;
      std::set<uint64_t> offsets_used;
      for (uint64_t hash : MakeHashes(3, 2000)) {
        const std::vector<uint64_t> positions = filter.ProbePositions(hash);
        ASSERT_EQ(positions.size(), static_cast<size_t>(num_hashes));
        const uint64_t block = positions[0] / filter.CountersPerBlock();
        for (uint64_t position : positions) {
          ASSERT_LT(position, filter.NumCounters());
          ASSERT_EQ(position / filter.CountersPerBlock(), block);
          offsets_used.insert(position % filter.CountersPerBlock());
        }
        blocks_used.insert(block);
      }
      // Blocks and offsets both spread over their whole range.
      EXPECT_GT(blocks_used.size(), 800u);
      EXPECT_EQ(offsets_used.size(), filter.CountersPerBlock());
    }
  }
}

// The batched lookup answers exactly as single lookups do, for stored keys
// and for absent ones (some of them false positives).
TEST(BlockedCountingBloomFilterTest, ContainsBatchAnswersAsContains) {
  constexpr size_t kNumKeys = 100000;
  for (int counter_bits : {4, 8}) {
    BlockedCountingBloomFilter filter(
        BlockedCountingBloomFilter::ForCapacity(kNumKeys, 0.01, counter_bits));
    const std::vector<uint64_t> hashes = MakeHashes(1, kNumKeys);
    for (uint64_t hash : hashes) {
      filter.Add(hash);
    }
    std::vector<uint64_t> queries(hashes.begin(), hashes.begin() + 5000);
    SplitMix64 absent_keys(kAbsentKeySeed);
    for (int i = 0; i < 50000; ++i) {
      queries.push_back(absent_keys.Next());
    }
    std::unique_ptr<bool[]> results(new bool[queries.size()]);
    filter.ContainsBatch(queries.data(), queries.size(), results.get());
    size_t batch_positives = 0;
    for (size_t i = 0; i < queries.size(); ++i) {
      ASSERT_EQ(results[i], filter.Contains(queries[i])) << "query " << i;
      batch_positives += results[i] ? 1 : 0;
    }
    EXPECT_GT(batch_positives, 5000u) << "counter_bits=" << counter_bits;
  }
}

// The measured rate of absent keys against the blocked model, for shapes
// from ForCapacity and for hand-picked over- and under-loaded ones. Two
// sources of randomness separate a measurement from the model: the 10^6
// queries (binomial around the rate of this filter state) and the state
// itself (its rate varies around the model's expectation). Both standard
// errors are computed, and the checks allow 4 of them plus 1% of model
// slack; the unblocked formula, which ignores the spread of block loads,
// must fall outside, so the check can tell the two models apart.
TEST(BlockedCountingBloomFilterTest, FalsePositiveRateMatchesTheBlockedModel) {
  struct Case {
    BlockedCountingBloomFilter::Config config;
    uint64_t keys;
  };
  std::vector<Case> cases = {
      {BlockedCountingBloomFilter::ForCapacity(200000, 0.01, 4), 200000},
      {BlockedCountingBloomFilter::ForCapacity(200000, 0.01, 8), 200000},
      {BlockedCountingBloomFilter::ForCapacity(100000, 0.001, 4), 100000},
      {{2000, 3, 4}, 40000},
      {{4000, 8, 4}, 40000},
      {{3000, 4, 8}, 30000},
  };
  constexpr uint64_t kQueries = 1000000;
  for (const Case& c : cases) {
    BlockedCountingBloomFilter filter(c.config);
    for (uint64_t hash : MakeHashes(7, c.keys)) {
      filter.Add(hash);
    }
    const double expected = filter.ExpectedFalsePositiveRate();
    const StateRate state = FalsePositiveRateOfState(filter);
    const double measured = MeasureFalsePositiveRate(filter, kQueries);
    const double query_error =
        std::sqrt(state.mean * (1.0 - state.mean) / kQueries);
    const double state_error =
        std::sqrt(state.variance / static_cast<double>(filter.NumBlocks()));
    const double unblocked =
        UnblockedRate(filter.NumCounters(), filter.NumHashes(), c.keys);
    std::cout << "[ FPR      ] blocks=" << filter.NumBlocks()
              << " k=" << filter.NumHashes()
              << " counter_bits=" << filter.CounterBits() << " n=" << c.keys
              << " bits/key=" << filter.BitsPerKey() << " expected=" << expected
              << " state=" << state.mean << " measured=" << measured
              << " unblocked=" << unblocked << "\n";
    SCOPED_TRACE(std::to_string(filter.NumBlocks()) +
                 " blocks, k=" + std::to_string(filter.NumHashes()) + ", " +
                 std::to_string(filter.CounterBits()) + "-bit counters, " +
                 std::to_string(c.keys) + " keys");
    // The queries see the state's rate: positions are as uniform as the
    // model assumes.
    EXPECT_NEAR(measured, state.mean, 4.0 * query_error + 1e-4 * state.mean);
    // The state's rate is the model's expectation.
    EXPECT_NEAR(state.mean, expected, 4.0 * state_error + 0.01 * expected);
    const double total_error =
        std::sqrt(query_error * query_error + state_error * state_error);
    EXPECT_NEAR(measured, expected, 4.0 * total_error + 0.01 * expected);
    EXPECT_GT(measured, unblocked + 4.0 * total_error + 0.01 * unblocked);
  }
}

// ForCapacity's shape meets the target by the model with the fewest blocks
// (one block fewer misses it with every k), and a filter of that shape
// filled with that many keys measures at most about the target.
TEST(BlockedCountingBloomFilterTest,
     ForCapacityMeetsItsTargetWithFewestBlocks) {
  struct Case {
    uint64_t keys;
    double rate;
  };
  for (const Case& c : {Case{100000, 0.01}, Case{20000, 0.001},
                        Case{12345, 0.02}, Case{777, 0.2}}) {
    for (int counter_bits : {4, 8}) {
      SCOPED_TRACE(std::to_string(c.keys) + " keys at " +
                   std::to_string(c.rate) + ", " +
                   std::to_string(counter_bits) + "-bit counters");
      const BlockedCountingBloomFilter::Config config =
          BlockedCountingBloomFilter::ForCapacity(c.keys, c.rate, counter_bits);
      EXPECT_EQ(config.counter_bits, counter_bits);
      EXPECT_LE(BlockedCountingBloomFilter::ExpectedFalsePositiveRate(
                    config.num_blocks, config.num_hashes, c.keys, counter_bits),
                c.rate);
      ASSERT_GT(config.num_blocks, 1u);
      for (int k = 1; k <= BlockedCountingBloomFilter::kMaxNumHashes; ++k) {
        EXPECT_GT(BlockedCountingBloomFilter::ExpectedFalsePositiveRate(
                      config.num_blocks - 1, k, c.keys, counter_bits),
                  c.rate)
            << "k=" << k;
      }

      BlockedCountingBloomFilter filter(config);
      SplitMix64 stream(c.keys + counter_bits);
      for (uint64_t i = 0; i < c.keys; ++i) filter.Add(stream.Next());
      const int probes = 1000000;
      int positives = 0;
      for (int i = 0; i < probes; ++i)
        positives += filter.Contains(stream.Next());
      const double measured = static_cast<double>(positives) / probes;
      const StateRate state = FalsePositiveRateOfState(filter);
      const double error =
          std::sqrt(c.rate * (1.0 - c.rate) / probes +
                    state.variance / static_cast<double>(filter.NumBlocks()));
      std::cout << "[ SIZING   ] n=" << c.keys << " target=" << c.rate
                << " counter_bits=" << counter_bits
                << " blocks=" << config.num_blocks << " k=" << config.num_hashes
                << " bits/key=" << filter.BitsPerKey()
                << " measured=" << measured << " (+-" << error << ")\n";
      EXPECT_LE(measured, c.rate + 4.0 * error + 0.01 * c.rate);
      EXPECT_LE(measured, 1.2 * c.rate);
      EXPECT_GE(measured, 0.8 * c.rate - 4.0 * error);
    }
  }

  const BlockedCountingBloomFilter::Config one_percent =
      BlockedCountingBloomFilter::ForCapacity(100000, 0.01);
  EXPECT_EQ(one_percent.num_blocks, 8475u);
  EXPECT_EQ(one_percent.num_hashes, 6);
  EXPECT_EQ(one_percent.counter_bits, 4);
}

// With one probe the mixture has a closed form: a query's counter is empty
// unless one of the n keys put its probe there, each with probability
// 1 / (b B), so FPR = 1 - (1 - 1 / (b B))^n.
TEST(BlockedCountingBloomFilterTest, ExpectedRateMatchesClosedFormForOneProbe) {
  for (int counter_bits : {4, 8}) {
    const double counters_per_block = static_cast<double>(
        BlockedCountingBloomFilter::CountersPerBlock(counter_bits));
    for (uint64_t blocks : {1u, 2u, 7u, 1000u}) {
      for (uint64_t keys : {1u, 50u, 1000u, 100000u}) {
        const double closed_form =
            1.0 - std::pow(1.0 - 1.0 / (static_cast<double>(blocks) *
                                        counters_per_block),
                           static_cast<double>(keys));
        EXPECT_NEAR(BlockedCountingBloomFilter::ExpectedFalsePositiveRate(
                        blocks, 1, keys, counter_bits),
                    closed_form, 1e-9 * closed_form)
            << blocks << " blocks, " << keys << " keys, " << counter_bits
            << "-bit counters";
      }
    }
  }
  EXPECT_EQ(BlockedCountingBloomFilter::ExpectedFalsePositiveRate(100, 6, 0),
            0.0);
}

// The exact in-block term E[(X / B)^k] is above Putze et al.'s
// (1 - (1 - 1/B)^(jk))^k (Jensen's inequality), and the blocked rate is
// above the unblocked one at the same size; both grow with the load.
TEST(BlockedCountingBloomFilterTest, BlockedRateIsAboveTheApproximations) {
  const uint64_t blocks = 7500;
  const uint64_t keys = 100000;
  const int k = 7;
  const double b = 128.0;
  const double lambda = static_cast<double>(keys) / blocks;
  double putze = 0.0;
  for (int j = 0; j < 200; ++j) {
    const double poisson =
        std::exp(j * std::log(lambda) - lambda - std::lgamma(j + 1.0));
    putze += poisson * std::pow(1.0 - std::pow(1.0 - 1.0 / b, j * k), k);
  }
  const double exact =
      BlockedCountingBloomFilter::ExpectedFalsePositiveRate(blocks, k, keys);
  const double unblocked = UnblockedRate(blocks * 128, k, keys);
  std::cout << "[ MODEL    ] unblocked=" << unblocked << " putze=" << putze
            << " exact=" << exact << "\n";
  EXPECT_GT(putze, 1.3 * unblocked);
  EXPECT_GT(exact, 1.02 * putze);
  EXPECT_LT(exact, 1.1 * putze);
  double previous = 0.0;
  for (uint64_t n : {1000u, 10000u, 50000u, 100000u, 200000u, 1000000u}) {
    const double rate =
        BlockedCountingBloomFilter::ExpectedFalsePositiveRate(blocks, k, n);
    EXPECT_GT(rate, previous) << n << " keys";
    previous = rate;
  }
  EXPECT_NEAR(
      BlockedCountingBloomFilter::ExpectedFalsePositiveRate(1, 3, 100000), 1.0,
      1e-12);
}

// Beyond the arguments of the contract: more than 2^55 blocks, from too
// many keys or from a rate one key cannot reach.
TEST(BlockedCountingBloomFilterTest, RefusesMoreBlocksThanItCanAddress) {
  EXPECT_THROW(Filter::ForCapacity(uint64_t{1} << 62, 0.01), std::length_error);
  EXPECT_THROW(Filter::ForCapacity(1, 1e-300), std::length_error);
  EXPECT_NO_THROW(Filter::ForCapacity(1, 0.5));
  EXPECT_NO_THROW(Filter::ForCapacity(uint64_t{1} << 40, 0.01));
  EXPECT_THROW(Filter(Filter::kMaxNumBlocks + 1, 3), std::invalid_argument);
  try {
    Filter::ForCapacity(1, 1e-300);
    FAIL() << "expected std::length_error";
  } catch (const std::length_error& error) {
    EXPECT_NE(std::string(error.what()).find("2^55 blocks"), std::string::npos)
        << error.what();
  }
}

TEST(BlockedCountingBloomFilterTest, AccessorsAndSizeAccounting) {
  BlockedCountingBloomFilter nibbles(1001, 3, 4);
  EXPECT_EQ(nibbles.NumBlocks(), 1001u);
  EXPECT_EQ(nibbles.CountersPerBlock(), 128u);
  EXPECT_EQ(nibbles.NumCounters(), 1001u * 128u);
  EXPECT_EQ(nibbles.NumHashes(), 3);
  EXPECT_EQ(nibbles.CounterBits(), 4);
  EXPECT_EQ(nibbles.MaxCounterValue(), 15u);
  EXPECT_EQ(nibbles.SizeInBytes(), 1001u * 64u);
  EXPECT_EQ(nibbles.Size(), 0u);
  EXPECT_EQ(nibbles.BitsPerKey(), 0.0);
  EXPECT_EQ(nibbles.ExpectedFalsePositiveRate(), 0.0);

  BlockedCountingBloomFilter bytes(1001, 3, 8);
  EXPECT_EQ(bytes.CounterBits(), 8);
  EXPECT_EQ(bytes.CountersPerBlock(), 64u);
  EXPECT_EQ(bytes.MaxCounterValue(), 255u);
  EXPECT_EQ(bytes.SizeInBytes(), 1001u * 64u);
  EXPECT_TRUE(bytes != nibbles);

  const std::vector<uint64_t> hashes = MakeHashes(71, 100);
  for (uint64_t hash : hashes) {
    nibbles.Add(hash);
  }
  EXPECT_EQ(nibbles.Size(), 100u);
  EXPECT_DOUBLE_EQ(nibbles.BitsPerKey(), 1001.0 * 64.0 * 8.0 / 100.0);
  EXPECT_DOUBLE_EQ(
      nibbles.ExpectedFalsePositiveRate(),
      BlockedCountingBloomFilter::ExpectedFalsePositiveRate(1001, 3, 100, 4));

  nibbles.Clear();
  EXPECT_EQ(nibbles.Size(), 0u);
  EXPECT_TRUE(nibbles == BlockedCountingBloomFilter(1001, 3, 4));
  for (uint64_t hash : hashes) {
    EXPECT_FALSE(nibbles.Contains(hash));
  }
}

}  // namespace
}  // namespace counting_bloom
