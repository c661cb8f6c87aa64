// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Runs and measures the comparison's read workloads (see workloads.h).
#include "workloads.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>

#include "rocksdb/iterator.h"
#include "rocksdb/perf_context.h"
#include "rocksdb/perf_level.h"

namespace filter_compare {

namespace rdb = ROCKSDB_NAMESPACE;
using Clock = std::chrono::steady_clock;

namespace {

// One call in this many has its latency taken: two clock reads per call
// would weigh on calls of a microsecond.
constexpr uint64_t kLatencySamplePeriod = 8;

double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) +
         1e-9 * static_cast<double>(now.tv_nsec);
}

std::vector<LevelCounts> LevelCountsSoFar() {
  const rdb::PerfContext* perf = rdb::get_perf_context();
  std::vector<LevelCounts> levels;
  if (perf->level_to_perf_context == nullptr) return levels;
  for (const auto& [level, counters] : *perf->level_to_perf_context) {
    if (level >= levels.size()) levels.resize(level + 1);
    levels[level].filter_checks =
        counters.bloom_filter_useful + counters.bloom_filter_full_positive;
    levels[level].false_positives = counters.bloom_filter_full_positive -
                                    counters.bloom_filter_full_true_positive;
    levels[level].cache_misses = counters.block_cache_miss_count;
  }
  return levels;
}

std::vector<LevelCounts> LevelCountsSince(
    const std::vector<LevelCounts>& before) {
  std::vector<LevelCounts> levels = LevelCountsSoFar();
  for (size_t level = 0; level < levels.size() && level < before.size();
       ++level) {
    levels[level].filter_checks -= before[level].filter_checks;
    levels[level].false_positives -= before[level].false_positives;
    levels[level].cache_misses -= before[level].cache_misses;
  }
  return levels;
}

[[noreturn]] void WrongAnswer(const std::string& label, const char* what,
                              const std::string& key) {
  std::fprintf(stderr, "filter_compare: %s: %s '%s'\n", label.c_str(), what,
               key.c_str());
  std::exit(1);
}

double PointLookupFpr(rdb::Statistics* statistics) {
  const double useful = statistics->getTickerCount(rdb::BLOOM_FILTER_USEFUL);
  const double positive =
      statistics->getTickerCount(rdb::BLOOM_FILTER_FULL_POSITIVE);
  const double true_positive =
      statistics->getTickerCount(rdb::BLOOM_FILTER_FULL_TRUE_POSITIVE);
  const double negatives = useful + positive - true_positive;
  return negatives > 0 ? (positive - true_positive) / negatives : -1;
}

double PrefixFpr(rdb::Statistics* statistics) {
  const double checked =
      statistics->getTickerCount(rdb::BLOOM_FILTER_PREFIX_CHECKED);
  const double useful =
      statistics->getTickerCount(rdb::BLOOM_FILTER_PREFIX_USEFUL);
  return checked > 0 ? 1.0 - useful / checked : -1;
}

}  // namespace

const char* WorkloadName(Workload workload) {
  switch (workload) {
    case Workload::kReadRandom:
      return "readrandom";
    case Workload::kReadMissing:
      return "readmissing";
    case Workload::kMultiReadRandom:
      return "multireadrandom";
    case Workload::kSeekPrefix:
      return "seekprefix";
    case Workload::kSeekMissingPrefix:
      return "seekmissingprefix";
    case Workload::kMixed:
      return "mixed85/15";
  }
  return "?";
}

std::vector<Workload> AllWorkloads() {
  return {Workload::kReadRandom,        Workload::kReadMissing,
          Workload::kMultiReadRandom,   Workload::kSeekPrefix,
          Workload::kSeekMissingPrefix, Workload::kMixed};
}

bool MostlyAbsent(Workload workload) {
  return workload == Workload::kReadMissing ||
         workload == Workload::kSeekMissingPrefix;
}

void EnablePerfCounters() {
  rdb::SetPerfLevel(rdb::PerfLevel::kEnableCount);
  rdb::get_perf_context()->EnablePerLevelPerfContext();
}

