// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The packed bucket table: a read-only view over memory it does not own (a
// RocksDB filter block, unaligned), and the mutable table that owns its
// bytes, both reading and writing buckets through the codec of their layout
// (AnyBucketCodec, bucket_codec.h). The layout and its bits are in
// bucket_layout.h; the table types that fix a codec at compile time are in
// table_types.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "cuckoo/bucket_codec.h"
#include "cuckoo/bucket_layout.h"
#include "cuckoo/hashing.h"
#include "cuckoo/relocatable_array.h"

namespace cuckoo {

// Read-only access to a packed table in memory the view does not own. The
// memory must hold TableDataBytes(layout, num_buckets) + kTablePaddingBytes
// bytes; it may be unaligned. Thread-safe for concurrent readers.
class BucketTableView {
 public:
  BucketTableView() = default;
  BucketTableView(const BucketLayout& layout, uint32_t num_buckets,
                  const uint8_t* data)
      : data_(data),
        num_buckets_(num_buckets),
        bits_per_bucket_(static_cast<uint32_t>(layout.BitsPerBucket())),
        layout_(layout),
        codec_(layout) {}

  const BucketLayout& layout() const { return layout_; }
  uint32_t num_buckets() const { return num_buckets_; }
  const uint8_t* data() const { return data_; }
  const AnyBucketCodec& codec() const { return codec_; }

  // Address of the first byte of a bucket, for prefetching.
  const uint8_t* BucketAddress(uint32_t bucket) const {
    return data_ + ((uint64_t{bucket} * bits_per_bucket_) >> 3);
  }

  // Calls visit(slot, fingerprint) for each slot of the bucket, in slot
  // order; 0 is empty. Semi-sorted buckets come out in ascending order.
  template <typename Visit>
  void ForEachSlot(uint32_t bucket, Visit&& visit) const {
    uint32_t held[kMaxBucketSize] = {};
    codec_.Load(data_, bucket, held);
    for (int slot = 0; slot < layout_.bucket_size; ++slot) {
      visit(slot, held[slot]);
    }
  }

  // Copies the bucket's fingerprints to out[0, bucket_size); 0 is empty.
  // Semi-sorted buckets come out in ascending order.
  void Load(uint32_t bucket, uint32_t* out) const {
    codec_.Load(data_, bucket, out);
  }

  // Starts loading both buckets of a key into the cache.
  void Prefetch(const KeyPosition& position) const {
    PrefetchBucket(position.bucket);
    PrefetchBucket(position.alternate);
  }
  void PrefetchBucket(uint32_t bucket) const {
    __builtin_prefetch(BucketAddress(bucket));
  }

  // Number of nonempty slots of the bucket.
  int Occupancy(uint32_t bucket) const {
    return codec_.Occupancy(data_, bucket);
  }

  // For validation of untrusted data: whether the semi-sort code of a bucket
  // is one that an encoder can produce. Always true for plain buckets.
  bool HasValidCode(uint32_t bucket) const {
    return codec_.HasValidCode(data_, bucket);
  }

