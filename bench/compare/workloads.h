// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The read workloads of the comparison and how one run of a workload on one
// DB is measured: wall and thread CPU time of the whole run, latencies of a
// sample of its calls, storage reads and bytes (perf context), filter checks
// summed over the levels (per-level perf context), and the measured
// false-positive rate (statistics tickers). Every answer is checked: a
// stored key not found is a false negative, and stops the program.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "keys.h"
#include "rocksdb/db.h"
#include "rocksdb/statistics.h"

namespace filter_compare {

enum class Workload {
  kReadRandom,         // Get of stored keys
  kReadMissing,        // Get of absent keys
  kMultiReadRandom,    // MultiGet of stored keys, sorted batches
  kSeekPrefix,         // prefix-mode iterator Seek to a stored prefix
  kSeekMissingPrefix,  // the same to an absent prefix
  kMixed,              // Get, 85% stored and 15% absent keys
};
const char* WorkloadName(Workload workload);
std::vector<Workload> AllWorkloads();
// Workloads whose lookups are mostly answered by the filter alone.
bool MostlyAbsent(Workload workload);

constexpr double kMixedPresentFraction = 0.85;

// What a workload's lookups did at one level of the LSM (RocksDB's per-level
// perf context): the filters checked, the false positives among them, and
// the blocks that were not in the block cache (each one a storage read).
struct LevelCounts {
  uint64_t filter_checks = 0;
  uint64_t false_positives = 0;
  uint64_t cache_misses = 0;
};

struct Sample {
  uint64_t ops = 0;  // keys looked up (for MultiGet: keys, not calls)
  double seconds = 0;
  double cpu_seconds = 0;          // of the measuring thread
  std::vector<double> latency_us;  // per call, of a sample of the calls
  uint64_t storage_reads = 0;      // blocks read from the file system
  uint64_t storage_bytes = 0;
  uint64_t filter_checks = 0;       // filter probes over all levels (Get only)
  double false_positive_rate = -1;  // -1 where there are no negatives
  std::vector<LevelCounts> by_level;  // by level (Get and MultiGet only)

  double OpsPerSecond() const { return seconds > 0 ? ops / seconds : 0; }
  double CpuMicrosPerOp() const { return ops ? cpu_seconds * 1e6 / ops : 0; }
  double StorageReadsPer1000() const {
    return ops ? 1000.0 * static_cast<double>(storage_reads) / ops : 0;
  }
  double KibReadPer1000() const {
    return ops ? 1000.0 * static_cast<double>(storage_bytes) / 1024 / ops : 0;
  }
  double FilterChecksPerLookup() const {
    return ops ? static_cast<double>(filter_checks) / ops : 0;
  }
};

struct WorkloadRun {
  Workload workload;
  uint64_t ops = 0;
  uint64_t num_keys = 0;  // keys 0 .. num_keys-1 are stored
  uint64_t key_seed = 0;  // the same seed gives the same keys on every DB
  int batch_size = 32;
};

// Enables the perf-context counters this needs, for the calling thread.
void EnablePerfCounters();

// Runs one workload on `db` from the calling thread and measures it.
// `statistics` is the DB's own (it is reset). `label` names the DB in the
// message of a wrong answer.
Sample RunWorkload(ROCKSDB_NAMESPACE::DB* db,
                   ROCKSDB_NAMESPACE::Statistics* statistics,
                   const KeyScheme& keys, const WorkloadRun& run,
                   const std::string& label);

}  // namespace filter_compare
