// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Google Benchmark cases of the dynamic CuckooFilter, in the setting of the
// paper's reference implementation (efficient/cuckoofilter) and its
// bulk-insert-and-query benchmark: 2^18 buckets of 4 slots, random 64-bit
// keys, filled to 95% load. Keys are hashed with the library's HashKey
// (XXH3), as an application would; the hash is part of every figure.
//
//   insert/<layout>/load:<a>-<b>   inserts from load a% to b% (the filter is
//                                  filled to a% before the clock starts)
//   lookup/<layout>/positive:<p>   Contains at 95% load, p% of the keys stored
//   lookup_batch/<layout>/...      ContainsBatch of 32 keys, the same mix
//   lookup_visit/<layout>/...      Contains in a loop inside VisitLookup, the
//                                  same mix
//   erase/<layout>                 Erase of stored keys at 95% load
//
// Layouts: plain 4-slot buckets of 8, 12 and 16-bit fingerprints, and
// semi-sorted 4-slot buckets of 13-bit fingerprints, which have compiled
// codecs; plain 10-bit and semi-sorted 17-bit ones, which the runtime codec
// reads.
//
// Growth (plain 12-bit, expansion 2, at most 6 growths, 85% load):
//   growth/lookup/<filter>/positive:<p>  Contains in a filter that grew 6
//                                  times from 2^12 buckets ("grown6"), and in
//                                  one made with its final 2^18 buckets
//                                  ("right_sized"), holding the same keys
//   growth/fpr/k:<k>               one pass, no timing: the FPR measured
//                                  after k growths (counter fpr) against the
//                                  bound of cuckoo_filter.h (fpr_bound), and
//                                  the rate k + 1 chained sub-filters with
//                                  the same fingerprints would add up to
//                                  (chained_fpr, RedisBloom's design)
//
// Threads (plain 12-bit, 2^18 buckets in all, 85% load, 50% positive):
//   concurrent/lookup/<filter>/threads:<n>   Contains from n threads at once
//   concurrent/lookup_batch/<filter>/threads:<n>  ContainsBatch of 32 keys
//   concurrent/mixed/<filter>/threads:<n>    the same with one call in 16 an
//                                  Insert of a new key or an Erase of one
// <filter>: "sharded", ConcurrentCuckooFilter; "rwlock", one CuckooFilter
// behind a std::shared_mutex (the design it replaced); "unshared", each
// thread its own copy of a CuckooFilter, unsynchronized: what this machine
// gives two independent threads, the ceiling of the others' scaling.
// items_per_second is the total over the threads, in real time.
//
// usage: dynamic_filter_bench [google benchmark flags]
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <string>
#include <vector>

#include "cuckoo/concurrent_cuckoo_filter.h"
#include "cuckoo/cuckoo_filter.h"
#include "cuckoo/hashing.h"

