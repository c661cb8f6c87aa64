// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The RocksDB glue: a FilterPolicy whose SST filters are cuckoo filters, its
// FilterBitsBuilder and FilterBitsReader, and the registrar that makes
// "cuckoofilter" known to RocksDB's ObjectLibrary.
//
// Compile against the source tree of exactly the linked RocksDB version:
// FilterBitsBuilder/FilterBitsReader are internal since RocksDB 7.0 and are
// called through their vtables, so their declarations must match the library.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "rocksdb/filter_policy.h"
#include "rocksdb_versions.h"
#if !ROCKSDB_CUCKOO_LEGACY_6_29
#include "rocksdb/utilities/object_registry.h"
#endif

namespace rocksdb_cuckoo {

// Options of the policy, as registered for options strings and OPTIONS files.
struct CuckooFilterPolicyOptions {
  // Space budget: table bits per key. The policy picks the fingerprint width,
  // bucket layout and load with the lowest false-positive rate within it.
  // With level_budgets=monkey, the average over the LSM's levels.
  double bits_per_key = 10.0;
  // How the budget is spread over an LSM's levels: "uniform" (every filter
  // gets bits_per_key) or "monkey" (each level a budget that makes its
  // false-positive rate proportional to its share of the filters' entries,
  // which minimises the sum of the levels' rates, the storage reads a lookup
  // of an absent key wastes; plugin/level_budgets.h).
  std::string level_budgets = "uniform";
  // The ratio of adjacent levels' sizes that "monkey" assumes: set it to the
  // column family's max_bytes_for_level_multiplier, which filters are not
  // told (RocksDB's default is 10).
  double max_bytes_for_level_multiplier = 10.0;
};

// Filters that answer "may match" for every key: RocksDB cannot tell them
// from working ones. Reads stay correct; only the filtering is lost.
struct FallbackCounts {
  // Readers over blocks this build does not accept (another format version,
  // a damaged header) or over always-match blocks.
  uint64_t always_match_readers = 0;
  // Always-match blocks written because no table could be built (out of
  // memory, more keys than one table holds, or a block cache with a strict
  // capacity that could not take the build's memory).
  uint64_t unbuilt_filters = 0;
};

// Where a builder's Finish calls a BuildFaultHook: with the key hashes it
// holds, before the table is built from them, and after the build's last read
// of them, before detect_filter_construct_corruption checks them again.
enum class BuildStage { kBeforeBuild, kAfterBuild };
using BuildFaultHook =
    std::function<void(BuildStage stage, std::deque<uint64_t>* key_hashes)>;

inline constexpr double kMinBitsPerKey = 4.0;
inline constexpr double kMaxBitsPerKey = 64.0;
inline constexpr double kDefaultBitsPerKey = 10.0;
inline constexpr const char* kUniformLevelBudgets = "uniform";
inline constexpr const char* kMonkeyLevelBudgets = "monkey";

class LevelBudgets;

class CuckooFilterPolicy : public ROCKSDB_NAMESPACE::FilterPolicy {
 public:
  explicit CuckooFilterPolicy(double bits_per_key = kDefaultBitsPerKey);
  explicit CuckooFilterPolicy(const CuckooFilterPolicyOptions& options);

  static const char* kClassName() { return "cuckoofilter"; }
  // Permanent: RocksDB stores the filter under "fullfilter." + this name.
  // The format version lives inside the block.
  static const char* kCompatibilityName() { return "rocksdb_cuckoo.Cuckoo"; }

#if ROCKSDB_CUCKOO_LEGACY_6_29
  // RocksDB 6.29 names the filter block "fullfilter." + Name(), where later
  // releases take CompatibilityName(): the same block key either way, so
  // that files read across them. Its OPTIONS files store this name.
  const char* Name() const override { return kCompatibilityName(); }
  // RocksDB 6's block-based filter, used only for a file whose builder is
  // null (GetBuilderWithContext cannot make one): no filter, and every key
  // may match.
  void CreateFilter(const ROCKSDB_NAMESPACE::Slice*, int,
                    std::string*) const override {}
  bool KeyMayMatch(const ROCKSDB_NAMESPACE::Slice&,
                   const ROCKSDB_NAMESPACE::Slice&) const override {
    return true;
  }
#else
  const char* Name() const override { return kClassName(); }
  const char* CompatibilityName() const override {
    return kCompatibilityName();
  }
  // "cuckoofilter:<bits_per_key>", and with level_budgets=monkey
  // "cuckoofilter:<bits_per_key>:monkey:<max_bytes_for_level_multiplier>":
  // parses back through the factory.
  std::string GetId() const override;

