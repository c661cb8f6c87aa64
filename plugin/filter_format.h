// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The on-disk filter block of the RocksDB plugin, format version 1: encoding a
// built table into a block, and decoding a block from untrusted, possibly
// unaligned memory. No RocksDB types here; docs/filter-format.md describes the
// same format for readers of the files.
//
// Layout (little-endian, no alignment assumed):
//   offset size field
//        0    4 magic "CKFB"
//        4    1 format version (1)
//        5    1 kind: 0 = table, 1 = always match (no table follows)
//        6    1 bucket size (2, 4, 8)
//        7    1 fingerprint bits (4..32)
//        8    1 flags: bit 0 = semi-sorted; other bits 0
//        9    1 key hash: 0 = XXH3-64 with seed 0
//       10    2 reserved, 0
//       12    4 number of buckets (even, >= 2)
//       16    8 number of fingerprints stored (informational)
//       24    . table: TableDataBytes(layout, buckets) bytes, then 7 zero bytes
// A block with zero keys is an ordinary table of 2 empty buckets and matches
// nothing. The reader answers "may match" for anything it does not fully
// recognise: a newer version, another kind or hash, a size that does not add
// up, or a truncated block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cuckoo/bucket_layout.h"
#include "cuckoo/byte_io.h"
#include "cuckoo/sizing.h"
#include "cuckoo/static_builder.h"

