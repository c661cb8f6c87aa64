// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The value of a CF key: a dynamic cuckoo filter, or one still arriving
// through CF.LOADCHUNK; how items are hashed into it; and the chunks that
// dump and rebuild it. No server types: the module's data type
// (cf_module.cc) calls these.
//
// Hashing
// -------
// An item is hashed with XXH3-64 seeded by the filter's own 64-bit seed
// (CuckooFilterOptions::seed, which also seeds the choice of kick-out
// victims). Every filter gets a random seed when it is created, so that
// nobody can choose items that collide in one filter's buckets and fill it.
// The seed is part of the filter's serialization, so it survives RDB, AOF,
// SCANDUMP and COPY. A replica gets it in the CF.RESERVE ... SEED command
// that the primary replicates for every filter it creates: primary and
// replica then run the same operations on the same state and hold the same
// bytes (every write of the filter is deterministic given its state).
// Filters with different seeds hash an item differently, so only filters
// with the same seed can be merged.
//
// Its persistent forms are written and read by cf_module_format.h, which
// docs/cf-module-format.md describes byte by byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuckoo/cuckoo_filter.h"
#include "cuckoo/dynamic_filter_format.h"

namespace cuckoo_cf {

// The largest serialized filter CF.LOADCHUNK and RDB loading accept: a
// bound on what one command can make the server allocate.
inline constexpr uint64_t kMaxSerializedBytes = uint64_t{1} << 32;

// Chunk payloads of CF.SCANDUMP and the AOF rewrite.
inline constexpr size_t kChunkPayloadBytes = size_t{16} << 20;

uint64_t HashItem(const cuckoo::CuckooFilter& filter, const char* data,
                  size_t size);

// The loader of a value still loading, on the heap and copied with the
// value. Held inline, its hash state (aligned to 64 bytes) would make every
// value over-aligned, which the server's allocator and its active
// defragmentation do not serve (cf_module.cc, Defrag).
class HeapLoader {
 public:
  HeapLoader() = default;
  HeapLoader(const HeapLoader& other)
      : loader_(other.loader_ == nullptr
                    ? nullptr
                    : std::make_unique<cuckoo::CuckooFilterChunkLoader>(
                          *other.loader_)) {}
  HeapLoader& operator=(const HeapLoader& other) {
    HeapLoader copy(other);
    loader_.swap(copy.loader_);
    return *this;
  }
  HeapLoader(HeapLoader&&) noexcept = default;
  HeapLoader& operator=(HeapLoader&&) noexcept = default;

  void emplace(uint64_t max_bytes) {
    loader_ = std::make_unique<cuckoo::CuckooFilterChunkLoader>(max_bytes);
  }
  void reset() { loader_.reset(); }
  cuckoo::CuckooFilterChunkLoader* operator->() { return loader_.get(); }

 private:
  std::unique_ptr<cuckoo::CuckooFilterChunkLoader> loader_;
};

class FilterValue {
 public:
  // bucket_size: the BUCKETSIZE the filter was reserved with, or 0 for its
  // layout's slots per bucket.
  explicit FilterValue(cuckoo::CuckooFilter filter, int bucket_size = 0)
      : filter_(std::move(filter)),
        bucket_size_(bucket_size == filter_->options().layout.bucket_size
                         ? 0
                         : bucket_size) {}

  // A value that CF.LOADCHUNK fills from `first_chunk`, the chunk of
  // sequence 0; nullopt with *error set when the chunk is refused.
  static std::optional<FilterValue> StartLoad(const std::string& first_chunk,
                                              std::string* error);

  // False while the chunks are still arriving: only CF.LOADCHUNK, the
  // persistence and COPY may use the value then.
  bool ready() const { return filter_.has_value(); }
  const cuckoo::CuckooFilter& filter() const { return *filter_; }
  // The filter, to change it.
  cuckoo::CuckooFilter& mutable_filter() {
    dump_checksum_.reset();
    return *filter_;
  }

  // A ready value of a filter read from untrusted bytes, with the
  // BUCKETSIZE of its arguments chunk (0 without one); nullopt, with
  // *error set, when there is no filter, it is not a CF filter, or it
  // contradicts the arguments chunk.
  static std::optional<FilterValue> OfLoaded(
      std::optional<cuckoo::CuckooFilter> filter, int bucket_size,
      std::string* error);

  // The BUCKETSIZE CF.INFO reports (cf_module_format.h, "The arguments
  // chunk").
  int bucket_size() const {
    return bucket_size_ != 0 ? bucket_size_
                             : filter_->options().layout.bucket_size;
  }
  // The arguments chunk's BUCKETSIZE, or 0 when the value has none.
  int arguments_bucket_size() const { return bucket_size_; }
  // The chunks of a load in progress, the arguments chunk first if there
  // is one.
  const std::vector<std::string>& loaded_chunks() const { return chunks_; }

  // CuckooFilterDumper::ImageChecksum of the filter, kept until it changes,
  // so that each CF.SCANDUMP call does not read the whole filter.
  uint64_t DumpChecksum() const;

  // The chunk a load expects next, as CF.SCANDUMP numbers it (1 for the
  // first); 0 when the value is ready.
  uint64_t next_chunk_position() const;
  // Adds the next chunk of a load; when it is the last, checks the whole
  // filter and makes the value ready. On any error (*error set) the value
  // is as it was.
  bool LoadChunk(const std::string& chunk, std::string* error);

  // Hands the filter's heap allocations to a memory defragmenter
  // (CuckooFilter::RelocateStorage); returns how many moved. A value still
  // loading keeps its chunks where they are.
  template <typename Move>
  int RelocateStorage(Move&& move) {
    return filter_.has_value() ? filter_->RelocateStorage(move) : 0;
  }

  // Bytes held, for MEMORY USAGE and CF.INFO's "Size": the filter's table
  // and stash, and its walk's log (CuckooFilter::WalkLogBytes).
  size_t MemoryUsage() const;

  // CF.SCANDUMP's chunk at iterator `position` (0 for the first): the
  // arguments chunk if the value has one, then the filter's dump. False
  // past the last.
  bool DumpChunk(uint64_t position, std::vector<uint8_t>* chunk) const;

  // Calls emit(position, chunk) with the CF.LOADCHUNK arguments that
  // rebuild this value, in order (the AOF rewrite), one chunk at a time.
  void ForEachChunk(
      const std::function<void(uint64_t, const std::string&)>& emit) const;

 private:
  FilterValue() = default;
  bool Replay(std::string* error);
  // Makes the value ready with `filter`, unless it contradicts the
  // arguments chunk; false with *error set then.
  bool Adopt(std::optional<cuckoo::CuckooFilter> filter, std::string* error);

  std::optional<cuckoo::CuckooFilter> filter_;
  // The arguments chunk's BUCKETSIZE, or 0 without one. While loading, not
  // 0 when the first chunk is the arguments chunk.
  int bucket_size_ = 0;
  mutable std::optional<uint64_t> dump_checksum_;
  // A load in progress: the chunks so far, and the loader they fed.
  std::vector<std::string> chunks_;
  HeapLoader loader_;
};

}  // namespace cuckoo_cf
