// The db_bench-style comparison (the README's main job): one DB is filled once,
// copied per filter policy and fully compacted under that policy, so every
// policy filters the same LSM shape; then the same read workloads run against
// each copy, and a Markdown table reports throughput, latency, measured
// false-positive rate, filter bits per key and construction time, with every
// figure of a filter as a ratio to the built-in Bloom filter at the same
// bits per key.
#include <gflags/gflags.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cuckoo_filter_policy.h"
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

DEFINE_uint64(num, 200000, "Number of keys in the DB");
DEFINE_uint64(reads, 200000, "Lookups per workload and repetition");
DEFINE_int32(value_size, 100, "Value size in bytes");
DEFINE_int32(batch_size, 32, "Keys per MultiGet in multireadrandom");
DEFINE_int32(repetitions, 3, "Repetitions of each workload (median reported)");
DEFINE_string(bits_per_key, "10,16", "Comma-separated bits-per-key budgets");
DEFINE_string(filters, "none,bloom,ribbon,cuckoo",
              "Comma-separated policies: none, bloom, ribbon, cuckoo");
DEFINE_string(db, "",
              "Work folder, absent or empty; removed afterwards (default: a "
              "fresh private folder under the temp directory)");
DEFINE_uint64(seed, 1, "Seed of the fill and of the read key sequences");
DEFINE_string(csv, "", "Also write the results as CSV to this file");
DEFINE_string(json, "", "Also write the results as JSON to this file");
DEFINE_int32(keys_per_prefix, 8,
             "Keys sharing each 8-byte prefix (the prefix extractor of every "
             "DB, so filters hold keys and prefixes, as with db_bench "
             "-prefix_size)");

namespace {

namespace rdb = ROCKSDB_NAMESPACE;
using Clock = std::chrono::steady_clock;

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

void Check(const rdb::Status& status, const std::string& what) {
  if (!status.ok()) {
    std::fprintf(stderr, "filter_compare: %s: %s\n", what.c_str(),
                 status.ToString().c_str());
    std::exit(1);
  }
}

// Key i: an 8-digit prefix (even numbers only; odd prefixes are absent)
// shared by keys_per_prefix keys, then an 8-digit suffix.
constexpr size_t kPrefixBytes = 8;
std::string Prefix(uint64_t prefix_number) {
  char buffer[24];
  std::snprintf(buffer, sizeof(buffer), "%08llu",
                static_cast<unsigned long long>(prefix_number));
  return buffer;
}
std::string Key(uint64_t i) {
  const uint64_t per_prefix = static_cast<uint64_t>(FLAGS_keys_per_prefix);
  char buffer[24];
  std::snprintf(buffer, sizeof(buffer), "%08llu",
                static_cast<unsigned long long>(i % per_prefix));
  return Prefix(2 * (i / per_prefix)) + buffer;
}
// Absent keys sort between present ones, as db_bench's readmissing does.
std::string AbsentKey(uint64_t i) { return Key(i) + "x"; }
// A prefix between two stored ones.
std::string AbsentPrefix(uint64_t i) {
  return Prefix(2 * (i / static_cast<uint64_t>(FLAGS_keys_per_prefix)) + 1);
}

struct Policy {
  std::string family;  // none, bloom, ribbon, cuckoo
  int bits = 0;
  std::string options_string;  // for filter_policy=
  std::string expected_name;   // Name() of the policy, "" for none
  std::string Label() const {
    return family == "none" ? "none" : family + ":" + std::to_string(bits);
  }
};

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
};

struct Measurement {
  double ops_per_second = 0;
  double p50_us = 0;
  double p99_us = 0;
  double false_positive_rate = -1;
};

