// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// What differs between the RocksDB releases the project supports (7.8 to
// 11.8), for the plugin and for the tests and tools built with it.
//
// FilterBitsBuilder, internal, changed twice:
//   * 9.6 (facebook/rocksdb#12931, first released in 9.6.1): the pure
//     virtual AddKeyAndAlt(key, alt), for a key and its prefix;
//   * 10.9 (facebook/rocksdb#14111): CalculateSpace(num_entries) and
//     EstimatedFpRate(num_entries, bytes) moved from the builtin builders
//     into FilterBitsBuilder as pure virtuals.
// The plugin's builder implements all of them on every version; the macros
// below say which ones override a base-class method.
//
// The public API the tests and tools use: DB::Open and DB::OpenAsSecondary
// with a std::unique_ptr output came in 9.11, and the DB** forms are gone in
// 11.x (OpenDb and OpenSecondaryDb below);
// DBOptions::fail_if_options_file_error is the default from 8.8 and was
// removed in 10.2.
#pragma once

#include <memory>
#include <string>

#include "rocksdb/db.h"
#include "rocksdb/version.h"

#define ROCKSDB_CUCKOO_VERSION_AT_LEAST(major, minor) \
  (ROCKSDB_MAJOR > (major) ||                         \
   (ROCKSDB_MAJOR == (major) && ROCKSDB_MINOR >= (minor)))

#if !ROCKSDB_CUCKOO_VERSION_AT_LEAST(7, 8)
#error "rocksdb-cuckoo needs RocksDB 7.8 or later"
#endif

// `override` on AddKeyAndAlt where it is virtual.
#if ROCKSDB_CUCKOO_VERSION_AT_LEAST(9, 6)
#define ROCKSDB_CUCKOO_HAS_ADD_KEY_AND_ALT 1
#define ROCKSDB_CUCKOO_ADD_KEY_AND_ALT_OVERRIDE override
#else
#define ROCKSDB_CUCKOO_ADD_KEY_AND_ALT_OVERRIDE
#endif

// `override` on CalculateSpace and EstimatedFpRate where they are virtual.
#if ROCKSDB_CUCKOO_VERSION_AT_LEAST(10, 9)
#define ROCKSDB_CUCKOO_SPACE_OVERRIDE override
#else
#define ROCKSDB_CUCKOO_SPACE_OVERRIDE
#endif

#if !ROCKSDB_CUCKOO_VERSION_AT_LEAST(10, 2)
#define ROCKSDB_CUCKOO_HAS_FAIL_IF_OPTIONS_FILE_ERROR 1
#endif

namespace rocksdb_cuckoo {

// DB::Open on every version.
inline ROCKSDB_NAMESPACE::Status OpenDb(
    const ROCKSDB_NAMESPACE::Options& options, const std::string& path,
    std::unique_ptr<ROCKSDB_NAMESPACE::DB>* db) {
#if ROCKSDB_CUCKOO_VERSION_AT_LEAST(9, 11)
  return ROCKSDB_NAMESPACE::DB::Open(options, path, db);
#else
  ROCKSDB_NAMESPACE::DB* raw = nullptr;
  const ROCKSDB_NAMESPACE::Status status =
      ROCKSDB_NAMESPACE::DB::Open(options, path, &raw);
  db->reset(raw);
  return status;
#endif
}

// DB::OpenAsSecondary on every version: a read-only instance beside a
// running primary, which TryCatchUpWithPrimary brings up to date.
inline ROCKSDB_NAMESPACE::Status OpenSecondaryDb(
    const ROCKSDB_NAMESPACE::Options& options, const std::string& path,
    const std::string& secondary_path,
    std::unique_ptr<ROCKSDB_NAMESPACE::DB>* db) {
#if ROCKSDB_CUCKOO_VERSION_AT_LEAST(9, 11)
  return ROCKSDB_NAMESPACE::DB::OpenAsSecondary(options, path, secondary_path,
                                                db);
#else
  ROCKSDB_NAMESPACE::DB* raw = nullptr;
  const ROCKSDB_NAMESPACE::Status status =
      ROCKSDB_NAMESPACE::DB::OpenAsSecondary(options, path, secondary_path,
                                             &raw);
  db->reset(raw);
  return status;
#endif
}

}  // namespace rocksdb_cuckoo
