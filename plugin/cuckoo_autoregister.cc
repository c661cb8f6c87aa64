// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Registers the "cuckoofilter" policy in RocksDB's default ObjectLibrary when
// librocksdb_cuckoo.so is loaded, so that unmodified tools (db_bench, ldb)
// find it through LD_PRELOAD and an OPTIONS file. Only the shared library
// contains this file; programs linking the plugin statically call
// cuckoo_filter_register themselves.
#include <cstdio>
#include <cstdlib>

#include "cuckoo_filter_policy.h"

namespace rocksdb_cuckoo {
namespace {

const int registered_factories = [] {
  const int count = cuckoo_filter_register(
      *ROCKSDB_NAMESPACE::ObjectLibrary::Default(), "cuckoo");
  if (std::getenv("ROCKSDB_CUCKOO_VERBOSE") != nullptr) {
    std::fprintf(stderr, "rocksdb-cuckoo: registered %s (%d factories)\n",
                 CuckooFilterPolicy::kClassName(), count);
  }
  return count;
}();

}  // namespace
}  // namespace rocksdb_cuckoo
