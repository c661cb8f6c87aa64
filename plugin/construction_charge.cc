// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Charging a builder's memory to the block cache (see the header).
#include "construction_charge.h"

namespace rocksdb_cuckoo {

using ROCKSDB_NAMESPACE::CacheEntryRole;
using ROCKSDB_NAMESPACE::CacheReservationManager;

// The reservation manager for a builder, or null when the options charge
// nothing.
std::shared_ptr<CacheReservationManager> NewConstructionReservations(
    const ROCKSDB_NAMESPACE::BlockBasedTableOptions& table_options) {
  using Decision = ROCKSDB_NAMESPACE::CacheEntryRoleOptions::Decision;
  const auto& usage = table_options.cache_usage_options;
  const auto overridden =
      usage.options_overrides.find(CacheEntryRole::kFilterConstruction);
  const Decision charged = overridden != usage.options_overrides.end()
                               ? overridden->second.charged
                               : usage.options.charged;
  if (table_options.block_cache == nullptr || charged != Decision::kEnabled) {
    return nullptr;
  }
  return std::make_shared<FilterConstructionReservations>(
      table_options.block_cache);
}

}  // namespace rocksdb_cuckoo