namespace {

constexpr uint32_t kBuckets = 1u << 18;
constexpr double kFullLoad = 0.95;
constexpr size_t kBatch = 32;

// Stored keys first, then as many absent ones: random 64-bit values, hashed.
const std::vector<uint64_t>& KeyHashes() {
  static const std::vector<uint64_t> hashes = [] {
    const size_t stored = static_cast<size_t>(kFullLoad * kBuckets * 4);
    std::mt19937_64 rng(2014);
    std::vector<uint64_t> out(2 * stored);
    for (uint64_t& hash : out) {
      const uint64_t key = rng();
      hash = cuckoo::HashKey(&key, sizeof(key));
    }
    return out;
  }();
  return hashes;
}

size_t StoredCount() { return KeyHashes().size() / 2; }

cuckoo::CuckooFilterOptions Options(int fingerprint_bits, bool semi_sorted) {
  cuckoo::CuckooFilterOptions options;
  options.layout = cuckoo::BucketLayout{4, fingerprint_bits, semi_sorted};
  return options;
}

std::string LayoutName(int fingerprint_bits, bool semi_sorted) {
  return (semi_sorted ? "semisorted" : "plain") +
         std::to_string(fingerprint_bits);
}

// Inserts keys [first, last) of KeyHashes(); false if one did not fit.
bool InsertRange(cuckoo::CuckooFilter& filter, size_t first, size_t last) {
  const std::vector<uint64_t>& hashes = KeyHashes();
  for (size_t i = first; i < last; ++i) {
    if (filter.Insert(hashes[i]) != cuckoo::InsertResult::kOk) return false;
  }
  return true;
}

void Insert(benchmark::State& state, int fingerprint_bits, bool semi_sorted,
            double from_load, double to_load) {
  const size_t capacity = size_t{kBuckets} * 4;
  const size_t first = static_cast<size_t>(from_load * capacity);
  const size_t last = static_cast<size_t>(to_load * capacity);
  for (auto _ : state) {
    cuckoo::CuckooFilter filter(kBuckets,
                                Options(fingerprint_bits, semi_sorted));
    if (!InsertRange(filter, 0, first)) {
      state.SkipWithError("filter full before the slice");
      break;
    }
    const auto start = std::chrono::steady_clock::now();
    const bool all = InsertRange(filter, first, last);
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
    if (!all) {
      state.SkipWithError("filter full inside the slice");
      break;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(
      state.iterations() * static_cast<int64_t>(last - first)));
}

const cuckoo::CuckooFilter& FullFilter(int fingerprint_bits, bool semi_sorted) {
  static std::vector<std::pair<std::string, cuckoo::CuckooFilter>> filters;
  const std::string name = LayoutName(fingerprint_bits, semi_sorted);
  for (const auto& [filter_name, filter] : filters) {
    if (filter_name == name) return filter;
  }
  cuckoo::CuckooFilter filter(kBuckets, Options(fingerprint_bits, semi_sorted));
  InsertRange(filter, 0, StoredCount());
  filters.emplace_back(name, std::move(filter));
  return filters.back().second;
}

// Lookup keys: positive_percent% of them stored, interleaved evenly.
std::vector<uint64_t> LookupMix(int positive_percent) {
  const std::vector<uint64_t>& hashes = KeyHashes();
  const size_t stored = StoredCount();
  std::vector<uint64_t> mix(stored);
  for (size_t i = 0; i < stored; ++i) {
    const bool positive = static_cast<int>(i % 100) < positive_percent;
    mix[i] = positive ? hashes[i] : hashes[stored + i];
  }
  return mix;
}

// How a lookup case calls the filter: Contains, ContainsBatch of kBatch
// keys, or Contains in a loop compiled for the filter's table (VisitLookup),
// which chooses the table type once per kVisitRun lookups.
enum class LookupCall { kSingle, kBatched, kVisit };
constexpr size_t kVisitRun = 1024;

void Lookup(benchmark::State& state, int fingerprint_bits, bool semi_sorted,
            int positive_percent, LookupCall call) {
  const cuckoo::CuckooFilter& filter =
      FullFilter(fingerprint_bits, semi_sorted);
  const std::vector<uint64_t> mix = LookupMix(positive_percent);
  const size_t per_iteration = call == LookupCall::kBatched ? kBatch
                               : call == LookupCall::kVisit ? kVisitRun
                                                            : 1;
  uint64_t matches = 0;
  size_t i = 0;
  bool out[kBatch];
  for (auto _ : state) {
    if (i + per_iteration > mix.size()) i = 0;
    switch (call) {
      case LookupCall::kSingle:
        matches += filter.Contains(mix[i]);
        break;
      case LookupCall::kBatched:
        filter.ContainsBatch(mix.data() + i, kBatch, out);
        for (size_t k = 0; k < kBatch; ++k) matches += out[k];
        break;
      case LookupCall::kVisit:
        filter.VisitLookup([&](const auto& lookup) {
          for (size_t k = i; k < i + kVisitRun; ++k) {
            matches += lookup.Contains(mix[k]);
          }
        });
        break;
    }
    i += per_iteration;
  }
  benchmark::DoNotOptimize(matches);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(per_iteration));
  state.counters["load"] = filter.LoadFactor();
  state.counters["bits_per_item"] = filter.BitsPerKey();
}

void Erase(benchmark::State& state, int fingerprint_bits, bool semi_sorted) {
  const size_t stored = StoredCount();
  const size_t erased_per_iteration = stored / 20;
  for (auto _ : state) {
    state.PauseTiming();
    cuckoo::CuckooFilter filter = FullFilter(fingerprint_bits, semi_sorted);
    state.ResumeTiming();
    const std::vector<uint64_t>& hashes = KeyHashes();
    for (size_t i = 0; i < erased_per_iteration; ++i) {
      benchmark::DoNotOptimize(filter.Erase(hashes[i]));
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(erased_per_iteration));
}

constexpr int kGrowthFingerprintBits = 12;
constexpr uint32_t kMaxGrowths = 6;
constexpr double kGrowthLoad = 0.85;

cuckoo::CuckooFilterOptions GrowingOptions() {
  cuckoo::CuckooFilterOptions options = Options(kGrowthFingerprintBits, false);
  options.expansion = 2;
  options.max_growths = kMaxGrowths;
  return options;
}

// Inserts stored keys until the filter holds `load` of its slots.
bool FillTo(cuckoo::CuckooFilter& filter, double load, size_t* next_key) {
  const std::vector<uint64_t>& hashes = KeyHashes();
  const uint64_t target = static_cast<uint64_t>(load * filter.Capacity());
  while (filter.Size() < target) {
    if (filter.Insert(hashes[(*next_key)++]) != cuckoo::InsertResult::kOk) {
      return false;
    }
  }
  return true;
}

void GrowthLookup(benchmark::State& state, bool grown, int positive_percent) {
  cuckoo::CuckooFilter filter =
      grown ? cuckoo::CuckooFilter(kBuckets >> kMaxGrowths, GrowingOptions())
            : cuckoo::CuckooFilter(kBuckets,
                                   Options(kGrowthFingerprintBits, false));
  size_t next_key = 0;
  const uint64_t keys =
      static_cast<uint64_t>(kGrowthLoad * double{kBuckets} * 4);
  const std::vector<uint64_t>& hashes = KeyHashes();
  for (; next_key < keys; ++next_key) {
    if (filter.Insert(hashes[next_key]) != cuckoo::InsertResult::kOk) {
      state.SkipWithError("filter full");
      return;
    }
  }
  if (filter.NumBuckets() != kBuckets) {
    state.SkipWithError("the grown filter did not reach 2^18 buckets");
    return;
  }
  std::vector<uint64_t> mix(keys);
  for (size_t i = 0; i < mix.size(); ++i) {
    const bool positive = static_cast<int>(i % 100) < positive_percent;
    mix[i] = positive ? hashes[i] : hashes[StoredCount() + i];
  }
  uint64_t matches = 0;
  size_t i = 0;
  for (auto _ : state) {
    if (i == mix.size()) i = 0;
    matches += filter.Contains(mix[i++]);
  }
  benchmark::DoNotOptimize(matches);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.counters["growths"] = filter.Growths();
  state.counters["bits_per_item"] = filter.BitsPerKey();
}

void GrowthFpr(benchmark::State& state, uint32_t growths) {
  for (auto _ : state) {
    cuckoo::CuckooFilter filter(kBuckets >> kMaxGrowths, GrowingOptions());
    size_t next_key = 0;
    for (uint32_t k = 0; k < growths; ++k) {
      if (!FillTo(filter, kGrowthLoad, &next_key) || !filter.Grow()) {
        state.SkipWithError("could not grow");
        return;
      }
    }
    if (!FillTo(filter, kGrowthLoad, &next_key)) {
      state.SkipWithError("filter full");
      return;
    }
    const std::vector<uint64_t>& hashes = KeyHashes();
    uint64_t false_positives = 0;
    uint64_t probes = 0;
    // Absent keys: the second half of KeyHashes, then fresh random keys up
    // to 8 million probes.
    for (size_t i = StoredCount(); i < hashes.size(); ++i, ++probes) {
      false_positives += filter.Contains(hashes[i]);
    }
    std::mt19937_64 rng(growths + 7);
    for (; probes < 8000000; ++probes) {
      const uint64_t key = rng();
      false_positives += filter.Contains(cuckoo::HashKey(&key, sizeof(key)));
    }
    const double alpha = filter.LoadFactor();
    const double per_table =
        2.0 * 4 * alpha / (std::pow(2.0, kGrowthFingerprintBits) - 1);
    state.counters["growths"] = filter.Growths();
    state.counters["load"] = alpha;
    state.counters["false_positives"] = static_cast<double>(false_positives);
    state.counters["fpr"] =
        static_cast<double>(false_positives) / static_cast<double>(probes);
    state.counters["fpr_bound"] =
        per_table / std::pow(2.0, kMaxGrowths - growths);
    state.counters["chained_fpr"] = per_table * (growths + 1);
    state.counters["bits_per_item"] = filter.BitsPerKey();
  }
}

// One CuckooFilter behind a reader-writer lock.
class RwLockedFilter {
 public:
  RwLockedFilter(uint64_t buckets, const cuckoo::CuckooFilterOptions& options)
      : filter_(buckets, options) {}
  bool Contains(uint64_t hash) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return filter_.Contains(hash);
  }
  void ContainsBatch(const uint64_t* hashes, size_t count, bool* out) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    filter_.ContainsBatch(hashes, count, out);
  }
  cuckoo::InsertResult Insert(uint64_t hash) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    return filter_.Insert(hash);
  }
  bool Erase(uint64_t hash) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    return filter_.Erase(hash);
  }

 private:
  mutable std::shared_mutex mutex_;
  cuckoo::CuckooFilter filter_;
};

