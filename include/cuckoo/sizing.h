// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Sizing: which bucket layout and load factor to use, from a target
// false-positive rate or from a space budget in bits per key.
//
// Theory
// ------
// With b slots per bucket, f-bit fingerprints (2^f - 1 nonzero values) and
// load factor alpha, an absent key is compared with the 2 b alpha fingerprints
// expected in its two buckets, so
//     FPR = 1 - (1 - 1 / (2^f - 1))^(2 b alpha)  ~  2 b alpha / 2^f,
// and the space is s / alpha bits per key, where s is the bits per slot
// (f, or f - 1 for semi-sorted buckets).
//
// For a target FPR the best layout is the smallest f that reaches it at the
// highest load the construction sustains: alpha_max(b). For a space budget B
// the trade-off runs the other way: the load is alpha = s / B, and a lower
// load lowers the FPR linearly while one more fingerprint bit halves it, so
// the best choice is the widest fingerprint whose load s / B still fits under
// alpha_max(b). Both choices search all layouts (b = 2, 4, 8, semi-sorted or
// not, f = 4..32) with the formula above.
//
// For a fixed number of bytes (a filter sized to what the allocator really
// gives) the same trade-off applies with the bucket count fixed by the bytes:
// each layout gets as many buckets as fit, and the one with the lowest FPR at
// the load that follows wins, among those whose load the build sustains.
//
// alpha_max (Fan et al. report 84%, 95%, 98% for random-walk insertion with
// b = 2, 4, 8); the static build's search reaches these reliably, and the
// dynamic filter keeps a margin so that a filter sized for n keys takes all n.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "cuckoo/bucket_layout.h"

