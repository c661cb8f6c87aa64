// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Per-level budgets for the filters of an LSM tree: how many bits per key
// each level's filters get so that, at the same total memory, the sum of
// the levels' false-positive rates is smallest ("Monkey"). The arithmetic
// of level_budgets=monkey (level_budgets.h, which applies it to the levels
// RocksDB writes), on the core's sizing; no RocksDB types.
//
// Theory
// ------
// A leveled LSM tree with L levels whose sizes grow by a ratio T holds, at
// distance d from the bottom level (d = 0 is the bottom), the share
//     w_d = T^-d / sum_{j<L} T^-j
// of its keys. A lookup of an absent key checks one filter per level, and
// each false positive costs a storage read, so the reads it wastes are
//     R = sum_d p_d,
// where p_d is the false-positive rate of level d's filters, while the
// filters' memory is N sum_d w_d bits(p_d) for N keys. Minimising R at the
// memory of B bits per key on average, with a Lagrange multiplier, gives
//     1 = lambda w_d (-bits'(p_d))  for every level.
// For a filter whose bits per key grow as k log(1/p) + c (Bloom: k = 1/ln^2 2;
// a cuckoo filter at load alpha with b-slot buckets: FPR ~ 2 b alpha / 2^f
// and f / alpha bits per key, so k = 1 / (alpha ln 2) and c = log2(2b) /
// alpha), -bits'(p) = k / p, so
//     p_d = lambda k w_d:  each level's rate is proportional to its share
// (Dayan, Athanassoulis and Idreos, "Monkey: Optimal Navigable Key-Value
// Store", SIGMOD 2017). Level d then holds a rate T^d below the bottom's and
// needs about d log2(T) / alpha bits per key more; the bottom, which holds
// a share (T - 1) / T of the keys, gives up about
//     sum_d w_d d log2(T) / alpha  ~  log2(T) / ((T - 1) alpha)
// bits per key (0.39 at T = 10, alpha = 0.95) to pay for them. The sum of
// the rates is then about p_0 T / (T - 1) whatever the depth, against
// L p(B) for uniform budgets: at T = 10, 10 bits per key and 5 levels,
// about a third of uniform's.
//
// Filters hold entries, not keys: with a prefix extractor, each key's
// prefix too, once per run of keys that share it. An upper level's few keys
// share fewer prefixes, so its filters hold more entries per key (up to two
// against the bottom's 1 + 1/k, for k keys a prefix). Memory is spent per
// entry, so the shares above are shares of the entries,
//     w_d = T^-d e_d / sum_j T^-j e_j
// for e_d entries per key at level d, and the budgets are bits per entry
// (ChooseBudgetsForShares); ChooseLevelBudgets is the case of equal e_d.
// With the keys' shares instead, the upper levels' extra bits would be
// spent on more entries than planned, and the total would exceed B.
//
// The memory stays on budget exactly: a budget's load is continuous
// (ChooseForBitsPerKey fills any real number of bits per key), so the
// budgets are solved for sum_d w_d b_d = B, not rounded.
//
// The real curve has steps
// ------------------------
// Cuckoo filters' real FPR curve is a lower envelope over layouts
// (fingerprint widths, bucket sizes), continuous and monotone but not
// convex: each layout's FPR falls linearly with its load until the load
// reaches what its construction sustains, at s / alpha_max bits per key (a
// "kink"); past it, more bits lower the load of the same layout, which
// gains little, until the next layout's kink. The proportional rule
// applied to that curve (BitsPerKeyForFalsePositiveRate) is therefore a
// near-optimum, not the optimum: a bottom level a fraction of a bit past a
// kink pays, in the level that holds most of the memory, for bits that buy
// almost nothing. So the bottom level's budget is also tried at each kink
// within a few bits of the proportional one, with the levels above sharing
// the rest by the proportional rule, and the split with the smallest sum of
// rates wins. At 16 bits per key and 3 levels this takes the sum from 0.68
// to 0.51 of uniform budgets', and from 0.41 to 0.26 at 14 bits and 5
// levels; at 10 bits, where the proportional bottom sits near a kink, it
// changes little. Searching the upper levels' kinks too gains under 1%
// more. Every candidate's sum of rates is computed, not assumed
// (LevelBudgets), and where no split beats uniform budgets (a shallow LSM
// at a large budget, where a level's few extra bits buy no wider
// fingerprint), every level gets the average.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuckoo/sizing.h"

