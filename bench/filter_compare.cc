// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The db_bench-style comparison (the README's main job): no filter, RocksDB's
// Bloom and Ribbon filters and the cuckoo filter, on one multi-level LSM of
// the same verified shape per policy (compare/lsm_shape.h), in two regimes:
//   memory  every block cached, so a false positive costs a cache hit;
//   io      direct I/O and a block cache much smaller than the data, filters
//           held by the table readers: a false positive costs a storage read.
// The policies run round-robin in a shuffled order per workload and
// repetition, after a warm-up pass, on the same keys, and each figure of a
// filter is a paired ratio to the Bloom filter of the same budget, with an
// interval (compare/paired_stats.h). An equal-FPR view gives each family's
// bits per key for target rates (compare/equal_fpr.h), and the filter costs
// their build time, peak build memory and allocated memory per key, with and
// without optimize_filters_for_memory (compare/filter_costs.h).
//
// usage: filter_compare [--full] [flags]     (--help lists them)
#include <fcntl.h>
#include <gflags/gflags.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compare/allocation_tracking.h"
#include "compare/equal_fpr.h"
#include "compare/filter_costs.h"
#include "compare/keys.h"
#include "compare/lsm_shape.h"
#include "compare/report.h"
#include "compare/workloads.h"
#include "cuckoo_filter_policy.h"
#include "rocksdb/cache.h"
#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/options.h"
#include "rocksdb/slice_transform.h"
#include "rocksdb/statistics.h"
#include "rocksdb/table.h"
#include "rocksdb/table_properties.h"
#include "rocksdb/utilities/object_registry.h"
#include "rocksdb_interfaces.h"

DEFINE_bool(full, false,
            "The preset of bench/RESULTS.md: more keys, lookups and "
            "repetitions (flags given explicitly still win)");
DEFINE_uint64(num, 300000, "Keys in each DB");
DEFINE_int32(value_size, 100, "Value size in bytes");
DEFINE_int32(keys_per_prefix, 8, "Keys sharing each 8-byte prefix");
DEFINE_string(bits_per_key, "10,16", "Comma-separated bits-per-key budgets");
DEFINE_string(filters, "none,bloom,ribbon,cuckoo,monkey",
              "Comma-separated policies: none, bloom, ribbon, cuckoo, and "
              "monkey (cuckoo with level_budgets=monkey: the budget is the "
              "average over the LSM's levels; in the LSM regimes only, since "
              "a filter on its own is one of cuckoo's)");
DEFINE_string(regimes, "memory,io", "Comma-separated regimes: memory, io");
DEFINE_int32(repetitions, 5, "Measured repetitions (after one warm-up pass)");
DEFINE_uint64(reads, 50000, "memory regime: lookups per workload run");
DEFINE_uint64(io_reads, 3000,
              "io regime: lookups per run of the workloads of stored keys");
DEFINE_uint64(io_missing_reads, 30000,
              "io regime: lookups per run of readmissing and "
              "seekmissingprefix (mostly answered by the filter)");
DEFINE_int32(batch_size, 32, "Keys per MultiGet in multireadrandom");
DEFINE_int32(levels, 5, "Populated LSM levels, L0 included");
DEFINE_double(fanout, 10, "Size ratio of adjacent levels");
DEFINE_uint64(target_file_mb, 4, "SST size in MiB of data");
DEFINE_uint64(io_cache_mb, 4, "io regime: block cache per DB, MiB");
DEFINE_string(fpr_budgets, "6,7,8,9,10,11,12,13,14,15,16,17,18,19,20",
              "Budgets of the equal-FPR grid");
DEFINE_uint64(fpr_keys, 100000, "Keys per filter of the equal-FPR grid");
DEFINE_uint64(fpr_probes, 2000000, "Absent keys probed per grid filter");
DEFINE_int32(cost_filters, 60,
             "Filter costs: filters of each policy per repetition");
DEFINE_uint64(cost_min_keys, 1000, "Filter costs: smallest filter's keys");
DEFINE_uint64(cost_max_keys, 100000,
              "Filter costs: largest filter's keys (sizes log-uniform)");
DEFINE_uint64(cost_probes, 20000, "Filter costs: absent keys per filter");
DEFINE_int32(cost_repetitions, 3, "Filter costs: repetitions");
DEFINE_string(rocksdb_build, "",
              "How the RocksDB library was built, for the report (the "
              "scripts say whether it has assertions)");
