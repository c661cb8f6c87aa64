// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// What the cache-penetration example's two modes share: the catalogue (a
// RocksDB database with the cuckoofilter policy, its item keys and their
// hashes), the service's LRU cache, what a gate did in a window, and flag
// parsing. cache_penetration.cc runs three gates in one process;
// shared_gate.cc runs the CF module in a Redis server as the gate of
// several client processes.
#pragma once

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuckoo/hashing.h"
#include "cuckoo_filter_policy.h"
#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/object_registry.h"
#include "rocksdb_interfaces.h"

namespace catalogue {

namespace rdb = ROCKSDB_NAMESPACE;

inline uint64_t ParseCount(const char* text, const char* flag) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || value == 0 || text[0] == '-') {
    std::fprintf(stderr, "cache_penetration: %s wants a positive integer\n",
                 flag);
    std::exit(2);
  }
  return value;
}

inline std::string ItemKey(uint64_t id) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "item:%012" PRIu64, id);
  return buffer;
}

inline uint64_t KeyHash(const std::string& key) {
  return cuckoo::HashKey(key.data(), key.size());
}

// An LRU cache of item values.
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity) {}
  bool Get(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    order_.splice(order_.begin(), order_, it->second);
    return true;
  }
  void Put(const std::string& key) {
    auto it = index_.find(key);
    if (it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return;
    }
    order_.push_front(key);
    index_[key] = order_.begin();
    if (order_.size() > capacity_) {
      index_.erase(order_.back());
      order_.pop_back();
    }
  }
  void Erase(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return;
    order_.erase(it->second);
    index_.erase(it);
  }

 private:
  size_t capacity_;
  std::list<std::string> order_;
  std::unordered_map<std::string, std::list<std::string>::iterator> index_;
};

// What one gate did in one window.
struct GateCounts {
  uint64_t absent_requests = 0;  // requests for IDs that do not exist
  uint64_t passed_absent = 0;    // ... that the gate let through
  uint64_t db_reads = 0;         // cache misses the gate let through
  uint64_t db_reads_avoided = 0;
  uint64_t false_negatives = 0;  // existing IDs the gate turned away

  void Add(const GateCounts& other) {
    absent_requests += other.absent_requests;
    passed_absent += other.passed_absent;
    db_reads += other.db_reads;
    db_reads_avoided += other.db_reads_avoided;
    false_negatives += other.false_negatives;
  }
};

// The ID of the next request: 85% existing IDs; 15% absent, a deleted ID
// (when there are any) half the time, else an ID that never existed.
inline uint64_t NextRequestId(std::mt19937_64& rng,
                              const std::vector<uint64_t>& live,
                              const std::vector<uint64_t>& deleted) {
  const uint64_t dice = rng() % 100;
  if (dice < 85) return live[rng() % live.size()];
  if (dice < 92 && !deleted.empty()) return deleted[rng() % deleted.size()];
  return (uint64_t{1} << 40) + rng() % (uint64_t{1} << 40);
}

// How the catalogue is opened: the service that writes it, or a client
// process that reads it beside the writer (a secondary instance, brought
// up to date with TryCatchUpWithPrimary).
enum class Access { kWriter, kReader };

inline std::unique_ptr<rdb::DB> OpenCatalogue(
    const std::string& path, Access access = Access::kWriter,
    const std::string& secondary_path = "") {
  rdb::ConfigOptions config;
  config.ignore_unknown_options = false;
  config.ignore_unsupported_options = false;
  rocksdb_cuckoo::cuckoo_filter_register(*rdb::ObjectLibrary::Default(),
                                         "cuckoo");
  rdb::BlockBasedTableOptions table;
  rdb::Status status = rdb::GetBlockBasedTableOptionsFromString(
      config, rdb::BlockBasedTableOptions(), "filter_policy=cuckoofilter:10",
      &table);
  if (!status.ok() || table.filter_policy == nullptr ||
      std::strcmp(table.filter_policy->Name(),
                  rocksdb_cuckoo::CuckooFilterPolicy::kClassName()) != 0) {
    std::fprintf(stderr, "cache_penetration: cuckoofilter not in effect: %s\n",
                 status.ToString().c_str());
    std::exit(1);
  }
  rdb::Options options;
  options.table_factory.reset(rdb::NewBlockBasedTableFactory(table));
  std::unique_ptr<rdb::DB> db;
  if (access == Access::kWriter) {
    options.create_if_missing = true;
    options.error_if_exists = true;
    status = rocksdb_cuckoo::OpenDb(options, path, &db);
  } else {
    options.max_open_files = -1;  // what a secondary instance needs
    status =
        rocksdb_cuckoo::OpenSecondaryDb(options, path, secondary_path, &db);
  }
  if (!status.ok()) {
    std::fprintf(stderr, "cache_penetration: cannot open %s: %s\n",
                 path.c_str(), status.ToString().c_str());
    std::exit(1);
  }
  return db;
}

inline void Check(const rdb::Status& status, const char* what) {
  if (!status.ok()) {
    std::fprintf(stderr, "cache_penetration: %s: %s\n", what,
                 status.ToString().c_str());
    std::exit(1);
  }
}

// The catalogue's items: IDs 0..items-1 at start, added IDs continuing from
// there, in the database and in the service's model of it (which IDs exist
// and which were deleted).
class Catalogue {
 public:
  Catalogue(const std::string& path, uint64_t items)
      : db_(OpenCatalogue(path)), next_id_(items) {
    for (uint64_t id = 0; id < items; ++id) Insert(id);
    Check(db_->Flush(rdb::FlushOptions()), "flush");
  }

  rdb::DB& db() { return *db_; }
  const std::vector<uint64_t>& live() const { return live_; }
  const std::vector<uint64_t>& deleted() const { return deleted_; }
  bool Exists(uint64_t id) const { return live_index_.count(id) != 0; }

  // Adds a new item; returns its ID.
  uint64_t Add() {
    const uint64_t id = next_id_++;
    Insert(id);
    return id;
  }

  // Deletes an existing item chosen by rng; returns its ID.
  uint64_t DeleteOne(std::mt19937_64& rng) {
    const size_t at = rng() % live_.size();
    const uint64_t id = live_[at];
    Check(db_->Delete(rdb::WriteOptions(), ItemKey(id)), "delete");
    live_[at] = live_.back();
    live_index_[live_[at]] = at;
    live_.pop_back();
    live_index_.erase(id);
    deleted_.push_back(id);
    return id;
  }

 private:
  void Insert(uint64_t id) {
    Check(db_->Put(rdb::WriteOptions(), ItemKey(id), std::string(100, 'v')),
          "put");
    live_index_[id] = live_.size();
    live_.push_back(id);
  }

  std::unique_ptr<rdb::DB> db_;
  uint64_t next_id_;
  std::vector<uint64_t> live_;  // IDs that exist, in no order
  std::unordered_map<uint64_t, size_t> live_index_;
  std::vector<uint64_t> deleted_;
};

// A request that got past the cache and the gate: reads the item from the
// database and caches it when it exists. False, with a message, when the
// database and the caller's model of the catalogue disagree on it.
inline bool ReadThrough(rdb::DB& db, LruCache& cache, const std::string& key,
                        bool exists) {
  std::string value;
  const rdb::Status status = db.Get(rdb::ReadOptions(), key, &value);
  if (status.ok() != exists) {
    std::fprintf(stderr,
                 "cache_penetration: the database and the model disagree on "
                 "%s\n",
                 key.c_str());
    return false;
  }
  if (exists) cache.Put(key);
  return true;
}

}  // namespace catalogue