struct Row {
  Policy policy;
  double bits_per_key = 0;
  double construction_seconds = 0;
  uint64_t table_readers_memory = 0;
  Measurement readrandom, readmissing, multireadrandom, seekprefix,
      seekmissingprefix;
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

rdb::Options MakeOptions(const Policy& policy,
                         std::shared_ptr<rdb::Statistics> statistics) {
  rdb::ConfigOptions strict;
  strict.ignore_unsupported_options = false;
  strict.input_strings_escaped = false;
  rdb::BlockBasedTableOptions table;
  Check(rdb::GetBlockBasedTableOptionsFromString(
            strict, rdb::BlockBasedTableOptions(),
            "filter_policy=" + policy.options_string, &table),
        "parsing filter_policy=" + policy.options_string);
  rdb::Options options;
  options.create_if_missing = true;
  options.statistics = std::move(statistics);
  options.table_factory.reset(rdb::NewBlockBasedTableFactory(table));
  options.disable_auto_compactions = true;
  options.prefix_extractor.reset(rdb::NewFixedPrefixTransform(kPrefixBytes));
  options.max_background_jobs = 2;
  return options;
}

std::unique_ptr<rdb::DB> OpenDb(const rdb::Options& options,
                                const std::string& path) {
  std::unique_ptr<rdb::DB> db;
  Check(rocksdb_cuckoo::OpenDb(options, path, &db), "opening " + path);
  return db;
}

void FillBaseDb(const std::string& path) {
  Policy none{"none", 0, "nullptr", ""};
  auto db = OpenDb(MakeOptions(none, nullptr), path);
  std::vector<uint64_t> order(FLAGS_num);
  for (uint64_t i = 0; i < FLAGS_num; ++i) order[i] = i;
  std::mt19937_64 rng(FLAGS_seed);
  std::shuffle(order.begin(), order.end(), rng);
  const std::string value(static_cast<size_t>(FLAGS_value_size), 'v');
  rdb::WriteOptions write;
  write.disableWAL = true;
  for (size_t begin = 0; begin < order.size(); begin += 1000) {
    rdb::WriteBatch batch;
    for (size_t i = begin; i < std::min(order.size(), begin + 1000); ++i) {
      Check(batch.Put(Key(order[i]), value), "batch put");
    }
    Check(db->Write(write, &batch), "write");
  }
  Check(db->Flush(rdb::FlushOptions()), "flush");
  Check(db->CompactRange(rdb::CompactRangeOptions(), nullptr, nullptr),
        "compact");
}

// Verifies that every SST of the DB carries the intended filter: silently
// running without a filter is the classic error of filter benchmarks.
void CheckFilterInEffect(rdb::DB* db, const Policy& policy) {
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

double FalsePositiveRate(rdb::Statistics* statistics) {
  const double useful = statistics->getTickerCount(rdb::BLOOM_FILTER_USEFUL);
  const double positive =
      statistics->getTickerCount(rdb::BLOOM_FILTER_FULL_POSITIVE);
  const double true_positive =
      statistics->getTickerCount(rdb::BLOOM_FILTER_FULL_TRUE_POSITIVE);
  const double negatives = useful + positive - true_positive;
  return negatives > 0 ? (positive - true_positive) / negatives : -1;
}

// Runs `operation(i)` for i in [0, count) and measures it.
template <typename Operation>
Measurement Time(uint64_t count, uint64_t ops_per_call, Operation operation) {
  std::vector<double> latencies;
  latencies.reserve(count);
  const auto start = Clock::now();
  for (uint64_t i = 0; i < count; ++i) {
    const auto before = Clock::now();
    operation(i);
    latencies.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - before)
            .count() /
        static_cast<double>(ops_per_call));
  }
  const double seconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  std::sort(latencies.begin(), latencies.end());
  Measurement m;
  m.ops_per_second = static_cast<double>(count * ops_per_call) / seconds;
  m.p50_us = latencies[latencies.size() / 2];
  m.p99_us = latencies[latencies.size() * 99 / 100];
  return m;
}

Measurement MedianOf(const std::vector<Measurement>& runs) {
  std::vector<double> ops, p50, p99, fpr;
  for (const Measurement& m : runs) {
    ops.push_back(m.ops_per_second);
    p50.push_back(m.p50_us);
    p99.push_back(m.p99_us);
    fpr.push_back(m.false_positive_rate);
  }
  return Measurement{Median(ops), Median(p50), Median(p99), Median(fpr)};
}