DEFINE_string(db, "",
              "Work folder, absent or empty (default: a fresh private folder "
              "under the temp directory); removed afterwards unless --keep");
DEFINE_bool(keep, false, "Keep the work folder and its DBs");
DEFINE_uint64(seed, 1, "Seed of the LSM shape, the key sequences and orders");
DEFINE_string(csv, "", "Also write one row per regime/workload/policy here");
DEFINE_string(fpr_csv, "", "Also write the equal-FPR grid here");
DEFINE_string(json, "", "Also write every repetition as JSON here");

namespace {

namespace rdb = ROCKSDB_NAMESPACE;
namespace fc = filter_compare;
using Clock = std::chrono::steady_clock;

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

std::vector<int> SplitInts(const std::string& text) {
  std::vector<int> values;
  for (const std::string& part : Split(text)) values.push_back(std::stoi(part));
  return values;
}

void Check(const rdb::Status& status, const std::string& what) {
  if (!status.ok()) {
    std::fprintf(stderr, "filter_compare: %s: %s\n", what.c_str(),
                 status.ToString().c_str());
    std::exit(1);
  }
}

// A progress line on stderr, with the seconds since the start.
void Progress(const std::string& text) {
  static const auto start = Clock::now();
  std::fprintf(stderr, "[%6.1f s] %s\n",
               std::chrono::duration<double>(Clock::now() - start).count(),
               text.c_str());
}

// Sets a flag to the --full preset unless it was given on the command line.
void Preset(const char* name, const char* value) {
  if (gflags::GetCommandLineFlagInfoOrDie(name).is_default) {
    gflags::SetCommandLineOption(name, value);
  }
}

// A filter family as db_bench users know it, and how to ask RocksDB for it.
struct PolicyFamily {
  std::string family;     // --filters name
  std::string id;         // filter_policy= prefix before the bits per key
  std::string id_suffix;  // after it
  std::string name;       // FilterPolicy::Name()
};
const PolicyFamily kPolicyFamilies[] = {
    {"bloom", "bloomfilter:", ":false", "bloomfilter"},
    {"ribbon", "ribbonfilter:", ":-1", "ribbonfilter"},
    {"cuckoo", "cuckoofilter:", "", "cuckoofilter"},
    {"monkey", "cuckoofilter:", ":monkey", "cuckoofilter"},
};

// Families whose filters differ only by where in an LSM they are written:
// measured in the LSM regimes, not on their own.
bool PerLevelOnly(const std::string& family) { return family == "monkey"; }

enum class Regime { kBuild, kMemory, kIo };

fc::LsmShapeOptions ShapeOptions() {
  fc::LsmShapeOptions shape;
  shape.num_keys = FLAGS_num;
  shape.value_size = FLAGS_value_size;
  shape.levels = FLAGS_levels;
  shape.fanout = FLAGS_fanout;
  shape.target_file_bytes = FLAGS_target_file_mb << 20;
  shape.seed = FLAGS_seed;
  return shape;
}

// The options of a policy's DB in a regime. The policy comes from an options
// string parsed strictly, so an unknown policy stops the run instead of
// silently leaving the DB without a filter.
rdb::Options MakeOptions(const fc::PolicyRun& policy, Regime regime,
                         bool direct_io,
                         std::shared_ptr<rdb::Statistics> statistics) {
  rdb::ConfigOptions strict;
  strict.ignore_unsupported_options = false;
  strict.input_strings_escaped = false;
  rdb::BlockBasedTableOptions table;
  Check(rdb::GetBlockBasedTableOptionsFromString(
            strict, rdb::BlockBasedTableOptions(),
            "filter_policy=" + policy.options_string, &table),
        "parsing filter_policy=" + policy.options_string);
  // Filters and indexes live in the table readers (all opened at DB open),
  // so storage reads are data blocks.
  table.cache_index_and_filter_blocks = false;
  if (regime == Regime::kIo) {
    table.block_cache = rdb::NewLRUCache(FLAGS_io_cache_mb << 20);
  } else {
    const uint64_t data_bytes =
        FLAGS_num * (static_cast<uint64_t>(FLAGS_value_size) + 64);
    table.block_cache =
        rdb::NewLRUCache(std::max<uint64_t>(64 << 20, 2 * data_bytes));
  }
  rdb::Options options;
  options.create_if_missing = regime == Regime::kBuild;
  options.statistics = std::move(statistics);
  options.table_factory.reset(rdb::NewBlockBasedTableFactory(table));
  options.prefix_extractor.reset(
      rdb::NewFixedPrefixTransform(fc::kPrefixBytes));
  options.max_open_files = -1;
  options.max_background_jobs = 2;
  options.use_direct_reads = regime == Regime::kIo;
  options.use_direct_io_for_flush_and_compaction = direct_io;
  fc::ApplyShapeOptions(ShapeOptions(), &options);
  return options;
}

std::unique_ptr<rdb::DB> OpenDb(const rdb::Options& options,
                                const std::string& path) {
  std::unique_ptr<rdb::DB> db;
  Check(rocksdb_cuckoo::OpenDb(options, path, &db), "opening " + path);
  return db;
}

// Why the folder cannot serve the io regime, or "" if it can: it must be on
// storage (not tmpfs or ramfs, which are memory, and since Linux 6.6 accept
// O_DIRECT) and its file system must accept O_DIRECT.
std::string StorageProblem(const std::string& folder) {
  struct statfs fs {};
  if (statfs(folder.c_str(), &fs) == 0) {
    constexpr unsigned long kTmpfsMagic = 0x01021994;
    constexpr unsigned long kRamfsMagic = 0x858458f6;
    const auto type = static_cast<unsigned long>(fs.f_type);
    if (type == kTmpfsMagic || type == kRamfsMagic) {
      return folder + " is on " + (type == kTmpfsMagic ? "tmpfs" : "ramfs") +
             ", which is memory: its reads are not storage reads";
    }
  }
  const std::string probe = folder + "/.direct_io_probe";
  const int fd = open(probe.c_str(), O_CREAT | O_WRONLY | O_DIRECT, 0600);
  std::string problem;
  if (fd < 0) {
    problem = std::strerror(errno);
  } else {
    void* block = nullptr;
    if (posix_memalign(&block, 4096, 4096) == 0) {
      std::memset(block, 0, 4096);
      if (write(fd, block, 4096) != 4096) problem = std::strerror(errno);
      std::free(block);
    }
    close(fd);
  }
  unlink(probe.c_str());
  return problem.empty() ? ""
                         : "the file system of " + folder +
                               " has no O_DIRECT (" + problem + ")";
}

uint64_t FolderBytes(const std::string& folder) {
  uint64_t bytes = 0;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(folder, error)) {
    if (entry.is_regular_file(error)) bytes += entry.file_size(error);
  }
  return bytes;
}

