// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Fuzz target: the core CuckooFilter driven by an operation sequence and
// checked against a multiset model. A key inserted more often than erased is
// always contained; Count never falls below the model's count; an erase of a
// key the model holds succeeds; a full insert changes nothing. Operations:
// Insert, InsertIfAbsent, Erase, Merge of a second filter of the same
// geometry that the sequence fills too, Grow (filters with an expansion also
// grow when full), and a chunked dump and load that must give the same
// filter back.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cuckoo/dynamic_filter_format.h"

namespace {

// Dumps the filter in chunks of chunk_bytes and loads it back.
cuckoo::CuckooFilter DumpAndLoad(const cuckoo::CuckooFilter& filter,
                                 size_t chunk_bytes) {
  cuckoo::CuckooFilterDumper dumper(filter, chunk_bytes);
  cuckoo::CuckooFilterChunkLoader loader;
  std::vector<uint8_t> chunk;
  std::string error;
  while (dumper.Next(&chunk)) {
    if (!loader.Load(chunk.data(), chunk.size(), &error)) __builtin_trap();
  }
  std::optional<cuckoo::CuckooFilter> back = loader.Finish(&error);
  if (!back) __builtin_trap();
  if (SerializeCuckooFilter(*back) != SerializeCuckooFilter(filter)) {
    __builtin_trap();
  }
  return std::move(*back);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  cuckoo::CuckooFilterOptions options;
  const int layouts[][3] = {{4, 12, 0}, {4, 9, 1},  {2, 8, 0},  {8, 5, 0},
                            {4, 4, 1},  {2, 32, 0}, {4, 16, 1}, {8, 13, 0}};
  const int* layout = layouts[data[0] % 8];
  options.layout = {layout[0], layout[1], layout[2] != 0};
  options.max_kicks = 1 + data[1] % 64;
  options.stash_capacity = 1 + data[1] / 64;
  options.max_growths = 3;
  if ((data[1] & 0x20) != 0 && options.layout.fingerprint_bits <= 29) {
    options.expansion = (data[1] & 0x10) != 0 ? 4 : 2;
    if (options.layout.fingerprint_bits > 26) options.max_growths = 1;
  }
  cuckoo::CuckooFilter filter(2 + data[0] / 8, options);
  cuckoo::CuckooFilter other(filter.NumBuckets(), options);
  std::map<uint64_t, uint32_t> model;
  std::map<uint64_t, uint32_t> other_model;
  for (size_t at = 2; at < size; ++at) {
    // Two bits of operation, six of key: a small universe, many collisions.
    // The key's low bit picks a variant of operations 1 and 3.
    const uint64_t key = (data[at] & 0x3F) * 0x9E3779B97F4A7C15ull;
    const bool variant = (data[at] & 1) != 0;
    switch (data[at] >> 6) {
      case 0:
        if (filter.Insert(key) == cuckoo::InsertResult::kOk) ++model[key];
        break;
      case 1:
        if (variant) {
          const cuckoo::InsertResult result = filter.InsertIfAbsent(key);
          if (result == cuckoo::InsertResult::kOk) ++model[key];
          if (result == cuckoo::InsertResult::kMayExist &&
              !filter.Contains(key)) {
            __builtin_trap();
          }
        } else if (other.Insert(key) == cuckoo::InsertResult::kOk) {
          ++other_model[key];
        }
        break;
      case 2:
        if (model[key] > 0) {
          if (!filter.Erase(key)) __builtin_trap();
          --model[key];
        }
        break;
      default:
        if (!variant) {
          if ((data[at] & 2) != 0) {
            filter.Grow();
          } else {
            filter = DumpAndLoad(filter, 1 + (data[at] & 0x3C));
          }
        } else {
          const uint64_t size_before = filter.Size();
          if (filter.Merge(other) == cuckoo::InsertResult::kOk) {
            for (const auto& [k, count] : other_model) model[k] += count;
            other.Clear();
            other_model.clear();
          } else if (filter.Size() != size_before) {
            __builtin_trap();
          }
        }
        break;
    }
    // The key just operated on, at every step (an insert may have moved any
    // other key, which the final sweep checks).
    if (model[key] > 0 && !filter.Contains(key)) __builtin_trap();
    if (filter.Count(key) < model[key]) __builtin_trap();
  }
  uint64_t total = 0;
  for (const auto& [k, count] : model) {
    total += count;
    if (count > 0 && !filter.Contains(k)) __builtin_trap();
    if (filter.Count(k) < count) __builtin_trap();
  }
  if (filter.Size() != total) __builtin_trap();
  return 0;
}