Row RunPolicy(const Policy& policy, const std::string& base,
              const std::string& work) {
  const std::string path = work + "/" + policy.Label();
  std::filesystem::remove_all(path);
  std::filesystem::copy(base, path);
  auto statistics = rdb::CreateDBStatistics();
  auto db = OpenDb(MakeOptions(policy, statistics), path);
  Row row;
  row.policy = policy;
  rdb::CompactRangeOptions rewrite;
  rewrite.bottommost_level_compaction = rdb::BottommostLevelCompaction::kForce;
  const auto start = Clock::now();
  Check(db->CompactRange(rewrite, nullptr, nullptr), "rewriting filters");
  row.construction_seconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  CheckFilterInEffect(db.get(), policy);
  rdb::TablePropertiesCollection all;
  Check(db->GetPropertiesOfAllTables(&all), "table properties");
  uint64_t filter_bytes = 0, entries = 0;
  for (const auto& [file, props] : all) {
    filter_bytes += props->filter_size;
    entries += props->num_entries;
  }
  row.bits_per_key = entries ? 8.0 * filter_bytes / entries : 0;
  db->GetIntProperty("rocksdb.estimate-table-readers-mem",
                     &row.table_readers_memory);

  std::vector<Measurement> present, missing, multi, seek, seek_missing;
  rdb::ReadOptions read;
  std::string value;
  for (int rep = 0; rep < FLAGS_repetitions; ++rep) {
    std::mt19937_64 rng(FLAGS_seed + 1000 + static_cast<uint64_t>(rep));
    std::vector<uint64_t> picks(FLAGS_reads);
    for (uint64_t& pick : picks) pick = rng() % FLAGS_num;

    statistics->Reset();
    present.push_back(Time(FLAGS_reads, 1, [&](uint64_t i) {
      if (!db->Get(read, Key(picks[i]), &value).ok()) {
        std::fprintf(stderr, "filter_compare: %s lost key %s\n",
                     policy.Label().c_str(), Key(picks[i]).c_str());
        std::exit(1);
      }
    }));
    statistics->Reset();
    missing.push_back(Time(FLAGS_reads, 1, [&](uint64_t i) {
      if (!db->Get(read, AbsentKey(picks[i]), &value).IsNotFound()) {
        std::exit(1);
      }
    }));
    missing.back().false_positive_rate = FalsePositiveRate(statistics.get());

    // Half present, half absent keys, in batches.
    const uint64_t batch = static_cast<uint64_t>(FLAGS_batch_size);
    std::vector<std::string> keys(batch);
    std::vector<rdb::Slice> slices(batch);
    std::vector<rdb::PinnableSlice> values(batch);
    std::vector<rdb::Status> statuses(batch);
    statistics->Reset();
    multi.push_back(Time(FLAGS_reads / batch, batch, [&](uint64_t call) {
      for (uint64_t k = 0; k < batch; ++k) {
        const uint64_t pick = picks[(call * batch + k) % picks.size()];
        keys[k] = k % 2 ? AbsentKey(pick) : Key(pick);
        slices[k] = keys[k];
        values[k].Reset();
      }
      std::sort(slices.begin(), slices.end(),
                [](const rdb::Slice& a, const rdb::Slice& b) {
                  return a.compare(b) < 0;
                });
      db->MultiGet(read, db->DefaultColumnFamily(), batch, slices.data(),
                   values.data(), statuses.data(), /*sorted_input=*/true);
    }));
    multi.back().false_positive_rate = FalsePositiveRate(statistics.get());

    // Prefix seeks (iterators in prefix mode), present and absent prefixes.
    rdb::ReadOptions prefix_read;
    prefix_read.prefix_same_as_start = true;
    std::unique_ptr<rdb::Iterator> it(db->NewIterator(prefix_read));
    seek.push_back(Time(FLAGS_reads, 1, [&](uint64_t i) {
      it->Seek(Key(picks[i]).substr(0, kPrefixBytes));
      if (!it->Valid()) {
        std::fprintf(stderr, "filter_compare: %s lost prefix of %s\n",
                     policy.Label().c_str(), Key(picks[i]).c_str());
        std::exit(1);
      }
    }));
    statistics->Reset();
    seek_missing.push_back(Time(FLAGS_reads, 1, [&](uint64_t i) {
      it->Seek(AbsentPrefix(picks[i]));
      if (it->Valid()) std::exit(1);
    }));
    const double checked =
        statistics->getTickerCount(rdb::BLOOM_FILTER_PREFIX_CHECKED);
    seek_missing.back().false_positive_rate =
        checked > 0
            ? 1.0 -
                  statistics->getTickerCount(rdb::BLOOM_FILTER_PREFIX_USEFUL) /
                      checked
            : -1;
  }
  row.readrandom = MedianOf(present);
  row.readmissing = MedianOf(missing);
  row.multireadrandom = MedianOf(multi);
  row.seekprefix = MedianOf(seek);
  row.seekmissingprefix = MedianOf(seek_missing);
  db.reset();
  std::filesystem::remove_all(path);
  return row;
}

