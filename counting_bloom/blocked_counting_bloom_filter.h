// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// BlockedCountingBloomFilter: a header-only counting Bloom filter over 64-bit
// key hashes whose k counters per key all lie in one 64-byte block (one
// cache line), with 4-bit (default) or 8-bit saturating counters. It owns
// its block storage, the probe scheme, the sizing search (ForCapacity) and
// the false-positive-rate model of blocked filters. It has no RocksDB
// dependency. Not part of the cuckoo filter: the example and the benchmarks
// compare the cuckoo filter with it, on the core's key hashes.
//
// ######################################################################
// ################## Counting Bloom filter theory ######################
// ######################################################################
//
// A Bloom filter answers "maybe present" for a key when all k cells it maps
// to are set. A counting Bloom filter (Fan, Cao, Almeida, Broder: "Summary
// Cache", 2000) replaces each bit by a small counter so that keys can also
// be removed: Add increments the k counters, Remove decrements them, and
// Contains checks that all k are nonzero.
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
// ############### Blocked counting Bloom filter theory #################
// ######################################################################
//
// A counting Bloom filter's k probes land on k random counters, so every
// operation touches k cache lines, and Add and Remove read-modify-write all
// of them. A blocked Bloom filter (Putze, Sanders, Singler: "Cache-, hash-
// and space-efficient Bloom filters", 2007) first picks one block of B
// counters from the key hash and then places all k probes inside it. An
// operation then touches one cache line: one memory access instead of k,
// with the k counter reads and writes all inside that line.
//
// Here a block is 64 bytes: B = 128 counters of 4 bits or B = 64 of 8 bits.
// For b blocks and n keys the block of a key is
//
//   block = FastRange64(hash, b)      (Lemire: floor(hash * b / 2^64))
//
// and its k probe offsets in [0, B) are successive 7-bit (B = 128) or 6-bit
// (B = 64) fields of Mix64(hash), the MurmurHash3 64-bit finalizer; when k
// exceeds the 9 (or 10) fields of one 64-bit word, the next word is
// Mix64(Mix64(hash) + r * golden ratio constant) for r = 1, 2, ... Mix64 is
// a bijection with full avalanche, so the offsets are independent of the
// high hash bits that choose the block. Offsets may repeat; Add then
// increments that counter twice and Remove accounts for the multiplicity.
//
// The cost of blocking is a higher false positive rate for the same space,
// because block loads vary: an absent key hashes into a block holding j
// keys, j ~ Binomial(n, 1/b), and heavily loaded blocks answer "maybe" far
// more often than lightly loaded ones save. Given j, the jk probes of the
// stored keys fill X of the B counters (X = number of occupied cells after
// jk uniform throws into B cells) and the absent key's k independent
// uniform offsets all hit nonzero counters with probability (X / B)^k. So
//
//   FPR = sum_j Binomial(j; n, 1/b) * F_k(j),
//   F_k(j) = E[(X_{jk} / B)^k],
//
// which ExpectedFalsePositiveRate() evaluates exactly: the distribution of
// X_t follows from the occupancy recursion
//   P_{t+1}(x) = P_t(x) * x / B + P_t(x - 1) * (B - x + 1) / B,
// and the binomial weights from their ratios, summed outward from the mean
// until the terms are negligible. Putze et al.'s formula is the same
// mixture with two approximations: Poisson(j; n / b) weights and
// F_k(j) ~= (1 - (1 - 1/B)^(jk))^k, i.e. (E[X] / B)^k, which by Jensen's
// inequality is below E[(X / B)^k]. At 9.6 counters per key and k = 7 it
// underestimates the rate by about 4% with B = 128 and by about 8% with
// B = 64; the exact form does not.
//
// ForCapacity therefore sizes with the exact blocked formula: it searches
// the smallest block count b for which min over k of FPR(b, k, n) meets the
// target (FPR falls as b grows, so a doubling then binary search finds it),
// and uses the k of that minimum. Compared with the unblocked optimum
// m = -n ln(p) / (ln 2)^2 this needs about 13% more space at p = 1% and
// 32% more at p = 0.1% with 4-bit counters (27% and 67% with 8-bit ones,
// whose 64-counter blocks vary more), with a slightly smaller k.
//
// Why 4 bits suffice: a counter in a block of j keys holds Binomial(jk,
// 1/B). In an unblocked filter of m counters sized optimally
// (k = (m / n) ln 2), the probability that any counter reaches 16 is at
// most m * C(nk, 16) / m^16 <= m * (e ln 2 / 16)^16, about 1.37e-15 * m;
// loaded blocks have larger counters, and at the 1% shape with 4-bit
// counters a counter here reaches 16 with probability about 3e-16
// (averaged over block loads), about a hundred times the unblocked value
// but still negligible for any real filter. 8-bit counters exist for
// filters that are deliberately overloaded or that see the same key added
// many times.
//
// Remove applies the decrements in place in probe order (so a counter
// probed twice must hold at least 2) and, if a probed counter is zero when
// its turn comes, adds back the decrements it made: the no-underflow test
// above, which leaves the block as it was.

