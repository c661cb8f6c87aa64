// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// A filter family's false-positive rate as a function of its real bits per
// key, measured on a grid of budgets, and the bits per key it needs for a
// target rate.
//
// Between two measured points the rate is interpolated linearly in log(FPR):
// every family here has a rate that falls exponentially with bits per key
// (Bloom as 0.6185^b, a cuckoo filter as 2^-f, Ribbon as 2^-b), so
// log(FPR) is close to linear in b between neighbouring grid points. A
// target outside the measured range is not extrapolated.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

namespace filter_compare {

// Points with fewer false positives than this are reported as imprecise.
constexpr uint64_t kMinFalsePositivesForPrecision = 100;

struct FprPoint {
  int budget = 0;           // the policy's bits-per-key parameter
  double bits_per_key = 0;  // filter bytes * 8 / keys, as built
  uint64_t false_positives = 0;
  uint64_t probes = 0;
  double Fpr() const {
    return probes ? static_cast<double>(false_positives) / probes : 0;
  }
  bool Precise() const {
    return false_positives >= kMinFalsePositivesForPrecision;
  }
};

struct BitsForTarget {
  double bits_per_key = 0;
  bool precise = false;  // both neighbouring points rest on >= 100 FPs
  int lower_budget = 0;  // the two measured budgets it lies between
  int upper_budget = 0;
};

// `points` ordered by bits_per_key. The smallest bits per key at which the
// interpolated rate reaches `target`, if two neighbouring measured points
// (with at least one false positive each) bracket it.
inline std::optional<BitsForTarget> BitsPerKeyFor(
    const std::vector<FprPoint>& points, double target) {
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    const FprPoint& a = points[i];
    const FprPoint& b = points[i + 1];
    if (a.false_positives == 0 || b.false_positives == 0) continue;
    const double fa = a.Fpr(), fb = b.Fpr();
    if (fa < target || fb > target) continue;
    BitsForTarget result;
    result.lower_budget = a.budget;
    result.upper_budget = b.budget;
    result.precise = a.Precise() && b.Precise();
    if (fa == fb) {
      result.bits_per_key = a.bits_per_key;
    } else {
      const double t =
          (std::log(fa) - std::log(target)) / (std::log(fa) - std::log(fb));
      result.bits_per_key =
          a.bits_per_key + t * (b.bits_per_key - a.bits_per_key);
    }
    return result;
  }
  return std::nullopt;
}

}  // namespace filter_compare