std::string Ratio(double value, double bloom) {
  if (bloom <= 0 || value < 0) return "";
  char text[32];
  std::snprintf(text, sizeof(text), " (%.2fx)", value / bloom);
  return text;
}

// The Bloom row with the same budget as `row`, or null (for Bloom itself and
// for "none").
const Row* BloomRowFor(const std::vector<Row>& rows, const Row& row) {
  if (row.policy.family == "bloom" || row.policy.family == "none") {
    return nullptr;
  }
  for (const Row& other : rows) {
    if (other.policy.family == "bloom" &&
        other.policy.bits == row.policy.bits) {
      return &other;
    }
  }
  return nullptr;
}

void PrintTable(const std::vector<Row>& rows) {
  std::printf(
      "\n| filter | bits/key (SST) | FPR readmissing | readrandom ops/s | "
      "readmissing ops/s | multireadrandom keys/s | seek prefix ops/s | "
      "seek missing prefix ops/s | prefix FPR | readrandom p50/p99 us | "
      "readmissing p50/p99 us | rewrite s |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& row : rows) {
    const Row* bloom = BloomRowFor(rows, row);
    // The formatted value, followed by its ratio to Bloom's where there is
    // a Bloom row to compare with.
    auto cell = [&](auto get, const char* format, double scale = 1.0) {
      const double value = get(row);
      if (value < 0) return std::string("n/a");
      char text[48];
      std::snprintf(text, sizeof(text), format, scale * value);
      return text + (bloom ? Ratio(value, get(*bloom)) : std::string());
    };
    auto ops = [&](Measurement Row::*workload) {
      return cell(
          [workload](const Row& r) { return (r.*workload).ops_per_second; },
          "%.0f");
    };
    auto fpr = [&](Measurement Row::*workload) {
      return cell(
          [workload](const Row& r) {
            return (r.*workload).false_positive_rate;
          },
          "%.4f%%", 100.0);
    };
    std::printf(
        "| %s | %.2f | %s | %s | %s | %s | %s | %s | %s | %.2f / %.2f | "
        "%.2f / %.2f | %s |\n",
        row.policy.Label().c_str(), row.bits_per_key,
        fpr(&Row::readmissing).c_str(), ops(&Row::readrandom).c_str(),
        ops(&Row::readmissing).c_str(), ops(&Row::multireadrandom).c_str(),
        ops(&Row::seekprefix).c_str(), ops(&Row::seekmissingprefix).c_str(),
        fpr(&Row::seekmissingprefix).c_str(), row.readrandom.p50_us,
        row.readrandom.p99_us, row.readmissing.p50_us, row.readmissing.p99_us,
        cell([](const Row& r) { return r.construction_seconds; }, "%.2f")
            .c_str());
  }
}

