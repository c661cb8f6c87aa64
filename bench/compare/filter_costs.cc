// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Measures build time, peak build memory and allocated filter memory
// (filter_costs.h).
#include "filter_costs.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

#include "allocation_tracking.h"
#include "filter_families.h"
#include "paired_stats.h"
#include "rocksdb/table.h"
#include "table/block_based/filter_policy_internal.h"

namespace filter_compare {

namespace rdb = ROCKSDB_NAMESPACE;

using filter_bench::FixedKeys;

namespace {

// RocksDB reads a block into an allocation of its size plus this trailer.
constexpr uint64_t kBlockTrailerBytes = 5;

std::vector<uint64_t> FilterSizes(const FilterCostSettings& settings) {
  std::mt19937_64 random(settings.seed);
  std::uniform_real_distribution<double> exponent(
      std::log(static_cast<double>(settings.min_keys)),
      std::log(static_cast<double>(settings.max_keys)));
  std::vector<uint64_t> sizes;
  for (int i = 0; i < settings.filters; ++i) {
    sizes.push_back(static_cast<uint64_t>(std::exp(exponent(random))));
  }
  return sizes;
}

std::string FormatRatio(const PairedRatio& ratio) {
  if (!ratio.valid) return "";
  char text[96];
  std::snprintf(text, sizeof(text), "%.2f× [%.2f–%.2f]%s", ratio.median,
                ratio.low, ratio.high,
                ratio.WithinNoise() ? " within noise" : "");
  return text;
}

}  // namespace

std::string FilterCost::Label() const {
  return family + ":" + std::to_string(budget);
}

std::vector<FilterCost> MeasureFilterCosts(const FilterCostSettings& settings) {
  const std::vector<uint64_t> sizes = FilterSizes(settings);
  const uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
  const FixedKeys present(largest * 2, 'p');
  const FixedKeys absent(settings.probes_per_filter, 'a');

  std::vector<FilterCost> costs;
  std::vector<std::unique_ptr<const rdb::FilterPolicy>> policies;
  for (int budget : settings.budgets) {
    for (bool optimize : {false, true}) {
      for (const std::string& family : settings.families) {
        FilterCost cost;
        cost.family = family;
        cost.budget = budget;
        cost.optimize_for_memory = optimize;
        costs.push_back(cost);
        policies.push_back(filter_bench::MakeFilterPolicy(family, budget));
      }
    }
  }
  std::mt19937_64 random(settings.seed + 1);
  std::vector<size_t> order(costs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (int repetition = 0; repetition < settings.repetitions; ++repetition) {
    std::shuffle(order.begin(), order.end(), random);
    for (size_t index : order) {
      FilterCost& cost = costs[index];
      rdb::BlockBasedTableOptions table_options;
      table_options.optimize_filters_for_memory = cost.optimize_for_memory;
      rdb::FilterBuildingContext context(table_options);
      std::unique_ptr<rdb::FilterBitsBuilder> builder(
          policies[index]->GetBuilderWithContext(context));
      std::chrono::nanoseconds build_time{0};
      double peak_per_key = 0;
      uint64_t keys = 0, stored = 0, allocated = 0, false_positives = 0;
      for (size_t f = 0; f < sizes.size(); ++f) {
        const uint64_t n = sizes[f];
        // Each filter its own keys: a window of the key set.
        const uint64_t first = (f * 7919) % (present.size() - n + 1);
        allocation_tracking::Start();
        const auto start = std::chrono::steady_clock::now();
        for (uint64_t i = first; i < first + n; ++i) {
          builder->AddKey(present[i]);
        }
        std::unique_ptr<const char[]> buffer;
        const rdb::Slice block = builder->Finish(&buffer);
        build_time += std::chrono::steady_clock::now() - start;
        const int64_t peak = allocation_tracking::StopAndGetPeakBytes();
        peak_per_key = std::max(peak_per_key, static_cast<double>(peak) / n);
        keys += n;
        stored += block.size();
        allocated +=
            allocation_tracking::UsableBytes(block.size() + kBlockTrailerBytes);
        if (repetition == 0) {
          std::unique_ptr<rdb::FilterBitsReader> reader(
              policies[index]->GetFilterBitsReader(block));
          for (uint64_t i = 0; i < absent.size(); ++i) {
            false_positives += reader->MayMatch(absent[i]) ? 1 : 0;
          }
        }
      }
      cost.keys = keys;
      cost.build_ns_per_key.push_back(static_cast<double>(build_time.count()) /
                                      static_cast<double>(keys));
      cost.peak_build_bytes_per_key.push_back(peak_per_key);
      cost.stored_bits_per_key = 8.0 * static_cast<double>(stored) / keys;
      cost.allocated_bits_per_key = 8.0 * static_cast<double>(allocated) / keys;
      if (repetition == 0) {
        cost.false_positive_rate =
            static_cast<double>(false_positives) /
            static_cast<double>(absent.size() * sizes.size());
      }
    }
  }
  return costs;
}

std::string FormatFilterCosts(const std::vector<FilterCost>& costs,
                              const std::string& allocator) {
  std::string out =
      "| filter | optimize_filters_for_memory | build ns/key | × Bloom | "
      "peak build bytes/key | × Bloom | stored bits/key | allocated "
      "bits/key (" +
      allocator +
      ") | fragmentation | FPR |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (const FilterCost& cost : costs) {
    const FilterCost* bloom = nullptr;
    for (const FilterCost& other : costs) {
      if (other.family == "bloom" && other.budget == cost.budget &&
          other.optimize_for_memory == cost.optimize_for_memory) {
        bloom = &other;
      }
    }
    const bool is_bloom = bloom == &cost;
    char row[512];
    std::snprintf(
        row, sizeof(row),
        "| %s | %s | %.1f | %s | %.2f | %s | %.2f | %.2f | %.2f%% | %.4f%% |\n",
        cost.Label().c_str(), cost.optimize_for_memory ? "on" : "off",
        Median(cost.build_ns_per_key),
        bloom == nullptr || is_bloom
            ? ""
            : FormatRatio(
                  RatioOf(cost.build_ns_per_key, bloom->build_ns_per_key))
                  .c_str(),
        Median(cost.peak_build_bytes_per_key),
        bloom == nullptr || is_bloom
            ? ""
            : FormatRatio(RatioOf(cost.peak_build_bytes_per_key,
                                  bloom->peak_build_bytes_per_key))
                  .c_str(),
        cost.stored_bits_per_key, cost.allocated_bits_per_key,
        100.0 * (cost.allocated_bits_per_key / cost.stored_bits_per_key - 1),
        100.0 * cost.false_positive_rate);
    out += row;
  }
  return out;
}

}  // namespace filter_compare
