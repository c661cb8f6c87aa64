// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Charging a builder's memory to the block cache, as RocksDB's own builders
// charge theirs (CacheEntryRole::kFilterConstruction).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "rocksdb/table.h"
#include "rocksdb_interfaces.h"
#if !ROCKSDB_CUCKOO_LEGACY_6_29
#include "cache/cache_reservation_manager.h"
#endif

namespace rocksdb_cuckoo {

// Charging construction memory to the block cache
// -----------------------------------------------
// With a block cache and CacheEntryRole::kFilterConstruction charged
// (BlockBasedTableOptions::cache_usage_options), a builder reserves what it
// holds in the cache, in the 256 KiB dummy entries of RocksDB's
// CacheReservationManager, as RocksDB's own builders do:
//   - the key hashes: one entry per 32768 hashes, reserved when the count
//     reaches the middle of each such run, released with the hashes, once
//     the placement has read them for the last time (after MaybePostVerify
//     with detect_filter_construct_corruption): those of the hashes that go
//     before the block is allocated go with them (ReleaseHashesFor);
//   - in Finish, before the table is built, the build's working memory
//     (cuckoo::StaticBuildWorkingBytes), released when the build ends;
//   - the block, from just before it is allocated until the builder is
//     destroyed (a partitioned filter's blocks wait in RocksDB until the
//     file is written).
// So the charge follows what the builder holds at each step, and its peak
// is the build's own: the hashes and the working memory, rounded up to
// whole entries.
// The hashes' and the finished block's reservations are best effort, as in
// RocksDB: a full cache does not stop them. A cache with a strict capacity
// that cannot take the build's working memory gets an always-match block
// instead of a table: nothing more is allocated, the flush or compaction
// goes on, and every read stays correct, without this filter. The policy
// counts it among its unbuilt filters and logs the first one.
#if !ROCKSDB_CUCKOO_LEGACY_6_29
using ReservationManager = ROCKSDB_NAMESPACE::CacheReservationManager;
using FilterConstructionReservations =
    ROCKSDB_NAMESPACE::CacheReservationManagerImpl<
        ROCKSDB_NAMESPACE::CacheEntryRole::kFilterConstruction>;
inline constexpr size_t kReservationEntryBytes =
    FilterConstructionReservations::GetDummyEntrySize();
#else
// Under RocksDB 6.29 (the MyRocks preload) nothing is charged: its
// reserve_table_builder_memory charges through a CacheReservationManager
// whose functions are out of line in ha_rocksdb.so, out of the preload's
// reach. A manager that is never made, so that the builder compiles
// unchanged.
class ReservationManager {
 public:
  class CacheReservationHandle {};
  struct Reserved {
    bool ok() const { return true; }
    std::string ToString() const { return "OK"; }
    void PermitUncheckedError() const {}
  };
  Reserved MakeCacheReservation(size_t,
                                std::unique_ptr<CacheReservationHandle>*) {
    return Reserved();
  }
};
inline constexpr size_t kReservationEntryBytes = 256 * 1024;
#endif
using ReservationHandle =
    std::unique_ptr<ReservationManager::CacheReservationHandle>;
inline constexpr size_t kHashesPerReservation =
    kReservationEntryBytes / sizeof(uint64_t);

// The reservation manager for a builder, or null when the options charge
// nothing (always, on 6.29).
std::shared_ptr<ReservationManager> NewConstructionReservations(
    const ROCKSDB_NAMESPACE::BlockBasedTableOptions& table_options);

}  // namespace rocksdb_cuckoo