// The measured values of a row, by name, for the CSV and JSON files.
std::vector<std::pair<std::string, double>> Fields(const Row& row) {
  std::vector<std::pair<std::string, double>> fields = {
      {"bits_per_key", row.bits_per_key},
      {"rewrite_seconds", row.construction_seconds},
      {"table_readers_mem", static_cast<double>(row.table_readers_memory)}};
  const std::pair<const char*, const Measurement*> workloads[] = {
      {"readrandom", &row.readrandom},
      {"readmissing", &row.readmissing},
      {"multireadrandom", &row.multireadrandom},
      {"seekprefix", &row.seekprefix},
      {"seekmissingprefix", &row.seekmissingprefix}};
  for (const auto& [name, m] : workloads) {
    const std::string prefix = name;
    fields.emplace_back(prefix + "_ops", m->ops_per_second);
    fields.emplace_back(prefix + "_p50_us", m->p50_us);
    fields.emplace_back(prefix + "_p99_us", m->p99_us);
    fields.emplace_back(prefix + "_fpr", m->false_positive_rate);
  }
  return fields;
}

void WriteCsv(const std::vector<Row>& rows, const std::string& file) {
  std::ofstream out(file);
  out << "filter,bits_budget";
  for (const auto& [name, value] : Fields(rows.front())) out << ',' << name;
  out << '\n';
  for (const Row& row : rows) {
    out << row.policy.family << ',' << row.policy.bits;
    for (const auto& [name, value] : Fields(row)) out << ',' << value;
    out << '\n';
  }
}

void WriteJson(const std::vector<Row>& rows, const std::string& file) {
  std::ofstream out(file);
  out << "{\"num\": " << FLAGS_num << ", \"reads\": " << FLAGS_reads
      << ", \"value_size\": " << FLAGS_value_size
      << ", \"repetitions\": " << FLAGS_repetitions << ", \"rocksdb\": \""
      << rdb::GetRocksVersionAsString() << "\", \"rows\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    out << (i ? ",\n  " : "\n  ") << "{\"filter\": \"" << rows[i].policy.family
        << "\", \"bits_budget\": " << rows[i].policy.bits;
    for (const auto& [name, value] : Fields(rows[i])) {
      out << ", \"" << name << "\": " << value;
    }
    out << "}";
  }
  out << "\n]}\n";
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "Compares RocksDB filter policies on one DB (see README)");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  rocksdb_cuckoo::cuckoo_filter_register(*rdb::ObjectLibrary::Default(),
                                         "cuckoo");
  if (FLAGS_num == 0 || FLAGS_reads == 0 || FLAGS_repetitions < 1 ||
      FLAGS_batch_size < 1 || FLAGS_batch_size > 32) {
    std::fprintf(stderr,
                 "filter_compare: need --num, --reads, --repetitions >= 1 "
                 "and --batch_size in [1, 32]\n");
    return 2;
  }

  std::vector<Policy> policies;
  std::vector<int> budgets;
  for (const std::string& bits : Split(FLAGS_bits_per_key)) {
    budgets.push_back(std::stoi(bits));
  }
  for (const std::string& family : Split(FLAGS_filters)) {
    if (family == "none") {
      policies.push_back({"none", 0, "nullptr", ""});
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
                          known->name});
    }
  }

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
  const std::string base = work + "/base";
  std::fprintf(stderr, "filling %llu keys of %d bytes...\n",
               static_cast<unsigned long long>(FLAGS_num), FLAGS_value_size);
  FillBaseDb(base);

  std::vector<Row> rows;
  for (size_t i = 0; i < policies.size(); ++i) {
    std::fprintf(stderr, "[%zu/%zu] %s...\n", i + 1, policies.size(),
                 policies[i].Label().c_str());
    rows.push_back(RunPolicy(policies[i], base, work));
  }
  std::filesystem::remove_all(work);

  std::printf(
      "num=%llu reads=%llu value_size=%d batch=%d repetitions=%d (medians). "
      "RocksDB %s; Debian's build has assertions on, so compare ratios.\n",
      static_cast<unsigned long long>(FLAGS_num),
      static_cast<unsigned long long>(FLAGS_reads), FLAGS_value_size,
      FLAGS_batch_size, FLAGS_repetitions,
      rdb::GetRocksVersionAsString().c_str());
  PrintTable(rows);
  if (!FLAGS_csv.empty()) WriteCsv(rows, FLAGS_csv);
  if (!FLAGS_json.empty()) WriteJson(rows, FLAGS_json);
  return 0;
}