// A CuckooFilter of each thread's own.
class UnsharedFilter {
 public:
  UnsharedFilter(uint64_t buckets, const cuckoo::CuckooFilterOptions& options)
      : filter_(buckets, options) {}
  bool Contains(uint64_t hash) const { return Mine().Contains(hash); }
  void ContainsBatch(const uint64_t* hashes, size_t count, bool* out) const {
    Mine().ContainsBatch(hashes, count, out);
  }
  cuckoo::InsertResult Insert(uint64_t hash) { return Mine().Insert(hash); }
  bool Erase(uint64_t hash) { return Mine().Erase(hash); }

 private:
  cuckoo::CuckooFilter& Mine() const {
    thread_local cuckoo::CuckooFilter copy = filter_;
    return copy;
  }
  cuckoo::CuckooFilter filter_;
};

template <typename Filter>
Filter& SharedFilter() {
  static Filter* filter = [] {
    auto* made =
        new Filter(kBuckets, Options(kGrowthFingerprintBits, /*semi=*/false));
    const std::vector<uint64_t>& hashes = KeyHashes();
    const size_t keys = static_cast<size_t>(kGrowthLoad * kBuckets * 4);
    for (size_t i = 0; i < keys; ++i) made->Insert(hashes[i]);
    return made;
  }();
  return *filter;
}

