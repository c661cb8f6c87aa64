// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Registers the "cuckoofilter" policy in RocksDB's default ObjectLibrary when
// librocksdb_cuckoo.so is loaded, so that unmodified tools (db_bench, ldb)
// find it through LD_PRELOAD and an OPTIONS file. Only the shared library
// contains this file; programs linking the plugin statically call
// rocksdb_cuckoo_register_default (C) or cuckoo_filter_register themselves.
// A program that links the shared library but calls nothing in it would
// lose it to a linker running --as-needed: C programs call
// rocksdb_cuckoo_register_default, which also keeps the library linked.
#include <cstdio>
#include <cstdlib>

#include "cuckoo_filter_policy.h"
#include "rocksdb_cuckoo.h"

namespace rocksdb_cuckoo {
namespace {

const int registered = [] {
  const int result = rocksdb_cuckoo_register_default();
  if (std::getenv("ROCKSDB_CUCKOO_VERBOSE") != nullptr) {
    std::fprintf(stderr, "rocksdb-cuckoo: %s %s\n",
                 result == 0 ? "registered" : "could not register",
                 CuckooFilterPolicy::kClassName());
  }
  return result;
}();

}  // namespace
}  // namespace rocksdb_cuckoo
