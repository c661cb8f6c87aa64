// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// level_budgets=monkey: which bits per key a new filter gets, from where in
// the LSM RocksDB writes its file. The budgets themselves, and why they
// minimise the sum of the levels' false-positive rates at the same memory,
// are cuckoo::ChooseLevelBudgets (include/cuckoo/level_budgets.h).
//
// The shape of the LSM
// --------------------
// A filter is not told how many levels hold data, nor the size ratio
// between them: only the level its file is written to
// (FilterBuildingContext::level_at_creation), whether that level is the
// bottommost one for the file's key range (is_bottommost), and the
// compaction style. So the policy learns the shape as files are written:
//   - The levels that hold data are those that files have been written to,
//     by this policy object, since it was created (a bit per level).
//   - A file's distance d from the bottom is the number of such levels below
//     its own: 0 for is_bottommost (no data below it in its key range), at
//     least 1 otherwise (something is below it, written before the policy
//     saw it).
//   - The LSM's depth L is the number of levels that hold data, at least
//     d + 1; the file gets ChooseLevelBudgets(bits_per_key, ratio, L)[d].
// Counting only the levels that hold data makes one rule serve both of
// RocksDB's leveled layouts. Without level_compaction_dynamic_level_bytes
// (7.8's default) data fills L1, L2, ... downwards and the bottom is the
// deepest level written. With it (the default from 8.4) data sits in the
// last levels and the empty levels between L0 and the base level do not
// count: while a small DB has only L0 and L6, an L0 file is one level above
// the bottom, not six.
//
// L0 is a level like the others: a flush's file is at distance the number
// of data levels below L0. RocksDB checks every L0 file for a lookup, which
// this shape counts as one level; L0's few files hold a small share of the
// keys, so this costs little memory and keeps their filters accurate.
//
// While the LSM is still shallow (and after a reopen, until compactions have
// written to each level again), the policy sees fewer levels than there
// are: the first flushes of an empty DB are written for a 2-level LSM, and
// a deeper level keeps the budget its files were written with until
// compaction rewrites them. The total stays on budget for the shape the
// policy knows; files already written keep their size.
//
// Files of unknown level (level_at_creation -1: SstFileWriter, ingestion)
// get the average budget, and so do universal and FIFO compaction, whose
// files are not levels of sizes in a fixed ratio (the info log says so
// once).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "rocksdb/filter_policy.h"

namespace rocksdb_cuckoo {

// Per-level budgets for one policy: thread-safe, shared by its builders.
class LevelBudgets {
 public:
  // Distances from the bottom get balance classes 1..kMaxDistance + 1; class
  // 0 is the average budget. A distance past kMaxDistance takes its class.
  static constexpr int kMaxDistance = 15;
  static constexpr int kBalanceClasses = kMaxDistance + 2;

  // `bits_per_key` is the average over the LSM, `size_ratio` the ratio of
  // adjacent levels' sizes (> 1), each budget within [min, max].
  LevelBudgets(double bits_per_key, double size_ratio, double min_bits_per_key,
               double max_bits_per_key);

  struct Budget {
    double bits_per_key;
    // Which of the policy's false-positive balances the filter's rounding
    // to the allocator keeps (optimize_filters_for_memory), so that each
    // level's filters stay on their own target.
    int balance_class;
  };
  // The budget of a filter for a file RocksDB writes in `context`; notes the
  // file's level as holding data.
  Budget ForFile(const ROCKSDB_NAMESPACE::FilterBuildingContext& context);

  // The budgets of an LSM with `num_levels` levels that hold data, by
  // distance from the bottom.
  std::vector<double> BudgetsFor(int num_levels);

 private:
  const double bits_per_key_;
  const double size_ratio_;
  const double min_bits_per_key_;
  const double max_bits_per_key_;
  // Bit i: a file was written at level i (levels past 63 count as 63).
  std::atomic<uint64_t> levels_with_data_{0};
  std::atomic<bool> reported_other_style_{false};
  std::mutex mutex_;
  // By number of levels, computed when first needed.
  std::vector<std::vector<double>> budgets_by_depth_;
};

}  // namespace rocksdb_cuckoo
