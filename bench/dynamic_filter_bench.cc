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
//   erase/<layout>                 Erase of stored keys at 95% load
//
// Layouts: plain 4-slot buckets of 8, 12 and 16-bit fingerprints, and
// semi-sorted 4-slot buckets of 13-bit fingerprints.
//
// usage: dynamic_filter_bench [google benchmark flags]
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

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

void Lookup(benchmark::State& state, int fingerprint_bits, bool semi_sorted,
            int positive_percent, bool batched) {
  const cuckoo::CuckooFilter& filter =
      FullFilter(fingerprint_bits, semi_sorted);
  const std::vector<uint64_t> mix = LookupMix(positive_percent);
  uint64_t matches = 0;
  size_t i = 0;
  bool out[kBatch];
  for (auto _ : state) {
    if (batched) {
      if (i + kBatch > mix.size()) i = 0;
      filter.ContainsBatch(mix.data() + i, kBatch, out);
      for (size_t k = 0; k < kBatch; ++k) matches += out[k];
      i += kBatch;
    } else {
      if (i == mix.size()) i = 0;
      matches += filter.Contains(mix[i++]);
    }
  }
  benchmark::DoNotOptimize(matches);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(batched ? kBatch : 1));
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

void RegisterAll() {
  struct Layout {
    int fingerprint_bits;
    bool semi_sorted;
  };
  const Layout layouts[] = {{8, false}, {12, false}, {16, false}, {13, true}};
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
      for (bool batched : {false, true}) {
        benchmark::RegisterBenchmark(
            ((batched ? "lookup_batch/" : "lookup/") + name +
             "/positive:" + std::to_string(positive))
                .c_str(),
            Lookup, layout.fingerprint_bits, layout.semi_sorted, positive,
            batched);
      }
    }
    benchmark::RegisterBenchmark(("erase/" + name).c_str(), Erase,
                                 layout.fingerprint_bits, layout.semi_sorted)
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
