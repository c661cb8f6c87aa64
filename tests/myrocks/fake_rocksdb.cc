// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// A stand-in for the RocksDB that MariaDB's ha_rocksdb.so links statically,
// for create_from_string_test.cc: built twice, as RocksDB 6.29.5 and as
// 7.8.3 (FAKE_ROCKSDB_VERSION), and loaded RTLD_LOCAL as mariadbd loads
// ha_rocksdb.so. It defines FilterPolicy::CreateFromString, which records
// the values it is asked for and answers Busy, a status no real parse
// gives, and calls it from another function, through its PLT, as
// ha_rocksdb.so's option parser does: with the preload in the global scope,
// that call reaches the preload.
#include <memory>
#include <string>

#include "rocksdb/convenience.h"
#include "rocksdb/env.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/version.h"

namespace ROCKSDB_NAMESPACE {

std::string GetRocksVersionAsString(bool with_patch) {
  static_cast<void>(with_patch);
  return FAKE_ROCKSDB_VERSION;
}

Env* Env::Default() { return nullptr; }
ConfigOptions::ConfigOptions() {}

namespace {
std::string* seen_values = new std::string();
}

Status FilterPolicy::CreateFromString(const ConfigOptions&,
                                      const std::string& value,
                                      std::shared_ptr<const FilterPolicy>*) {
  *seen_values += value + ";";
  return Status::Busy();
}

}  // namespace ROCKSDB_NAMESPACE

// The option parser's call: the status, and whether this library's own
// CreateFromString was reached.
extern "C" __attribute__((visibility("default"))) ROCKSDB_NAMESPACE::Status
FakeParseFilterPolicy(
    const std::string& value,
    std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy>* policy,
    bool* reached_own) {
  const size_t before = ROCKSDB_NAMESPACE::seen_values->size();
  const ROCKSDB_NAMESPACE::ConfigOptions options;
  ROCKSDB_NAMESPACE::Status status =
      ROCKSDB_NAMESPACE::FilterPolicy::CreateFromString(options, value, policy);
  *reached_own = ROCKSDB_NAMESPACE::seen_values->size() != before;
  return status;
}