#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuckoo/key_hash.h"

namespace counting_bloom {

using cuckoo::FastRange64;
using cuckoo::Mix64;

class BlockedCountingBloomFilter {
 public:
  // Largest supported number of probes per key.
  static constexpr int kMaxNumHashes = 30;
  // Bytes per block: one cache line.
  static constexpr size_t kBlockBytes = 64;
  // Largest supported number of blocks (2^61 bytes of storage).
  static constexpr uint64_t kMaxNumBlocks = uint64_t{1} << 55;

  // The shape of a filter: everything the constructor needs.
  struct Config {
    uint64_t num_blocks = 0;
    int num_hashes = 0;
    int counter_bits = 4;
  };

  // Counters per 64-byte block for this counter width: 128 or 64.
  static uint64_t CountersPerBlock(int counter_bits) {
    ValidateCounterBits(counter_bits);
    return kBlockBytes * 8 / static_cast<uint64_t>(counter_bits);
  }

  // Returns the smallest shape that holds `expected_keys` keys at
  // `false_positive_rate` or below by the blocked formula (see the file
  // comment): the fewest blocks for which some k in [1, kMaxNumHashes]
  // meets the target, with the k of lowest rate there. Throws
  // std::invalid_argument unless expected_keys >= 1, 0 < false_positive_rate
  // < 1 and counter_bits is 4 or 8, and std::length_error if the filter
  // would need more than kMaxNumBlocks blocks.
  static Config ForCapacity(uint64_t expected_keys, double false_positive_rate,
                            int counter_bits = 4) {
    if (expected_keys < 1) {
      throw std::invalid_argument(
          "BlockedCountingBloomFilter::ForCapacity: expected_keys must be "
          ">= 1");
    }
    if (!(false_positive_rate > 0.0 && false_positive_rate < 1.0)) {
      throw std::invalid_argument(
          "BlockedCountingBloomFilter::ForCapacity: false_positive_rate must "
          "be in (0, 1), got " +
          std::to_string(false_positive_rate));
    }
    const uint64_t counters_per_block = CountersPerBlock(counter_bits);
    std::vector<OccupancyModel> models;
    models.reserve(kMaxNumHashes);
    for (int k = 1; k <= kMaxNumHashes; ++k) {
      models.emplace_back(static_cast<int>(counters_per_block), k);
    }

    // The unblocked optimum as the first guess; the blocked rate is higher,
    // so the answer is usually just above it.
    const double ln2 = std::log(2.0);
    const double unblocked_blocks = std::ceil(
        -static_cast<double>(expected_keys) * std::log(false_positive_rate) /
        (ln2 * ln2) / static_cast<double>(counters_per_block));
    uint64_t low = 1;
    uint64_t high =
        unblocked_blocks < static_cast<double>(kMaxNumBlocks)
            ? std::max<uint64_t>(1, static_cast<uint64_t>(unblocked_blocks))
            : kMaxNumBlocks;
    while (BestShape(expected_keys, high, &models).rate > false_positive_rate) {
      if (high == kMaxNumBlocks) {
        throw std::length_error("BlockedCountingBloomFilter::ForCapacity: " +
                                std::to_string(expected_keys) +
                                " keys at false_positive_rate " +
                                std::to_string(false_positive_rate) +
                                " need more than 2^55 blocks");
      }
      low = high + 1;
      high = std::min(kMaxNumBlocks, 2 * high);
    }
    while (low < high) {
      const uint64_t middle = low + (high - low) / 2;
      if (BestShape(expected_keys, middle, &models).rate <=
          false_positive_rate) {
        high = middle;
      } else {
        low = middle + 1;
      }
    }
    Config config;
    config.num_blocks = high;
    config.num_hashes = BestShape(expected_keys, high, &models).num_hashes;
    config.counter_bits = counter_bits;
    return config;
  }