namespace rocksdb_cuckoo {
namespace monkey {

using cuckoo::BucketLayout;
using cuckoo::ChooseForBitsPerKey;
using cuckoo::Construction;
using cuckoo::MaxLoadFactor;

// The fewest table bits per key whose best layout reaches `fpr`
// (0 < fpr < 1): over every layout, the bits per slot over the load at which
// its expected FPR is `fpr`, at most the load its construction sustains.
// ChooseForBitsPerKey of the result has an expected FPR of at most `fpr`.
inline double BitsPerKeyForFalsePositiveRate(
    double fpr, Construction construction = Construction::kStatic) {
  if (!(fpr > 0.0 && fpr < 1.0)) {
    throw std::invalid_argument("cuckoo filter: false-positive rate " +
                                std::to_string(fpr) + " is outside (0, 1)");
  }
  double best = std::numeric_limits<double>::infinity();
  cuckoo::internal::ForEachLayout([&](const BucketLayout& layout) {
    // From 1 - (1 - 1/v)^(2 b load) = fpr, v = 2^f - 1.
    const double values = std::ldexp(1.0, layout.fingerprint_bits) - 1.0;
    const double load = std::log1p(-fpr) /
                        (2.0 * layout.bucket_size * std::log1p(-1.0 / values));
    const double sustained =
        std::min(load, MaxLoadFactor(layout.bucket_size, construction));
    best = std::min(best, layout.BitsPerSlot() / sustained);
  });
  // A hair more, so that the load ChooseForBitsPerKey computes back from it
  // does not round above the one that reaches the rate.
  return best * (1.0 + 1e-12);
}

struct LevelBudgets {
  // By distance from the bottom level: [0] is the bottom.
  std::vector<double> bits_per_key;
  // The sum over the levels of their expected FPRs, and the same with every
  // level at the average budget.
  double expected_fpr_sum = 0.0;
  double uniform_fpr_sum = 0.0;
};

namespace internal {

// Shares from their logs, which may carry any common offset and may be far
// below the range of a double (a 64-level LSM's top level holds 10^-63 of
// its keys): the largest log is taken out before exponentiating.
struct Shares {
  std::vector<double> shares;      // summing to 1
  std::vector<double> log_shares;  // their logs, finite where shares are 0
};
inline Shares SharesFromLogs(const std::vector<double>& log_weights) {
  const double top = *std::max_element(log_weights.begin(), log_weights.end());
  double total = 0.0;
  for (double w : log_weights) total += std::exp(w - top);
  const double log_total = top + std::log(total);
  Shares result;
  for (double w : log_weights) {
    result.log_shares.push_back(w - log_total);
    result.shares.push_back(std::exp(w - log_total));
  }
  return result;
}

// The proportional rule's budgets (see the theory above), bottom first,
// each within [min_bits_per_key, max_bits_per_key], averaging
// average_bits_per_key over the levels' shares (given by their logs, as for
// SharesFromLogs) unless the bounds prevent it. The arguments are valid
// (ChooseBudgetsForShares checks).
inline std::vector<double> ProportionalBudgets(
    double average_bits_per_key, const std::vector<double>& log_weights,
    double min_bits_per_key, double max_bits_per_key,
    Construction construction) {
  const size_t levels = log_weights.size();
  const Shares weights = SharesFromLogs(log_weights);
  const std::vector<double>& shares = weights.shares;
  const std::vector<double>& log_shares = weights.log_shares;
  std::vector<double> bits(levels, average_bits_per_key);
  if (levels == 1) {
    bits[0] =
        std::clamp(average_bits_per_key, min_bits_per_key, max_bits_per_key);
    return bits;
  }
  // The budgets at multiplier lambda (rates lambda w_d, within
  // [kMinFpr, kMaxFpr]), and their average.
  constexpr double kMinFpr = 1e-300;
  constexpr double kMaxFpr = 0.5;
  const double log_min_fpr = std::log(kMinFpr);
  const double log_max_fpr = std::log(kMaxFpr);
  const auto budgets_at = [&](double log_lambda) {
    double average = 0.0;
    for (size_t d = 0; d < levels; ++d) {
      const double fpr = std::exp(
          std::clamp(log_lambda + log_shares[d], log_min_fpr, log_max_fpr));
      bits[d] = std::clamp(BitsPerKeyForFalsePositiveRate(fpr, construction),
                           min_bits_per_key, max_bits_per_key);
      average += shares[d] * bits[d];
    }
    return average;
  };
  // The average falls as lambda grows: bisect log(lambda) between kMinFpr
  // at every level (every level at the most bits) and kMaxFpr at every
  // level.
  double low =
      log_min_fpr - *std::max_element(log_shares.begin(), log_shares.end());
  double high =
      log_max_fpr - *std::min_element(log_shares.begin(), log_shares.end());
  if (budgets_at(low) <= average_bits_per_key) {
    high = low;
  } else if (budgets_at(high) >= average_bits_per_key) {
    low = high;
  } else {
    for (int step = 0; step < 200 && high - low > 1e-13; ++step) {
      const double middle = 0.5 * (low + high);
      (budgets_at(middle) > average_bits_per_key ? low : high) = middle;
    }
  }
  const double average = budgets_at(high);
  // What the bisection leaves goes to the bottom level, which holds most
  // entries, so that the average is met to rounding.
  bits[0] = std::clamp(bits[0] + (average_bits_per_key - average) / shares[0],
                       min_bits_per_key, max_bits_per_key);
  return bits;
}

inline double FalsePositiveRateSum(const std::vector<double>& bits,
                                   Construction construction) {
  double sum = 0.0;
  for (double b : bits)
    sum += ChooseForBitsPerKey(b, construction).expected_fpr;
  return sum;
}

}  // namespace internal

// The budgets of levels whose shares of the filters' entries have the logs
// `log_weights` (bottom first, up to a common offset), averaging
// `average_bits_per_key` over those shares, each within [min_bits_per_key,
// max_bits_per_key]: the proportional rule, with the bottom level moved to
// a kink of the curve where that lowers the sum of rates (see the theory
// above). When the bounds cannot meet the average, every level is at the
// bound nearest it.
inline LevelBudgets ChooseBudgetsForShares(
    double average_bits_per_key, const std::vector<double>& log_weights,
    double min_bits_per_key, double max_bits_per_key,
    Construction construction = Construction::kStatic) {
  const bool weights_valid =
      !log_weights.empty() &&
      std::all_of(log_weights.begin(), log_weights.end(),
                  [](double w) { return std::isfinite(w); });
  if (!(average_bits_per_key > 0.0) || !std::isfinite(average_bits_per_key) ||
      !weights_valid ||
      !(min_bits_per_key > 0.0 && min_bits_per_key <= max_bits_per_key) ||
      !std::isfinite(max_bits_per_key)) {
    throw std::invalid_argument(
        "cuckoo filter: level budgets need a positive average, at least one "
        "level of finite weight and bounds min <= max (got average " +
        std::to_string(average_bits_per_key) + ", " +
        std::to_string(log_weights.size()) + " levels, bounds " +
        std::to_string(min_bits_per_key) + ", " +
        std::to_string(max_bits_per_key) + ")");
  }
  const size_t levels = log_weights.size();
  LevelBudgets result;
  result.bits_per_key = internal::ProportionalBudgets(
      average_bits_per_key, log_weights, min_bits_per_key, max_bits_per_key,
      construction);
  result.expected_fpr_sum =
      internal::FalsePositiveRateSum(result.bits_per_key, construction);
  const bool average_in_bounds = average_bits_per_key >= min_bits_per_key &&
                                 average_bits_per_key <= max_bits_per_key;
  if (levels > 1 && average_in_bounds) {
    // The bottom level at each kink within kKinkWindow bits below its
    // proportional budget, up to the average; the levels above share what
    // is left (their average) by the proportional rule.
    constexpr double kKinkWindow = 2.0;
    const double bottom_share = internal::SharesFromLogs(log_weights).shares[0];
    const std::vector<double> upper_weights(log_weights.begin() + 1,
                                            log_weights.end());
    const double proportional_bottom = result.bits_per_key[0];
    cuckoo::internal::ForEachLayout([&](const BucketLayout& layout) {
      const double kink = layout.BitsPerSlot() /
                          MaxLoadFactor(layout.bucket_size, construction) *
                          (1.0 + 1e-12);
      if (kink <
              std::max(min_bits_per_key, proportional_bottom - kKinkWindow) ||
          kink > average_bits_per_key) {
        return;
      }
      const double upper_average =
          (average_bits_per_key - bottom_share * kink) / (1.0 - bottom_share);
      if (!(upper_average <= max_bits_per_key)) return;
      std::vector<double> candidate = {kink};
      const std::vector<double> upper = internal::ProportionalBudgets(
          upper_average, upper_weights, min_bits_per_key, max_bits_per_key,
          construction);
      candidate.insert(candidate.end(), upper.begin(), upper.end());
      if (!std::is_sorted(candidate.begin(), candidate.end())) return;
      const double sum =
          internal::FalsePositiveRateSum(candidate, construction);
      if (sum < result.expected_fpr_sum) {
        result.bits_per_key = std::move(candidate);
        result.expected_fpr_sum = sum;
      }
    });
  }
  const double uniform_fpr =
      ChooseForBitsPerKey(average_bits_per_key, construction).expected_fpr;
  result.uniform_fpr_sum = uniform_fpr * static_cast<double>(levels);
  if (average_in_bounds && result.expected_fpr_sum >= result.uniform_fpr_sum) {
    result.bits_per_key.assign(levels, average_bits_per_key);
    result.expected_fpr_sum = result.uniform_fpr_sum;
  }
  return result;
}

// The logs of the shares of `num_levels` levels in the size ratio
// `size_ratio`, bottom first, up to a common offset: -d log(T).
inline std::vector<double> GeometricLogWeights(double size_ratio,
                                               int num_levels) {
  std::vector<double> log_weights;
  for (int d = 0; d < num_levels; ++d) {
    log_weights.push_back(-static_cast<double>(d) * std::log(size_ratio));
  }
  return log_weights;
}

// ChooseBudgetsForShares for `num_levels` levels in the size ratio
// `size_ratio` whose filters hold the same entries per key.
inline LevelBudgets ChooseLevelBudgets(
    double average_bits_per_key, double size_ratio, int num_levels,
    double min_bits_per_key, double max_bits_per_key,
    Construction construction = Construction::kStatic) {
  if (!(size_ratio > 1.0) || !std::isfinite(size_ratio) || num_levels < 1) {
    throw std::invalid_argument(
        "cuckoo filter: level budgets need a size ratio above 1 and at least "
        "one level (got ratio " +
        std::to_string(size_ratio) + ", " + std::to_string(num_levels) +
        " levels)");
  }
  return ChooseBudgetsForShares(
      average_bits_per_key, GeometricLogWeights(size_ratio, num_levels),
      min_bits_per_key, max_bits_per_key, construction);
}

}  // namespace monkey
}  // namespace rocksdb_cuckoo
