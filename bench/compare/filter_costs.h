// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// What a filter costs besides its false-positive rate: the time to build it,
// the memory the build holds at its peak, and the memory the finished block
// takes where RocksDB holds it (the block plus its 5-byte trailer, rounded
// by the allocator), each per key, with and without
// optimize_filters_for_memory. Measured through the FilterBitsBuilder and
// FilterBitsReader RocksDB uses, over a spread of filter sizes, in
// repetitions that alternate the policies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace filter_compare {

struct FilterCostSettings {
  std::vector<std::string> families;  // bloom, ribbon, cuckoo
  std::vector<int> budgets;           // bits per key
  int filters = 60;                   // filters per repetition
  uint64_t min_keys = 1000;           // their sizes, log-uniform
  uint64_t max_keys = 100000;
  uint64_t probes_per_filter = 20000;  // absent keys probed in each
  int repetitions = 3;
  uint64_t seed = 1;
};

struct FilterCost {
  std::string family;
  int budget = 0;
  bool optimize_for_memory = false;
  uint64_t keys = 0;  // per repetition, over all its filters
  // Per repetition: build time per key (AddKey to the end of Finish), and
  // the largest peak of memory held during one filter's build, per key of
  // that filter.
  std::vector<double> build_ns_per_key;
  std::vector<double> peak_build_bytes_per_key;
  double stored_bits_per_key = 0;     // block bytes
  double allocated_bits_per_key = 0;  // usable bytes of block + trailer
  double false_positive_rate = 0;     // over every probe of every filter
  std::string Label() const;
};

std::vector<FilterCost> MeasureFilterCosts(const FilterCostSettings& settings);

// A Markdown table, with build time and peak memory as ratios to Bloom's at
// the same budget and option, paired by repetition, and the allocator named.
std::string FormatFilterCosts(const std::vector<FilterCost>& costs,
                              const std::string& allocator);

}  // namespace filter_compare
