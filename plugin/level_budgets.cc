// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// level_budgets=monkey: the budget of each new filter (see the header).
#include "level_budgets.h"

#include <algorithm>

#include "cuckoo/level_budgets.h"
#include "rocksdb/env.h"

namespace rocksdb_cuckoo {

namespace {

constexpr int kMaxTrackedLevel = 63;

int CountBits(uint64_t bits) { return __builtin_popcountll(bits); }

}  // namespace

LevelBudgets::LevelBudgets(double bits_per_key, double size_ratio,
                           double min_bits_per_key, double max_bits_per_key)
    : bits_per_key_(bits_per_key),
      size_ratio_(size_ratio),
      min_bits_per_key_(min_bits_per_key),
      max_bits_per_key_(max_bits_per_key) {}

std::vector<double> LevelBudgets::BudgetsFor(int num_levels) {
  num_levels = std::clamp(num_levels, 1, kMaxTrackedLevel + 1);
  std::lock_guard<std::mutex> lock(mutex_);
  if (budgets_by_depth_.size() <= static_cast<size_t>(num_levels)) {
    budgets_by_depth_.resize(num_levels + 1);
  }
  std::vector<double>& budgets = budgets_by_depth_[num_levels];
  if (budgets.empty()) {
    budgets = cuckoo::ChooseLevelBudgets(bits_per_key_, size_ratio_, num_levels,
                                         min_bits_per_key_, max_bits_per_key_)
                  .bits_per_key;
  }
  return budgets;
}

LevelBudgets::Budget LevelBudgets::ForFile(
    const ROCKSDB_NAMESPACE::FilterBuildingContext& context) {
  const Budget average{bits_per_key_, 0};
  if (context.compaction_style !=
      ROCKSDB_NAMESPACE::CompactionStyle::kCompactionStyleLevel) {
    if (context.info_log != nullptr && !reported_other_style_.exchange(true)) {
      ROCKSDB_NAMESPACE::Log(
          ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL, context.info_log,
          "[cuckoofilter] level_budgets=monkey sizes filters by level for "
          "leveled compaction; this column family's compaction style is "
          "not leveled, so its filters get the average %g bits/key",
          bits_per_key_);
    }
    return average;
  }
  if (context.level_at_creation < 0) return average;
  const int level = std::min(context.level_at_creation, kMaxTrackedLevel);
  const uint64_t with_data =
      levels_with_data_.fetch_or(uint64_t{1} << level) | uint64_t{1} << level;
  const int below =
      level == kMaxTrackedLevel ? 0 : CountBits(with_data >> (level + 1));
  const int distance = context.is_bottommost ? 0 : std::max(below, 1);
  const int depth = std::max(CountBits(with_data), distance + 1);
  const std::vector<double> budgets = BudgetsFor(depth);
  return Budget{budgets[distance], 1 + std::min(distance, kMaxDistance)};
}

}  // namespace rocksdb_cuckoo