// Verifies that every SST of the DB carries the intended filter: silently
// running without a filter is the classic error of filter benchmarks.
void CheckFilterInEffect(rdb::DB* db, const fc::PolicyRun& policy) {
  auto* table =
      db->GetOptions().table_factory->GetOptions<rdb::BlockBasedTableOptions>();
  const std::string in_effect =
      table->filter_policy ? table->filter_policy->Name() : "";
  if (in_effect != policy.expected_name) {
    std::fprintf(stderr, "filter_compare: %s: policy in effect is '%s'\n",
                 policy.Label().c_str(), in_effect.c_str());
    std::exit(1);
  }
  rdb::TablePropertiesCollection all;
  Check(db->GetPropertiesOfAllTables(&all), "table properties");
  for (const auto& [file, props] : all) {
    const bool has_filter = props->filter_size > 0;
    if (props->filter_policy_name != policy.expected_name ||
        has_filter != !policy.expected_name.empty()) {
      std::fprintf(stderr,
                   "filter_compare: %s: %s was written with filter '%s' "
                   "(%llu bytes)\n",
                   policy.Label().c_str(), file.c_str(),
                   props->filter_policy_name.c_str(),
                   static_cast<unsigned long long>(props->filter_size));
      std::exit(1);
    }
  }
}

double SstBitsPerKey(rdb::DB* db) {
  rdb::TablePropertiesCollection all;
  Check(db->GetPropertiesOfAllTables(&all), "table properties");
  uint64_t filter_bytes = 0, entries = 0;
  for (const auto& [file, props] : all) {
    filter_bytes += props->filter_size;
    entries += props->num_entries;
  }
  return entries ? 8.0 * static_cast<double>(filter_bytes) /
                       static_cast<double>(entries)
                 : 0;
}

