// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Charging a builder's memory to the block cache, as RocksDB's own builders
// charge theirs (CacheEntryRole::kFilterConstruction).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "cache/cache_reservation_manager.h"
#include "rocksdb/table.h"

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
using FilterConstructionReservations =
    ROCKSDB_NAMESPACE::CacheReservationManagerImpl<
        ROCKSDB_NAMESPACE::CacheEntryRole::kFilterConstruction>;
using ReservationHandle = std::unique_ptr<
    ROCKSDB_NAMESPACE::CacheReservationManager::CacheReservationHandle>;
inline constexpr size_t kHashesPerReservation =
    FilterConstructionReservations::GetDummyEntrySize() / sizeof(uint64_t);

// The reservation manager for a builder, or null when the options charge
// nothing.
std::shared_ptr<ROCKSDB_NAMESPACE::CacheReservationManager>
NewConstructionReservations(
    const ROCKSDB_NAMESPACE::BlockBasedTableOptions& table_options);

}  // namespace rocksdb_cuckoo
