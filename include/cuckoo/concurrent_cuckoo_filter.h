// A thread-safe CuckooFilter: a reader-writer lock around the dynamic filter.
// Lookups share the lock and run in parallel; Insert and Erase take it
// exclusively, because a kick-out walk may touch any bucket of the table.
#pragma once

#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <utility>
#include <vector>

#include "cuckoo/cuckoo_filter_serialization.h"

namespace cuckoo {

class ConcurrentCuckooFilter {
 public:
  explicit ConcurrentCuckooFilter(uint64_t num_buckets,
                                  const CuckooFilterOptions& options = {})
      : filter_(num_buckets, options) {}
  explicit ConcurrentCuckooFilter(CuckooFilter filter)
      : filter_(std::move(filter)) {}

  InsertResult Insert(uint64_t hash) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    return filter_.Insert(hash);
  }
  bool Erase(uint64_t hash) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    return filter_.Erase(hash);
  }
  void Clear() {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    filter_.Clear();
  }

  bool Contains(uint64_t hash) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return filter_.Contains(hash);
  }
  void ContainsBatch(const uint64_t* hashes, size_t count, bool* out) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    filter_.ContainsBatch(hashes, count, out);
  }
  uint32_t Count(uint64_t hash) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return filter_.Count(hash);
  }
  uint64_t Size() const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return filter_.Size();
  }
  CuckooFilterStats Stats() const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return filter_.Stats();
  }
  std::vector<uint8_t> Serialize() const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return SerializeCuckooFilter(filter_);
  }

 private:
  mutable std::shared_mutex mutex_;
  CuckooFilter filter_;
};

}  // namespace cuckoo
