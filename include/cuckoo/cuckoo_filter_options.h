// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// A dynamic filter's options (CuckooFilterOptions), their limits and
// validation, and the geometry they give a filter: the bucket counts it
// may have after each growth, its key mapping and the layout of its slots
// (cuckoo_filter.h, "Growth"). The constructor, Restore and the loaders of
// dynamic_filter_format.h check options and counts here.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cuckoo/bucket_layout.h"
#include "cuckoo/hashing.h"
#include "cuckoo/key_hash.h"
#include "cuckoo/sizing.h"

namespace cuckoo {

// Limits of CuckooFilterOptions. They bound the work of one Insert and the
// memory of the stash, also for options read from untrusted bytes.
inline constexpr uint32_t kMaxKicksLimit = 1u << 16;
inline constexpr uint32_t kMaxStashCapacity = 1u << 16;

struct CuckooFilterOptions {
  BucketLayout layout;
  // Longest kick-out walk of one Insert; at most kMaxKicksLimit.
  uint32_t max_kicks = 500;
  // Homeless fingerprints kept outside the table; 1 to kMaxStashCapacity.
  uint32_t stash_capacity = 4;
  // Seeds the generator that picks victims: same seed, same operations, same
  // filter.
  uint64_t seed = 0x5EEDC0C0u;
  // Growth (cuckoo_filter.h, "Growth"): 0, the filter never grows and Insert
  // reports kFull when it is full; otherwise a power of two >= 2, the
  // factor by which the table grows when an insert would fail.
  uint32_t expansion = 0;
  // How many times the filter may grow (with expansion != 0). Each growth
  // by 2^e reserves e bits in every slot from the start: at most
  // (32 - fingerprint_bits) / e growths.
  uint32_t max_growths = 6;
  // The hash function the caller fills the filter with: the filter takes
  // hashes, and this names theirs (key_hash.h, "Integer keys"). It is
  // recorded by the serialization, so that a loaded filter says how its keys
  // were hashed, and Merge refuses a filter of another hasher.
  KeyHasher hasher = KeyHasher::kXxh3;
};

// log2 of the expansion; 0 without growth.
inline int ExpansionBits(const CuckooFilterOptions& options) {
  return options.expansion == 0 ? 0 : __builtin_ctz(options.expansion);
}

// Bits reserved in each slot for growth: e G.
inline int ReserveBits(const CuckooFilterOptions& options) {
  return ExpansionBits(options) * static_cast<int>(options.max_growths);
}

// The key mapping of a new filter of about num_buckets buckets (an even
// count), or std::length_error when its growths would pass 2^32 buckets.
inline GrowableHashing InitialHashing(uint64_t num_buckets,
                                      const CuckooFilterOptions& options) {
  const uint64_t buckets = ValidBucketCount(num_buckets);
  if ((buckets << ReserveBits(options)) > kMaxNumBuckets) {
    throw std::length_error(
        "cuckoo filter: " + std::to_string(buckets) + " buckets grown " +
        std::to_string(options.max_growths) + " times by " +
        std::to_string(options.expansion) + " exceed 2^32 buckets");
  }
  return GrowableHashing(static_cast<uint32_t>(buckets),
                         options.layout.fingerprint_bits, ReserveBits(options),
                         0);
}

// Why the options cannot make a filter; empty when they can.
inline std::string OptionsProblem(const CuckooFilterOptions& options) {
  std::string problem = options.layout.Validate();
  if (!problem.empty()) return problem;
  if (options.stash_capacity == 0 ||
      options.stash_capacity > kMaxStashCapacity) {
    return "the stash capacity " + std::to_string(options.stash_capacity) +
           " is not in [1, " + std::to_string(kMaxStashCapacity) + "]";
  }
  if (static_cast<uint8_t>(options.hasher) > kMaxKeyHasherId) {
    return "key hasher " + std::to_string(static_cast<int>(options.hasher)) +
           " is unknown";
  }
  if (options.max_kicks > kMaxKicksLimit) {
    return "max_kicks " + std::to_string(options.max_kicks) + " exceeds " +
           std::to_string(kMaxKicksLimit);
  }
  if (options.expansion == 1 ||
      (options.expansion & (options.expansion - 1)) != 0) {
    return "expansion " + std::to_string(options.expansion) +
           " is not 0 (no growth) or a power of two >= 2";
  }
  const int spare_bits = kMaxFingerprintBits - options.layout.fingerprint_bits;
  const uint64_t reserve_bits = uint64_t{options.max_growths} *
                                static_cast<uint64_t>(ExpansionBits(options));
  if (options.expansion != 0 &&
      reserve_bits > static_cast<uint64_t>(spare_bits)) {
    return std::to_string(options.max_growths) + " growths by " +
           std::to_string(options.expansion) + " need " +
           std::to_string(reserve_bits) + " reserved bits per slot; " +
           std::to_string(options.layout.fingerprint_bits) +
           "-bit fingerprints leave " + std::to_string(spare_bits);
  }
  return "";
}

// The options, or std::invalid_argument naming their problem.
inline const CuckooFilterOptions& CheckedOptions(
    const CuckooFilterOptions& options) {
  const std::string problem = OptionsProblem(options);
  if (!problem.empty()) {
    throw std::invalid_argument("cuckoo filter: " + problem);
  }
  return options;
}

// Why a filter with these options cannot have num_buckets buckets after
// `growths` growths (empty when it can): the options are invalid, the
// growth count is over the limit, or num_buckets is not a valid initial
// count times the expansion to the power `growths`, within 2^32 after every
// growth the options allow.
inline std::string GeometryProblem(const CuckooFilterOptions& options,
                                   uint32_t num_buckets, uint32_t growths) {
  std::string problem = OptionsProblem(options);
  if (!problem.empty()) return problem;
  const uint32_t max_growths = options.expansion == 0 ? 0 : options.max_growths;
  if (growths > max_growths) {
    return std::to_string(growths) + " growths exceed the limit of " +
           std::to_string(max_growths);
  }
  const int moved_bits = static_cast<int>(growths) * ExpansionBits(options);
  const uint32_t base_buckets = num_buckets >> moved_bits;
  problem = ValidateTableGeometry(options.layout, base_buckets);
  if (!problem.empty()) return problem;
  if ((uint64_t{base_buckets} << moved_bits) != num_buckets) {
    return "bucket count " + std::to_string(num_buckets) +
           " is not the initial count " + std::to_string(base_buckets) +
           " times 2^" + std::to_string(moved_bits);
  }
  if ((uint64_t{base_buckets} << ReserveBits(options)) > kMaxNumBuckets) {
    return "bucket count " + std::to_string(base_buckets) + " grown " +
           std::to_string(max_growths) + " times exceeds 2^32";
  }
  return "";
}

// The key mapping of a filter with these options and num_buckets buckets
// after `growths` growths; GeometryProblem must have found nothing.
inline GrowableHashing HashingAfter(const CuckooFilterOptions& options,
                                    uint32_t num_buckets, uint32_t growths) {
  const int moved_bits = static_cast<int>(growths) * ExpansionBits(options);
  return GrowableHashing(num_buckets >> moved_bits,
                         options.layout.fingerprint_bits, ReserveBits(options),
                         moved_bits);
}

// The slots' layout: the key fingerprint and the growth bits not yet
// moved into the bucket index (cuckoo_filter.h, "Growth").
inline BucketLayout SlotLayout(const CuckooFilterOptions& options,
                               const GrowableHashing& hashing) {
  BucketLayout slots = options.layout;
  slots.fingerprint_bits = hashing.slot_bits();
  return slots;
}

// The bucket count CuckooFilter::Reserve gives a filter for `capacity` items
// at the dynamic filter's sustainable load (before the constructor rounds it
// up to an even count). Throws std::invalid_argument for invalid options or
// a capacity of 0, and std::length_error for one too large.
inline uint64_t BucketsToReserve(uint64_t capacity,
                                 const CuckooFilterOptions& options) {
  CheckedOptions(options);
  if (capacity == 0) {
    throw std::invalid_argument("cuckoo filter: a capacity of 0 items");
  }
  const double buckets = std::ceil(
      static_cast<double>(capacity) /
      (options.layout.bucket_size *
       MaxLoadFactor(options.layout.bucket_size, Construction::kDynamic)));
  if (!(buckets <= static_cast<double>(kMaxNumBuckets))) {
    throw std::length_error("cuckoo filter: a capacity of " +
                            std::to_string(capacity) +
                            " items needs more than 2^32 buckets");
  }
  return static_cast<uint64_t>(buckets);
}

}  // namespace cuckoo
