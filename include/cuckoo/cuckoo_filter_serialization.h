// The serialized form of a dynamic CuckooFilter: writing it
// (SerializeCuckooFilter), and reading it back from untrusted bytes with full
// validation (DeserializeCuckooFilter).
//
// Format, version 1 (all integers little-endian, no alignment assumed):
//   offset  size  field
//        0     4  magic "CKF\x01"
//        4     2  format version (1)
//        6     1  bucket size (2, 4, 8)
//        7     1  fingerprint bits (4..32)
//        8     1  flags: bit 0 = semi-sorted; other bits must be 0
//        9     3  reserved, 0
//       12     4  number of buckets (even, >= 2)
//       16     4  max kicks (<= 65536)
//       20     4  stash capacity (1..65536)
//       24     4  stash size (<= capacity)
//       28     4  peak stash size (stash size..capacity)
//       32     8  number of items
//       40     8  seed
//       48     8  generator state
//       56     8  total kicks
//       64     8  failed inserts
//       72   8 s  stash entries: bucket (4), fingerprint (4)
//        .     T  table: TableDataBytes(layout, buckets) + 7 zero bytes
//        .     8  XXH3-64 of every byte before it
// A reader rejects other versions, sizes that do not add up exactly, a wrong
// checksum, and contents no writer produces (limits out of range, stash
// entries out of range, semi-sort codes >= 3876, nonzero padding, an item
// count that disagrees with the occupied slots). The checksum detects damage,
// not intent: anyone can recompute it, so every field is bounded as well.
#pragma once

#include <xxhash.h>

#include <array>
#include <cstring>

#include "cuckoo/byte_io.h"
#include "cuckoo/cuckoo_filter.h"

