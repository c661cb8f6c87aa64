// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// level_budgets=monkey: which bits per key a new filter gets, from where in
// the LSM RocksDB writes its file. The budgets themselves, and why they
// minimise the sum of the levels' false-positive rates at the same memory,
// are monkey::ChooseBudgetsForShares (monkey_budgets.h).
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
//     d + 1; the file gets budget d of ChooseBudgetsForShares for L levels
//     whose shares of the keys are in the ratio T (see "Entries per key").
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
// Entries per key
// ---------------
// The budgets are shares of the filters' entries, not of the keys (see the
// core header): with a prefix extractor an upper level's filters hold more
// entries per key than the bottom's. The policy learns each distance's
// entries per key from the filters it finishes (NoteEntries: the distinct
// keys its builders were given and the entries they held), over a window of
// the last few million keys a distance, and weighs each level's share of
// the keys by it. A distance not seen yet takes the nearest one seen;
// before any, every level counts one entry a key. The budgets are solved
// again when a distance's entries per key move by more than 1%.
//
// From RocksDB 9.6 a builder is given a key and its prefix together
// (AddKeyAndAlt), so the count is exact. Before, both come through AddKey,
// the prefix right after its key as a shorter slice of the key's own bytes,
// which is how the builder tells them apart; a key shorter than the one
// before it in a reused buffer is taken for a prefix too, which can only
// raise the estimate, and entries per key are held within [1, 2].
//
// Files of unknown level (level_at_creation -1: SstFileWriter, ingestion)
// get the average budget, and so do universal and FIFO compaction, whose
// files are not levels of sizes in a fixed ratio (the info log says so
// once).
#pragma once

#include <array>
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

  // Notes that a filter of `balance_class` (ForFile) held `entries` entries
  // for `keys` distinct keys.
  void NoteEntries(int balance_class, uint64_t keys, uint64_t entries);

  // The budgets of an LSM with `num_levels` levels that hold data, by
  // distance from the bottom.
  std::vector<double> BudgetsFor(int num_levels);

 private:
  // The entries per key learned for each distance of an LSM of `num_levels`
  // levels, bottom first (see "Entries per key"); under mutex_.
  std::vector<double> EntriesPerKey(int num_levels) const;

  const double bits_per_key_;
  const double size_ratio_;
  const double min_bits_per_key_;
  const double max_bits_per_key_;
  // Bit i: a file was written at level i (levels past 63 count as 63).
  std::atomic<uint64_t> levels_with_data_{0};
  std::atomic<bool> reported_other_style_{false};
  std::mutex mutex_;
  // By balance class, under mutex_: keys and entries of the filters
  // finished, halved whenever the keys pass kEntriesWindow.
  std::array<uint64_t, kBalanceClasses> keys_{};
  std::array<uint64_t, kBalanceClasses> entries_{};
  // By number of levels, under mutex_: the budgets and the entries per key
  // they were solved for.
  struct Solved {
    std::vector<double> entries_per_key;
    std::vector<double> budgets;
  };
  std::vector<Solved> budgets_by_depth_;
};

}  // namespace rocksdb_cuckoo