template <typename Filter>
void ConcurrentBatches(benchmark::State& state) {
  const Filter& filter = SharedFilter<Filter>();
  const std::vector<uint64_t> mix = LookupMix(50);
  size_t i = static_cast<size_t>(state.thread_index()) * 100003 % mix.size();
  uint64_t matches = 0;
  bool out[kBatch];
  for (auto _ : state) {
    if (i + kBatch > mix.size()) i = 0;
    filter.ContainsBatch(mix.data() + i, kBatch, out);
    for (size_t k = 0; k < kBatch; ++k) matches += out[k];
    i += kBatch;
  }
  benchmark::DoNotOptimize(matches);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(kBatch));
}

template <typename Filter>
void ConcurrentOps(benchmark::State& state, bool mixed) {
  Filter& filter = SharedFilter<Filter>();
  const std::vector<uint64_t> mix = LookupMix(50);
  // Each thread starts elsewhere in the mix, and writes its own new keys:
  // inserted, then erased one call in 16 later.
  size_t i = static_cast<size_t>(state.thread_index()) * 100003 % mix.size();
  uint64_t own_key = uint64_t{0x9E3779B97F4A7C15} * (state.thread_index() + 1);
  uint64_t matches = 0;
  uint64_t op = 0;
  for (auto _ : state) {
    if (i == mix.size()) i = 0;
    if (mixed && (++op & 15) == 0) {
      const uint64_t hash = cuckoo::HashKey(&own_key, sizeof(own_key));
      if ((op & 16) == 0) {
        matches += filter.Insert(hash) == cuckoo::InsertResult::kOk;
      } else {
        matches += filter.Erase(hash);
        ++own_key;
      }
    } else {
      matches += filter.Contains(mix[i++]);
    }
  }
  benchmark::DoNotOptimize(matches);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void RegisterAll() {
  struct Layout {
    int fingerprint_bits;
    bool semi_sorted;
  };
  // The compiled layouts, then two that the runtime codec reads (plain
  // 10-bit and semi-sorted 17-bit buckets, lane constants computed at run
  // time): the price of a layout that has no compiled codec.
  const Layout layouts[] = {{8, false}, {12, false}, {16, false},
                            {13, true}, {10, false}, {17, true}};
  const std::pair<int, int> slices[] = {{0, 5},   {25, 30}, {50, 55},
                                        {75, 80}, {90, 95}, {0, 95}};
  for (const Layout& layout : layouts) {
    const std::string name =
        LayoutName(layout.fingerprint_bits, layout.semi_sorted);
    for (const auto& [from, to] : slices) {
      benchmark::RegisterBenchmark(
          ("insert/" + name + "/load:" + std::to_string(from) + "-" +
           std::to_string(to))
              .c_str(),
          Insert, layout.fingerprint_bits, layout.semi_sorted, from / 100.0,
          to / 100.0)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
    for (int positive : {0, 50, 100}) {
      for (const auto& [kind, call] :
           {std::pair{"lookup/", LookupCall::kSingle},
            std::pair{"lookup_batch/", LookupCall::kBatched},
            std::pair{"lookup_visit/", LookupCall::kVisit}}) {
        benchmark::RegisterBenchmark(
            (kind + name + "/positive:" + std::to_string(positive)).c_str(),
            Lookup, layout.fingerprint_bits, layout.semi_sorted, positive,
            call);
      }
    }
    benchmark::RegisterBenchmark(("erase/" + name).c_str(), Erase,
                                 layout.fingerprint_bits, layout.semi_sorted)
        ->Unit(benchmark::kMillisecond);
  }
  for (bool grown : {true, false}) {
    for (int positive : {0, 50, 100}) {
      benchmark::RegisterBenchmark(
          (std::string("growth/lookup/") + (grown ? "grown6" : "right_sized") +
           "/positive:" + std::to_string(positive))
              .c_str(),
          GrowthLookup, grown, positive);
    }
  }
  for (bool mixed : {false, true}) {
    const std::string kind = mixed ? "concurrent/mixed/" : "concurrent/lookup/";
    benchmark::RegisterBenchmark((kind + "sharded").c_str(),
                                 ConcurrentOps<cuckoo::ConcurrentCuckooFilter>,
                                 mixed)
        ->Threads(1)
        ->Threads(2)
        ->UseRealTime();
    benchmark::RegisterBenchmark((kind + "rwlock").c_str(),
                                 ConcurrentOps<RwLockedFilter>, mixed)
        ->Threads(1)
        ->Threads(2)
        ->UseRealTime();
    benchmark::RegisterBenchmark((kind + "unshared").c_str(),
                                 ConcurrentOps<UnsharedFilter>, mixed)
        ->Threads(1)
        ->Threads(2)
        ->UseRealTime();
  }
  benchmark::RegisterBenchmark(
      "concurrent/lookup_batch/sharded",
      ConcurrentBatches<cuckoo::ConcurrentCuckooFilter>)
      ->Threads(1)
      ->Threads(2)
      ->UseRealTime();
  benchmark::RegisterBenchmark("concurrent/lookup_batch/rwlock",
                               ConcurrentBatches<RwLockedFilter>)
      ->Threads(1)
      ->Threads(2)
      ->UseRealTime();
  benchmark::RegisterBenchmark("concurrent/lookup_batch/unshared",
                               ConcurrentBatches<UnsharedFilter>)
      ->Threads(1)
      ->Threads(2)
      ->UseRealTime();
  for (uint32_t k = 0; k <= kMaxGrowths; ++k) {
    benchmark::RegisterBenchmark(("growth/fpr/k:" + std::to_string(k)).c_str(),
                                 GrowthFpr, k)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