Sample RunWorkload(rdb::DB* db, rdb::Statistics* statistics,
                   const KeyScheme& keys, const WorkloadRun& run,
                   const std::string& label) {
  const bool multi = run.workload == Workload::kMultiReadRandom;
  const uint64_t per_call = multi ? static_cast<uint64_t>(run.batch_size) : 1;
  const uint64_t calls = std::max<uint64_t>(1, run.ops / per_call);

  // Every key is chosen and formatted before the clock starts.
  std::mt19937_64 rng(run.key_seed);
  std::vector<std::string> lookups(calls * per_call);
  std::vector<char> present(lookups.size(), 1);
  for (size_t i = 0; i < lookups.size(); ++i) {
    const uint64_t pick = rng() % run.num_keys;
    switch (run.workload) {
      case Workload::kReadMissing:
        present[i] = 0;
        lookups[i] = keys.AbsentKey(pick);
        break;
      case Workload::kSeekPrefix:
        lookups[i] = keys.PrefixOf(pick);
        break;
      case Workload::kSeekMissingPrefix:
        present[i] = 0;
        lookups[i] = keys.AbsentPrefix(pick);
        break;
      case Workload::kMixed:
        present[i] = (rng() >> 11) * 0x1.0p-53 < kMixedPresentFraction;
        lookups[i] = present[i] ? keys.Key(pick) : keys.AbsentKey(pick);
        break;
      default:
        lookups[i] = keys.Key(pick);
    }
  }
  if (multi) {
    for (uint64_t c = 0; c < calls; ++c) {
      std::sort(
          lookups.begin() + static_cast<std::ptrdiff_t>(c * per_call),
          lookups.begin() + static_cast<std::ptrdiff_t>((c + 1) * per_call));
    }
  }

  rdb::ReadOptions read;
  rdb::ReadOptions prefix_read;
  prefix_read.prefix_same_as_start = true;
  std::unique_ptr<rdb::Iterator> iterator;
  if (run.workload == Workload::kSeekPrefix ||
      run.workload == Workload::kSeekMissingPrefix) {
    iterator.reset(db->NewIterator(prefix_read));
  }
  std::string value;
  std::vector<rdb::Slice> slices(per_call);
  std::vector<rdb::PinnableSlice> values(per_call);
  std::vector<rdb::Status> statuses(per_call);
  auto call = [&](uint64_t c) {
    const size_t first = c * per_call;
    switch (run.workload) {
      case Workload::kMultiReadRandom: {
        for (uint64_t k = 0; k < per_call; ++k) {
          slices[k] = lookups[first + k];
          values[k].Reset();
        }
        db->MultiGet(read, db->DefaultColumnFamily(), per_call, slices.data(),
                     values.data(), statuses.data(), /*sorted_input=*/true);
        for (uint64_t k = 0; k < per_call; ++k) {
          if (!statuses[k].ok()) {
            WrongAnswer(label, "MultiGet lost the stored key",
                        lookups[first + k]);
          }
        }
        break;
      }
      case Workload::kSeekPrefix:
      case Workload::kSeekMissingPrefix: {
        iterator->Seek(lookups[first]);
        const bool found =
            iterator->Valid() && iterator->key().starts_with(lookups[first]);
        if (found != static_cast<bool>(present[first])) {
          WrongAnswer(label,
                      found ? "a seek found the absent prefix"
                            : "a seek lost the stored prefix",
                      lookups[first]);
        }
        break;
      }
      default: {
        const rdb::Status s = db->Get(read, lookups[first], &value);
        if (present[first] ? !s.ok() : !s.IsNotFound()) {
          WrongAnswer(label,
                      present[first] ? "Get lost the stored key"
                                     : "Get found the absent key",
                      lookups[first]);
        }
      }
    }
  };

  const uint64_t sample_period = multi ? 1 : kLatencySamplePeriod;
  Sample sample;
  sample.ops = calls * per_call;
  sample.latency_us.reserve(calls / sample_period + 1);
  statistics->Reset().PermitUncheckedError();
  const rdb::PerfContext* perf = rdb::get_perf_context();
  const uint64_t reads_before = perf->block_read_count;
  const uint64_t bytes_before = perf->block_read_byte;
  const std::vector<LevelCounts> levels_before = LevelCountsSoFar();
  const double cpu_before = ThreadCpuSeconds();
  const auto start = Clock::now();
  for (uint64_t c = 0; c < calls; ++c) {
    if (c % sample_period == 0) {
      const auto before = Clock::now();
      call(c);
      sample.latency_us.push_back(
          std::chrono::duration<double, std::micro>(Clock::now() - before)
              .count());
    } else {
      call(c);
    }
  }
  sample.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  sample.cpu_seconds = ThreadCpuSeconds() - cpu_before;
  sample.storage_reads = perf->block_read_count - reads_before;
  sample.storage_bytes = perf->block_read_byte - bytes_before;
  sample.by_level = LevelCountsSince(levels_before);
  for (const LevelCounts& level : sample.by_level) {
    sample.filter_checks += level.filter_checks;
  }
  sample.false_positive_rate =
      run.workload == Workload::kSeekMissingPrefix ? PrefixFpr(statistics)
      : run.workload == Workload::kSeekPrefix      ? -1
                                                   : PointLookupFpr(statistics);
  return sample;
}

}  // namespace filter_compare