  ROCKSDB_NAMESPACE::Status PrepareOptions(
      const ROCKSDB_NAMESPACE::ConfigOptions& config_options) override;
  ROCKSDB_NAMESPACE::Status ValidateOptions(
      const ROCKSDB_NAMESPACE::DBOptions& db_options,
      const ROCKSDB_NAMESPACE::ColumnFamilyOptions& cf_options) const override;
#endif

  ROCKSDB_NAMESPACE::FilterBitsBuilder* GetBuilderWithContext(
      const ROCKSDB_NAMESPACE::FilterBuildingContext& context) const override;
  ROCKSDB_NAMESPACE::FilterBitsReader* GetFilterBitsReader(
      const ROCKSDB_NAMESPACE::Slice& contents) const override;

  double bits_per_key() const { return options_.bits_per_key; }
  const CuckooFilterPolicyOptions& options() const { return options_; }

  // This policy's fallbacks so far. The first always-match reader is also
  // reported on standard error with its reason (RocksDB gives readers no
  // logger); each unbuilt filter is logged to the DB's info log.
  FallbackCounts fallback_counts() const;

  // Fault injection, for tests: the builders this policy creates from now on
  // call `hook` at each BuildStage, where it may alter the held hashes as a
  // memory or CPU fault would.
  void SetBuildFaultHookForTesting(BuildFaultHook hook) {
    fault_hook_ = std::move(hook);
  }

  // Shared with the builders, which may outlive a policy replaced by
  // SetOptions.
  struct FallbackCounters {
    std::atomic<uint64_t> always_match_readers{0};
    std::atomic<uint64_t> unbuilt_filters{0};
    std::atomic<bool> reported_reader{false};
    std::atomic<bool> reported_uncharged_build{false};
  };

 private:
  // The per-level budgets of level_budgets=monkey, else null; made anew when
  // the options change (PrepareOptions).
  void MakeLevelBudgets();

  CuckooFilterPolicyOptions options_;
  std::shared_ptr<FallbackCounters> fallbacks_ =
      std::make_shared<FallbackCounters>();
  std::shared_ptr<LevelBudgets> level_budgets_;
  // With optimize_filters_for_memory: for each budget the policy gives
  // (LevelBudgets::Budget::balance_class; one with uniform budgets), the sum
  // over its filters of their expected false-positive rate minus their
  // target, in units of 2^-32, which the builders keep near zero while they
  // round filter sizes to the allocator's (allocator_rounding.h).
  static constexpr int kBalanceClasses = 17;
  std::shared_ptr<std::array<std::atomic<int64_t>, kBalanceClasses>>
      rounding_balances_ =
          std::make_shared<std::array<std::atomic<int64_t>, kBalanceClasses>>();
  BuildFaultHook fault_hook_;
};

// Reads "cuckoofilter[:<bits_per_key>[:<level_budgets>[:<multiplier>]]]"
// (GetId's forms) into *options, and checks them; false with *errmsg when
// the id names another policy, a field is malformed or a value is not
// allowed.
bool ParseCuckooFilterId(const std::string& id,
                         CuckooFilterPolicyOptions* options,
                         std::string* errmsg);
// Checks a bits-per-key value; empty when valid, otherwise the message.
std::string CheckBitsPerKey(double bits_per_key);
// Checks the level_budgets options; empty when valid, otherwise the message.
std::string CheckLevelBudgets(const CuckooFilterPolicyOptions& options);
// The budget a builder uses: bits_per_key clamped to [kMinBitsPerKey,
// kMaxBitsPerKey], kDefaultBitsPerKey for NaN.
double UsableBitsPerKey(double bits_per_key);

#if !ROCKSDB_CUCKOO_LEGACY_6_29
// Registers the "cuckoofilter" factory (forms "cuckoofilter" and
// "cuckoofilter:<decimal>") into `library`. The signature of RocksDB's
// plugin registrars, so that it also serves as cuckoo_FUNC in-tree.
extern "C" int cuckoo_filter_register(ROCKSDB_NAMESPACE::ObjectLibrary& library,
                                      const std::string& arg);
#endif

}  // namespace rocksdb_cuckoo
