// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// optimize_filters_for_memory for the builder: each filter sized to what the
// allocator really gives, with the policy's false-positive balance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "cuckoo/sizing.h"

namespace rocksdb_cuckoo {

// optimize_filters_for_memory
// ---------------------------
// RocksDB holds a filter block in an allocation of the block plus its 5-byte
// block trailer, and an allocator rounds every request up to one of its size
// classes: jemalloc's are up to a quarter apart at the sizes of filters, so a
// filter sized to its budget leaves up to a fifth of its allocation unused.
// With the option set, RocksDB's own builders size each filter to what the
// allocator really gives, and so does this one, with the format's freedom to
// take any even bucket count:
//   1. The planned table (the policy's layout at its load) sets the target
//      false-positive rate of this filter.
//   2. It asks the allocator what a request of a block plus the trailer
//      really gives (malloc_usable_size) and, unless that is more than 4/3 of
//      the request, spends the extra bytes: the most accurate table that fits
//      them (cuckoo::ChooseForTableBytes), which may have another layout.
//   3. The policy keeps an aggregate balance, the sum over its filters so far
//      of (expected FPR - target FPR), in units of 2^-32. When it is negative
//      (the filters so far are more accurate than their targets), the builder
//      tries requests of 3/4, 13/16, 7/8 and 15/16 of the planned block, each
//      filled as in step 2, and takes the first whose FPR stays within the
//      target plus that surplus, so that the average rate stays on target;
//      otherwise it fills the planned block's allocation.
//   4. The balance takes the built table's expected FPR.
// Without malloc_usable_size, step 2 fills nothing and only step 3 acts.
inline constexpr size_t kBlockTrailerBytes =
    5;  // BlockBasedTable::kBlockTrailerSize

// The bytes an allocation of `bytes` really gives, or `bytes` where the
// allocator cannot say (or cannot allocate them now).
size_t UsableAllocationBytes(size_t bytes) noexcept;

// The FPR balance in the units of RocksDB's own builders: 2^-32.
int64_t BalanceUnits(double fpr_difference);

// Steps 1 to 3 above for `entries` (> 0) entries: the geometry to build, and
// the target FPR the balance is kept against. A smaller candidate is judged
// by the rate of the table that fills its allocation, which is what is
// built: under jemalloc the size class below the planned one, filled, is
// the step that a cuckoo table (whose rate jumps when its load passes what
// the build sustains) can take.
cuckoo::TableGeometry ChooseRoundedGeometry(const cuckoo::FilterConfig& config,
                                            uint64_t entries, int64_t balance,
                                            double* target_fpr);

// Never less than the block a rounding builder writes for `entries` entries:
// the planned block plus the trailer, grown by at most 4/3 to the usable
// size, then grown as the static build allows for (kStaticGrowthAllowance
// steps of 1/64 and up to 3 buckets of at most 32 bytes each).
uint64_t MaxRoundedBlockBytes(const cuckoo::FilterConfig& config,
                              uint64_t entries);

}  // namespace rocksdb_cuckoo
