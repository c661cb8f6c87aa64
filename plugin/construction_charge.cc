// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Charging a builder's memory to the block cache (see the header).
#include "construction_charge.h"

namespace rocksdb_cuckoo {

std::shared_ptr<ReservationManager> NewConstructionReservations(
    const ROCKSDB_NAMESPACE::BlockBasedTableOptions& table_options) {
#if ROCKSDB_CUCKOO_LEGACY_6_29
  static_cast<void>(table_options);
  return nullptr;
#else
  using ROCKSDB_NAMESPACE::CacheEntryRole;
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
#endif
}

}  // namespace rocksdb_cuckoo