namespace rocksdb_cuckoo {

inline constexpr uint8_t kBlockMagic[4] = {'C', 'K', 'F', 'B'};
inline constexpr uint8_t kBlockFormatVersion = 1;
inline constexpr size_t kBlockHeaderBytes = 24;

enum class BlockKind : uint8_t { kTable = 0, kAlwaysMatch = 1 };
enum class KeyHash : uint8_t { kXxh3Seed0 = 0 };

// Bytes of a table block for the given geometry.
inline uint64_t TableBlockBytes(const cuckoo::BucketLayout& layout,
                                uint64_t num_buckets) {
  return kBlockHeaderBytes + cuckoo::TableDataBytes(layout, num_buckets) +
         cuckoo::kTablePaddingBytes;
}

// Bytes of table data in a `block_bytes`-byte table block (0 when it is too
// small for the header and padding).
inline uint64_t BlockDataBytes(uint64_t block_bytes) {
  const uint64_t overhead = kBlockHeaderBytes + cuckoo::kTablePaddingBytes;
  return block_bytes <= overhead ? 0 : block_bytes - overhead;
}

// The geometry a builder with `config` plans for `entries` (> 0) entries:
// its layout at its load (cuckoo::PlaceStatic's first attempt).
inline cuckoo::TableGeometry PlannedGeometry(const cuckoo::FilterConfig& config,
                                             uint64_t entries) {
  return cuckoo::GeometryOf(
      config.layout,
      cuckoo::BucketsForLoad(entries, config.layout.bucket_size,
                             config.load_factor),
      entries);
}

// Never less than the bytes of the block that a builder with `config` writes
// for `entries` entries: the table at the planned size after the growth the
// static build allows for (MaxStaticTableBuckets), or the always-match block
// written when no table can hold them.
inline uint64_t MaxBlockBytes(const cuckoo::FilterConfig& config,
                              uint64_t entries) {
  const uint64_t buckets = cuckoo::MaxStaticTableBuckets(
      entries, config.layout.bucket_size, config.load_factor);
  if (buckets > cuckoo::kMaxNumBuckets) return kBlockHeaderBytes;
  return TableBlockBytes(config.layout, buckets);
}

// The expected false-positive rate of a `bytes`-byte block holding `entries`
// entries, written with `config`: the table's load follows from its size.
inline double BlockFalsePositiveRate(const cuckoo::FilterConfig& config,
                                     uint64_t entries, uint64_t bytes) {
  const uint64_t overhead = kBlockHeaderBytes + cuckoo::kTablePaddingBytes;
  const uint64_t buckets =
      bytes <= overhead
          ? 0
          : (bytes - overhead) * 8 / config.layout.BitsPerBucket();
  if (buckets < 2) return entries == 0 ? 0.0 : 1.0;
  const double slots = static_cast<double>(buckets) * config.layout.bucket_size;
  const double load = static_cast<double>(entries) / slots;
  return cuckoo::ExpectedFalsePositiveRate(config.layout,
                                           load < 1.0 ? load : 1.0);
}

// Writes the header of a table block into out[0, kBlockHeaderBytes).
inline void EncodeTableHeader(const cuckoo::BucketLayout& layout,
                              uint32_t num_buckets, uint64_t num_keys,
                              uint8_t* out) {
  cuckoo::byte_io::Writer writer(out);
  writer.PutBytes(kBlockMagic, sizeof(kBlockMagic));
  writer.Put<uint8_t>(kBlockFormatVersion);
  writer.Put<uint8_t>(static_cast<uint8_t>(BlockKind::kTable));
  writer.Put<uint8_t>(static_cast<uint8_t>(layout.bucket_size));
  writer.Put<uint8_t>(static_cast<uint8_t>(layout.fingerprint_bits));
  writer.Put<uint8_t>(layout.semi_sorted ? 1 : 0);
  writer.Put<uint8_t>(static_cast<uint8_t>(KeyHash::kXxh3Seed0));
  writer.Put<uint16_t>(0);
  writer.Put<uint32_t>(num_buckets);
  writer.Put<uint64_t>(num_keys);
}

// A filter block in memory, in the form RocksDB takes ownership of.
struct EncodedBlock {
  std::unique_ptr<char[]> data;
  size_t size = 0;
};

// The block of a placement: the header, then the packed table, written
// straight into the block.
inline EncodedBlock EncodePlacement(const cuckoo::StaticPlacement& placement) {
  EncodedBlock block;
  block.size = static_cast<size_t>(kBlockHeaderBytes + placement.table_bytes());
  block.data.reset(new char[block.size]);
  uint8_t* out = reinterpret_cast<uint8_t*>(block.data.get());
  EncodeTableHeader(placement.layout(), placement.num_buckets(),
                    placement.stats().stored_entries, out);
  placement.WriteTable(out + kBlockHeaderBytes);
  return block;
}

// The table block for a set of distinct key hashes (any range of uint64_t),
// as the builder writes it: the header, then the statically built table.
// Throws like cuckoo::PlaceStatic when no table can hold them.
template <typename Hashes>
EncodedBlock EncodeTableBlock(const Hashes& hashes,
                              const cuckoo::FilterConfig& config) {
  return EncodePlacement(
      cuckoo::PlaceStatic(hashes, config.layout, config.load_factor));
}

// The whole always-match block: written only when a table cannot be built.
inline std::vector<uint8_t> EncodeAlwaysMatchBlock() {
  std::vector<uint8_t> block(kBlockHeaderBytes, 0);
  std::memcpy(block.data(), kBlockMagic, sizeof(kBlockMagic));
  block[4] = kBlockFormatVersion;
  block[5] = static_cast<uint8_t>(BlockKind::kAlwaysMatch);
  return block;
}

struct DecodedBlock {
  // False means "answer may-match for every key".
  bool has_table = false;
  cuckoo::BucketLayout layout;
  uint32_t num_buckets = 0;
  uint64_t num_keys = 0;
  const uint8_t* table = nullptr;
  // Why there is no table, for logs and tests.
  std::string reason;
};

inline DecodedBlock DecodeBlock(const uint8_t* data, size_t size) {
  DecodedBlock block;
  if (data == nullptr || size < kBlockHeaderBytes) {
    block.reason = "block of " + std::to_string(size) +
                   " bytes is shorter than the header";
    return block;
  }
  if (std::memcmp(data, kBlockMagic, sizeof(kBlockMagic)) != 0) {
    block.reason = "bad magic";
    return block;
  }
  if (data[4] != kBlockFormatVersion) {
    block.reason = "unknown format version " + std::to_string(data[4]);
    return block;
  }
  if (data[5] != static_cast<uint8_t>(BlockKind::kTable)) {
    block.reason = data[5] == static_cast<uint8_t>(BlockKind::kAlwaysMatch)
                       ? "always-match block"
                       : "unknown block kind " + std::to_string(data[5]);
    return block;
  }
  block.layout.bucket_size = data[6];
  block.layout.fingerprint_bits = data[7];
  block.layout.semi_sorted = (data[8] & 1u) != 0;
  if ((data[8] & ~1u) != 0 ||
      data[9] != static_cast<uint8_t>(KeyHash::kXxh3Seed0) || data[10] != 0 ||
      data[11] != 0) {
    block.reason = "unknown flags, key hash or reserved bytes";
    return block;
  }
  block.num_buckets = cuckoo::byte_io::Load<uint32_t>(data + 12);
  block.num_keys = cuckoo::byte_io::Load<uint64_t>(data + 16);
  const std::string geometry_problem =
      cuckoo::ValidateTableGeometry(block.layout, block.num_buckets);
  if (!geometry_problem.empty()) {
    block.reason = geometry_problem;
    return block;
  }
  const uint64_t expected = TableBlockBytes(block.layout, block.num_buckets);
  if (expected != size) {
    block.reason = "block has " + std::to_string(size) +
                   " bytes but its header describes " +
                   std::to_string(expected);
    return block;
  }
  block.table = data + kBlockHeaderBytes;
  block.has_table = true;
  return block;
}

}  // namespace rocksdb_cuckoo
