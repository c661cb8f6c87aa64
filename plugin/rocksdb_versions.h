// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// What differs between the RocksDB releases the project supports (7.8 to
// 11.8, and 6.29 inside MariaDB's MyRocks), as macros, for the plugin's
// headers and sources and for the tests and tools built with them
// (rocksdb_interfaces.h holds the functions that paper over it).
//
// RocksDB 6.29 (myrocks/): FilterPolicy is not yet Customizable, and it
// names the filter block after Name(), not CompatibilityName(); the builder
// has no Finish(buf, status) or MaybePostVerify (7.0), and no construction
// is charged to the block cache. The plugin's sources compile against its
// headers for the MyRocks preload, which links no RocksDB library: they
// may call no out-of-line RocksDB function there (rocksdb_interfaces.h).
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
// 11.x (rocksdb_interfaces.h: OpenDb and OpenSecondaryDb);
// DBOptions::fail_if_options_file_error is the default from 8.8 and was
// removed in 10.2.
#pragma once

#include "rocksdb/version.h"

#define ROCKSDB_CUCKOO_VERSION_AT_LEAST(major, minor) \
  (ROCKSDB_MAJOR > (major) ||                         \
   (ROCKSDB_MAJOR == (major) && ROCKSDB_MINOR >= (minor)))

#if ROCKSDB_MAJOR == 6 && ROCKSDB_MINOR == 29
#define ROCKSDB_CUCKOO_LEGACY_6_29 1
#elif !ROCKSDB_CUCKOO_VERSION_AT_LEAST(7, 8)
#error "rocksdb-cuckoo needs RocksDB 7.8 or later (or MyRocks' 6.29)"
#else
#define ROCKSDB_CUCKOO_LEGACY_6_29 0
#endif

// `override` on Finish(buf, status) and MaybePostVerify where they exist.
#if ROCKSDB_CUCKOO_LEGACY_6_29
#define ROCKSDB_CUCKOO_POST_VERIFY_OVERRIDE
#else
#define ROCKSDB_CUCKOO_POST_VERIFY_OVERRIDE override
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
