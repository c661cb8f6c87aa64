// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// CountingBloomFilter: a header-only counting Bloom filter over 64-bit key
// hashes, with packed 4-bit (default) or 8-bit saturating counters. It owns
// its counter storage, the double-hashing probe scheme, the sizing math
// (ForCapacity) and the false-positive-rate estimate. It has no RocksDB
// dependency.
//
// ######################################################################
// ################## Counting Bloom filter theory ######################
// ######################################################################
//
// A Bloom filter with m cells and k hash functions answers "maybe present"
// for a key when all k cells it maps to are set. A counting Bloom filter
// (Fan, Cao, Almeida, Broder: "Summary Cache", 2000) replaces each bit by a
// small counter so that keys can also be removed: Add increments the k
// counters, Remove decrements them, and Contains checks that all k are
// nonzero. After n insertions the false positive rate is, as for a plain
// Bloom filter,
//
//   FPR ~= (1 - exp(-k n / m))^k,
//
// minimised by k = (m / n) ln 2, which gives m = -n ln(p) / (ln 2)^2 cells
// for a target rate p (about 9.6 cells per key at p = 1%).
//
// Why 4 bits suffice: a counter's value after n insertions is Binomial(nk,
// 1/m). The probability that any of the m counters reaches 16 is at most
//
//   m * C(nk, 16) / m^16 <= m * (e n k / (16 m))^16,
//
// and with the optimal k = (m / n) ln 2 this is m * (e ln 2 / 16)^16, about
// 1.37e-15 * m. So 4-bit counters (maximum 15) practically never overflow in
// a filter sized for its load; 8-bit counters exist for filters that are
// deliberately overloaded or that see the same key added many times.
//
// Why saturation must be sticky: once a counter reaches its maximum value
// we no longer know how many insertions it stands for, because further
// increments are dropped. If Remove decremented it anyway, it could reach
// zero while keys that map to it are still present, turning those keys into
// false negatives, which a Bloom filter must never produce. So a saturated
// counter stays at its maximum until Clear(); the only cost is a slightly
// higher false positive rate. SaturatedCounters() reports how many counters
// are stuck this way, as a health signal for the filter.
//
// Remove never underflows: if any of a key's counters is too small for the
// key to have been added (zero, or smaller than the number of the key's
// probes that land on it), the key cannot be present, and Remove changes
// nothing and returns false. Removing a key that was never added but is a
// false positive (all its counters nonzero) cannot be detected by any
// counting Bloom filter; callers must only remove keys they added.
//
// ######################################################################
// ######################## Probe positions #############################
// ######################################################################
//
// The k probe positions come from the one 64-bit key hash by enhanced double
// hashing (Kirsch & Mitzenmacher 2006; Dillinger & Manolios 2004):
//
//   h1 = low 32 bits of hash
//   h2 = (high 32 bits of hash) | 1     (odd, so never the degenerate 0)
//   g_i = h1 + i * h2 + (i^3 - i) / 6   for i in [0, k), in 64-bit arithmetic
//   position_i = FastRange(Mix64(g_i), m)
//
// Since h1, h2 < 2^32 and i < 30, g_i never wraps and is strictly increasing
// in i, so the k values g_i are distinct. Mix64 (the MurmurHash3 64-bit
// finalizer, a bijection) spreads each g_i over all 64 bits, and FastRange
// maps a 64-bit value to [0, m) with one 64x64->128 multiply (Lemire's
// "fast alternative to the modulo reduction"), which works for any m, not
// only powers of two. Two probes of one key can still land on the same
// counter (probability about k^2 / (2m)); Add then increments it twice and
// Remove accounts for that multiplicity.

#ifndef CUCKOO_COUNTING_BLOOM_FILTER_H_
#define CUCKOO_COUNTING_BLOOM_FILTER_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuckoo/key_hash.h"

namespace cuckoo {

class CountingBloomFilter {
 public:
  // Largest supported number of probes per key.
  static constexpr int kMaxNumHashes = 30;

  // The shape of a filter: everything the constructor needs.
  struct Config {
    uint64_t num_counters = 0;
    int num_hashes = 0;
    int counter_bits = 4;
  };

