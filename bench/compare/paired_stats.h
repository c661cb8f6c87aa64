// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Statistics of repeated, paired measurements: medians, percentiles, and the
// ratio of a policy to the Bloom filter with a distribution-free interval.
//
// Pairing and the interval
// ------------------------
// Every repetition runs each workload once on every policy, in a shuffled
// order and with the same keys, so repetition k of a policy and repetition k
// of Bloom ran minutes apart at most and saw the same machine. The ratio of
// such a pair cancels most of the machine's slow phases. Over n repetitions
// the n paired ratios are reported as their median and their range
// [min, max]. For n independent ratios, the range covers the true median of
// their distribution with probability 1 - 2^(1-n) (94% for n = 5, 98% for
// n = 7), whatever the distribution: a sign-test confidence interval. When
// the range contains 1.0, the difference is within noise.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace filter_compare {

// The q-quantile (0 <= q <= 1) by the nearest-rank method; NaN when empty.
inline double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(q * static_cast<double>(values.size()));
  const size_t index =
      rank < 1 ? 0 : std::min(values.size(), static_cast<size_t>(rank)) - 1;
  return values[index];
}

// The median; for an even count, the mean of the two middle values.
inline double Median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

struct PairedRatio {
  bool valid = false;  // false when no pair had a positive baseline
  double median = 0;
  double low = 0;   // smallest paired ratio
  double high = 0;  // largest paired ratio
  int pairs = 0;
  bool WithinNoise() const { return valid && low <= 1.0 && high >= 1.0; }
};

// Ratios value[k] / baseline[k] over the repetitions k where both are
// measured (non-negative) and the baseline is positive.
inline PairedRatio RatioOf(const std::vector<double>& values,
                           const std::vector<double>& baseline) {
  std::vector<double> ratios;
  for (size_t k = 0; k < values.size() && k < baseline.size(); ++k) {
    if (values[k] >= 0 && baseline[k] > 0) {
      ratios.push_back(values[k] / baseline[k]);
    }
  }
  PairedRatio ratio;
  if (ratios.empty()) return ratio;
  ratio.valid = true;
  ratio.median = Median(ratios);
  ratio.low = *std::min_element(ratios.begin(), ratios.end());
  ratio.high = *std::max_element(ratios.begin(), ratios.end());
  ratio.pairs = static_cast<int>(ratios.size());
  return ratio;
}

}  // namespace filter_compare
