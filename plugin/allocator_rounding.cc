// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// optimize_filters_for_memory: the allocator's real sizes (see the header).
#include "allocator_rounding.h"

#include <algorithm>
#include <memory>
#include <new>

#if defined(__linux__) && __has_include(<malloc.h>)
#include <malloc.h>
#define ROCKSDB_CUCKOO_HAS_MALLOC_USABLE_SIZE 1
#endif

#include "cuckoo/static_builder.h"
#include "filter_format.h"

namespace rocksdb_cuckoo {
namespace {

// The most accurate table for `entries` entries in what a request for a
// `block_bytes`-byte block and its trailer really gives, unless the
// allocator gives over 4/3 of the request (not worth filling, as in
// RocksDB); nothing when no table fits.
std::optional<cuckoo::TableGeometry> FillAllocation(uint64_t block_bytes,
                                                    uint64_t entries) {
  const uint64_t requested = block_bytes + kBlockTrailerBytes;
  uint64_t usable = UsableAllocationBytes(requested);
  if (usable < requested || usable - usable / 4 > requested) {
    usable = requested;
  }
  return cuckoo::ChooseForTableBytes(
      BlockDataBytes(usable - kBlockTrailerBytes), entries);
}

}  // namespace

// The bytes an allocation of `bytes` really gives, or `bytes` where the
// allocator cannot say (or cannot allocate them now).
size_t UsableAllocationBytes(size_t bytes) noexcept {
#ifdef ROCKSDB_CUCKOO_HAS_MALLOC_USABLE_SIZE
  try {
    // Allocated as RocksDB allocates blocks, so that it comes from the same
    // allocator, and freed at once: the same request gets the same size
    // class again when the block is written.
    const std::unique_ptr<char[]> probe(new char[bytes]);
    return malloc_usable_size(probe.get());
  } catch (const std::bad_alloc&) {
    return bytes;
  }
#else
  return bytes;
#endif
}

// The FPR balance in the units of RocksDB's own builders: 2^-32.
int64_t BalanceUnits(double fpr_difference) {
  return static_cast<int64_t>(fpr_difference * 4294967296.0);
}

// Steps 1 to 3 above for `entries` (> 0) entries: the geometry to build, and
// the target FPR the balance is kept against. A smaller candidate is judged
// by the rate of the table that fills its allocation, which is what is
// built: under jemalloc the size class below the planned one, filled, is
// the step that a cuckoo table (whose rate jumps when its load passes what
// the build sustains) can take.
cuckoo::TableGeometry ChooseRoundedGeometry(const cuckoo::FilterConfig& config,
                                            uint64_t entries, int64_t balance,
                                            double* target_fpr) {
  const cuckoo::TableGeometry planned = PlannedGeometry(config, entries);
  *target_fpr = planned.expected_fpr;
  const uint64_t planned_bytes =
      TableBlockBytes(planned.layout, planned.num_buckets);
  if (balance < 0) {
    const double allowed_fpr = planned.expected_fpr - balance / 4294967296.0;
    constexpr uint64_t kSmallerSixteenths[] = {12, 13, 14, 15};
    for (uint64_t sixteenths : kSmallerSixteenths) {
      const std::optional<cuckoo::TableGeometry> smaller =
          FillAllocation(planned_bytes * sixteenths / 16, entries);
      if (smaller && smaller->expected_fpr <= allowed_fpr) return *smaller;
    }
  }
  const std::optional<cuckoo::TableGeometry> filled =
      FillAllocation(planned_bytes, entries);
  return filled && filled->expected_fpr < planned.expected_fpr ? *filled
                                                               : planned;
}

// Never less than the block a rounding builder writes for `entries` entries:
// the planned block plus the trailer, grown by at most 4/3 to the usable
// size, then grown as the static build allows for (kStaticGrowthAllowance
// steps of 1/64 and up to 3 buckets of at most 32 bytes each).
uint64_t MaxRoundedBlockBytes(const cuckoo::FilterConfig& config,
                              uint64_t entries) {
  const uint64_t unrounded = MaxBlockBytes(config, entries);
  if (entries == 0 || unrounded == kBlockHeaderBytes) return unrounded;
  const cuckoo::TableGeometry planned = PlannedGeometry(config, entries);
  const uint64_t requested =
      TableBlockBytes(planned.layout, planned.num_buckets) + kBlockTrailerBytes;
  uint64_t data = BlockDataBytes(requested * 4 / 3 + 1 - kBlockTrailerBytes);
  for (int step = 0; step < cuckoo::kStaticGrowthAllowance; ++step) {
    data += data / 64 + 3 * 32 + 1;
  }
  return std::max(unrounded,
                  kBlockHeaderBytes + data + cuckoo::kTablePaddingBytes);
}

}  // namespace rocksdb_cuckoo
