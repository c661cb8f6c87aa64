// Fuzz target: the core CuckooFilter driven by an operation sequence and
// checked against a multiset model. A key inserted more often than erased is
// always contained; Count never falls below the model's count; an erase of a
// key the model holds succeeds; a full insert changes nothing.
#include <cstddef>
#include <cstdint>
#include <map>

#include "cuckoo/cuckoo_filter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  cuckoo::CuckooFilterOptions options;
  const int layouts[][3] = {{4, 12, 0}, {4, 9, 1},  {2, 8, 0},  {8, 5, 0},
                            {4, 4, 1},  {2, 32, 0}, {4, 16, 1}, {8, 13, 0}};
  const int* layout = layouts[data[0] % 8];
  options.layout = {layout[0], layout[1], layout[2] != 0};
  options.max_kicks = 1 + data[1] % 64;
  options.stash_capacity = 1 + data[1] / 64;
  cuckoo::CuckooFilter filter(2 + data[0] / 8, options);
  std::map<uint64_t, uint32_t> model;
  for (size_t at = 2; at < size; ++at) {
    // Two bits of operation, six of key: a small universe, many collisions.
    const uint64_t key = (data[at] & 0x3F) * 0x9E3779B97F4A7C15ull;
    switch (data[at] >> 6) {
      case 0:
      case 1:
        if (filter.Insert(key) == cuckoo::InsertResult::kOk) ++model[key];
        break;
      case 2:
        if (model[key] > 0) {
          if (!filter.Erase(key)) __builtin_trap();
          --model[key];
        }
        break;
      default:
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
