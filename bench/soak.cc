// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Soak run of the plugin's builder and reader (not part of CI): filters of
// --keys_per_filter keys until --total_keys keys have been added, for every
// budget of --bits_per_key; every added key is probed (a single false
// negative fails the run) and --probes absent keys per filter measure the
// false-positive rate. Reports bits per key, build time per key and the
// process's peak resident memory, which bounds the builder's memory per key.
//
// usage: soak [--total_keys=N] [--keys_per_filter=N] [--bits_per_key=LIST]
#include <gflags/gflags.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cuckoo/sizing.h"
#include "cuckoo_filter_policy.h"
#include "rocksdb/table.h"
#include "table/block_based/filter_policy_internal.h"

DEFINE_uint64(total_keys, 100000000, "Keys added per budget, over all filters");
DEFINE_uint64(keys_per_filter, 10000000, "Keys in one filter");
DEFINE_uint64(probes, 1000000, "Absent keys probed per filter");
DEFINE_string(bits_per_key, "8,10,12,16,20", "Comma-separated budgets");

namespace {

namespace rdb = ROCKSDB_NAMESPACE;
using Clock = std::chrono::steady_clock;

// 16-byte key: a 64-bit number and a tag telling added keys from absent ones.
rdb::Slice MakeKey(uint64_t number, char tag, char* buffer) {
  std::memcpy(buffer, &number, 8);
  std::memset(buffer + 8, tag, 8);
  return rdb::Slice(buffer, 16);
}

double PeakResidentMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  std::stringstream budgets(FLAGS_bits_per_key);
  bool failed = false;
  std::printf(
      "| bits/key budget | keys | filters | false negatives | FPR measured | "
      "FPR predicted | bits/key | build ns/key | peak RSS MiB |\n"
      "|---|---|---|---|---|---|---|---|---|\n");
  for (std::string budget; std::getline(budgets, budget, ',');) {
    const double bits = std::stod(budget);
    rocksdb_cuckoo::CuckooFilterPolicy policy(bits);
    rdb::BlockBasedTableOptions table_options;
    rdb::FilterBuildingContext context(table_options);
    std::unique_ptr<rdb::FilterBitsBuilder> builder(
        policy.GetBuilderWithContext(context));
    uint64_t added = 0, false_negatives = 0, positives = 0, probed = 0;
    uint64_t filter_bytes = 0, filters = 0;
    double build_seconds = 0;
    char buffer[16];
    while (added < FLAGS_total_keys) {
      const uint64_t first = added;
      const uint64_t count =
          std::min(FLAGS_keys_per_filter, FLAGS_total_keys - added);
      const auto start = Clock::now();
      for (uint64_t i = first; i < first + count; ++i) {
        builder->AddKey(MakeKey(i, 'k', buffer));
      }
      std::unique_ptr<const char[]> block_buffer;
      const rdb::Slice block = builder->Finish(&block_buffer);
      build_seconds +=
          std::chrono::duration<double>(Clock::now() - start).count();
      std::unique_ptr<rdb::FilterBitsReader> reader(
          policy.GetFilterBitsReader(block));
      for (uint64_t i = first; i < first + count; ++i) {
        false_negatives += !reader->MayMatch(MakeKey(i, 'k', buffer));
      }
      for (uint64_t i = 0; i < FLAGS_probes; ++i) {
        positives += reader->MayMatch(MakeKey(first + i, 'a', buffer));
      }
      probed += FLAGS_probes;
      filter_bytes += block.size();
      added += count;
      ++filters;
    }
    const double predicted = cuckoo::ChooseForBitsPerKey(bits).expected_fpr;
    std::printf(
        "| %s | %llu | %llu | %llu | %.5f%% | %.5f%% | %.3f | %.1f | %.0f |\n",
        budget.c_str(), static_cast<unsigned long long>(added),
        static_cast<unsigned long long>(filters),
        static_cast<unsigned long long>(false_negatives),
        100.0 * positives / probed, 100.0 * predicted,
        8.0 * filter_bytes / added, 1e9 * build_seconds / added,
        PeakResidentMiB());
    std::fflush(stdout);
    failed |= false_negatives != 0;
  }
  return failed ? 1 : 0;
}
