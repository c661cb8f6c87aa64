// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// CuckooFilterPolicy: its options (bits_per_key, level_budgets and
// max_bytes_for_level_multiplier, their checks, the id forms and how OPTIONS
// files store them), the builders and readers it hands RocksDB, and the
// ObjectLibrary registrar of "cuckoofilter".
#include "cuckoo_filter_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <unordered_map>
#include <vector>

#include "construction_charge.h"
#include "cuckoo/sizing.h"
#include "cuckoo_filter_bits_builder.h"
#include "cuckoo_filter_bits_reader.h"
#include "filter_format.h"
#include "level_budgets.h"
#include "rocksdb/utilities/options_type.h"
#include "rocksdb_cuckoo.h"
#include "rocksdb_interfaces.h"
#include "table/block_based/filter_policy_internal.h"

namespace rocksdb_cuckoo {

using ROCKSDB_NAMESPACE::FilterBitsBuilder;
using ROCKSDB_NAMESPACE::FilterBitsReader;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

namespace {

// The shortest plain decimal (no exponent) that reads back as the same
// double: "10", "9.5".
std::string FormatDecimal(double value) {
  char text[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, value);
    if (std::strchr(text, 'e') == nullptr &&
        std::strtod(text, nullptr) == value) {
      break;
    }
  }
  return text;
}

#if !ROCKSDB_CUCKOO_LEGACY_6_29
// The doubles are written to OPTIONS files as the shortest decimal that reads
// back exactly (RocksDB's default for doubles keeps six decimals, which would
// make GetId() and the stored option disagree, and the OPTIONS file fail its
// verification).
ROCKSDB_NAMESPACE::OptionTypeInfo ExactDouble(size_t offset) {
  return ROCKSDB_NAMESPACE::OptionTypeInfo(
             offset, ROCKSDB_NAMESPACE::OptionType::kDouble,
             ROCKSDB_NAMESPACE::OptionVerificationType::kNormal,
             ROCKSDB_NAMESPACE::OptionTypeFlags::kNone)
      .SetSerializeFunc([](const ROCKSDB_NAMESPACE::ConfigOptions&,
                           const std::string&, const void* address,
                           std::string* value) {
        *value = FormatDecimal(*static_cast<const double*>(address));
        return Status::OK();
      });
}

std::unordered_map<std::string, ROCKSDB_NAMESPACE::OptionTypeInfo>
    policy_option_info = {
        {"bits_per_key",
         ExactDouble(offsetof(struct CuckooFilterPolicyOptions, bits_per_key))},
        {"level_budgets",
         ROCKSDB_NAMESPACE::OptionTypeInfo(
             offsetof(struct CuckooFilterPolicyOptions, level_budgets),
             ROCKSDB_NAMESPACE::OptionType::kString,
             ROCKSDB_NAMESPACE::OptionVerificationType::kNormal,
             ROCKSDB_NAMESPACE::OptionTypeFlags::kNone)},
        {"max_bytes_for_level_multiplier",
         ExactDouble(offsetof(struct CuckooFilterPolicyOptions,
                              max_bytes_for_level_multiplier))},
};

#endif

// The checks of every option; empty when valid, otherwise the message.
std::string CheckOptions(const CuckooFilterPolicyOptions& options) {
  const std::string problem = CheckBitsPerKey(options.bits_per_key);
  return problem.empty() ? CheckLevelBudgets(options) : problem;
}

}  // namespace