namespace cuckoo {

enum class Construction { kStatic, kDynamic };

inline double MaxLoadFactor(int bucket_size, Construction construction) {
  const bool is_static = construction == Construction::kStatic;
  switch (bucket_size) {
    case 2:
      return is_static ? 0.85 : 0.80;
    case 4:
      return is_static ? 0.95 : 0.93;
    default:
      return is_static ? 0.97 : 0.96;
  }
}

// The formula above for buckets of any number of slots, so that other
// filters' rates can be compared with ours (RedisBloom's 8-bit fingerprints
// in buckets of 1 to 255 slots, say).
inline double FalsePositiveRate(double slots_per_bucket, int fingerprint_bits,
                                double load_factor) {
  const double values = std::ldexp(1.0, fingerprint_bits) - 1.0;
  const double comparisons = 2.0 * slots_per_bucket * load_factor;
  // 1 - (1 - 1/values)^comparisons, computed without cancellation.
  return -std::expm1(comparisons * std::log1p(-1.0 / values));
}

inline double ExpectedFalsePositiveRate(const BucketLayout& layout,
                                        double load_factor) {
  return FalsePositiveRate(layout.bucket_size, layout.fingerprint_bits,
                           load_factor);
}

struct FilterConfig {
  BucketLayout layout;
  double load_factor = 0.0;
  double expected_fpr = 0.0;
  double bits_per_key = 0.0;  // table bits per key at that load, no headers
};

namespace internal {

template <typename Visit>
void ForEachLayout(Visit&& visit) {
  for (int bucket_size : {2, 4, 8}) {
    for (bool semi_sorted : {false, true}) {
      if (semi_sorted && bucket_size != 4) continue;
      for (int f = kMinFingerprintBits; f <= kMaxFingerprintBits; ++f) {
        visit(BucketLayout{bucket_size, f, semi_sorted});
      }
    }
  }
}

inline FilterConfig MakeConfig(const BucketLayout& layout, double load) {
  return FilterConfig{layout, load, ExpectedFalsePositiveRate(layout, load),
                      layout.BitsPerSlot() / load};
}

}  // namespace internal

// The layout with the fewest bits per key whose expected FPR is at most
// `target_fpr` (0 < target_fpr < 1), among fingerprints of at least
// `narrowest_bits`.
inline FilterConfig ChooseForFalsePositiveRate(
    double target_fpr, Construction construction = Construction::kStatic,
    int narrowest_bits = kMinFingerprintBits) {
  if (!(target_fpr > 0.0 && target_fpr < 1.0)) {
    throw std::invalid_argument("cuckoo filter: target false-positive rate " +
                                std::to_string(target_fpr) +
                                " is outside (0, 1)");
  }
  FilterConfig best;
  bool found = false;
  internal::ForEachLayout([&](const BucketLayout& layout) {
    if (layout.fingerprint_bits < narrowest_bits) return;
    FilterConfig config = internal::MakeConfig(
        layout, MaxLoadFactor(layout.bucket_size, construction));
    if (config.expected_fpr > target_fpr) return;
    if (!found || config.bits_per_key < best.bits_per_key ||
        (config.bits_per_key == best.bits_per_key &&
         config.expected_fpr < best.expected_fpr)) {
      best = config;
      found = true;
    }
  });
  if (!found) {
    // Below the reach of 32-bit fingerprints: the most accurate layout.
    best = internal::MakeConfig(BucketLayout{2, kMaxFingerprintBits, false},
                                MaxLoadFactor(2, construction));
  }
  return best;
}

// The narrowest fingerprint, of at most `widest_bits`, whose expected FPR
// in buckets of `bucket_size` slots at the highest load the construction
// sustains is at most `target_fpr`; nullopt when none is. For a caller
// whose bucket size is fixed (RedisBloom's BUCKETSIZE, say).
inline std::optional<int> NarrowestFingerprintForRate(
    int bucket_size, double target_fpr, int widest_bits,
    Construction construction) {
  const double load = MaxLoadFactor(bucket_size, construction);
  for (int bits = kMinFingerprintBits; bits <= widest_bits; ++bits) {
    if (ExpectedFalsePositiveRate(BucketLayout{bucket_size, bits, false},
                                  load) <= target_fpr) {
      return bits;
    }
  }
  return std::nullopt;
}

// The layout and load with the lowest expected FPR within `bits_per_key`
// table bits per key. Budgets too small for any layout get the smallest one
// (4-bit semi-sorted fingerprints at the highest load), which exceeds them.
inline FilterConfig ChooseForBitsPerKey(
    double bits_per_key, Construction construction = Construction::kStatic) {
  if (!(bits_per_key > 0.0) || !std::isfinite(bits_per_key)) {
    throw std::invalid_argument("cuckoo filter: bits per key " +
                                std::to_string(bits_per_key) +
                                " must be a positive number");
  }
  FilterConfig best;
  bool found = false;
  internal::ForEachLayout([&](const BucketLayout& layout) {
    const double load = layout.BitsPerSlot() / bits_per_key;
    if (load > MaxLoadFactor(layout.bucket_size, construction)) return;
    FilterConfig config = internal::MakeConfig(layout, load);
    if (!found || config.expected_fpr < best.expected_fpr) {
      best = config;
      found = true;
    }
  });
  if (!found) {
    best = internal::MakeConfig(BucketLayout{4, kMinFingerprintBits, true},
                                MaxLoadFactor(4, construction));
  }
  return best;
}

// A table's shape for a known number of entries: its layout and bucket
// count, and the load and expected FPR that follow.
struct TableGeometry {
  BucketLayout layout;
  uint32_t num_buckets = 0;
  double load_factor = 0.0;
  double expected_fpr = 1.0;
};

// The geometry of `num_buckets` buckets of `layout` holding `entries`.
inline TableGeometry GeometryOf(const BucketLayout& layout,
                                uint32_t num_buckets, uint64_t entries) {
  const double load = static_cast<double>(entries) /
                      (static_cast<double>(num_buckets) * layout.bucket_size);
  return TableGeometry{layout, num_buckets, load,
                       ExpectedFalsePositiveRate(layout, load)};
}

// The table with the lowest expected FPR for `entries` (> 0) entries whose
// data takes at most `data_bytes` bytes (TableDataBytes): every layout with
// as many buckets as fit (an even count), at a load the construction
// sustains. Nothing when no layout fits.
inline std::optional<TableGeometry> ChooseForTableBytes(
    uint64_t data_bytes, uint64_t entries,
    Construction construction = Construction::kStatic) {
  std::optional<TableGeometry> best;
  if (entries == 0) return best;
  internal::ForEachLayout([&](const BucketLayout& layout) {
    uint64_t buckets = data_bytes * 8 / layout.BitsPerBucket();
    if (buckets > kMaxNumBuckets) buckets = kMaxNumBuckets;
    buckets &= ~uint64_t{1};
    if (buckets < 2) return;
    const TableGeometry geometry =
        GeometryOf(layout, static_cast<uint32_t>(buckets), entries);
    if (geometry.load_factor > MaxLoadFactor(layout.bucket_size, construction))
      return;
    if (!best || geometry.expected_fpr < best->expected_fpr) best = geometry;
  });
  return best;
}

}  // namespace cuckoo
