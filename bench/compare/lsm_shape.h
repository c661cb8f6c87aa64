// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// A multi-level LSM of a fixed, verified shape, the same for every filter
// policy, so that an absent key consults the same number of filters whatever
// the policy.
//
// Why not let RocksDB compact by itself: background compactions finish at
// different moments, so two DBs filled with the same keys end in different
// shapes, with different numbers of filter checks per absent lookup, and the
// shape, not the filter, then decides the storage reads. Here automatic
// compactions are off. Each key is assigned to one level by a hash of its
// index, with level sizes growing by `fanout` from L1 down (L0 holds
// 1/fanout of L1, in one file). Levels are filled from the bottom up: the
// keys of a level are written, flushed, and compacted into that level with
// CompactFiles, whose output files are cut at target_file_bytes of data.
// Filters are written after the data blocks, so the cut points, and with them
// the whole shape, do not depend on the policy. DescribeLsm and
// ShapeDifference verify it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "keys.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"

namespace filter_compare {

struct LsmShapeOptions {
  uint64_t num_keys = 0;
  int value_size = 100;
  int levels = 5;  // populated levels, L0 included
  double fanout = 10;
  uint64_t target_file_bytes = 4 << 20;
  uint64_t seed = 1;
};

// The level (0 .. levels-1) that key index i is written to.
int LevelOfKey(uint64_t i, const LsmShapeOptions& shape);

// What BuildLsm needs of the DB's options: automatic compactions off, fixed
// level sizes, and room for `levels` levels.
void ApplyShapeOptions(const LsmShapeOptions& shape,
                       ROCKSDB_NAMESPACE::Options* options);

// Fills an empty DB opened with ApplyShapeOptions.
ROCKSDB_NAMESPACE::Status BuildLsm(ROCKSDB_NAMESPACE::DB* db,
                                   const KeyScheme& keys,
                                   const LsmShapeOptions& shape);

struct FileShape {
  std::string smallest;
  std::string largest;
  uint64_t entries = 0;
};
struct LevelShape {
  int level = 0;
  std::vector<FileShape> files;
  uint64_t Entries() const;
};
using LsmShape = std::vector<LevelShape>;  // populated levels only

LsmShape DescribeLsm(ROCKSDB_NAMESPACE::DB* db);
// "" when the two shapes have the same files (key ranges and entry counts)
// on the same levels; otherwise the first difference.
std::string ShapeDifference(const LsmShape& expected, const LsmShape& actual);
// A Markdown table: level, files, entries.
std::string FormatShape(const LsmShape& shape);

}  // namespace filter_compare
