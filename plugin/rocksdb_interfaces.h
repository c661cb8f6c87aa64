// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The functions that paper over what differs between the RocksDB releases
// the project supports (rocksdb_versions.h), for the plugin and for the
// tests and tools built with it.
#pragma once

#include <cstdarg>
#include <memory>
#include <string>

#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/status.h"
#include "rocksdb/table.h"
#include "rocksdb/version.h"
#include "rocksdb_versions.h"

namespace rocksdb_cuckoo {

// RocksDB's Log(level, logger, format, ...), through the logger's virtual
// functions, which every version has.
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
inline void
InfoLog(ROCKSDB_NAMESPACE::InfoLogLevel level,
        ROCKSDB_NAMESPACE::Logger* logger, const char* format, ...) {
  if (logger == nullptr || logger->GetInfoLogLevel() > level) return;
  va_list args;
  va_start(args, format);
  logger->Logv(level, format, args);
  va_end(args);
}

// Status::Corruption(message); 6.29 never asks the builder for one (it has
// no detect_filter_construct_corruption), and its status with a message is
// built out of line: there it carries none.
inline ROCKSDB_NAMESPACE::Status Corruption(const std::string& message) {
#if ROCKSDB_CUCKOO_LEGACY_6_29
  static_cast<void>(message);
  return ROCKSDB_NAMESPACE::Status::Corruption();
#else
  return ROCKSDB_NAMESPACE::Status::Corruption(message);
#endif
}

// BlockBasedTableOptions::detect_filter_construct_corruption, from 7.0.
inline bool DetectsConstructCorruption(
    const ROCKSDB_NAMESPACE::BlockBasedTableOptions& table_options) {
#if ROCKSDB_CUCKOO_LEGACY_6_29
  static_cast<void>(table_options);
  return false;
#else
  return table_options.detect_filter_construct_corruption;
#endif
}

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
