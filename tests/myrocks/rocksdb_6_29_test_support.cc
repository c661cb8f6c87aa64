// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The out-of-line functions of RocksDB 6.29 that the 6.29 builds of the
// plugin's tests call, for test binaries that, like the MyRocks preload,
// link no RocksDB library: FilterBuildingContext's constructor (6.29 keeps
// every other field at its default) and FilterPolicy's destructor
// (myrocks/filter_policy_6_29.cc, linked in).
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"

namespace ROCKSDB_NAMESPACE {

FilterBuildingContext::FilterBuildingContext(
    const BlockBasedTableOptions& _table_options)
    : table_options(_table_options) {}

}  // namespace ROCKSDB_NAMESPACE