// Ops of one run: the workloads of stored keys cost storage reads in the io
// regime; the DB without a filter pays them for absent keys too, so it gets
// a quarter of the stored-key count there (ratios are per 1000 lookups).
uint64_t OpsFor(Regime regime, fc::Workload workload,
                const fc::PolicyRun& policy) {
  if (regime == Regime::kMemory) return FLAGS_reads;
  if (policy.family == "none")
    return std::max<uint64_t>(FLAGS_io_reads / 4, 32);
  return fc::MostlyAbsent(workload) ? FLAGS_io_missing_reads : FLAGS_io_reads;
}

fc::RegimeResults RunRegime(Regime regime,
                            const std::vector<fc::PolicyRun>& policies,
                            const std::vector<std::string>& paths,
                            const fc::KeyScheme& keys, bool direct_io) {
  fc::RegimeResults results;
  results.name = regime == Regime::kIo ? "io" : "memory";
  results.workloads = fc::AllWorkloads();
  results.samples.assign(policies.size(), std::vector<std::vector<fc::Sample>>(
                                              results.workloads.size()));

  std::vector<std::shared_ptr<rdb::Statistics>> statistics;
  std::vector<std::unique_ptr<rdb::DB>> dbs;
  for (size_t p = 0; p < policies.size(); ++p) {
    statistics.push_back(rdb::CreateDBStatistics());
    dbs.push_back(
        OpenDb(MakeOptions(policies[p], regime, direct_io, statistics.back()),
               paths[p]));
  }
  fc::EnablePerfCounters();
  if (regime == Regime::kMemory) {
    // Warm-up: one scan caches every data block.
    Progress("[memory] warm-up: a full scan of each DB");
    for (auto& db : dbs) {
      rdb::ReadOptions scan;
      scan.total_order_seek = true;
      std::unique_ptr<rdb::Iterator> it(db->NewIterator(scan));
      uint64_t count = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next()) ++count;
      Check(it->status(), "warm-up scan");
      if (count != FLAGS_num) {
        std::fprintf(stderr, "filter_compare: a DB holds %llu keys, not %llu\n",
                     static_cast<unsigned long long>(count),
                     static_cast<unsigned long long>(FLAGS_num));
        std::exit(1);
      }
    }
  }
  std::mt19937_64 order_rng(FLAGS_seed * 7919 + static_cast<uint64_t>(regime));
  for (int rep = -1; rep < FLAGS_repetitions; ++rep) {
    const bool warm_up = rep < 0;
    if (warm_up && regime == Regime::kMemory) continue;
    for (size_t w = 0; w < results.workloads.size(); ++w) {
      const fc::Workload workload = results.workloads[w];
      Progress("[" + results.name + "] " +
               (warm_up ? std::string("warm-up")
                        : "repetition " + std::to_string(rep + 1) + "/" +
                              std::to_string(FLAGS_repetitions)) +
               ": " + fc::WorkloadName(workload));
      std::vector<size_t> order(policies.size());
      for (size_t p = 0; p < order.size(); ++p) order[p] = p;
      std::shuffle(order.begin(), order.end(), order_rng);
      for (size_t p : order) {
        fc::WorkloadRun run;
        run.workload = workload;
        run.ops = OpsFor(regime, workload, policies[p]);
        if (warm_up) run.ops = std::max<uint64_t>(run.ops / 4, 32);
        run.num_keys = FLAGS_num;
        run.key_seed =
            FLAGS_seed * 1000003 + static_cast<uint64_t>(rep + 1) * 64 + w;
        run.batch_size = FLAGS_batch_size;
        fc::Sample sample =
            fc::RunWorkload(dbs[p].get(), statistics[p].get(), keys, run,
                            policies[p].Label() + " (" + results.name + ")");
        if (!warm_up) results.samples[p][w].push_back(std::move(sample));
      }
    }
  }
  return results;
}