  // Expected false positive rate of a filter with `num_blocks` blocks of
  // `counter_bits`-bit counters and `num_hashes` probes holding `num_keys`
  // keys: sum_j Binomial(j; n, 1/b) * E[(X_{jk} / B)^k] (see the file
  // comment).
  static double ExpectedFalsePositiveRate(uint64_t num_blocks, int num_hashes,
                                          uint64_t num_keys,
                                          int counter_bits = 4) {
    if (num_keys == 0) {
      return 0.0;
    }
    if (num_blocks == 0 || num_hashes <= 0) {
      return 1.0;
    }
    OccupancyModel model(static_cast<int>(CountersPerBlock(counter_bits)),
                         num_hashes);
    return MixtureRate(num_keys, num_blocks, &model);
  }

  explicit BlockedCountingBloomFilter(const Config& config)
      : BlockedCountingBloomFilter(config.num_blocks, config.num_hashes,
                                   config.counter_bits) {}

  // Throws std::invalid_argument unless num_blocks is in [1, kMaxNumBlocks],
  // num_hashes in [1, kMaxNumHashes] and counter_bits is 4 or 8.
  BlockedCountingBloomFilter(uint64_t num_blocks, int num_hashes,
                             int counter_bits = 4)
      : num_blocks_(num_blocks),
        num_hashes_(num_hashes),
        counter_bits_(counter_bits) {
    if (num_blocks < 1 || num_blocks > kMaxNumBlocks) {
      throw std::invalid_argument(
          "BlockedCountingBloomFilter: num_blocks must be in [1, 2^55], got " +
          std::to_string(num_blocks));
    }
    if (num_hashes < 1 || num_hashes > kMaxNumHashes) {
      throw std::invalid_argument(
          "BlockedCountingBloomFilter: num_hashes must be in [1, " +
          std::to_string(kMaxNumHashes) + "], got " +
          std::to_string(num_hashes));
    }
    ValidateCounterBits(counter_bits);
    blocks_.assign(static_cast<size_t>(num_blocks), Block());
  }

  // Records one insertion of the key with this hash. Counters already at
  // their maximum stay there.
  void Add(uint64_t hash) {
    if (counter_bits_ == 4) {
      AddImpl<4>(hash);
    } else {
      AddImpl<8>(hash);
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
    const bool removed =
        counter_bits_ == 4 ? RemoveImpl<4>(hash) : RemoveImpl<8>(hash);
    if (removed) {
      --num_keys_;
    }
    return removed;
  }

  // True if the key with this hash may be present (all k counters nonzero);
  // false if it is certainly absent.
  bool Contains(uint64_t hash) const {
    return counter_bits_ == 4 ? ContainsImpl<4>(hash) : ContainsImpl<8>(hash);
  }

  // Contains for `count` hashes, writing results[i] for hashes[i]. Issues
  // the block loads of a group of keys before testing any of them, so that
  // their cache misses overlap.
  void ContainsBatch(const uint64_t* hashes, size_t count,
                     bool* results) const {
    constexpr size_t kGroup = 16;
    for (size_t begin = 0; begin < count; begin += kGroup) {
      const size_t end = std::min(count, begin + kGroup);
      for (size_t i = begin; i < end; ++i) {
        Prefetch(&blocks_[BlockIndex(hashes[i])]);
      }
      for (size_t i = begin; i < end; ++i) {
        results[i] = Contains(hashes[i]);
      }
    }
  }

  // The k counter indexes, each in [0, NumCounters()), that this hash
  // probes, in probe order (may repeat); counter c is offset c % B of block
  // c / B. For diagnostics and tests.
  std::vector<uint64_t> ProbePositions(uint64_t hash) const {
    std::vector<uint64_t> positions;
    positions.reserve(static_cast<size_t>(num_hashes_));
    const uint64_t base = BlockIndex(hash) * CountersPerBlock();
    if (counter_bits_ == 4) {
      ForEachOffset<4>(hash, [&](uint64_t bits) {
        positions.push_back(base + (bits & Layout<4>::kOffsetMask));
        return true;
      });
    } else {
      ForEachOffset<8>(hash, [&](uint64_t bits) {
        positions.push_back(base + (bits & Layout<8>::kOffsetMask));
        return true;
      });
    }
    return positions;
  }

  // The value of counter `index` (in [0, NumCounters())). For tests.
  uint32_t CounterValue(uint64_t index) const {
    const uint64_t per_block = CountersPerBlock();
    const Block& block = blocks_[static_cast<size_t>(index / per_block)];
    const uint64_t offset = index % per_block;
    const uint64_t per_word = 64 / static_cast<uint64_t>(counter_bits_);
    const uint64_t word = block.words[offset / per_word];
    const unsigned shift = static_cast<unsigned>(
        (offset % per_word) * static_cast<uint64_t>(counter_bits_));
    return static_cast<uint32_t>((word >> shift) & MaxCounterValue());
  }

  // Resets every counter to zero, and Size() and SaturatedCounters() too.
  void Clear() {
    std::fill(blocks_.begin(), blocks_.end(), Block());
    num_keys_ = 0;
    saturated_counters_ = 0;
  }

  uint64_t NumBlocks() const { return num_blocks_; }
  uint64_t CountersPerBlock() const { return CountersPerBlock(counter_bits_); }
  uint64_t NumCounters() const { return num_blocks_ * CountersPerBlock(); }
  int NumHashes() const { return num_hashes_; }
  int CounterBits() const { return counter_bits_; }
  uint32_t MaxCounterValue() const {
    return (uint32_t{1} << counter_bits_) - 1;
  }
  size_t SizeInBytes() const { return blocks_.size() * kBlockBytes; }

  // Net number of keys: Adds minus successful Removes.
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
    return ExpectedFalsePositiveRate(num_blocks_, num_hashes_, num_keys_,
                                     counter_bits_);
  }

