// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The one out-of-line function of RocksDB 6.29 that the plugin's classes
// need and the preload, which links no RocksDB library, must define: the
// destructor of FilterPolicy, the class's key function (so its vtable and
// type information are emitted here too). Its body in 6.29 is empty. The
// preload keeps it local (exports.map): ha_rocksdb.so keeps its own.
#include "rocksdb/filter_policy.h"

namespace ROCKSDB_NAMESPACE {

FilterPolicy::~FilterPolicy() {}

}  // namespace ROCKSDB_NAMESPACE