 private:
  const uint8_t* data_ = nullptr;
  uint32_t num_buckets_ = 0;
  uint32_t bits_per_bucket_ = 48;
  BucketLayout layout_;
  AnyBucketCodec codec_;
};

// Keys per chunk of a batched lookup.
inline constexpr size_t kProbeChunk = 32;

// The batched lookup of the dynamic filter and of the plugin's reader: for
// up to kProbeChunk keys at a time, locate(i) gives key i's position and
// prefetch(position) fetches both of its buckets; then probe(i, position)
// runs for each, so that the cache misses of a chunk overlap instead of
// following each other.
template <typename Locate, typename Prefetch, typename Probe>
void LocatePrefetchProbe(size_t count, Locate&& locate, Prefetch&& prefetch,
                         Probe&& probe) {
  KeyPosition positions[kProbeChunk];
  for (size_t begin = 0; begin < count; begin += kProbeChunk) {
    const size_t n = std::min(kProbeChunk, count - begin);
    for (size_t i = 0; i < n; ++i) {
      positions[i] = locate(begin + i);
      prefetch(positions[i]);
    }
    for (size_t i = 0; i < n; ++i) probe(begin + i, positions[i]);
  }
}

// Keys ahead of the one being stored whose buckets are being fetched.
inline constexpr size_t kStoreAhead = 8;

// The loop of the writes: the dynamic filter's batched insert and the
// static build's passes. While key i is stored, both buckets of key
// i + kStoreAhead are being fetched. A store reads and writes its buckets,
// and its work waits for them in the core's out-of-order window; a window
// of keys that slides keeps a steady number of fetches in flight, where
// LocatePrefetchProbe's chunks start all of theirs before the first store
// (slower for stores on tables larger than the caches). locate(i), called
// once per key and in order, gives key i's position; prefetch(position)
// fetches both of its buckets; store(i, position) handles the key, and
// returns false to stop. Returns how many keys it handled.
template <typename Locate, typename Prefetch, typename Store>
CUCKOO_ALWAYS_INLINE size_t LocatePrefetchStore(size_t count, Locate&& locate,
                                                Prefetch&& prefetch,
                                                Store&& store) {
  KeyPosition ahead[kStoreAhead];
  const size_t first = std::min(count, kStoreAhead);
  for (size_t i = 0; i < first; ++i) {
    ahead[i] = locate(i);
    prefetch(ahead[i]);
  }
  // Each key's slot of the window takes the key kStoreAhead after it, until
  // the last ones.
  size_t i = 0;
  for (; i + kStoreAhead < count; ++i) {
    KeyPosition& slot = ahead[i % kStoreAhead];
    const KeyPosition position = slot;
    slot = locate(i + kStoreAhead);
    prefetch(slot);
    if (!store(i, position)) return i + 1;
  }
  for (; i < count; ++i) {
    if (!store(i, ahead[i % kStoreAhead])) return i + 1;
  }
  return count;
}

// A packed table that owns its bytes (data plus zero padding).
class BucketTable {
 public:
  BucketTable(const BucketLayout& layout, uint32_t num_buckets)
      : bytes_(TableDataBytes(layout, num_buckets) + kTablePaddingBytes, 0),
        view_(layout, num_buckets, bytes_.data()) {}

  BucketTable(const BucketTable& other)
      : bytes_(other.bytes_),
        view_(other.layout(), other.num_buckets(), bytes_.data()) {}
  BucketTable& operator=(const BucketTable& other) {
    if (this != &other) {
      bytes_ = other.bytes_;
      view_ =
          BucketTableView(other.layout(), other.num_buckets(), bytes_.data());
    }
    return *this;
  }
  // Moving the array keeps its storage, so the view stays valid.
  BucketTable(BucketTable&&) noexcept = default;
  BucketTable& operator=(BucketTable&&) noexcept = default;

  const BucketTableView& view() const { return view_; }
  const BucketLayout& layout() const { return view_.layout(); }
  uint32_t num_buckets() const { return view_.num_buckets(); }
  // Data and padding, as stored.
  const RelocatableArray<uint8_t>& bytes() const { return bytes_; }
  RelocatableArray<uint8_t>& mutable_bytes() { return bytes_; }

  // Hands the bytes to a defragmenter (RelocatableArray::Relocate).
  template <typename Move>
  bool Relocate(Move&& move) {
    if (!bytes_.Relocate(std::forward<Move>(move))) return false;
    view_ = BucketTableView(layout(), num_buckets(), bytes_.data());
    return true;
  }

  void Clear() { std::fill(bytes_.begin(), bytes_.end(), 0); }

  // Replaces the first slot holding `from` by `to`; false if no slot holds
  // `from`. An empty slot holds 0: Replace(bucket, 0, f) adds f to a bucket
  // with room, and Replace(bucket, f, 0) removes one copy of f.
  bool Replace(uint32_t bucket, uint32_t from, uint32_t to) {
    return view_.codec().Replace(bytes_.data(), bucket, from, to);
  }

  // Puts `fingerprint` into slot `slot` and returns what was there. (In a
  // semi-sorted bucket, slot k is the k-th smallest fingerprint.)
  uint32_t Swap(uint32_t bucket, int slot, uint32_t fingerprint) {
    return view_.codec().Swap(bytes_.data(), bucket, slot, fingerprint);
  }

 private:
  RelocatableArray<uint8_t> bytes_;
  BucketTableView view_;
};

}  // namespace cuckoo
