// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The golden filter blocks in tests/format/golden: the key set and budget of
// each, the keys it must match, the absent keys it is probed with, and the
// reader of the manifest that records each block's size and how many absent
// keys it matches. RocksDB-free, so that the format test also runs on
// big-endian hosts; the plugin's tests read the same blocks through RocksDB.
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuckoo/bucket_table.h"
#include "cuckoo/hashing.h"
#include "cuckoo/table_types.h"
#include "filter_format.h"

namespace cuckoo_golden {

struct GoldenBlockSpec {
  const char* name;
  double bits_per_key;
  uint32_t first_key;  // keys GoldenKey(first_key) ... in order
  uint32_t num_keys;
};

// Budgets 6 to 24 choose semi-sorted 4-slot buckets with 6- to 23-bit
// fingerprints, 40 and 64 plain 2-slot buckets with 32-bit ones (see
// ChooseForBitsPerKey). "partition2-10" is the second partition of a
// partitioned filter: one builder writes keys 0-1999, then these.
inline constexpr GoldenBlockSpec kGoldenBlocks[] = {
    {"empty-10", 10, 0, 0},       {"one-key-10", 10, 0, 1},
    {"keys2000-10", 10, 0, 2000}, {"partition2-10", 10, 2000, 1000},
    {"keys500-6", 6, 0, 500},     {"keys2000-16", 16, 0, 2000},
    {"keys500-24", 24, 0, 500},   {"keys500-40", 40, 0, 500},
    {"keys100-64", 64, 0, 100},
};

// The first partition written before "partition2-10".
inline constexpr GoldenBlockSpec kFirstPartition = {"partition1-10", 10, 0,
                                                    2000};

// Absent keys AbsentKey(0 .. kAbsentKeys - 1) probe every block.
inline constexpr uint32_t kAbsentKeys = 20000;

inline std::string NumberedKey(const char* prefix, uint32_t i) {
  char text[32];
  std::snprintf(text, sizeof(text), "%s%07u", prefix, i);
  return text;
}
inline std::string GoldenKey(uint32_t i) { return NumberedKey("golden-", i); }
inline std::string AbsentKey(uint32_t i) { return NumberedKey("absent-", i); }

inline std::vector<std::string> KeysOf(const GoldenBlockSpec& spec) {
  std::vector<std::string> keys;
  for (uint32_t i = 0; i < spec.num_keys; ++i) {
    keys.push_back(GoldenKey(spec.first_key + i));
  }
  return keys;
}

inline std::vector<uint64_t> HashesOf(const GoldenBlockSpec& spec) {
  std::vector<uint64_t> hashes;
  for (const std::string& key : KeysOf(spec)) {
    hashes.push_back(cuckoo::HashKey(key.data(), key.size()));
  }
  return hashes;
}

// Calls body(contains), where contains(key) says whether a decoded table
// block holds the key, probed as the SST reader probes it: through the table
// type VisitTable chooses for the block's layout, over the core's view of
// its bytes (the plugin's tests probe through RocksDB's reader itself).
template <typename Body>
void VisitBlockContains(const rocksdb_cuckoo::DecodedBlock& block,
                        Body&& body) {
  const cuckoo::CuckooHashing hashing(block.num_buckets,
                                      block.layout.fingerprint_bits);
  const cuckoo::BucketTableView view(block.layout, block.num_buckets,
                                     block.table);
  cuckoo::VisitTable(block.layout, hashing, [&](auto table) {
    using Table = decltype(table);
    body([&](const std::string& key) {
      return Table::Contains(
          view,
          Table::Locate(hashing, cuckoo::HashKey(key.data(), key.size())));
    });
  });
}

// How many of the absent keys a decoded table block matches.
inline uint64_t CountAbsentMatches(const rocksdb_cuckoo::DecodedBlock& block) {
  uint64_t matches = 0;
  VisitBlockContains(block, [&](const auto& contains) {
    for (uint32_t i = 0; i < kAbsentKeys; ++i)
      matches += contains(AbsentKey(i));
  });
  return matches;
}

// One line of golden/MANIFEST: "<name> <bytes> <absent keys matched>".
struct ManifestEntry {
  std::string name;
  uint64_t bytes = 0;
  uint64_t absent_matches = 0;
};

inline const char kManifestHeader[] =
    "# name bytes absent-keys-matched (of 20000); written by "
    "write_golden_blocks, never edited";

inline std::string GoldenDir() { return CUCKOO_GOLDEN_DIR; }
inline std::string BlockPath(const std::string& dir, const std::string& name) {
  return dir + "/" + name + ".ckfb";
}

inline std::vector<uint8_t> ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in),
                              std::istreambuf_iterator<char>());
}

inline std::vector<ManifestEntry> ReadManifest(const std::string& dir) {
  std::ifstream in(dir + "/MANIFEST");
  if (!in) throw std::runtime_error("cannot open " + dir + "/MANIFEST");
  std::vector<ManifestEntry> entries;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    ManifestEntry entry;
    std::string rest;
    if (!(fields >> entry.name >> entry.bytes >> entry.absent_matches) ||
        (fields >> rest)) {
      throw std::runtime_error("malformed MANIFEST line: " + line);
    }
    entries.push_back(entry);
  }
  return entries;
}

inline ManifestEntry FindEntry(const std::vector<ManifestEntry>& entries,
                               const std::string& name) {
  for (const ManifestEntry& entry : entries) {
    if (entry.name == name) return entry;
  }
  throw std::runtime_error("MANIFEST has no entry " + name);
}

}  // namespace cuckoo_golden