  // Same shape, same counter contents and same Size().
  bool operator==(const BlockedCountingBloomFilter& other) const {
    return num_blocks_ == other.num_blocks_ &&
           num_hashes_ == other.num_hashes_ &&
           counter_bits_ == other.counter_bits_ &&
           num_keys_ == other.num_keys_ &&
           saturated_counters_ == other.saturated_counters_ &&
           std::memcmp(blocks_.data(), other.blocks_.data(), SizeInBytes()) ==
               0;
  }
  bool operator!=(const BlockedCountingBloomFilter& other) const {
    return !(*this == other);
  }

 private:
  // One cache line of counters: counter i of the block is bits
  // [(i % c) * w, (i % c + 1) * w) of words[i / c], for w-bit counters and
  // c = 64 / w counters per word.
  struct alignas(64) Block {
    uint64_t words[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  };
  static_assert(sizeof(Block) == kBlockBytes, "a block is one cache line");

  // Layout constants of one counter width.
  template <int kBits>
  struct Layout {
    static constexpr unsigned kWordShift = kBits == 4 ? 4 : 3;
    static constexpr unsigned kOffsetBits = kBits == 4 ? 7 : 6;
    static constexpr unsigned kOffsetsPerWord = 64 / kOffsetBits;
    static constexpr uint64_t kOffsetMask = (uint64_t{1} << kOffsetBits) - 1;
    static constexpr uint64_t kMax = (uint64_t{1} << kBits) - 1;
  };

  static void ValidateCounterBits(int counter_bits) {
    if (counter_bits != 4 && counter_bits != 8) {
      throw std::invalid_argument(
          "BlockedCountingBloomFilter: counter_bits must be 4 or 8, got " +
          std::to_string(counter_bits));
    }
  }

  static void Prefetch(const void* address) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(address, 0, 3);
#else
    (void)address;
#endif
  }

  size_t BlockIndex(uint64_t hash) const {
    return static_cast<size_t>(FastRange64(hash, num_blocks_));
  }

  // Calls visit(bits) for the k probe offsets of `hash`, in probe order (see
  // the file comment), stopping early if visit returns false; the offset is
  // bits & kOffsetMask. Returns the number of offsets visited before such a
  // stop, or k.
  template <int kBits, typename Visit>
  int ForEachOffset(uint64_t hash, Visit&& visit) const {
    using L = Layout<kBits>;
    const uint64_t seed = Mix64(hash);
    uint64_t bits = seed;
    int probe = 0;
    for (uint64_t refill = 1;; ++refill) {
      const int end =
          std::min(num_hashes_, probe + static_cast<int>(L::kOffsetsPerWord));
      for (; probe < end; ++probe) {
        if (!visit(bits)) {
          return probe;
        }
        bits >>= L::kOffsetBits;
      }
      if (probe == num_hashes_) {
        return probe;
      }
      bits = Mix64(seed + refill * 0x9e3779b97f4a7c15ULL);
    }
  }

