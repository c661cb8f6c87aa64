// Tests for cuckoo::CountingBloomFilter: no false negatives, measured false
// positive rate against the closed form, safe removal (no underflow, sticky
// saturation), packed counters against a reference model, and sizing.

#include "cuckoo/counting_bloom_filter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <set>
#include <stdexcept>
#include <vector>

#include "test_util.h"

namespace cuckoo {
namespace {

using SplitMix64 = testing::HashStream;

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

double MeasureFalsePositiveRate(const CountingBloomFilter& filter,
                                uint64_t num_queries) {
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

TEST(CountingBloomFilterTest, NoFalseNegativesAcrossSeedsAndCounterWidths) {
  constexpr size_t kNumKeys = 100000;
  for (int counter_bits : {4, 8}) {
    for (uint64_t seed : {1, 2, 3}) {
      CountingBloomFilter filter(
          CountingBloomFilter::ForCapacity(kNumKeys, 0.01, counter_bits));
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

void ExpectFalsePositiveRateMatchesTheory(uint64_t num_keys, double target_rate,
                                          int counter_bits,
                                          uint64_t num_queries) {
  CountingBloomFilter filter(
      CountingBloomFilter::ForCapacity(num_keys, target_rate, counter_bits));
  for (uint64_t hash : MakeHashes(7, num_keys)) {
    filter.Add(hash);
  }
  const double expected = filter.ExpectedFalsePositiveRate();
  const double measured = MeasureFalsePositiveRate(filter, num_queries);
  std::cout << "[ FPR      ] n=" << num_keys << " target=" << target_rate
            << " counter_bits=" << counter_bits << " m=" << filter.NumCounters()
            << " k=" << filter.NumHashes()
            << " bits/key=" << filter.BitsPerKey() << " expected=" << expected
            << " measured=" << measured << " over " << num_queries
            << " absent keys\n";
  EXPECT_NEAR(measured, expected, 0.2 * expected);
  EXPECT_NEAR(expected, target_rate, 0.1 * target_rate);
  EXPECT_EQ(filter.SaturatedCounters(), 0u);
}

TEST(CountingBloomFilterTest, FalsePositiveRateAtOnePercentWith4BitCounters) {
  ExpectFalsePositiveRateMatchesTheory(100000, 0.01, 4, 1000000);
}

TEST(CountingBloomFilterTest,
     FalsePositiveRateAtOneTenthPercentWith8BitCounters) {
  ExpectFalsePositiveRateMatchesTheory(100000, 0.001, 8, 2000000);
}

TEST(CountingBloomFilterTest, RemoveOfAbsentKeyReturnsFalseAndChangesNothing) {
  for (int counter_bits : {4, 8}) {
    CountingBloomFilter filter(
        CountingBloomFilter::ForCapacity(10000, 0.01, counter_bits));
    EXPECT_FALSE(filter.Remove(12345)) << "empty filter";

    const std::vector<uint64_t> stored = MakeHashes(11, 10000);
    for (uint64_t hash : stored) {
      filter.Add(hash);
    }
    const CountingBloomFilter before = filter;

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

TEST(CountingBloomFilterTest, RemovingHalfKeepsTheRestAndDropsTheRemoved) {
  constexpr size_t kNumKeys = 100000;
  for (int counter_bits : {4, 8}) {
    CountingBloomFilter filter(
        CountingBloomFilter::ForCapacity(kNumKeys, 0.01, counter_bits));
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

TEST(CountingBloomFilterTest, RemoveAllRestoresTheEmptyFilter) {
  for (int counter_bits : {4, 8}) {
    CountingBloomFilter filter(
        CountingBloomFilter::ForCapacity(5000, 0.01, counter_bits));
    const CountingBloomFilter empty = filter;
    const std::vector<uint64_t> hashes = MakeHashes(31, 5000);
    for (uint64_t hash : hashes) {
      filter.Add(hash);
    }
    for (uint64_t hash : hashes) {
      ASSERT_TRUE(filter.Remove(hash));
    }
    EXPECT_TRUE(filter == empty) << "counter_bits=" << counter_bits;
  }
}

// Finds a hash whose probe positions in `filter` are all distinct; false if
// none turns up within a generous number of tries.
bool FindHashWithDistinctPositions(const CountingBloomFilter& filter,
                                   uint64_t* hash) {
  SplitMix64 generator(41);
  for (int attempt = 0; attempt < 10000; ++attempt) {
    *hash = generator.Next();
    if (HasDistinctPositions(filter.ProbePositions(*hash))) {
      return true;
    }
  }
  return false;
}

TEST(CountingBloomFilterTest, FourBitCountersSaturateAndStaySaturated) {
  CountingBloomFilter filter(CountingBloomFilter::ForCapacity(1000, 0.01, 4));
  const std::vector<uint64_t> others = MakeHashes(43, 500);
  for (uint64_t hash : others) {
    filter.Add(hash);
  }
  ASSERT_EQ(filter.SaturatedCounters(), 0u);

  uint64_t hash = 0;
  ASSERT_TRUE(FindHashWithDistinctPositions(filter, &hash));
  const std::vector<uint64_t> positions = filter.ProbePositions(hash);
  const uint64_t expected_saturated = positions.size();
  ASSERT_EQ(expected_saturated, static_cast<uint64_t>(filter.NumHashes()));

  // A 4-bit counter saturates at 15, so 20 adds saturate all k counters
  // whatever the other keys contributed to them.
  for (int i = 0; i < 20; ++i) {
    filter.Add(hash);
  }
  EXPECT_EQ(filter.SaturatedCounters(), expected_saturated);
  EXPECT_EQ(filter.Size(), others.size() + 20);

  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(filter.Remove(hash)) << "remove " << i;
  }
  EXPECT_TRUE(filter.Contains(hash)) << "saturated counters must be sticky";
  EXPECT_EQ(filter.SaturatedCounters(), expected_saturated);
  EXPECT_EQ(filter.Size(), others.size());

  for (uint64_t other : others) {
    ASSERT_TRUE(filter.Contains(other));
  }
  for (uint64_t other : others) {
    ASSERT_TRUE(filter.Remove(other));
  }
  EXPECT_EQ(filter.Size(), 0u);
  EXPECT_FALSE(filter.Remove(hash)) << "an empty filter holds no key";
  EXPECT_EQ(filter.Size(), 0u);

  // Only the k saturated counters can be nonzero now: had any counter
  // underflowed (0 - 1 wraps to 15 in a nibble), it would be nonzero too
  // and Contains would see it.
  std::set<uint64_t> saturated_positions(positions.begin(), positions.end());
  SplitMix64 absent_keys(kAbsentKeySeed);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t absent = absent_keys.Next();
    bool all_probes_saturated = true;
    for (uint64_t position : filter.ProbePositions(absent)) {
      all_probes_saturated =
          all_probes_saturated && saturated_positions.count(position) > 0;
    }
    ASSERT_EQ(filter.Contains(absent), all_probes_saturated);
  }

  filter.Clear();
  EXPECT_EQ(filter.SaturatedCounters(), 0u);
  EXPECT_FALSE(filter.Contains(hash));
}

TEST(CountingBloomFilterTest, FourBitCountersSaturateExactlyAtFifteen) {
  CountingBloomFilter filter(1000, 5, 4);
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

TEST(CountingBloomFilterTest, EightBitCountersDoNotSaturateAtTwenty) {
  CountingBloomFilter filter(CountingBloomFilter::ForCapacity(1000, 0.01, 8));
  const CountingBloomFilter empty = filter;
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

TEST(CountingBloomFilterTest, PackedCountersMatchReferenceModel) {
  for (int counter_bits : {4, 8}) {
    // Small and odd, so counters share bytes, probes collide and both
    // saturation and refused removals happen often.
    CountingBloomFilter filter(61, 3, counter_bits);
    ReferenceCounters reference(filter.NumCounters(), counter_bits);
    const std::vector<uint64_t> pool = MakeHashes(51, 40);
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

TEST(CountingBloomFilterTest, RemoveRefusesWhenRepeatedProbeCounterIsTooLow) {
  // With 16 counters and 4 probes, some key probes one counter twice. Build
  // a state where that counter is exactly 1 and the key's other counters are
  // nonzero: Contains is true, yet the key was never added, and decrementing
  // twice would underflow.
  CountingBloomFilter filter(16, 4, 4);
  SplitMix64 generator(61);
  uint64_t key = 0;
  uint64_t repeated_position = 0;
  std::vector<uint64_t> key_positions;
  bool found = false;
  for (int attempt = 0; attempt < 10000 && !found; ++attempt) {
    key = generator.Next();
    key_positions = filter.ProbePositions(key);
    for (size_t i = 0; i < key_positions.size() && !found; ++i) {
      for (size_t j = i + 1; j < key_positions.size() && !found; ++j) {
        if (key_positions[i] == key_positions[j]) {
          repeated_position = key_positions[i];
          found = true;
        }
      }
    }
  }

  ASSERT_TRUE(found) << "no key with a repeated probe position";

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
  const CountingBloomFilter before = filter;
  EXPECT_FALSE(filter.Remove(key));
  EXPECT_TRUE(filter == before);

  // Once the key is actually added, its repeated counter holds 3 and the
  // removal goes through, restoring the previous state exactly.
  filter.Add(key);
  EXPECT_TRUE(filter.Remove(key));
  EXPECT_TRUE(filter == before);
}

// A filter shaped by ForCapacity, filled with that many keys, meets its
// target: the measured rate is at most the target (with 4 standard errors of
// slack) and not far below it, which a wasteful shape would be.
TEST(CountingBloomFilterTest, ForCapacityMeetsItsTargetWithoutWaste) {
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
      CountingBloomFilter filter(
          CountingBloomFilter::ForCapacity(c.keys, c.rate, counter_bits));
      SplitMix64 stream(c.keys + counter_bits);
      for (uint64_t i = 0; i < c.keys; ++i) filter.Add(stream.Next());
      const int probes = 400000;
      int positives = 0;
      for (int i = 0; i < probes; ++i)
        positives += filter.Contains(stream.Next());
      const double measured = static_cast<double>(positives) / probes;
      const double slack = 4.0 * std::sqrt(c.rate * (1.0 - c.rate) / probes);
      EXPECT_LE(measured, c.rate * 1.05 + slack);
      EXPECT_GE(measured, c.rate * 0.6 - slack);
    }
  }

  const CountingBloomFilter::Config one_percent =
      CountingBloomFilter::ForCapacity(100000, 0.01);
  EXPECT_EQ(one_percent.num_counters, 958506u);
  EXPECT_EQ(one_percent.num_hashes, 7);
  EXPECT_EQ(one_percent.counter_bits, 4);
}

TEST(CountingBloomFilterTest, ForCapacityClampsNumHashes) {
  // m/n * ln 2 = 0.15 rounds to 0, clamped up to 1.
  EXPECT_EQ(CountingBloomFilter::ForCapacity(1000, 0.9).num_hashes, 1);
  // m/n * ln 2 = 99.8, clamped down to 30.
  EXPECT_EQ(CountingBloomFilter::ForCapacity(1, 1e-30).num_hashes,
            CountingBloomFilter::kMaxNumHashes);
  EXPECT_EQ(CountingBloomFilter::kMaxNumHashes, 30);
}

TEST(CountingBloomFilterTest, InvalidArgumentsThrow) {
  using Filter = CountingBloomFilter;
  EXPECT_THROW(Filter::ForCapacity(0, 0.01), std::invalid_argument);
  EXPECT_THROW(Filter::ForCapacity(100, 0.0), std::invalid_argument);
  EXPECT_THROW(Filter::ForCapacity(100, 1.0), std::invalid_argument);
  EXPECT_THROW(Filter::ForCapacity(100, -0.5), std::invalid_argument);
  EXPECT_THROW(Filter::ForCapacity(100, 1.5), std::invalid_argument);
  EXPECT_THROW(Filter::ForCapacity(100, std::nan("")), std::invalid_argument);
  EXPECT_THROW(Filter::ForCapacity(100, 0.01, 5), std::invalid_argument);
  EXPECT_THROW(Filter::ForCapacity(100, 0.01, 16), std::invalid_argument);
  EXPECT_THROW(Filter::ForCapacity(uint64_t{1} << 62, 1e-300),
               std::invalid_argument);

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

TEST(CountingBloomFilterTest, AccessorsAndSizeAccounting) {
  CountingBloomFilter nibbles(1001, 3, 4);
  EXPECT_EQ(nibbles.NumCounters(), 1001u);
  EXPECT_EQ(nibbles.NumHashes(), 3);
  EXPECT_EQ(nibbles.CounterBits(), 4);
  EXPECT_EQ(nibbles.SizeInBytes(), 501u);
  EXPECT_EQ(nibbles.Size(), 0u);
  EXPECT_EQ(nibbles.BitsPerKey(), 0.0);
  EXPECT_EQ(nibbles.ExpectedFalsePositiveRate(), 0.0);

  CountingBloomFilter bytes(1001, 3, 8);
  EXPECT_EQ(bytes.CounterBits(), 8);
  EXPECT_EQ(bytes.SizeInBytes(), 1001u);

  const std::vector<uint64_t> hashes = MakeHashes(71, 100);
  for (uint64_t hash : hashes) {
    nibbles.Add(hash);
  }
  EXPECT_EQ(nibbles.Size(), 100u);
  EXPECT_DOUBLE_EQ(nibbles.BitsPerKey(), 501.0 * 8.0 / 100.0);
  EXPECT_DOUBLE_EQ(
      nibbles.ExpectedFalsePositiveRate(),
      CountingBloomFilter::ExpectedFalsePositiveRate(1001, 3, 100));

  for (uint64_t hash : hashes) {
    for (uint64_t position : nibbles.ProbePositions(hash)) {
      ASSERT_LT(position, nibbles.NumCounters());
    }
  }

  nibbles.Clear();
  EXPECT_EQ(nibbles.Size(), 0u);
  EXPECT_TRUE(nibbles == CountingBloomFilter(1001, 3, 4));
  for (uint64_t hash : hashes) {
    EXPECT_FALSE(nibbles.Contains(hash));
  }
}

// The expected rate is the one a filter of that shape and load measures.
TEST(CountingBloomFilterTest, ExpectedFalsePositiveRateIsTheMeasuredOne) {
  for (int num_hashes : {1, 3, 7}) {
    for (uint64_t keys : {2000u, 10000u, 25000u}) {
      SCOPED_TRACE(std::to_string(num_hashes) + " hashes, " +
                   std::to_string(keys) + " keys");
      CountingBloomFilter filter(100000, num_hashes, 4);
      SplitMix64 stream(keys * 10 + num_hashes);
      for (uint64_t i = 0; i < keys; ++i) filter.Add(stream.Next());
      const double expected = filter.ExpectedFalsePositiveRate();
      EXPECT_EQ(expected, CountingBloomFilter::ExpectedFalsePositiveRate(
                              100000, num_hashes, keys));
      const int probes = 300000;
      int positives = 0;
      for (int i = 0; i < probes; ++i)
        positives += filter.Contains(stream.Next());
      const double measured = static_cast<double>(positives) / probes;
      const double slack =
          4.0 * std::sqrt(expected * (1.0 - expected) / probes);
      EXPECT_NEAR(measured, expected, expected * 0.05 + slack);
    }
  }
  EXPECT_EQ(CountingBloomFilter::ExpectedFalsePositiveRate(1000, 3, 0), 0.0);
  EXPECT_LT(CountingBloomFilter::ExpectedFalsePositiveRate(1000, 3, 10),
            CountingBloomFilter::ExpectedFalsePositiveRate(1000, 3, 100));
}

}  // namespace
}  // namespace cuckoo