namespace cuckoo {
namespace serialization {

inline constexpr uint8_t kMagic[4] = {'C', 'K', 'F', 0x01};
inline constexpr uint16_t kFormatVersion = 1;
inline constexpr size_t kHeaderBytes = 72;
inline constexpr size_t kStashEntryBytes = 8;
inline constexpr size_t kChecksumBytes = 8;

}  // namespace serialization

inline std::vector<uint8_t> SerializeCuckooFilter(const CuckooFilter& filter) {
  namespace s = serialization;
  const size_t size = s::kHeaderBytes +
                      filter.stash_.size() * s::kStashEntryBytes +
                      filter.table_.bytes().size() + s::kChecksumBytes;
  std::vector<uint8_t> out(size, 0);
  byte_io::Writer writer(out.data());
  writer.PutBytes(s::kMagic, sizeof(s::kMagic));
  writer.Put<uint16_t>(s::kFormatVersion);
  writer.Put<uint8_t>(static_cast<uint8_t>(filter.layout().bucket_size));
  writer.Put<uint8_t>(static_cast<uint8_t>(filter.layout().fingerprint_bits));
  writer.Put<uint8_t>(filter.layout().semi_sorted ? 1 : 0);
  writer.PutBytes(std::array<uint8_t, 3>{}.data(), 3);
  writer.Put<uint32_t>(filter.NumBuckets());
  writer.Put<uint32_t>(filter.options_.max_kicks);
  writer.Put<uint32_t>(filter.options_.stash_capacity);
  writer.Put<uint32_t>(static_cast<uint32_t>(filter.stash_.size()));
  writer.Put<uint32_t>(filter.peak_stash_size_);
  writer.Put<uint64_t>(filter.num_items_);
  writer.Put<uint64_t>(filter.options_.seed);
  writer.Put<uint64_t>(filter.rng_state_);
  writer.Put<uint64_t>(filter.total_kicks_);
  writer.Put<uint64_t>(filter.failed_inserts_);
  for (const CuckooFilter::StashEntry& entry : filter.stash_) {
    writer.Put<uint32_t>(entry.bucket);
    writer.Put<uint32_t>(entry.fingerprint);
  }
  writer.PutBytes(filter.table_.bytes().data(), filter.table_.bytes().size());
  writer.Put<uint64_t>(XXH3_64bits(out.data(), size - s::kChecksumBytes));
  return out;
}

inline std::optional<CuckooFilter> DeserializeCuckooFilter(const uint8_t* data,
                                                           size_t size,
                                                           std::string* error) {
  namespace s = serialization;
  auto fail = [error](const std::string& why) {
    if (error != nullptr) *error = "cuckoo filter: " + why;
    return std::nullopt;
  };
  if (data == nullptr || size < s::kHeaderBytes + s::kChecksumBytes) {
    return fail("buffer of " + std::to_string(size) +
                " bytes is shorter than the header");
  }
  if (std::memcmp(data, s::kMagic, sizeof(s::kMagic)) != 0) {
    return fail("bad magic: not a serialized cuckoo filter");
  }
  const uint16_t version = byte_io::Load<uint16_t>(data + 4);
  if (version != s::kFormatVersion) {
    return fail("unsupported format version " + std::to_string(version) +
                " (this build reads version " +
                std::to_string(s::kFormatVersion) + ")");
  }
  CuckooFilterOptions options;
  options.layout.bucket_size = data[6];
  options.layout.fingerprint_bits = data[7];
  const uint8_t flags = data[8];
  if ((flags & ~1u) != 0 || data[9] != 0 || data[10] != 0 || data[11] != 0) {
    return fail("unknown flags or nonzero reserved bytes");
  }
  options.layout.semi_sorted = (flags & 1u) != 0;
  std::string layout_problem = options.layout.Validate();
  if (!layout_problem.empty()) return fail(layout_problem);
  const uint32_t num_buckets = byte_io::Load<uint32_t>(data + 12);
  options.max_kicks = byte_io::Load<uint32_t>(data + 16);
  options.stash_capacity = byte_io::Load<uint32_t>(data + 20);
  const uint32_t stash_size = byte_io::Load<uint32_t>(data + 24);
  const uint32_t peak_stash_size = byte_io::Load<uint32_t>(data + 28);
  const uint64_t num_items = byte_io::Load<uint64_t>(data + 32);
  options.seed = byte_io::Load<uint64_t>(data + 40);
  if (num_buckets < 2 || num_buckets % 2 != 0) {
    return fail("bucket count " + std::to_string(num_buckets) +
                " is not an even number >= 2");
  }
  if (options.stash_capacity == 0 ||
      options.stash_capacity > kMaxStashCapacity ||
      stash_size > options.stash_capacity || peak_stash_size < stash_size ||
      peak_stash_size > options.stash_capacity) {
    return fail("stash size " + std::to_string(stash_size) + " / peak " +
                std::to_string(peak_stash_size) + " / capacity " +
                std::to_string(options.stash_capacity) + " out of range");
  }
  if (options.max_kicks > kMaxKicksLimit) {
    return fail("max kicks " + std::to_string(options.max_kicks) + " exceeds " +
                std::to_string(kMaxKicksLimit));
  }
  const uint64_t table_bytes =
      TableDataBytes(options.layout, num_buckets) + kTablePaddingBytes;
  const uint64_t expected_size = s::kHeaderBytes +
                                 uint64_t{stash_size} * s::kStashEntryBytes +
                                 table_bytes + s::kChecksumBytes;
  if (expected_size != size) {
    return fail("buffer has " + std::to_string(size) +
                " bytes but the header describes " +
                std::to_string(expected_size));
  }
  const size_t checksum_offset = size - s::kChecksumBytes;
  if (XXH3_64bits(data, checksum_offset) !=
      byte_io::Load<uint64_t>(data + checksum_offset)) {
    return fail("checksum mismatch: the buffer is corrupt");
  }

  CuckooFilter filter(num_buckets, options);
  filter.rng_state_ = byte_io::Load<uint64_t>(data + 48);
  filter.total_kicks_ = byte_io::Load<uint64_t>(data + 56);
  filter.failed_inserts_ = byte_io::Load<uint64_t>(data + 64);
  filter.peak_stash_size_ = peak_stash_size;
  const uint8_t* cursor = data + s::kHeaderBytes;
  for (uint32_t i = 0; i < stash_size; ++i, cursor += s::kStashEntryBytes) {
    CuckooFilter::StashEntry entry{byte_io::Load<uint32_t>(cursor),
                                   byte_io::Load<uint32_t>(cursor + 4)};
    if (entry.bucket >= num_buckets || entry.fingerprint == 0 ||
        entry.fingerprint > filter.hashing_.max_fingerprint()) {
      return fail("stash entry " + std::to_string(i) + " is out of range");
    }
    filter.stash_.push_back(entry);
  }
  std::vector<uint8_t>& bytes = filter.table_.mutable_bytes();
  std::memcpy(bytes.data(), cursor, bytes.size());
  const size_t data_bytes = bytes.size() - kTablePaddingBytes;
  for (size_t i = data_bytes; i < bytes.size(); ++i) {
    if (bytes[i] != 0) return fail("nonzero table padding");
  }
  // Bits after the last bucket inside the last data byte must be zero too.
  const uint64_t used_bits =
      uint64_t{num_buckets} * options.layout.BitsPerBucket();
  if (used_bits % 8 != 0 && (bytes[data_bytes - 1] >> (used_bits % 8)) != 0) {
    return fail("nonzero bits after the last bucket");
  }
  uint64_t occupied = 0;
  for (uint32_t bucket = 0; bucket < num_buckets; ++bucket) {
    if (!filter.table_.view().HasValidCode(bucket)) {
      return fail("bucket " + std::to_string(bucket) +
                  " has an invalid semi-sort code");
    }
    occupied += static_cast<uint64_t>(filter.table_.view().Occupancy(bucket));
  }
  if (occupied + stash_size != num_items) {
    return fail("item count " + std::to_string(num_items) +
                " disagrees with the " + std::to_string(occupied + stash_size) +
                " stored fingerprints");
  }
  filter.num_items_ = num_items;
  return filter;
}

}  // namespace cuckoo
