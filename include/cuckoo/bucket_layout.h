// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The shape of a bucket table: slots per bucket, fingerprint width and
// semi-sorting (BucketLayout), the checks of a stored table's geometry, and
// its size in bytes.
//
// Bucket i occupies bits [i * B, (i + 1) * B) of a little-endian bit string
// (bits.h), where B is the bucket width:
//   * plain buckets: b slots of f bits, slot s at bits [s f, (s + 1) f);
//     an empty slot holds 0;
//   * semi-sorted buckets (b = 4 only): a 12-bit code of the four sorted
//     high nibbles (see semi_sort.h), then the four (f - 4)-bit low parts in
//     the same order. B = 4 (f - 1).
// The bytes are followed by kTablePaddingBytes of zeros, so that every read is
// one unaligned 8-byte load that never leaves the buffer. bucket_codec.h
// reads and writes the buckets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuckoo/hashing.h"

namespace cuckoo {

inline constexpr size_t kTablePaddingBytes = 7;
inline constexpr int kMaxBucketSize = 8;

// Shape of one bucket.
struct BucketLayout {
  int bucket_size = 4;        // slots per bucket: 2, 4 or 8
  int fingerprint_bits = 12;  // 4..32
  bool semi_sorted = false;   // only with bucket_size 4

  int BitsPerBucket() const {
    return semi_sorted ? 4 * (fingerprint_bits - 1)
                       : bucket_size * fingerprint_bits;
  }
  double BitsPerSlot() const {
    return static_cast<double>(BitsPerBucket()) / bucket_size;
  }

  // Empty string when valid, otherwise what is wrong.
  std::string Validate() const {
    if (bucket_size != 2 && bucket_size != 4 && bucket_size != 8) {
      return "bucket size " + std::to_string(bucket_size) +
             " is not one of 2, 4, 8";
    }
    if (fingerprint_bits < kMinFingerprintBits ||
        fingerprint_bits > kMaxFingerprintBits) {
      return "fingerprint width " + std::to_string(fingerprint_bits) +
             " bits is outside [" + std::to_string(kMinFingerprintBits) + ", " +
             std::to_string(kMaxFingerprintBits) + "]";
    }
    if (semi_sorted && bucket_size != 4) {
      return "semi-sorting needs 4 slots per bucket, not " +
             std::to_string(bucket_size);
    }
    return "";
  }

  bool operator==(const BucketLayout& other) const {
    return bucket_size == other.bucket_size &&
           fingerprint_bits == other.fingerprint_bits &&
           semi_sorted == other.semi_sorted;
  }
};

// Empty when num_buckets buckets of `layout` make a table (a valid layout, an
// even bucket count from 2 to kMaxNumBuckets), otherwise what is wrong. The
// one check of every reader of stored tables.
inline std::string ValidateTableGeometry(const BucketLayout& layout,
                                         uint64_t num_buckets) {
  std::string problem = layout.Validate();
  if (!problem.empty()) return problem;
  if (num_buckets < 2 || num_buckets % 2 != 0 || num_buckets > kMaxNumBuckets) {
    return "bucket count " + std::to_string(num_buckets) +
           " is not an even number >= 2";
  }
  return "";
}

// Bytes of table data (without padding) for num_buckets buckets.
inline uint64_t TableDataBytes(const BucketLayout& layout,
                               uint64_t num_buckets) {
  return (num_buckets * static_cast<uint64_t>(layout.BitsPerBucket()) + 7) / 8;
}

}  // namespace cuckoo