  // Returns the optimal shape for `expected_keys` keys at
  // `false_positive_rate`: m = ceil(-n ln p / (ln 2)^2) counters and
  // k = round(m / n * ln 2) probes, clamped to [1, kMaxNumHashes]. Throws
  // std::invalid_argument unless expected_keys >= 1, 0 < false_positive_rate
  // < 1 and counter_bits is 4 or 8.
  static Config ForCapacity(uint64_t expected_keys, double false_positive_rate,
                            int counter_bits = 4) {
    if (expected_keys < 1) {
      throw std::invalid_argument(
          "CountingBloomFilter::ForCapacity: expected_keys must be >= 1");
    }
    if (!(false_positive_rate > 0.0 && false_positive_rate < 1.0)) {
      throw std::invalid_argument(
          "CountingBloomFilter::ForCapacity: false_positive_rate must be in "
          "(0, 1), got " +
          std::to_string(false_positive_rate));
    }
    ValidateCounterBits(counter_bits);
    const double ln2 = std::log(2.0);
    const double keys = static_cast<double>(expected_keys);
    const double optimal_counters =
        std::ceil(-keys * std::log(false_positive_rate) / (ln2 * ln2));
    if (!(optimal_counters < kMaxNumCountersAsDouble)) {
      throw std::invalid_argument(
          "CountingBloomFilter::ForCapacity: the filter for this capacity and "
          "false_positive_rate would need more than 2^62 counters");
    }
    Config config;
    config.num_counters =
        std::max<uint64_t>(1, static_cast<uint64_t>(optimal_counters));
    const double optimal_hashes =
        std::round(static_cast<double>(config.num_counters) / keys * ln2);
    config.num_hashes = static_cast<int>(
        std::min<double>(kMaxNumHashes, std::max<double>(1.0, optimal_hashes)));
    config.counter_bits = counter_bits;
    return config;
  }

  // Expected false positive rate (1 - exp(-k n / m))^k of a filter with
  // `num_counters` counters and `num_hashes` probes holding `num_keys` keys.
  static double ExpectedFalsePositiveRate(uint64_t num_counters, int num_hashes,
                                          uint64_t num_keys) {
    if (num_keys == 0) {
      return 0.0;
    }
    if (num_counters == 0 || num_hashes <= 0) {
      return 1.0;
    }
    const double k = static_cast<double>(num_hashes);
    const double fill_probability =
        1.0 - std::exp(-k * static_cast<double>(num_keys) /
                       static_cast<double>(num_counters));
    return std::pow(fill_probability, k);
  }

  explicit CountingBloomFilter(const Config& config)
      : CountingBloomFilter(config.num_counters, config.num_hashes,
                            config.counter_bits) {}

  // Throws std::invalid_argument unless num_counters is in [1, 2^62],
  // num_hashes in [1, kMaxNumHashes] and counter_bits is 4 or 8.
  CountingBloomFilter(uint64_t num_counters, int num_hashes,
                      int counter_bits = 4)
      : num_counters_(num_counters),
        num_hashes_(num_hashes),
        counter_bits_(counter_bits),
        max_counter_value_(0) {
    if (num_counters < 1 || num_counters > kMaxNumCounters) {
      throw std::invalid_argument(
          "CountingBloomFilter: num_counters must be in [1, 2^62], got " +
          std::to_string(num_counters));
    }
    if (num_hashes < 1 || num_hashes > kMaxNumHashes) {
      throw std::invalid_argument(
          "CountingBloomFilter: num_hashes must be in [1, " +
          std::to_string(kMaxNumHashes) + "], got " +
          std::to_string(num_hashes));
    }
    ValidateCounterBits(counter_bits);
    max_counter_value_ = (uint32_t{1} << counter_bits) - 1;
    const uint64_t num_bytes =
        counter_bits == 8 ? num_counters : num_counters / 2 + num_counters % 2;
    counters_.assign(static_cast<size_t>(num_bytes), 0);
  }

  // Records one insertion of the key with this hash. Counters already at
  // their maximum stay there.
  void Add(uint64_t hash) {
    std::array<uint64_t, kMaxNumHashes> positions;
    ComputeProbePositions(hash, positions.data());
    for (int i = 0; i < num_hashes_; ++i) {
      const uint32_t value = GetCounter(positions[i]);
      if (value < max_counter_value_) {
        SetCounter(positions[i], value + 1);
        if (value + 1 == max_counter_value_) {
          ++saturated_counters_;
        }
      }
    }
    ++num_keys_;
  }

  // Removes one insertion of the key with this hash. Returns false and
  // changes nothing when the key cannot be present: the filter is empty, or
  // one of its counters is zero (more precisely: not saturated and smaller
  // than the number of the key's probes on it). Otherwise decrements every
  // probed counter that is not saturated and returns true.
  bool Remove(uint64_t hash) {
    if (num_keys_ == 0) {
      return false;
    }
    std::array<uint64_t, kMaxNumHashes> positions;
    ComputeProbePositions(hash, positions.data());
    std::sort(positions.begin(), positions.begin() + num_hashes_);
    for (int run_begin = 0; run_begin < num_hashes_;) {
      int run_end = run_begin + 1;
      while (run_end < num_hashes_ &&
             positions[run_end] == positions[run_begin]) {
        ++run_end;
      }
      const uint32_t value = GetCounter(positions[run_begin]);
      const uint32_t probes_on_counter =
          static_cast<uint32_t>(run_end - run_begin);
      if (value != max_counter_value_ && value < probes_on_counter) {
        return false;
      }
      run_begin = run_end;
    }
    for (int i = 0; i < num_hashes_; ++i) {
      const uint32_t value = GetCounter(positions[i]);
      if (value != max_counter_value_) {
        SetCounter(positions[i], value - 1);
      }
    }
    --num_keys_;
    return true;
  }