  // Counter `offset` of a block is bits [ShiftOf, ShiftOf + kBits) of word
  // WordOf (8 words of 64 / kBits counters). Both take any value whose low
  // kOffsetBits bits are the offset: the probe loop passes its hash bits
  // unmasked.
  template <int kBits>
  static unsigned WordOf(uint64_t bits) {
    return static_cast<unsigned>(bits >> Layout<kBits>::kWordShift) & 7;
  }
  template <int kBits>
  static unsigned ShiftOf(uint64_t bits) {
    return static_cast<unsigned>(bits * kBits) & 63;
  }

  template <int kBits>
  bool ContainsImpl(uint64_t hash) const {
    using L = Layout<kBits>;
    const uint64_t* words = blocks_[BlockIndex(hash)].words;
    // All k probes, without a data-dependent branch: every probe reads the
    // same cache line, so stopping at the first zero counter would save only
    // a few instructions, at the price of a mispredicted branch for most
    // absent keys. value - 1 has bit 63 set exactly when the value is 0.
    uint64_t any_zero = 0;
    ForEachOffset<kBits>(hash, [&](uint64_t bits) {
      any_zero |=
          ((words[WordOf<kBits>(bits)] >> ShiftOf<kBits>(bits)) & L::kMax) - 1;
      return true;
    });
    return (any_zero >> 63) == 0;
  }

  template <int kBits>
  void AddImpl(uint64_t hash) {
    using L = Layout<kBits>;
    uint64_t* words = blocks_[BlockIndex(hash)].words;
    ForEachOffset<kBits>(hash, [&](uint64_t bits) {
      uint64_t& word = words[WordOf<kBits>(bits)];
      const unsigned shift = ShiftOf<kBits>(bits);
      const uint64_t value = (word >> shift) & L::kMax;
      if (value < L::kMax - 1) {
        word += uint64_t{1} << shift;
      } else if (value == L::kMax - 1) {
        word += uint64_t{1} << shift;
        ++saturated_counters_;
      }
      return true;
    });
  }

  // Decrements in place in probe order, skipping saturated counters. If a
  // probed counter is zero when its turn comes (the key cannot be present),
  // walks the earlier probes again and increments each counter that is not
  // saturated: exactly the ones decremented, as many times, so the block is
  // restored.
  template <int kBits>
  bool RemoveImpl(uint64_t hash) {
    using L = Layout<kBits>;
    uint64_t* words = blocks_[BlockIndex(hash)].words;
    const int done = ForEachOffset<kBits>(hash, [&](uint64_t bits) {
      uint64_t& word = words[WordOf<kBits>(bits)];
      const unsigned shift = ShiftOf<kBits>(bits);
      const uint64_t value = (word >> shift) & L::kMax;
      // value - 1 < kMax - 1: neither empty nor saturated.
      if (value - 1 < L::kMax - 1) {
        word -= uint64_t{1} << shift;
        return true;
      }
      return value != 0;
    });
    if (done == num_hashes_) {
      return true;
    }
    int undone = 0;
    ForEachOffset<kBits>(hash, [&](uint64_t bits) {
      if (undone == done) {
        return false;
      }
      ++undone;
      uint64_t& word = words[WordOf<kBits>(bits)];
      const unsigned shift = ShiftOf<kBits>(bits);
      if (((word >> shift) & L::kMax) != L::kMax) {
        word += uint64_t{1} << shift;
      }
      return true;
    });
    return false;
  }

  // F_k(j) = E[(X_{jk} / B)^k] for j = 0, 1, ...: the false positive rate of
  // a block holding j keys, computed by the occupancy recursion and
  // extended on demand. Once F reaches 1 to double precision, every larger
  // j is 1 too (F grows with j) and the recursion stops.
  class OccupancyModel {
   public:
    OccupancyModel(int counters_per_block, int num_hashes)
        : counters_(counters_per_block),
          num_hashes_(num_hashes),
          occupancy_(static_cast<size_t>(counters_per_block) + 1, 0.0),
          hit_all_(static_cast<size_t>(counters_per_block) + 1, 0.0) {
      occupancy_[0] = 1.0;
      for (int x = 0; x <= counters_; ++x) {
        hit_all_[static_cast<size_t>(x)] =
            std::pow(static_cast<double>(x) / counters_, num_hashes_);
      }
      rates_.push_back(0.0);
    }

    int NumHashes() const { return num_hashes_; }

    double Rate(uint64_t keys_in_block) {
      while (!full_ && rates_.size() <= keys_in_block) {
        Extend();
      }
      return keys_in_block < rates_.size()
                 ? rates_[static_cast<size_t>(keys_in_block)]
                 : 1.0;
    }