std::string SettingsJson() {
  char text[512];
  std::snprintf(
      text, sizeof(text),
      "{\"num\": %llu, \"value_size\": %d, \"levels\": %d, \"fanout\": %g, "
      "\"repetitions\": %d, \"reads\": %llu, \"io_reads\": %llu, "
      "\"io_missing_reads\": %llu, \"io_cache_mb\": %llu, \"batch_size\": %d, "
      "\"rocksdb\": \"%s\"}",
      static_cast<unsigned long long>(FLAGS_num), FLAGS_value_size,
      FLAGS_levels, FLAGS_fanout, FLAGS_repetitions,
      static_cast<unsigned long long>(FLAGS_reads),
      static_cast<unsigned long long>(FLAGS_io_reads),
      static_cast<unsigned long long>(FLAGS_io_missing_reads),
      static_cast<unsigned long long>(FLAGS_io_cache_mb), FLAGS_batch_size,
      rdb::GetRocksVersionAsString().c_str());
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "Compares RocksDB filter policies on one multi-level LSM shape, in "
      "memory and I/O-bound (see README)");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (FLAGS_full) {
    Preset("num", "1000000");
    Preset("reads", "100000");
    Preset("io_reads", "6000");
    Preset("io_missing_reads", "60000");
    Preset("repetitions", "7");
    Preset("fpr_keys", "200000");
    Preset("fpr_probes", "10000000");
    Preset("cost_filters", "300");
    Preset("cost_max_keys", "1000000");
    Preset("cost_probes", "50000");
  }
  rocksdb_cuckoo::cuckoo_filter_register(*rdb::ObjectLibrary::Default(),
                                         "cuckoo");
  if (FLAGS_num < 1000 || FLAGS_reads == 0 || FLAGS_io_reads == 0 ||
      FLAGS_io_missing_reads == 0 || FLAGS_repetitions < 1 ||
      FLAGS_batch_size < 1 || FLAGS_batch_size > 32 || FLAGS_levels < 2 ||
      FLAGS_levels > 7 || FLAGS_fanout < 1 || FLAGS_target_file_mb == 0 ||
      FLAGS_io_cache_mb == 0 || FLAGS_keys_per_prefix < 1 ||
      FLAGS_cost_filters < 1 || FLAGS_cost_repetitions < 1 ||
      FLAGS_cost_min_keys < 1 || FLAGS_cost_max_keys < FLAGS_cost_min_keys ||
      FLAGS_cost_probes < 1) {
    std::fprintf(stderr,
                 "filter_compare: need --num >= 1000, positive lookup counts, "
                 "--repetitions >= 1, --batch_size in [1, 32], --levels in "
                 "[2, 7], --fanout >= 1, positive sizes, and "
                 "--cost_min_keys <= --cost_max_keys\n");
    return 2;
  }

  std::vector<fc::PolicyRun> policies;
  const std::vector<int> budgets = SplitInts(FLAGS_bits_per_key);
  for (const std::string& family : Split(FLAGS_filters)) {
    if (family == "none") {
      policies.push_back({"none", 0, "nullptr", "", 0, 0});
      continue;
    }
    const PolicyFamily* known = nullptr;
    for (const PolicyFamily& candidate : kPolicyFamilies) {
      if (family == candidate.family) known = &candidate;
    }
    if (known == nullptr) {
      std::fprintf(stderr, "filter_compare: unknown filter '%s'\n",
                   family.c_str());
      return 2;
    }
    for (int bits : budgets) {
      policies.push_back({family, bits,
                          known->id + std::to_string(bits) + known->id_suffix,
                          known->name, 0, 0});
    }
  }
  std::vector<Regime> regimes;
  for (const std::string& name : Split(FLAGS_regimes)) {
    if (name == "memory") {
      regimes.push_back(Regime::kMemory);
    } else if (name == "io") {
      regimes.push_back(Regime::kIo);
    } else {
      std::fprintf(stderr, "filter_compare: unknown regime '%s'\n",
                   name.c_str());
      return 2;
    }
  }
  const bool io_regime =
      std::find(regimes.begin(), regimes.end(), Regime::kIo) != regimes.end();

  // Nothing of anyone else's is touched: the default folder is new and
  // private (mkdtemp), and --db must be absent or empty.
  std::string work;
  std::error_code error;
  if (FLAGS_db.empty()) {
    std::string name = std::filesystem::temp_directory_path(error).string() +
                       "/rocksdb_cuckoo_compare.XXXXXX";
    if (error || mkdtemp(name.data()) == nullptr) {
      std::fprintf(stderr,
                   "filter_compare: cannot create a work folder under the "
                   "temp directory; name one with --db\n");
      return 1;
    }
    work = name;
  } else {
    work = FLAGS_db;
    const bool usable = !std::filesystem::exists(work, error)
                            ? std::filesystem::create_directories(work, error)
                            : std::filesystem::is_directory(work, error) &&
                                  std::filesystem::is_empty(work, error);
    if (error || !usable) {
      std::fprintf(stderr,
                   "filter_compare: --db=%s must be an empty or absent "
                   "folder that can be created%s%s\n",
                   work.c_str(), error ? ": " : "",
                   error ? error.message().c_str() : "");
      return 1;
    }
  }
  auto finish = [&](int code) {
    if (FLAGS_keep) {
      std::fprintf(stderr, "kept the work folder %s\n", work.c_str());
    } else {
      std::filesystem::remove_all(work, error);
    }
    return code;
  };
  if (io_regime) {
    const std::string problem = StorageProblem(work);
    if (!problem.empty()) {
      std::fprintf(stderr,
                   "filter_compare: the io regime reads storage with direct "
                   "I/O, but %s. Name a folder on a disk with --db, or run "
                   "--regimes=memory.\n",
                   problem.c_str());
      return finish(1);
    }
  }

  const fc::KeyScheme keys(static_cast<uint64_t>(FLAGS_keys_per_prefix));
  const fc::LsmShapeOptions shape_options = ShapeOptions();
  std::vector<std::string> paths;
  fc::LsmShape shape;
  for (size_t p = 0; p < policies.size(); ++p) {
    fc::PolicyRun& policy = policies[p];
    Progress("[build " + std::to_string(p + 1) + "/" +
             std::to_string(policies.size()) + "] " + policy.Label() + ": " +
             std::to_string(FLAGS_num) + " keys into " +
             std::to_string(FLAGS_levels) + " levels");
    paths.push_back(work + "/" + policy.Label());
    auto db = OpenDb(MakeOptions(policy, Regime::kBuild, io_regime, nullptr),
                     paths.back());
    const auto start = Clock::now();
    Check(fc::BuildLsm(db.get(), keys, shape_options), "building the LSM");
    policy.build_seconds =
        std::chrono::duration<double>(Clock::now() - start).count();
    CheckFilterInEffect(db.get(), policy);
    policy.sst_bits_per_key = SstBitsPerKey(db.get());
    const fc::LsmShape built = fc::DescribeLsm(db.get());
    if (p == 0) {
      shape = built;
    } else if (const std::string difference = fc::ShapeDifference(shape, built);
               !difference.empty()) {
      std::fprintf(stderr, "filter_compare: %s's LSM differs from %s's: %s\n",
                   policy.Label().c_str(), policies[0].Label().c_str(),
                   difference.c_str());
      return finish(1);
    }
  }
  const uint64_t peak_disk_bytes = FolderBytes(work);

  std::vector<fc::RegimeResults> results;
  for (Regime regime : regimes) {
    results.push_back(RunRegime(regime, policies, paths, keys, io_regime));
  }

  Progress("[equal FPR] measuring the grid " + FLAGS_fpr_budgets);
  std::vector<fc::FprCurve> curves;
  for (const PolicyFamily& family : kPolicyFamilies) {
    if (PerLevelOnly(family.family)) continue;
    curves.push_back(
        {family.family,
         fc::MeasureFprCurve(family.family, SplitInts(FLAGS_fpr_budgets),
                             FLAGS_fpr_keys, FLAGS_fpr_probes)});
  }

  Progress("[filter costs] building " + std::to_string(FLAGS_cost_filters) +
           " filters per policy, " + std::to_string(FLAGS_cost_repetitions) +
           " repetitions");
  fc::FilterCostSettings cost_settings;
  cost_settings.families.push_back("bloom");
  for (const std::string& family : Split(FLAGS_filters)) {
    if (family != "none" && family != "bloom" && !PerLevelOnly(family)) {
      cost_settings.families.push_back(family);
    }
  }
  cost_settings.budgets = budgets;
  cost_settings.filters = FLAGS_cost_filters;
  cost_settings.min_keys = FLAGS_cost_min_keys;
  cost_settings.max_keys = FLAGS_cost_max_keys;
  cost_settings.probes_per_filter = FLAGS_cost_probes;
  cost_settings.repetitions = FLAGS_cost_repetitions;
  cost_settings.seed = FLAGS_seed;
  const std::vector<fc::FilterCost> costs =
      fc::MeasureFilterCosts(cost_settings);

  if (!FLAGS_rocksdb_build.empty()) {
    std::printf("RocksDB build: %s\n\n", FLAGS_rocksdb_build.c_str());
  }
  std::printf(
      "RocksDB %s. %llu keys of %d-byte values, the same LSM for every "
      "policy; %d repetitions after a warm-up, policies round-robin in "
      "shuffled order. Ratios: paired by repetition, median [min–max]. Peak "
      "disk use %.0f MiB.\n\n",
      rdb::GetRocksVersionAsString().c_str(),
      static_cast<unsigned long long>(FLAGS_num), FLAGS_value_size,
      FLAGS_repetitions, static_cast<double>(peak_disk_bytes) / (1 << 20));
  std::printf("LSM shape (verified identical for all %zu policies):\n\n%s\n",
              policies.size(), fc::FormatShape(shape).c_str());
  std::printf("| filter | bits/key (SST) | build s |\n|---|---|---|\n");
  for (const fc::PolicyRun& policy : policies) {
    std::printf("| %s | %.2f | %.2f |\n", policy.Label().c_str(),
                policy.sst_bits_per_key, policy.build_seconds);
  }
  for (const fc::RegimeResults& regime : results) {
    if (regime.name == "memory") {
      std::printf(
          "\n### In memory: every block cached after a full scan; %llu "
          "lookups per run\n\n",
          static_cast<unsigned long long>(FLAGS_reads));
    } else {
      std::printf(
          "\n### I/O-bound: direct reads, %llu MiB block cache per DB, "
          "filters in the table readers; %llu lookups per run of stored "
          "keys, %llu of absent ones (no filter: a quarter of the first)\n\n",
          static_cast<unsigned long long>(FLAGS_io_cache_mb),
          static_cast<unsigned long long>(FLAGS_io_reads),
          static_cast<unsigned long long>(FLAGS_io_missing_reads));
    }
    std::printf("%s", fc::FormatRegime(policies, regime).c_str());
    const std::string levels = fc::FormatLevels(policies, regime);
    if (!levels.empty()) {
      std::printf(
          "\nBy level, for the absent keys: false positives / block-cache "
          "misses, per 1000 lookups\n\n%s",
          levels.c_str());
    }
  }
  std::printf(
      "\n### Equal FPR: bits per key each family needs (grid %s, %llu keys, "
      "%llu probes per point, interpolated on log FPR)\n\n%s",
      FLAGS_fpr_budgets.c_str(),
      static_cast<unsigned long long>(FLAGS_fpr_keys),
      static_cast<unsigned long long>(FLAGS_fpr_probes),
      fc::FormatEqualFpr(curves, {0.01, 0.001}, FLAGS_num).c_str());
  std::printf(
      "\n### Filter costs: %d filters per policy of %llu to %llu keys "
      "(log-uniform), built through FilterBitsBuilder; build time from the "
      "first AddKey to the end of Finish, median of %d repetitions with "
      "ratios to Bloom paired by repetition; peak build memory: the most any "
      "one build held at once, per key; allocated: each block plus RocksDB's "
      "5-byte trailer as the allocator rounds it; FPR over %llu absent keys "
      "per filter\n\n%s",
      FLAGS_cost_filters, static_cast<unsigned long long>(FLAGS_cost_min_keys),
      static_cast<unsigned long long>(FLAGS_cost_max_keys),
      FLAGS_cost_repetitions,
      static_cast<unsigned long long>(FLAGS_cost_probes),
      fc::FormatFilterCosts(costs, fc::allocation_tracking::AllocatorName())
          .c_str());
  if (!FLAGS_csv.empty()) fc::WriteCsv(FLAGS_csv, policies, results);
  if (!FLAGS_fpr_csv.empty()) fc::WriteFprCsv(FLAGS_fpr_csv, curves);
  if (!FLAGS_json.empty()) {
    fc::WriteJson(FLAGS_json, SettingsJson(), policies, results, curves);
  }
  return finish(0);
}
