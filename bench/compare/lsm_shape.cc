// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Builds and verifies the comparison's multi-level LSM (see lsm_shape.h).
#include "lsm_shape.h"

#include <cmath>
#include <limits>

#include "rocksdb/metadata.h"
#include "rocksdb/write_batch.h"

namespace filter_compare {

namespace rdb = ROCKSDB_NAMESPACE;

namespace {

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

int LevelOfKey(uint64_t i, const LsmShapeOptions& shape) {
  // Relative level sizes: L0 1/fanout, L1 1, L2 fanout, ...
  std::vector<double> weights(static_cast<size_t>(shape.levels));
  double total = 0;
  for (int level = 0; level < shape.levels; ++level) {
    weights[static_cast<size_t>(level)] = std::pow(shape.fanout, level - 1);
    total += weights[static_cast<size_t>(level)];
  }
  const double u =
      static_cast<double>(Mix(i ^ Mix(shape.seed)) >> 11) * 0x1.0p-53 * total;
  double cumulative = 0;
  for (int level = 0; level < shape.levels; ++level) {
    cumulative += weights[static_cast<size_t>(level)];
    if (u < cumulative) return level;
  }
  return shape.levels - 1;
}

void ApplyShapeOptions(const LsmShapeOptions& shape, rdb::Options* options) {
  options->num_levels = shape.levels;
  options->disable_auto_compactions = true;
  options->level_compaction_dynamic_level_bytes = false;
  options->compression = rdb::kNoCompression;
  options->target_file_size_base = shape.target_file_bytes;
  options->target_file_size_multiplier = 1;
  options->write_buffer_size = 64 << 20;
  options->max_write_buffer_number = 4;
  options->level0_slowdown_writes_trigger = 1 << 20;
  options->level0_stop_writes_trigger = 1 << 20;
}

rdb::Status BuildLsm(rdb::DB* db, const KeyScheme& keys,
                     const LsmShapeOptions& shape) {
  const std::string value(static_cast<size_t>(shape.value_size), 'v');
  rdb::WriteOptions write;
  write.disableWAL = true;
  rdb::CompactionOptions compaction;
  compaction.compression = rdb::kNoCompression;
  compaction.output_file_size_limit = shape.target_file_bytes;
  compaction.max_subcompactions = 1;
  for (int level = shape.levels - 1; level >= 0; --level) {
    rdb::WriteBatch batch;
    for (uint64_t i = 0; i < shape.num_keys; ++i) {
      if (LevelOfKey(i, shape) != level) continue;
      rdb::Status s = batch.Put(keys.Key(i), value);
      if (s.ok() && batch.Count() >= 1000) {
        s = db->Write(write, &batch);
        batch.Clear();
      }
      if (!s.ok()) return s;
    }
    rdb::Status s = db->Write(write, &batch);
    if (s.ok()) s = db->Flush(rdb::FlushOptions());
    if (!s.ok() || level == 0) return s;
    rdb::ColumnFamilyMetaData meta;
    db->GetColumnFamilyMetaData(&meta);
    std::vector<std::string> level0_files;
    for (const rdb::SstFileMetaData& file : meta.levels[0].files) {
      level0_files.push_back(file.name);
    }
    if (level0_files.empty()) continue;  // no key drew this level
    s = db->CompactFiles(compaction, level0_files, level);
    if (!s.ok()) return s;
  }
  return rdb::Status::OK();
}

uint64_t LevelShape::Entries() const {
  uint64_t entries = 0;
  for (const FileShape& file : files) entries += file.entries;
  return entries;
}

LsmShape DescribeLsm(rdb::DB* db) {
  rdb::ColumnFamilyMetaData meta;
  db->GetColumnFamilyMetaData(&meta);
  LsmShape shape;
  for (const rdb::LevelMetaData& level : meta.levels) {
    if (level.files.empty()) continue;
    LevelShape described;
    described.level = level.level;
    for (const rdb::SstFileMetaData& file : level.files) {
      described.files.push_back(
          FileShape{file.smallestkey, file.largestkey, file.num_entries});
    }
    shape.push_back(std::move(described));
  }
  return shape;
}

std::string ShapeDifference(const LsmShape& expected, const LsmShape& actual) {
  if (expected.size() != actual.size()) {
    return std::to_string(actual.size()) + " populated levels instead of " +
           std::to_string(expected.size());
  }
  for (size_t l = 0; l < expected.size(); ++l) {
    const LevelShape& a = expected[l];
    const LevelShape& b = actual[l];
    const std::string where = "L" + std::to_string(b.level);
    if (a.level != b.level) {
      return where + " populated instead of L" + std::to_string(a.level);
    }
    if (a.files.size() != b.files.size()) {
      return where + " has " + std::to_string(b.files.size()) +
             " files instead of " + std::to_string(a.files.size());
    }
    for (size_t f = 0; f < a.files.size(); ++f) {
      if (a.files[f].smallest != b.files[f].smallest ||
          a.files[f].largest != b.files[f].largest ||
          a.files[f].entries != b.files[f].entries) {
        return where + " file " + std::to_string(f) +
               " covers other keys or holds another number of entries";
      }
    }
  }
  return "";
}

std::string FormatShape(const LsmShape& shape) {
  std::string text = "| level | files | entries |\n|---|---|---|\n";
  for (const LevelShape& level : shape) {
    text += "| L" + std::to_string(level.level) + " | " +
            std::to_string(level.files.size()) + " | " +
            std::to_string(level.Entries()) + " |\n";
  }
  return text;
}

}  // namespace filter_compare