bool ParseCuckooFilterId(const std::string& id,
                         CuckooFilterPolicyOptions* options,
                         std::string* errmsg) {
  std::vector<std::string> fields;
  for (size_t start = 0;;) {
    const size_t colon = id.find(':', start);
    fields.push_back(id.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (fields[0] != CuckooFilterPolicy::kClassName()) {
    *errmsg = "'" + id + "' does not name " + CuckooFilterPolicy::kClassName();
    return false;
  }
  const auto number = [&](const std::string& text, const char* what,
                          double* value) {
    char* end = nullptr;
    *value = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) {
      *errmsg = std::string(CuckooFilterPolicy::kClassName()) + ": " + what +
                " '" + text + "' is not a number";
      return false;
    }
    return true;
  };
  if (fields.size() > 4) {
    *errmsg = std::string(CuckooFilterPolicy::kClassName()) + ": '" + id +
              "' has more fields than cuckoofilter:<bits_per_key>:"
              "<level_budgets>:<max_bytes_for_level_multiplier>";
    return false;
  }
  if (fields.size() > 1 &&
      !number(fields[1], "bits_per_key", &options->bits_per_key)) {
    return false;
  }
  if (fields.size() > 2) options->level_budgets = fields[2];
  if (fields.size() > 3 && !number(fields[3], "max_bytes_for_level_multiplier",
                                   &options->max_bytes_for_level_multiplier)) {
    return false;
  }
  *errmsg = CheckOptions(*options);
  return errmsg->empty();
}

std::string CheckBitsPerKey(double bits_per_key) {
  if (!(bits_per_key >= kMinBitsPerKey && bits_per_key <= kMaxBitsPerKey)) {
    return std::string(CuckooFilterPolicy::kClassName()) + ": bits_per_key " +
           FormatDecimal(bits_per_key) + " is outside the allowed range [" +
           FormatDecimal(kMinBitsPerKey) + ", " +
           FormatDecimal(kMaxBitsPerKey) + "]";
  }
  return "";
}

std::string CheckLevelBudgets(const CuckooFilterPolicyOptions& options) {
  const std::string name = CuckooFilterPolicy::kClassName();
  if (options.level_budgets != kUniformLevelBudgets &&
      options.level_budgets != kMonkeyLevelBudgets) {
    return name + ": level_budgets '" + options.level_budgets +
           "' is not one of " + kUniformLevelBudgets + ", " +
           kMonkeyLevelBudgets;
  }
  constexpr double kMaxLevelMultiplier = 1000.0;
  if (!(options.max_bytes_for_level_multiplier > 1.0 &&
        options.max_bytes_for_level_multiplier <= kMaxLevelMultiplier)) {
    return name + ": max_bytes_for_level_multiplier " +
           FormatDecimal(options.max_bytes_for_level_multiplier) +
           " is outside the allowed range (1, " +
           FormatDecimal(kMaxLevelMultiplier) + "]";
  }
  return "";
}

double UsableBitsPerKey(double bits_per_key) {
  if (std::isnan(bits_per_key)) return kDefaultBitsPerKey;
  return std::min(kMaxBitsPerKey, std::max(kMinBitsPerKey, bits_per_key));
}

static_assert(LevelBudgets::kBalanceClasses == 17,
              "CuckooFilterPolicy::kBalanceClasses is LevelBudgets'");

CuckooFilterPolicy::CuckooFilterPolicy(double bits_per_key)
    : CuckooFilterPolicy([bits_per_key] {
        CuckooFilterPolicyOptions options;
        options.bits_per_key = bits_per_key;
        return options;
      }()) {}

CuckooFilterPolicy::CuckooFilterPolicy(const CuckooFilterPolicyOptions& options)
    : options_(options) {
#if !ROCKSDB_CUCKOO_LEGACY_6_29
  RegisterOptions("CuckooFilterPolicyOptions", &options_, &policy_option_info);
#endif
  MakeLevelBudgets();
}

void CuckooFilterPolicy::MakeLevelBudgets() {
  level_budgets_.reset();
  if (options_.level_budgets == kMonkeyLevelBudgets &&
      CheckLevelBudgets(options_).empty()) {
    level_budgets_ =
        std::make_shared<LevelBudgets>(UsableBitsPerKey(options_.bits_per_key),
                                       options_.max_bytes_for_level_multiplier,
                                       kMinBitsPerKey, kMaxBitsPerKey);
  }
}

#if !ROCKSDB_CUCKOO_LEGACY_6_29
std::string CuckooFilterPolicy::GetId() const {
  std::string id =
      std::string(kClassName()) + ":" + FormatDecimal(options_.bits_per_key);
  if (options_.level_budgets != kUniformLevelBudgets) {
    id += ":" + options_.level_budgets + ":" +
          FormatDecimal(options_.max_bytes_for_level_multiplier);
  }
  return id;
}

Status CuckooFilterPolicy::PrepareOptions(
    const ROCKSDB_NAMESPACE::ConfigOptions& config_options) {
  const std::string problem = CheckOptions(options_);
  if (!problem.empty()) return Status::InvalidArgument(problem);
  MakeLevelBudgets();
  return FilterPolicy::PrepareOptions(config_options);
}

Status CuckooFilterPolicy::ValidateOptions(
    const ROCKSDB_NAMESPACE::DBOptions& db_options,
    const ROCKSDB_NAMESPACE::ColumnFamilyOptions& cf_options) const {
  const std::string problem = CheckOptions(options_);
  if (!problem.empty()) return Status::InvalidArgument(problem);
  return FilterPolicy::ValidateOptions(db_options, cf_options);
}
#endif

FilterBitsBuilder* CuckooFilterPolicy::GetBuilderWithContext(
    const ROCKSDB_NAMESPACE::FilterBuildingContext& context) const {
  ROCKSDB_NAMESPACE::Logger* const info_log = context.info_log;
  // A policy constructed in code is validated only when a DB opens with it;
  // SstFileWriter never does. A budget outside the range (or not a number)
  // is built at the nearest bound (the default for NaN), and said so.
  const double bits_per_key = UsableBitsPerKey(options_.bits_per_key);
  if (!(bits_per_key == options_.bits_per_key) && info_log != nullptr) {
    InfoLog(ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL, info_log,
            "[cuckoofilter] %s; building at %g",
            CheckBitsPerKey(options_.bits_per_key).c_str(), bits_per_key);
  }
  // Measured (bench/RESULTS.md): at 8 bits/key the cuckoo FPR is 1.18x
  // Bloom's, at 10 it is 0.73x; the curves cross near 9. Below that, say so
  // once per filter builder, as RocksDB's legacy Bloom builder does for its
  // own poor settings.
  constexpr double kBloomCrossoverBitsPerKey = 9.0;
  if (bits_per_key < kBloomCrossoverBitsPerKey && info_log != nullptr) {
    InfoLog(ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL, info_log,
            "[cuckoofilter] %g bits/key: below about %g bits per key a Bloom "
            "filter (bloomfilter, or ribbonfilter for less space) has a lower "
            "false-positive rate in the same space",
            bits_per_key, kBloomCrossoverBitsPerKey);
  }
  // Nothing may throw into RocksDB. Without a builder it writes the file
  // without a filter, which reads correctly (6.29 writes its block-based
  // filter instead, which this policy leaves empty: every key may match).
  try {
    const LevelBudgets::Budget budget =
        level_budgets_ != nullptr ? level_budgets_->ForFile(context)
                                  : LevelBudgets::Budget{bits_per_key, 0};
    // The balance of this budget: an alias into the policy's array.
    std::shared_ptr<std::atomic<int64_t>> rounding_balance;
    if (context.table_options.optimize_filters_for_memory) {
      rounding_balance = std::shared_ptr<std::atomic<int64_t>>(
          rounding_balances_, &(*rounding_balances_)[budget.balance_class]);
    }
    FinishedFilterCounts counts;
    if (level_budgets_ != nullptr && budget.balance_class > 0) {
      counts = [budgets = level_budgets_, balance_class = budget.balance_class](
                   uint64_t keys, uint64_t entries) {
        budgets->NoteEntries(balance_class, keys, entries);
      };
    }
    return NewCuckooFilterBitsBuilder(
        cuckoo::ChooseForBitsPerKey(budget.bits_per_key),
        DetectsConstructCorruption(context.table_options), info_log, fallbacks_,
        std::move(rounding_balance),
        NewConstructionReservations(context.table_options), fault_hook_,
        std::move(counts));
  } catch (const std::exception& e) {
    if (info_log != nullptr) {
      InfoLog(ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL, info_log,
              "[cuckoofilter] cannot create a filter builder "
              "(%s): this file gets no filter",
              e.what());
    }
    return nullptr;
  }
}

FilterBitsReader* CuckooFilterPolicy::GetFilterBitsReader(
    const Slice& contents) const {
  const DecodedBlock block = DecodeBlock(
      reinterpret_cast<const uint8_t*>(contents.data()), contents.size());
  if (!block.has_table) {
    fallbacks_->always_match_readers.fetch_add(1, std::memory_order_relaxed);
    if (!fallbacks_->reported_reader.exchange(true)) {
      std::fprintf(stderr,
                   "rocksdb-cuckoo: a cuckoofilter block is not used (%s): "
                   "its file is read without the filter; later ones are "
                   "only counted (CuckooFilterPolicy::fallback_counts)\n",
                   block.reason.c_str());
    }
    return NewAlwaysMatchBitsReader();
  }
  return NewCuckooFilterBitsReader(block);
}

FallbackCounts CuckooFilterPolicy::fallback_counts() const {
  FallbackCounts counts;
  counts.always_match_readers =
      fallbacks_->always_match_readers.load(std::memory_order_relaxed);
  counts.unbuilt_filters =
      fallbacks_->unbuilt_filters.load(std::memory_order_relaxed);
  return counts;
}

#if !ROCKSDB_CUCKOO_LEGACY_6_29
extern "C" int cuckoo_filter_register(ROCKSDB_NAMESPACE::ObjectLibrary& library,
                                      const std::string& /*arg*/) {
  const ROCKSDB_NAMESPACE::FactoryFunc<const ROCKSDB_NAMESPACE::FilterPolicy>
      factory =
          [](const std::string& uri,
             std::unique_ptr<const ROCKSDB_NAMESPACE::FilterPolicy>* guard,
             std::string* errmsg) -> const ROCKSDB_NAMESPACE::FilterPolicy* {
    CuckooFilterPolicyOptions options;
    if (!ParseCuckooFilterId(uri, &options, errmsg)) return nullptr;
    guard->reset(new CuckooFilterPolicy(options));
    return guard->get();
  };
  // "cuckoofilter" and "cuckoofilter:<bits_per_key>".
  library.AddFactory<const ROCKSDB_NAMESPACE::FilterPolicy>(
      ROCKSDB_NAMESPACE::ObjectLibrary::PatternEntry(
          CuckooFilterPolicy::kClassName(), /*optional=*/true)
          .AddNumber(":", /*is_int=*/false),
      factory);
  // "cuckoofilter:<bits_per_key>:<level_budgets>[:<multiplier>]".
  library.AddFactory<const ROCKSDB_NAMESPACE::FilterPolicy>(
      ROCKSDB_NAMESPACE::ObjectLibrary::PatternEntry(
          CuckooFilterPolicy::kClassName(), /*optional=*/false)
          .AddNumber(":", /*is_int=*/false)
          .AddSeparator(":"),
      factory);
  size_t num_types = 0;
  return static_cast<int>(library.GetFactoryCount(&num_types));
}
#endif

}  // namespace rocksdb_cuckoo

#if !ROCKSDB_CUCKOO_LEGACY_6_29
// Once per process, whichever comes first: the program's call, or the
// loading of librocksdb_cuckoo.so (cuckoo_autoregister.cc).
extern "C" int rocksdb_cuckoo_register_default(void) {
  static const int result = [] {
    try {
      rocksdb_cuckoo::cuckoo_filter_register(
          *ROCKSDB_NAMESPACE::ObjectLibrary::Default(), "cuckoo");
      return 0;
    } catch (const std::exception&) {
      return -1;
    }
  }();
  return result;
}
#endif