  // True if the key with this hash may be present (all k counters nonzero);
  // false if it is certainly absent.
  bool Contains(uint64_t hash) const {
    std::array<uint64_t, kMaxNumHashes> positions;
    ComputeProbePositions(hash, positions.data());
    for (int i = 0; i < num_hashes_; ++i) {
      if (GetCounter(positions[i]) == 0) {
        return false;
      }
    }
    return true;
  }

  // The k counter indexes, each in [0, NumCounters()), that this hash
  // probes, in probe order (may repeat). For diagnostics and tests.
  std::vector<uint64_t> ProbePositions(uint64_t hash) const {
    std::array<uint64_t, kMaxNumHashes> positions;
    ComputeProbePositions(hash, positions.data());
    return std::vector<uint64_t>(positions.begin(),
                                 positions.begin() + num_hashes_);
  }

  // Resets every counter to zero, and Size() and SaturatedCounters() too.
  void Clear() {
    std::fill(counters_.begin(), counters_.end(), 0);
    num_keys_ = 0;
    saturated_counters_ = 0;
  }

  // The value of counter `index` (in [0, NumCounters())). For tests.
  uint32_t CounterValue(uint64_t index) const { return GetCounter(index); }

  uint64_t NumCounters() const { return num_counters_; }
  int NumHashes() const { return num_hashes_; }
  int CounterBits() const { return counter_bits_; }
  uint32_t MaxCounterValue() const { return max_counter_value_; }
  size_t SizeInBytes() const { return counters_.size(); }

  // Net number of keys: successful Adds minus successful Removes.
  uint64_t Size() const { return num_keys_; }

  // Number of counters stuck at their maximum value (sticky until Clear).
  uint64_t SaturatedCounters() const { return saturated_counters_; }

  // Storage bits per key currently held; 0 if the filter is empty.
  double BitsPerKey() const {
    if (num_keys_ == 0) {
      return 0.0;
    }
    return static_cast<double>(SizeInBytes()) * 8.0 /
           static_cast<double>(num_keys_);
  }

  // Expected false positive rate at the current Size().
  double ExpectedFalsePositiveRate() const {
    return ExpectedFalsePositiveRate(num_counters_, num_hashes_, num_keys_);
  }

  // Same shape, same counter contents and same Size().
  bool operator==(const CountingBloomFilter& other) const {
    return num_counters_ == other.num_counters_ &&
           num_hashes_ == other.num_hashes_ &&
           counter_bits_ == other.counter_bits_ &&
           num_keys_ == other.num_keys_ &&
           saturated_counters_ == other.saturated_counters_ &&
           counters_ == other.counters_;
  }
  bool operator!=(const CountingBloomFilter& other) const {
    return !(*this == other);
  }

 private:
  static constexpr uint64_t kMaxNumCounters = uint64_t{1} << 62;
  static constexpr double kMaxNumCountersAsDouble = 4611686018427387904.0;

  static void ValidateCounterBits(int counter_bits) {
    if (counter_bits != 4 && counter_bits != 8) {
      throw std::invalid_argument(
          "CountingBloomFilter: counter_bits must be 4 or 8, got " +
          std::to_string(counter_bits));
    }
  }

  // Writes the NumHashes() probe positions of `hash` (see the file comment).
  void ComputeProbePositions(uint64_t hash, uint64_t* positions) const {
    const uint64_t h1 = hash & 0xffffffffULL;
    const uint64_t h2 = (hash >> 32) | 1;
    for (int i = 0; i < num_hashes_; ++i) {
      const uint64_t probe = static_cast<uint64_t>(i);
      const uint64_t cubic_offset = (probe * probe * probe - probe) / 6;
      positions[i] =
          FastRange64(Mix64(h1 + probe * h2 + cubic_offset), num_counters_);
    }
  }

  uint32_t GetCounter(uint64_t index) const {
    if (counter_bits_ == 8) {
      return counters_[static_cast<size_t>(index)];
    }
    const uint8_t byte = counters_[static_cast<size_t>(index >> 1)];
    return (index & 1) ? static_cast<uint32_t>(byte >> 4)
                       : static_cast<uint32_t>(byte & 0x0f);
  }

  // `value` must be <= max_counter_value_.
  void SetCounter(uint64_t index, uint32_t value) {
    if (counter_bits_ == 8) {
      counters_[static_cast<size_t>(index)] = static_cast<uint8_t>(value);
      return;
    }
    uint8_t& byte = counters_[static_cast<size_t>(index >> 1)];
    if (index & 1) {
      byte = static_cast<uint8_t>((byte & 0x0f) | (value << 4));
    } else {
      byte = static_cast<uint8_t>((byte & 0xf0) | value);
    }
  }

  uint64_t num_counters_;
  int num_hashes_;
  int counter_bits_;
  uint32_t max_counter_value_;
  uint64_t num_keys_ = 0;
  uint64_t saturated_counters_ = 0;
  std::vector<uint8_t> counters_;
};

}  // namespace cuckoo

#endif  // CUCKOO_COUNTING_BLOOM_FILTER_H_
