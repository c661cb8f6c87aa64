// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The policy's FilterBitsBuilder: key hashes in, one statically built cuckoo
// table per filter out.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "construction_charge.h"
#include "cuckoo/sizing.h"
#include "cuckoo_filter_policy.h"
#include "table/block_based/filter_policy_internal.h"

namespace rocksdb_cuckoo {

// Told, after each filter a builder finishes, how many distinct keys it was
// given and how many entries (keys and their prefixes) it held.
using FinishedFilterCounts =
    std::function<void(uint64_t keys, uint64_t entries)>;

// A builder of filters in `config`'s layout at its load. The shared state is
// the policy's: its fallback counters, its false-positive balance with
// optimize_filters_for_memory (else null; allocator_rounding.h), and the
// reservation manager when construction is charged to the block cache (else
// null; construction_charge.h). With verify_after_construction
// (detect_filter_construct_corruption) the hashes are checksummed and kept
// for MaybePostVerify. `counts`, when set, hears of every filter finished.
ROCKSDB_NAMESPACE::FilterBitsBuilder* NewCuckooFilterBitsBuilder(
    const cuckoo::FilterConfig& config, bool verify_after_construction,
    ROCKSDB_NAMESPACE::Logger* info_log,
    std::shared_ptr<CuckooFilterPolicy::FallbackCounters> fallbacks,
    std::shared_ptr<std::atomic<int64_t>> rounding_balance,
    std::shared_ptr<ReservationManager> reservations, BuildFaultHook fault_hook,
    FinishedFilterCounts counts);

}  // namespace rocksdb_cuckoo
