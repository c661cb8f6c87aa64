// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// level_budgets=monkey: the budget of each new filter (see the header).
#include "level_budgets.h"

#include <algorithm>
#include <cmath>

#include "monkey_budgets.h"
#include "rocksdb_interfaces.h"

namespace rocksdb_cuckoo {

namespace {

constexpr int kMaxTrackedLevel = 63;
// Entries per key are learned over about the last kEntriesWindow keys of a
// distance, from kMinLearnedKeys on, and the budgets solved again when they
// move by more than kResolveAbove.
constexpr uint64_t kEntriesWindow = uint64_t{1} << 22;
constexpr uint64_t kMinLearnedKeys = 256;
constexpr double kResolveAbove = 0.01;

int CountBits(uint64_t bits) { return __builtin_popcountll(bits); }

}  // namespace

LevelBudgets::LevelBudgets(double bits_per_key, double size_ratio,
                           double min_bits_per_key, double max_bits_per_key)
    : bits_per_key_(bits_per_key),
      size_ratio_(size_ratio),
      min_bits_per_key_(min_bits_per_key),
      max_bits_per_key_(max_bits_per_key) {}

void LevelBudgets::NoteEntries(int balance_class, uint64_t keys,
                               uint64_t entries) {
  if (balance_class < 1 || balance_class >= kBalanceClasses || keys == 0) {
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  keys_[balance_class] += keys;
  entries_[balance_class] += entries;
  if (keys_[balance_class] > kEntriesWindow) {
    keys_[balance_class] /= 2;
    entries_[balance_class] /= 2;
  }
}

std::vector<double> LevelBudgets::EntriesPerKey(int num_levels) const {
  // Learned: at least kMinLearnedKeys keys; one entry a key at the least
  // (a key and its prefix are one entry where they are equal) and two at
  // the most (each key and its own prefix).
  std::array<double, kBalanceClasses> learned{};
  for (int c = 1; c < kBalanceClasses; ++c) {
    if (keys_[c] >= kMinLearnedKeys) {
      learned[c] = std::clamp(
          static_cast<double>(entries_[c]) / static_cast<double>(keys_[c]), 1.0,
          2.0);
    }
  }
  std::vector<double> per_key(static_cast<size_t>(num_levels), 1.0);
  for (int d = 0; d < num_levels; ++d) {
    const int own = 1 + std::min(d, kMaxDistance);
    // The nearest distance learned, the nearer below on a tie.
    for (int offset = 0; offset < kBalanceClasses; ++offset) {
      if (own - offset >= 1 && learned[own - offset] > 0.0) {
        per_key[d] = learned[own - offset];
        break;
      }
      if (own + offset < kBalanceClasses && learned[own + offset] > 0.0) {
        per_key[d] = learned[own + offset];
        break;
      }
    }
  }
  return per_key;
}

std::vector<double> LevelBudgets::BudgetsFor(int num_levels) {
  num_levels = std::clamp(num_levels, 1, kMaxTrackedLevel + 1);
  std::lock_guard<std::mutex> lock(mutex_);
  const std::vector<double> per_key = EntriesPerKey(num_levels);
  if (budgets_by_depth_.size() <= static_cast<size_t>(num_levels)) {
    budgets_by_depth_.resize(num_levels + 1);
  }
  Solved& solved = budgets_by_depth_[num_levels];
  bool current = !solved.budgets.empty();
  for (size_t d = 0; current && d < per_key.size(); ++d) {
    current = std::abs(per_key[d] - solved.entries_per_key[d]) <=
              kResolveAbove * solved.entries_per_key[d];
  }
  if (!current) {
    // Each level's share of the entries: its share of the keys (T^-d) times
    // its entries per key.
    std::vector<double> log_weights =
        monkey::GeometricLogWeights(size_ratio_, num_levels);
    for (size_t d = 0; d < log_weights.size(); ++d) {
      log_weights[d] += std::log(per_key[d]);
    }
    solved.budgets =
        monkey::ChooseBudgetsForShares(bits_per_key_, log_weights,
                                       min_bits_per_key_, max_bits_per_key_)
            .bits_per_key;
    solved.entries_per_key = per_key;
  }
  return solved.budgets;
}

LevelBudgets::Budget LevelBudgets::ForFile(
    const ROCKSDB_NAMESPACE::FilterBuildingContext& context) {
  const Budget average{bits_per_key_, 0};
  if (context.compaction_style !=
      ROCKSDB_NAMESPACE::CompactionStyle::kCompactionStyleLevel) {
    if (context.info_log != nullptr && !reported_other_style_.exchange(true)) {
      InfoLog(ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL, context.info_log,
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
