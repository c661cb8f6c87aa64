// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Cross-version reads: writes an SST file with the cuckoo filter under one
// RocksDB release, or ingests such a file into a fresh DB under another and
// reads it back. scripts/check-cross-version.sh runs it both ways between the
// releases it is built against; the output states whether every key was
// found, whether the filter was in effect (its tickers), and which absent
// keys it let through, so that two releases can be compared key for key.
//
// usage: cross_version_sst write FILE [NUM_KEYS]
//        cross_version_sst read FILE [NUM_KEYS]
// Exit status 0 when every check passed.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "cuckoo/hashing.h"
#include "cuckoo_filter_policy.h"
#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/sst_file_writer.h"
#include "rocksdb/statistics.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/object_registry.h"
#include "rocksdb_interfaces.h"

namespace {

namespace rdb = ROCKSDB_NAMESPACE;

std::string Key(uint64_t i) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "key%012" PRIu64, i);
  return buffer;
}
// Between Key(i) and Key(i + 1), so inside the file's key range.
std::string AbsentKey(uint64_t i) { return Key(i) + "x"; }

int Fail(const std::string& what, const rdb::Status& status) {
  std::fprintf(stderr, "cross_version_sst: %s: %s\n", what.c_str(),
               status.ToString().c_str());
  return 1;
}

rdb::Options MakeOptions() {
  rdb::ConfigOptions config;
  config.ignore_unsupported_options = false;
  config.ignore_unknown_options = false;
  config.input_strings_escaped = false;
  rdb::BlockBasedTableOptions table;
  // format_version 5 is the newest that RocksDB 7.8 reads.
  const rdb::Status status = rdb::GetBlockBasedTableOptionsFromString(
      config, rdb::BlockBasedTableOptions(),
      "filter_policy=cuckoofilter:10;format_version=5", &table);
  if (!status.ok()) {
    std::fprintf(stderr, "cross_version_sst: %s\n", status.ToString().c_str());
    std::exit(1);
  }
  rdb::Options options;
  options.table_factory.reset(rdb::NewBlockBasedTableFactory(table));
  options.compression = rdb::kSnappyCompression;
  return options;
}

int Write(const std::string& file, uint64_t num_keys) {
  rdb::SstFileWriter writer(rdb::EnvOptions(), MakeOptions());
  rdb::Status status = writer.Open(file);
  if (!status.ok()) return Fail("opening " + file, status);
  for (uint64_t i = 0; i < num_keys && status.ok(); ++i) {
    status = writer.Put(Key(i), "v" + std::to_string(i));
  }
  if (status.ok()) status = writer.Finish();
  if (!status.ok()) return Fail("writing " + file, status);
  std::printf("RocksDB %d.%d.%d wrote %" PRIu64 " keys to %s\n", ROCKSDB_MAJOR,
              ROCKSDB_MINOR, ROCKSDB_PATCH, num_keys, file.c_str());
  return 0;
}

int Read(const std::string& file, uint64_t num_keys) {
  const std::string db_path = file + ".db";
  std::filesystem::remove_all(db_path);
  rdb::Options options = MakeOptions();
  options.create_if_missing = true;
  options.statistics = rdb::CreateDBStatistics();
  std::unique_ptr<rdb::DB> db;
  rdb::Status status = rocksdb_cuckoo::OpenDb(options, db_path, &db);
  if (!status.ok()) return Fail("opening " + db_path, status);
  rdb::IngestExternalFileOptions ingest;
  ingest.move_files = false;
  status = db->IngestExternalFile({file}, ingest);
  if (!status.ok()) return Fail("ingesting " + file, status);

  int failures = 0;
  std::string value;
  uint64_t found = 0;
  for (uint64_t i = 0; i < num_keys; ++i) {
    found += db->Get(rdb::ReadOptions(), Key(i), &value).ok() &&
             value == "v" + std::to_string(i);
  }
  if (found != num_keys) {
    std::printf("FAILED: %" PRIu64 " of %" PRIu64 " keys found\n", found,
                num_keys);
    ++failures;
  }
  // Which absent keys the filter let through: a lookup the filter answers
  // adds one to BLOOM_FILTER_USEFUL. The digest of their indices compares
  // releases key for key.
  uint64_t false_positives = 0;
  uint64_t digest = 0;
  uint64_t wrongly_found = 0;
  const uint64_t absent = num_keys - 1;
  for (uint64_t i = 0; i < absent; ++i) {
    const uint64_t useful_before =
        options.statistics->getTickerCount(rdb::BLOOM_FILTER_USEFUL);
    wrongly_found +=
        !db->Get(rdb::ReadOptions(), AbsentKey(i), &value).IsNotFound();
    if (options.statistics->getTickerCount(rdb::BLOOM_FILTER_USEFUL) ==
        useful_before) {
      ++false_positives;
      digest = cuckoo::HashKey(&i, sizeof(i)) ^ (digest * 0x9E3779B97F4A7C15u);
    }
  }
  const uint64_t useful =
      options.statistics->getTickerCount(rdb::BLOOM_FILTER_USEFUL);
  if (wrongly_found != 0) {
    std::printf("FAILED: %" PRIu64 " absent keys found\n", wrongly_found);
    ++failures;
  }
  if (useful == 0) {
    std::printf("FAILED: the filter was not in effect (no useful lookups)\n");
    ++failures;
  }
  rdb::TablePropertiesCollection properties;
  status = db->GetPropertiesOfAllTables(&properties);
  if (!status.ok()) return Fail("reading the table properties", status);
  for (const auto& [name, props] : properties) {
    if (props->filter_policy_name !=
        rocksdb_cuckoo::CuckooFilterPolicy::kClassName()) {
      std::printf("FAILED: %s names filter policy '%s'\n", name.c_str(),
                  props->filter_policy_name.c_str());
      ++failures;
    }
  }
  std::printf("RocksDB %d.%d.%d read %s: %" PRIu64 " of %" PRIu64
              " keys found; %" PRIu64 " absent keys, %" PRIu64
              " answered by the filter, %" PRIu64
              " false positives (%.4f%%), digest %016" PRIx64 "\n",
              ROCKSDB_MAJOR, ROCKSDB_MINOR, ROCKSDB_PATCH, file.c_str(), found,
              num_keys, absent, useful, false_positives,
              100.0 * static_cast<double>(false_positives) /
                  static_cast<double>(absent),
              digest);
  db.reset();
  std::filesystem::remove_all(db_path);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 ||
      (std::string(argv[1]) != "write" && std::string(argv[1]) != "read")) {
    std::fprintf(stderr,
                 "usage: cross_version_sst write|read FILE [NUM_KEYS]\n");
    return 2;
  }
  const uint64_t num_keys =
      argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 100000;
  if (num_keys < 2) {
    std::fprintf(stderr, "cross_version_sst: NUM_KEYS must be at least 2\n");
    return 2;
  }
  rocksdb_cuckoo::cuckoo_filter_register(*rdb::ObjectLibrary::Default(), "");
  return std::string(argv[1]) == "write" ? Write(argv[2], num_keys)
                                         : Read(argv[2], num_keys);
}