    // Keys per block from which Rate() is 1, or UINT64_MAX if not known yet.
    uint64_t FullFrom() const { return full_ ? rates_.size() : UINT64_MAX; }

   private:
    // Throws the k probes of one more key and appends its F.
    void Extend() {
      for (int probe = 0; probe < num_hashes_; ++probe) {
        ++throws_;
        const int top = static_cast<int>(
            std::min<uint64_t>(throws_, static_cast<uint64_t>(counters_)));
        for (int x = top; x >= 1; --x) {
          occupancy_[static_cast<size_t>(x)] =
              occupancy_[static_cast<size_t>(x)] * x / counters_ +
              occupancy_[static_cast<size_t>(x - 1)] * (counters_ - x + 1) /
                  counters_;
        }
        occupancy_[0] = 0.0;
      }
      double rate = 0.0;
      for (int x = 0; x <= counters_; ++x) {
        rate += occupancy_[static_cast<size_t>(x)] *
                hit_all_[static_cast<size_t>(x)];
      }
      if (rate >= 1.0 - 1e-15) {
        full_ = true;
        return;
      }
      rates_.push_back(rate);
    }

    int counters_;
    int num_hashes_;
    uint64_t throws_ = 0;
    bool full_ = false;
    std::vector<double> occupancy_;
    std::vector<double> hit_all_;
    std::vector<double> rates_;
  };

  // sum_j Binomial(j; num_keys, 1 / num_blocks) * model->Rate(j). The
  // weights are built from their ratios outward from the mean, unnormalised,
  // and divided by their sum at the end; each direction stops once its
  // terms are negligible in both sums.
  static double MixtureRate(uint64_t num_keys, uint64_t num_blocks,
                            OccupancyModel* model) {
    if (num_blocks == 1) {
      return model->Rate(num_keys);
    }
    const double n = static_cast<double>(num_keys);
    const double others = static_cast<double>(num_blocks - 1);
    const uint64_t mean = num_keys / num_blocks;
    const double mean_rate = model->Rate(mean);
    // 50 standard deviations (plus 50) below the mean, block loads have
    // probability far below 1e-300.
    const double spread = std::sqrt(static_cast<double>(mean)) * 50.0 + 50.0;
    if (static_cast<double>(mean) >
        static_cast<double>(model->FullFrom()) + spread) {
      // Every block holding a plausible load answers "maybe" always.
      return 1.0;
    }
    constexpr double kNegligible = 1e-17;
    double weight_sum = 1.0;
    double rate_sum = mean_rate;
    double weight = 1.0;
    for (uint64_t j = mean; j < num_keys; ++j) {
      weight *= (n - static_cast<double>(j)) /
                ((static_cast<double>(j) + 1.0) * others);
      if (weight == 0.0) {
        break;
      }
      const double term = weight * model->Rate(j + 1);
      weight_sum += weight;
      rate_sum += term;
      if (weight < kNegligible * weight_sum && term <= kNegligible * rate_sum) {
        break;
      }
    }
    weight = 1.0;
    for (uint64_t j = mean; j > 0; --j) {
      weight *=
          static_cast<double>(j) * others / (n - static_cast<double>(j) + 1.0);
      if (weight == 0.0) {
        break;
      }
      const double term = weight * model->Rate(j - 1);
      weight_sum += weight;
      rate_sum += term;
      if (weight < kNegligible * weight_sum && term <= kNegligible * rate_sum) {
        break;
      }
    }
    return rate_sum / weight_sum;
  }

  struct Shape {
    double rate;
    int num_hashes;
  };

  // The k of lowest expected rate for this block count, scanning k upward
  // until the rate stops falling (it falls, then rises, with k).
  static Shape BestShape(uint64_t num_keys, uint64_t num_blocks,
                         std::vector<OccupancyModel>* models) {
    Shape best{2.0, 1};
    for (OccupancyModel& model : *models) {
      const double rate = MixtureRate(num_keys, num_blocks, &model);
      if (!(rate < best.rate)) {
        break;
      }
      best = Shape{rate, model.NumHashes()};
    }
    return best;
  }

  uint64_t num_blocks_;
  int num_hashes_;
  int counter_bits_;
  uint64_t num_keys_ = 0;
  uint64_t saturated_counters_ = 0;
  std::vector<Block> blocks_;
};

}  // namespace counting_bloom
