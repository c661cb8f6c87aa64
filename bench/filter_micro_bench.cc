// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Google Benchmark micro-benchmarks. The RocksDB filters (built-in Bloom and
// Ribbon, and the cuckoo plugin) are driven through the same
// FilterBitsBuilder/FilterBitsReader interface RocksDB uses: construction,
// single lookups of present and absent keys, and batched lookups of 32 keys
// (the MultiGet path), with the real bits per key and the measured
// false-positive rate as counters. The core library's dynamic CuckooFilter
// and the blocked counting Bloom filter are measured on
// their own. construct_verified is construction under
// detect_filter_construct_corruption, post-verification included.
//
// usage: filter_micro_bench [--max_keys=N] [google benchmark flags]
//   --max_keys  largest key count of the size sweep (default 1000000;
//               10000000 adds the 10^7 runs)
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "blocked_counting_bloom_filter.h"
#include "cuckoo/cuckoo_filter.h"
#include "cuckoo/sizing.h"
#include "cuckoo_filter_policy.h"
#include "filter_families.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"
#include "table/block_based/filter_policy_internal.h"

namespace {

namespace rdb = ROCKSDB_NAMESPACE;

using KeySet = filter_bench::FixedKeys;
constexpr int kFalsePositiveProbes = 1000000;

const KeySet& PresentKeys(uint64_t count) {
  static std::map<uint64_t, std::unique_ptr<KeySet>> cache;
  auto& keys = cache[count];
  if (!keys) keys = std::make_unique<KeySet>(count, 'p');
  return *keys;
}

const KeySet& AbsentKeys() {
  static const KeySet keys(kFalsePositiveProbes, 'a');
  return keys;
}

struct BuiltFilter {
  std::unique_ptr<const char[]> buffer;
  rdb::Slice block;
  std::unique_ptr<rdb::FilterBitsReader> reader;
};

// With `verify`, as RocksDB builds under detect_filter_construct_corruption:
// the builder checks its key hashes in Finish, and MaybePostVerify probes
// every key against the finished filter.
BuiltFilter Build(const rdb::FilterPolicy& policy, const KeySet& keys,
                  bool verify = false) {
  rdb::BlockBasedTableOptions table_options;
  table_options.detect_filter_construct_corruption = verify;
  rdb::FilterBuildingContext context(table_options);
  std::unique_ptr<rdb::FilterBitsBuilder> builder(
      policy.GetBuilderWithContext(context));
  for (uint64_t i = 0; i < keys.size(); ++i) builder->AddKey(keys[i]);
  BuiltFilter filter;
  filter.block = builder->Finish(&filter.buffer);
  if (verify && !builder->MaybePostVerify(filter.block).ok()) {
    std::fprintf(stderr, "a filter failed its post-verification\n");
    std::abort();
  }
  filter.reader.reset(policy.GetFilterBitsReader(filter.block));
  return filter;
}

void AddAccuracyCounters(benchmark::State& state, const BuiltFilter& filter,
                         uint64_t keys) {
  int positives = 0;
  const KeySet& absent = AbsentKeys();
  for (uint64_t i = 0; i < absent.size(); ++i) {
    positives += filter.reader->MayMatch(absent[i]);
  }
  state.counters["bits_per_key"] = 8.0 *
                                   static_cast<double>(filter.block.size()) /
                                   static_cast<double>(keys);
  state.counters["fpr"] = static_cast<double>(positives) / absent.size();
  state.counters["false_positives"] = positives;
}

void Construct(benchmark::State& state, std::string family, int bits,
               uint64_t n, bool verify) {
  const auto policy = filter_bench::MakeFilterPolicy(family, bits);
  const KeySet& keys = PresentKeys(n);
  for (auto _ : state) {
    BuiltFilter filter = Build(*policy, keys, verify);
    benchmark::DoNotOptimize(filter.block.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
  AddAccuracyCounters(state, Build(*policy, keys), n);
}

void LookupOne(benchmark::State& state, std::string family, int bits,
               uint64_t n, bool present) {
  const auto policy = filter_bench::MakeFilterPolicy(family, bits);
  const KeySet& keys = PresentKeys(n);
  const BuiltFilter filter = Build(*policy, keys);
  const KeySet& probes = present ? keys : AbsentKeys();
  // The probe keys are read in order, so that fetching them costs no cache
  // misses; their hashes still land anywhere in the filter.
  const uint64_t count = probes.size();
  uint64_t i = 0;
  uint64_t matches = 0;
  for (auto _ : state) {
    if (++i == count) i = 0;
    matches += filter.reader->MayMatch(probes[i]);
  }
  benchmark::DoNotOptimize(matches);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void LookupBatch(benchmark::State& state, std::string family, int bits,
                 uint64_t n) {
  const auto policy = filter_bench::MakeFilterPolicy(family, bits);
  const BuiltFilter filter = Build(*policy, PresentKeys(n));
  const KeySet& probes = AbsentKeys();
  constexpr int kBatch = 32;
  rdb::Slice slices[kBatch];
  rdb::Slice* pointers[kBatch];
  bool may_match[kBatch];
  uint64_t i = 0;
  uint64_t matches = 0;
  for (auto _ : state) {
    for (int k = 0; k < kBatch; ++k) {
      if (++i == probes.size()) i = 0;
      slices[k] = probes[i];
      pointers[k] = &slices[k];
    }
    filter.reader->MayMatch(kBatch, pointers, may_match);
    for (int k = 0; k < kBatch; ++k) matches += may_match[k];
  }
  benchmark::DoNotOptimize(matches);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
}

// The core library: a dynamic filter sized for 2^20 slots, filled to `load`
// before timing; inserts are timed on the way from load - 5% to load.
uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  return x;
}

cuckoo::CuckooFilter FilledDynamicFilter(double load, uint64_t* stored) {
  cuckoo::CuckooFilterOptions options;
  options.layout =
      cuckoo::ChooseForFalsePositiveRate(0.01, cuckoo::Construction::kDynamic)
          .layout;
  cuckoo::CuckooFilter filter((1u << 20) / options.layout.bucket_size, options);
  uint64_t i = 0;
  while (filter.LoadFactor() < load &&
         filter.Insert(Mix(i)) == cuckoo::InsertResult::kOk) {
    ++i;
  }
  *stored = i;
  return filter;
}

void DynamicInsert(benchmark::State& state, double load) {
  uint64_t inserted = 0;
  for (auto _ : state) {
    state.PauseTiming();
    uint64_t stored = 0;
    cuckoo::CuckooFilter filter = FilledDynamicFilter(load - 0.05, &stored);
    const uint64_t target = static_cast<uint64_t>(load * filter.Capacity());
    state.ResumeTiming();
    for (uint64_t i = stored; filter.Size() < target; ++i) {
      if (filter.Insert(Mix(i)) != cuckoo::InsertResult::kOk) {
        state.SkipWithError("filter full before the target load");
        break;
      }
      ++inserted;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(inserted));
}

void DynamicLookup(benchmark::State& state, double load, bool present) {
  uint64_t stored = 0;
  const cuckoo::CuckooFilter filter = FilledDynamicFilter(load, &stored);
  uint64_t i = 0;
  uint64_t matches = 0;
  for (auto _ : state) {
    i = (i + 1) % stored;
    matches += filter.Contains(present ? Mix(i) : Mix(i + (1ull << 40)));
  }
  benchmark::DoNotOptimize(matches);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.counters["bits_per_key"] = filter.BitsPerKey();
  state.counters["load"] = filter.LoadFactor();
}

void DynamicErase(benchmark::State& state, double load) {
  uint64_t erased = 0;
  for (auto _ : state) {
    state.PauseTiming();
    uint64_t stored = 0;
    cuckoo::CuckooFilter filter = FilledDynamicFilter(load, &stored);
    state.ResumeTiming();
    for (uint64_t i = 0; i < stored / 10; ++i) {
      benchmark::DoNotOptimize(filter.Erase(Mix(i)));
    }
    erased += stored / 10;
  }
  state.SetItemsProcessed(static_cast<int64_t>(erased));
}

// The counting Bloom filter at a 1% target rate.
void CountingBloom(benchmark::State& state, int operation) {
  using Filter = counting_bloom::BlockedCountingBloomFilter;
  constexpr uint64_t kKeys = 1000000;
  Filter filter(Filter::ForCapacity(kKeys, 0.01));
  for (uint64_t i = 0; i < kKeys; ++i) filter.Add(Mix(i));
  uint64_t i = 0;
  uint64_t sink = 0;
  for (auto _ : state) {
    i = (i + 1) % kKeys;
    switch (operation) {
      case 0:  // add then remove the same new key: the size stays constant
        filter.Add(Mix(i + (1ull << 40)));
        sink += filter.Remove(Mix(i + (1ull << 40)));
        break;
      case 1:
        sink += filter.Contains(Mix(i));
        break;
      default:
        sink += filter.Contains(Mix(i + (1ull << 40)));
        break;
    }
  }
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.counters["bits_per_key"] = filter.BitsPerKey();
}

void RegisterAll(uint64_t max_keys) {
  const std::vector<std::string> families = {"bloom", "ribbon", "cuckoo"};
  std::vector<uint64_t> sizes;
  for (uint64_t n = 10000; n <= max_keys; n *= 10) sizes.push_back(n);
  // The size sweep at 10 and 16 bits per key.
  for (int bits : {10, 16}) {
    for (uint64_t n : sizes) {
      for (const std::string& family : families) {
        const std::string tag = family + "/bits:" + std::to_string(bits) +
                                "/keys:" + std::to_string(n);
        benchmark::RegisterBenchmark(("construct/" + tag).c_str(), Construct,
                                     family, bits, n, false)
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.2);
        benchmark::RegisterBenchmark(("lookup_present/" + tag).c_str(),
                                     LookupOne, family, bits, n, true);
        benchmark::RegisterBenchmark(("lookup_absent/" + tag).c_str(),
                                     LookupOne, family, bits, n, false);
        benchmark::RegisterBenchmark(("lookup_batch32_absent/" + tag).c_str(),
                                     LookupBatch, family, bits, n);
      }
    }
  }
  // Accuracy and space across budgets at 10^6 keys (construction counters).
  for (int bits : {8, 12, 20}) {
    for (const std::string& family : families) {
      const std::string tag =
          family + "/bits:" + std::to_string(bits) + "/keys:1000000";
      benchmark::RegisterBenchmark(("construct/" + tag).c_str(), Construct,
                                   family, bits, uint64_t{1000000}, false)
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.2);
    }
  }
  // What detect_filter_construct_corruption costs each builder, at 10^6 keys.
  for (int bits : {10, 16}) {
    for (const std::string& family : families) {
      const std::string tag =
          family + "/bits:" + std::to_string(bits) + "/keys:1000000";
      benchmark::RegisterBenchmark(("construct_verified/" + tag).c_str(),
                                   Construct, family, bits, uint64_t{1000000},
                                   true)
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.2);
    }
  }
  for (double load : {0.5, 0.9, 0.95}) {
    const std::string tag =
        "load:" + std::to_string(static_cast<int>(load * 100));
    benchmark::RegisterBenchmark(("core_cuckoo_insert/" + tag).c_str(),
                                 DynamicInsert, load)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("core_cuckoo_lookup_present/" + tag).c_str(),
                                 DynamicLookup, load, true);
    benchmark::RegisterBenchmark(("core_cuckoo_lookup_absent/" + tag).c_str(),
                                 DynamicLookup, load, false);
    benchmark::RegisterBenchmark(("core_cuckoo_erase/" + tag).c_str(),
                                 DynamicErase, load)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("core_blocked_counting_bloom_add_remove",
                               CountingBloom, 0);
  benchmark::RegisterBenchmark("core_blocked_counting_bloom_lookup_present",
                               CountingBloom, 1);
  benchmark::RegisterBenchmark("core_blocked_counting_bloom_lookup_absent",
                               CountingBloom, 2);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t max_keys = 1000000;
  std::vector<char*> remaining;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--max_keys=", 0) == 0) {
      max_keys = std::strtoull(arg.c_str() + 11, nullptr, 10);
    } else {
      remaining.push_back(argv[i]);
    }
  }
  int remaining_count = static_cast<int>(remaining.size());
  benchmark::Initialize(&remaining_count, remaining.data());
  if (benchmark::ReportUnrecognizedArguments(remaining_count,
                                             remaining.data())) {
    return 2;
  }
  RegisterAll(max_keys);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
