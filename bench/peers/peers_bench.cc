// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Runs the dynamic cuckoo filter side by side with three peer
// implementations in one process, on the same keys, table size and load,
// and prints one Markdown table of throughput ratios, ours / peer. Ours is
// the typed filter (cuckoo::TypedCuckooFilter, its layout, hasher and
// power-of-two bucket count compile-time parameters, as the peers' are; in
// the rows marked "any even" it takes any even bucket count), and in the
// rows marked "runtime" the runtime-layout cuckoo::CuckooFilter given the
// same hashes.
// scripts/peers-bench.sh fetches the peers at pinned commits, outside the
// repository, and builds this file with them; nothing of theirs is in the
// repository.
//
// Comparisons (ours hashes with cuckoo::HashInteger unless said otherwise):
//   efficient/cuckoofilter (the paper's reference), with its own hash
//     (TwoIndependentMultiplyShift): plain 4-slot buckets of 8, 12 and 16-bit
//     fingerprints (its SingleTable), semi-sorted 13-bit (its PackedTable);
//     plain 12 also against ours typed for any even bucket count, and plain
//     12 and semi-sorted 13 against ours runtime;
//   the same with XXH3-64 of the key's 8 bytes on both sides (ours:
//     cuckoo::HashKey; the reference gets a HashFamily calling it);
//   plain 8, 12 and 16-bit with cuckoo::HashInteger on both sides (the
//     reference gets a HashFamily calling it), which leaves the tables'
//     own work to compare;
//   FastFilter/fastfilter_cpp's cuckoo filter, with its own hash
//     (SimpleMixSplit): plain 12-bit and semi-sorted 13-bit;
//   RedisBloom's cuckoo.c with its defaults (buckets of 2 slots of 8-bit
//     fingerprints, 20 kicks) and its hash, MurmurHash64A of the key's 8
//     bytes; ours with the same layout and as many slots, twice the buckets;
//   and ours against ours: cuckoo::ConcurrentCuckooFilter (64 shards)
//     against one cuckoo::CuckooFilter of as many buckets, plain 12-bit,
//     both at 90% load, single and batched lookups (CompareSharded).
//
// Keys: random 64-bit integers; the stored ones fill 95% of the slots, and
// as many absent ones are drawn after them. In each repetition, every filter
// is built fresh and both sides of a comparison run back to back, which one
// first alternating between repetitions:
//   insert a-b%   the inserts that take the table from a% to b% of its
//                 slots, timed as one run; a side whose insert fails stops
//                 there, and the slices it did not finish have no figure.
//                 The slices end at 95%, RedisBloom's at 15%, short of
//                 where its defaults first fail an insert
//   lookup p%     Contains on the filled table, p% of the keys stored (the
//                 mix drawn by a seeded coin), for at least --min-seconds
//   insert-many a-b%  ours: the same slice as one InsertMany call, into a
//                 filter of its own; against the peer's single inserts
//   batch32 p%    ours: ContainsBatch of 32 keys at a time, hashed inside
//                 the timed loop; against the peer's single lookups
//   visit p%      ours, runtime rows: Contains in a loop inside
//                 VisitLookup; against the peer's single lookups
// Every figure is timed on the thread's own CPU clock
// (CLOCK_THREAD_CPUTIME_ID): what the loop spent on its core, without the
// time the machine gave to other work meanwhile.
// Lookups run at the load both sides reached: the fuller one is rebuilt
// with the keys the other holds. Then every stored key must be found by
// both, or the run aborts; the false-positive rate is measured once per
// comparison, in the first repetition, on the absent keys.
//
// usage: peers_bench [--quick] [--repetitions N] [--min-seconds S]
//                    [--log2-buckets K[,K...]]
//   --quick  2^16 buckets of 4 slots only, 2 repetitions, 0.02 s lookups
//            (a smoke test); otherwise 2^18 and 2^24 buckets, 5 repetitions,
//            0.2 s lookups
//   --log2-buckets  only these sizes (2^K buckets of 4), e.g. 18
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuckoo/concurrent_cuckoo_filter.h"
#include "cuckoo/cuckoo_filter.h"
#include "cuckoo/hashing.h"
#include "cuckoo/typed_cuckoo_filter.h"

// The peers' headers, from the include folder scripts/peers-bench.sh links
// them into. efficient/cuckoofilter and fastfilter_cpp (whose cuckoo filter
// derives from the reference) declare the same names in namespace
// cuckoofilter behind the same include guards: each goes into a namespace
// of its own, and the guards are cleared in between.
#define cuckoofilter efficient_cuckoofilter
#include <efficient_cuckoofilter/src/cuckoofilter.h>
#undef cuckoofilter
#undef CUCKOO_FILTER_CUCKOO_FILTER_H_
#undef CUCKOO_FILTER_SINGLE_TABLE_H_
#undef CUCKOO_FILTER_PACKED_TABLE_H_
#undef CUCKOO_FILTER_PERM_ENCODING_H_
#undef CUCKOO_FILTER_BITS_H_
#undef CUCKOO_FILTER_DEBUG_H_
#undef CUCKOO_FILTER_PRINTUTIL_H_
#define cuckoofilter fastfilter_cuckoofilter
#include <fastfilter_cpp/src/cuckoo/cuckoofilter.h>
#undef cuckoofilter

extern "C" {
#include <RedisBloom/src/cuckoo.h>
}

namespace {

constexpr uint64_t kKeySeed = 2014;
constexpr uint64_t kMixSeed = 2015;
constexpr double kTargetLoad = 0.95;
constexpr size_t kBatch = 32;
// Lookups between two reads of the clock.
constexpr size_t kChunk = 8192;
constexpr uint64_t kMaxFprProbes = uint64_t{1} << 23;
constexpr double kNoFigure = std::numeric_limits<double>::quiet_NaN();

struct Slice {
  double from;
  double to;
};
using Slices = std::vector<Slice>;
// The insert slices of a comparison whose peer fills to 95%.
const Slices kSlices = {
    {0.0, 0.50}, {0.50, 0.75}, {0.75, 0.90}, {0.90, kTargetLoad}};
// RedisBloom's defaults (2-slot buckets, 20 kicks, no expansion) fail an
// insert of these keys at 19.9% of the slots at 2^24 buckets (35.6% at
// 2^18): its slices stop below that, so that its inserts have figures.
const Slices kRedisBloomSlices = {{0.0, 0.10}, {0.10, 0.15}};
constexpr int kPositivePercents[] = {0, 50, 100};

// Where the timed lookups' results go, so that they are computed.
volatile uint64_t lookup_sink = 0;

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "peers_bench: %s\n", message.c_str());
  std::exit(1);
}

// The calling thread's CPU time, in seconds.
double ThreadSeconds() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) +
         1e-9 * static_cast<double>(now.tv_nsec);
}

double SecondsSince(double start) { return ThreadSeconds() - start; }

size_t KeysAtLoad(double load, uint64_t slots) {
  return static_cast<size_t>(load * static_cast<double>(slots));
}

// Stored keys (kTargetLoad of the slots), as many absent ones, and the 50%
// mix: mixed[i] is stored[i] or absent[i], as a seeded coin says, so that a
// prefix of any of the three holds only keys of a prefix of `stored`.
struct KeySet {
  std::vector<uint64_t> stored;
  std::vector<uint64_t> absent;
  std::vector<uint64_t> mixed;

  const std::vector<uint64_t>& WithPositivePercent(int percent) const {
    return percent == 0 ? absent : percent == 100 ? stored : mixed;
  }
};

KeySet MakeKeys(uint64_t slots) {
  const size_t count = KeysAtLoad(kTargetLoad, slots);
  KeySet keys;
  std::mt19937_64 rng(kKeySeed);
  keys.stored.resize(count);
  keys.absent.resize(count);
  for (uint64_t& key : keys.stored) key = rng();
  for (uint64_t& key : keys.absent) key = rng();
  std::mt19937_64 coin(kMixSeed);
  keys.mixed.resize(count);
  uint64_t bits = 0;
  for (size_t i = 0; i < count; ++i) {
    if (i % 64 == 0) bits = coin();
    keys.mixed[i] = (bits >> (i % 64)) & 1 ? keys.stored[i] : keys.absent[i];
  }
  return keys;
}

// The sides of a comparison are adapters with
//   bool Insert(uint64_t key)           false when the key did not fit
//   bool Contains(uint64_t key) const
//   uint64_t Slots() const, size_t SizeInBytes() const
// and ours, in addition,
//   size_t InsertMany(const uint64_t* keys, size_t count)  the number stored
//   void ContainsBatch(const uint64_t* keys, size_t count, bool* out) const
//   static constexpr bool kHasVisitLookup, and when true
//   template <typename Body> void VisitContains(Body&& body) const
// A filter that takes keys itself, as a typed one would, needs an adapter
// only to turn Insert's result into a bool and to say kHasVisitLookup.

// The options of ours runtime and sharded: the layout, no growth, and the
// hasher their keys are hashed with.
cuckoo::CuckooFilterOptions FixedSizeOptions(const cuckoo::BucketLayout& layout,
                                             cuckoo::KeyHasher hasher) {
  cuckoo::CuckooFilterOptions options;
  options.layout = layout;
  options.expansion = 0;
  options.hasher = hasher;
  return options;
}

// Ours: cuckoo::CuckooFilter, its layout chosen at run time, fed with
// Hasher's hashes of the keys; every timed call includes the hashing.
template <typename Hasher>
class RuntimeFilter {
 public:
  static constexpr bool kHasVisitLookup = true;

  RuntimeFilter(uint64_t num_buckets, const cuckoo::BucketLayout& layout)
      : filter_(num_buckets, FixedSizeOptions(layout, Hasher::kId)) {}

  bool Insert(uint64_t key) {
    return filter_.Insert(hasher_(key)) == cuckoo::InsertResult::kOk;
  }
  bool Contains(uint64_t key) const { return filter_.Contains(hasher_(key)); }
  size_t InsertMany(const uint64_t* keys, size_t count) {
    uint64_t hashes[kBatch];
    size_t stored = 0;
    for (size_t done = 0; done < count; done += kBatch) {
      const size_t n = std::min(kBatch, count - done);
      for (size_t i = 0; i < n; ++i) hashes[i] = hasher_(keys[done + i]);
      stored += filter_.InsertMany(hashes, n);
    }
    return stored;
  }
  void ContainsBatch(const uint64_t* keys, size_t count, bool* out) const {
    uint64_t hashes[kBatch];
    for (size_t done = 0; done < count; done += kBatch) {
      const size_t n = std::min(kBatch, count - done);
      for (size_t i = 0; i < n; ++i) hashes[i] = hasher_(keys[done + i]);
      filter_.ContainsBatch(hashes, n, out + done);
    }
  }
  // Calls body(contains), where contains(key) answers as Contains does,
  // compiled for the filter's table (VisitLookup).
  template <typename Body>
  void VisitContains(Body&& body) const {
    filter_.VisitLookup([&](const auto& lookup) {
      body([&](uint64_t key) { return lookup.Contains(hasher_(key)); });
    });
  }
  uint64_t Slots() const { return filter_.Capacity(); }
  size_t SizeInBytes() const { return filter_.SizeInBytes(); }

 private:
  Hasher hasher_;
  cuckoo::CuckooFilter filter_;
};

using RuntimeInteger = RuntimeFilter<cuckoo::IntegerHasher>;

// Ours: cuckoo::ConcurrentCuckooFilter, the thread-safe filter of
// CuckooFilter shards, fed with HashInteger's hashes; for its comparison
// with one CuckooFilter (CompareSharded), which uses only these calls.
class ShardedFilter {
 public:
  ShardedFilter(uint64_t num_buckets, const cuckoo::BucketLayout& layout)
      : filter_(num_buckets,
                FixedSizeOptions(layout, cuckoo::IntegerHasher::kId)) {}

  bool Insert(uint64_t key) {
    return filter_.Insert(cuckoo::HashInteger(key)) ==
           cuckoo::InsertResult::kOk;
  }
  bool Contains(uint64_t key) const {
    return filter_.Contains(cuckoo::HashInteger(key));
  }
  void ContainsBatch(const uint64_t* keys, size_t count, bool* out) const {
    uint64_t hashes[kBatch];
    for (size_t done = 0; done < count; done += kBatch) {
      const size_t n = std::min(kBatch, count - done);
      for (size_t i = 0; i < n; ++i)
        hashes[i] = cuckoo::HashInteger(keys[done + i]);
      filter_.ContainsBatch(hashes, n, out + done);
    }
  }
  size_t SizeInBytes() const { return filter_.Info().size_in_bytes; }
  uint64_t Slots() const {
    const cuckoo::CuckooFilterInfo info = filter_.Info();
    return info.num_buckets * static_cast<uint64_t>(info.bucket_size);
  }

 private:
  cuckoo::ConcurrentCuckooFilter filter_;
};

// Ours: a cuckoo::TypedCuckooFilter, which takes the keys and hashes them
// itself.
template <typename Typed>
class TypedFilter {
 public:
  static constexpr bool kHasVisitLookup = false;

  TypedFilter(uint64_t num_buckets, const cuckoo::BucketLayout& layout)
      : filter_(num_buckets) {
    if (!(layout == Typed::Layout())) Fail("a typed filter of another layout");
    if (filter_.NumBuckets() != num_buckets) Fail("a typed filter resized");
  }

  bool Insert(uint64_t key) {
    return filter_.Insert(key) == cuckoo::InsertResult::kOk;
  }
  bool Contains(uint64_t key) const { return filter_.Contains(key); }
  size_t InsertMany(const uint64_t* keys, size_t count) {
    return filter_.InsertMany(keys, count);
  }
  void ContainsBatch(const uint64_t* keys, size_t count, bool* out) const {
    filter_.ContainsBatch(keys, count, out);
  }
  uint64_t Slots() const { return filter_.Capacity(); }
  size_t SizeInBytes() const { return filter_.SizeInBytes(); }

 private:
  Typed filter_;
};

// The peers' tables have 2^k buckets, and so do ours, except in the "any
// even" rows.
constexpr cuckoo::BucketCounts kPowerOfTwo = cuckoo::BucketCounts::kPowerOfTwo;
template <int kFingerprintBits, typename Hasher = cuckoo::IntegerHasher,
          cuckoo::BucketCounts kBucketCounts = kPowerOfTwo>
using OursPlain = TypedFilter<
    cuckoo::PlainCuckooFilter<kFingerprintBits, Hasher, kBucketCounts>>;
template <typename Hasher = cuckoo::IntegerHasher>
using OursSemiSorted13 =
    TypedFilter<cuckoo::SemiSortedCuckooFilter<13, Hasher, kPowerOfTwo>>;
using OursTwoSlots8 =
    TypedFilter<cuckoo::TypedCuckooFilter<cuckoo::CompiledPlainCodec<2, 8>,
                                          cuckoo::IntegerHasher, kPowerOfTwo>>;

// The HashFamily of the reference in the XXH3 rows: XXH3-64 of the key's 8
// bytes, the same function ours hashes with there.
struct Xxh3HashFamily {
  uint64_t operator()(uint64_t key) const { return cuckoo::HashKey(key); }
};
// The HashFamily of the reference in the "HashInteger both" rows.
struct IntegerHashFamily {
  uint64_t operator()(uint64_t key) const { return cuckoo::HashInteger(key); }
};

// efficient/cuckoofilter's CuckooFilter, or fastfilter_cpp's. Both take a
// number of keys and make a power of two of 4-slot buckets, doubled when
// the keys would fill more than 96% (efficient) or 94% (fastfilter) of
// them: asking for 90% of a power of two of slots gets exactly those.
// Their Add returns Ok after parking a homeless fingerprint in their
// one-entry victim cache, and fails from the next call on.
template <typename Filter, auto kOk>
class ReferenceFilter {
 public:
  explicit ReferenceFilter(uint64_t slots)
      : filter_(static_cast<size_t>(slots / 10 * 9)), slots_(slots) {}
  ReferenceFilter(const ReferenceFilter&) = delete;
  ReferenceFilter& operator=(const ReferenceFilter&) = delete;

  bool Insert(uint64_t key) { return filter_.Add(key) == kOk; }
  bool Contains(uint64_t key) const { return filter_.Contain(key) == kOk; }
  // The slots asked for; Compare checks that the table's bytes match ours.
  uint64_t Slots() const { return slots_; }
  size_t SizeInBytes() const { return filter_.SizeInBytes(); }

 private:
  Filter filter_;
  uint64_t slots_;
};

template <size_t kBits, template <size_t> class Table, typename Hash>
using Efficient = ReferenceFilter<
    efficient_cuckoofilter::CuckooFilter<uint64_t, kBits, Table, Hash>,
    efficient_cuckoofilter::Ok>;
template <size_t kBits>
using EfficientPlain =
    Efficient<kBits, efficient_cuckoofilter::SingleTable,
              efficient_cuckoofilter::TwoIndependentMultiplyShift>;
using EfficientSemiSorted13 =
    Efficient<13, efficient_cuckoofilter::PackedTable,
              efficient_cuckoofilter::TwoIndependentMultiplyShift>;
using EfficientSemiSorted13Xxh3 =
    Efficient<13, efficient_cuckoofilter::PackedTable, Xxh3HashFamily>;

template <size_t kBits, template <size_t> class Table>
using FastFilter = ReferenceFilter<
    fastfilter_cuckoofilter::CuckooFilter<uint64_t, kBits, Table>,
    fastfilter_cuckoofilter::Ok>;

// RedisBloom's cuckoo.c with its default bucket size and kick limit
// (MAXITERATIONS), and no expansion, so that the table keeps its size; keys
// hashed as RedisBloom hashes them. A failed insert leaves the table as it
// was. Each call goes out of line into the C objects, as in RedisBloom.
class RedisBloomFilter {
 public:
  static constexpr uint16_t kBucketSize = 2;
  static constexpr uint16_t kMaxIterations = 20;

  explicit RedisBloomFilter(uint64_t slots) {
    if (CuckooFilter_Init(&filter_, slots, kBucketSize, kMaxIterations,
                          /*expansion=*/0) != 0) {
      Fail("RedisBloom: CuckooFilter_Init failed");
    }
  }
  ~RedisBloomFilter() { CuckooFilter_Free(&filter_); }
  RedisBloomFilter(const RedisBloomFilter&) = delete;
  RedisBloomFilter& operator=(const RedisBloomFilter&) = delete;

  bool Insert(uint64_t key) {
    return CuckooFilter_Insert(&filter_, Hash(key)) == CuckooInsert_Inserted;
  }
  bool Contains(uint64_t key) const {
    return CuckooFilter_Check(&filter_, Hash(key)) != 0;
  }
  uint64_t Slots() const { return filter_.numBuckets * filter_.bucketSize; }
  // One byte per slot.
  size_t SizeInBytes() const { return static_cast<size_t>(Slots()); }

 private:
  static uint64_t Hash(uint64_t key) {
    return MurmurHash64A_Bloom(&key, sizeof(key), 0);
  }

  ::CuckooFilter filter_;
};

template <typename Ours>
auto MakeOurs(uint64_t num_buckets, cuckoo::BucketLayout layout) {
  return [=] { return std::make_unique<Ours>(num_buckets, layout); };
}

template <typename Peer>
auto MakePeer(uint64_t slots) {
  return [=] { return std::make_unique<Peer>(slots); };
}

struct InsertRun {
  size_t stored;  // keys the filter holds after the run
  double mops;    // kNoFigure when an insert failed
};

// The timed loops below are flattened: every call in them that can be
// inlined is, the peers' as ours. Without it, GCC's inliner, at its growth
// limits in a file this large, leaves the peers' Add and Contain as a call
// per key, while ours are always_inline: a cost that a peer's users, who
// call it from their own smaller files, do not pay. Our slow paths marked
// noinline stay calls, as in any caller.
#define CUCKOO_PEERS_TIMED_LOOP __attribute__((flatten))

// The ways a row inserts keys: Insert for each key, until one does not fit;
// ours' InsertMany, one call for them all.
enum class InsertWay { kSingle, kMany };

// Inserts keys [0, count) kWay; returns how many it stored, all of them
// before the first that did not fit.
template <InsertWay kWay, typename Filter>
CUCKOO_PEERS_TIMED_LOOP size_t InsertKeys(Filter& filter, const uint64_t* keys,
                                          size_t count) {
  if constexpr (kWay == InsertWay::kMany) {
    return filter.InsertMany(keys, count);
  } else {
    size_t stored = 0;
    while (stored < count && filter.Insert(keys[stored])) ++stored;
    return stored;
  }
}

// Inserts keys [first, last) kWay, timed: where it stopped, and millions of
// inserts per second when all fitted.
template <InsertWay kWay, typename Filter>
InsertRun TimeInserts(Filter& filter, const std::vector<uint64_t>& keys,
                      size_t first, size_t last) {
  const double start = ThreadSeconds();
  const size_t stored =
      InsertKeys<kWay>(filter, keys.data() + first, last - first);
  const double seconds = SecondsSince(start);
  if (stored < last - first) return {first + stored, kNoFigure};
  return {last, static_cast<double>(last - first) / seconds / 1e6};
}

// The ways a row looks keys up: Contains for each key; ContainsBatch of
// kBatch keys at a time; Contains inside VisitContains, which chooses the
// table's type once for all the keys.
enum class LookupWay { kSingle, kBatched, kVisited };

// Returns how many of keys [0, count) the filter matches, looked up kWay.
template <LookupWay kWay, typename Filter>
CUCKOO_PEERS_TIMED_LOOP uint64_t CountMatches(const Filter& filter,
                                              const uint64_t* keys,
                                              size_t count) {
  uint64_t matches = 0;
  if constexpr (kWay == LookupWay::kSingle) {
    for (size_t i = 0; i < count; ++i) matches += filter.Contains(keys[i]);
  } else if constexpr (kWay == LookupWay::kBatched) {
    bool out[kBatch];
    for (size_t i = 0; i < count; i += kBatch) {
      const size_t n = std::min(kBatch, count - i);
      filter.ContainsBatch(keys + i, n, out);
      for (size_t k = 0; k < n; ++k) matches += out[k];
    }
  } else {
    filter.VisitContains([&](const auto& contains) {
      for (size_t i = 0; i < count; ++i) matches += contains(keys[i]);
    });
  }
  return matches;
}

// Looks keys[0, n) up kWay in chunks of kChunk, cycling, for at least
// min_seconds. Returns millions of lookups per second.
template <LookupWay kWay, typename Filter>
double TimeLookups(const Filter& filter, const uint64_t* keys, size_t n,
                   double min_seconds) {
  uint64_t matches = 0;
  uint64_t done = 0;
  size_t next = 0;
  double seconds = 0;
  const double start = ThreadSeconds();
  do {
    const size_t count = std::min(kChunk, n - next);
    matches += CountMatches<kWay>(filter, keys + next, count);
    done += count;
    next += count;
    if (next == n) next = 0;
    seconds = SecondsSince(start);
  } while (seconds < min_seconds);
  lookup_sink = lookup_sink + matches;
  return static_cast<double>(done) / seconds / 1e6;
}

template <typename Filter>
void CheckAllFound(const Filter& filter, const std::vector<uint64_t>& keys,
                   size_t count, const std::string& who) {
  for (size_t i = 0; i < count; ++i) {
    if (!filter.Contains(keys[i])) {
      Fail(who + " does not find stored key #" + std::to_string(i) + " of " +
           std::to_string(count) + ": a false negative");
    }
  }
}

template <typename Filter>
double MeasureFpr(const Filter& filter, const std::vector<uint64_t>& absent) {
  const size_t probes =
      static_cast<size_t>(std::min<uint64_t>(absent.size(), kMaxFprProbes));
  uint64_t positives = 0;
  for (size_t i = 0; i < probes; ++i) positives += filter.Contains(absent[i]);
  return static_cast<double>(positives) / static_cast<double>(probes);
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::vector<double> Finite(const std::vector<double>& values) {
  std::vector<double> finite;
  for (double value : values) {
    if (!std::isnan(value)) finite.push_back(value);
  }
  return finite;
}

std::string Format(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

std::string Percent(double fraction) {
  return Format("%.1f%%", 100 * fraction);
}

// A load per repetition, as a range, with "full at" when an insert failed
// in some repetition.
std::string LoadRange(const std::vector<double>& loads, bool full) {
  const auto [low, high] = std::minmax_element(loads.begin(), loads.end());
  std::string text = Percent(*low);
  if (*high - *low >= 0.0005) text += "-" + Percent(*high);
  return full ? "full at " + text : text;
}

// The measurements, per row and repetition, and the loads reached.
class Report {
 public:
  void AddRate(const std::string& size, const std::string& comparison,
               const std::string& operation, double ours_mops,
               double peer_mops) {
    Row& row = RowOf(size, comparison, operation);
    row.ours.push_back(ours_mops);
    row.peer.push_back(peer_mops);
  }

  void AddFill(const std::string& size, const std::string& comparison,
               uint64_t slots, size_t ours_stored, size_t peer_stored,
               size_t common, size_t target) {
    FillRecord& fill = FillOf(size, comparison);
    const double total = static_cast<double>(slots);
    fill.ours_loads.push_back(static_cast<double>(ours_stored) / total);
    fill.peer_loads.push_back(static_cast<double>(peer_stored) / total);
    fill.common_loads.push_back(static_cast<double>(common) / total);
    fill.ours_full = fill.ours_full || ours_stored < target;
    fill.peer_full = fill.peer_full || peer_stored < target;
  }

  void SetFprAndBytes(const std::string& size, const std::string& comparison,
                      double ours_fpr, double peer_fpr, size_t ours_bytes,
                      size_t peer_bytes) {
    FillRecord& fill = FillOf(size, comparison);
    fill.ours_fpr = ours_fpr;
    fill.peer_fpr = peer_fpr;
    fill.ours_bytes = ours_bytes;
    fill.peer_bytes = peer_bytes;
  }

  void Print(int repetitions) const {
    std::printf(
        "| size | comparison | operation | ours Mops/s | peer Mops/s | "
        "ratio (median) | interval |\n"
        "|---|---|---|---:|---:|---:|---|\n");
    for (const Row& row : rows_) PrintRow(row, repetitions);
    std::printf(
        "\n### Loads and false-positive rates\n\n"
        "Load reached: where the insert slices stopped (\"full at\": an "
        "insert failed there). Lookups run at the load both sides reached. "
        "FPR: first repetition, on up to %llu absent keys.\n\n"
        "| size | comparison | ours load reached | peer load reached | "
        "lookups at load | ours FPR | peer FPR | table KiB ours / peer |\n"
        "|---|---|---|---|---|---:|---:|---|\n",
        static_cast<unsigned long long>(kMaxFprProbes));
    for (const FillRecord& fill : fills_) {
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s / %s |\n",
                  fill.size.c_str(), fill.comparison.c_str(),
                  LoadRange(fill.ours_loads, fill.ours_full).c_str(),
                  LoadRange(fill.peer_loads, fill.peer_full).c_str(),
                  LoadRange(fill.common_loads, false).c_str(),
                  Format("%.4f%%", 100 * fill.ours_fpr).c_str(),
                  Format("%.4f%%", 100 * fill.peer_fpr).c_str(),
                  Format("%.0f", fill.ours_bytes / 1024.0).c_str(),
                  Format("%.0f", fill.peer_bytes / 1024.0).c_str());
    }
  }

 private:
  struct Row {
    std::string size;
    std::string comparison;
    std::string operation;
    std::vector<double> ours;  // Mops/s per repetition, NaN for no figure
    std::vector<double> peer;
  };
  struct FillRecord {
    std::string size;
    std::string comparison;
    std::vector<double> ours_loads;
    std::vector<double> peer_loads;
    std::vector<double> common_loads;
    bool ours_full = false;
    bool peer_full = false;
    double ours_fpr = 0;
    double peer_fpr = 0;
    size_t ours_bytes = 0;
    size_t peer_bytes = 0;
  };

  static void PrintRow(const Row& row, int repetitions) {
    std::vector<double> ratios;
    for (size_t i = 0; i < row.ours.size(); ++i) {
      if (!std::isnan(row.ours[i]) && !std::isnan(row.peer[i])) {
        ratios.push_back(row.ours[i] / row.peer[i]);
      }
    }
    const std::vector<double> ours = Finite(row.ours);
    const std::vector<double> peer = Finite(row.peer);
    const auto mops = [](const std::vector<double>& values) {
      return values.empty() ? std::string("stopped")
                            : Format("%.1f", Median(values));
    };
    std::string ratio = "-";
    std::string interval = "no repetition where both finished";
    if (!ratios.empty()) {
      const auto [low, high] =
          std::minmax_element(ratios.begin(), ratios.end());
      ratio = Format("%.2f", Median(ratios));
      interval = Format("%.2f", *low) + "-" + Format("%.2f", *high);
      if (static_cast<int>(ratios.size()) < repetitions) {
        interval += " (" + std::to_string(ratios.size()) + " of " +
                    std::to_string(repetitions) + " repetitions)";
      }
    }
    std::printf("| %s | %s | %s | %s | %s | %s | %s |\n", row.size.c_str(),
                row.comparison.c_str(), row.operation.c_str(),
                mops(ours).c_str(), mops(peer).c_str(), ratio.c_str(),
                interval.c_str());
  }

  Row& RowOf(const std::string& size, const std::string& comparison,
             const std::string& operation) {
    const auto key = std::make_tuple(size, comparison, operation);
    const auto found = row_index_.find(key);
    if (found != row_index_.end()) return rows_[found->second];
    row_index_.emplace(key, rows_.size());
    rows_.push_back(Row{size, comparison, operation, {}, {}});
    return rows_.back();
  }

  FillRecord& FillOf(const std::string& size, const std::string& comparison) {
    const auto key = std::make_pair(size, comparison);
    const auto found = fill_index_.find(key);
    if (found != fill_index_.end()) return fills_[found->second];
    fill_index_.emplace(key, fills_.size());
    fills_.push_back(FillRecord{size, comparison, {}, {}, {}});
    return fills_.back();
  }

  std::vector<Row> rows_;
  std::map<std::tuple<std::string, std::string, std::string>, size_t>
      row_index_;
  std::vector<FillRecord> fills_;
  std::map<std::pair<std::string, std::string>, size_t> fill_index_;
};

// One repetition at one table size.
struct Run {
  std::string size;      // the label of the size
  uint64_t num_buckets;  // of 4 slots
  const KeySet* keys;
  int repetition;
  double min_seconds;
  Report* report;
};

// "insert 50-75%", or with another operation name, "insert-many 50-75%".
std::string SliceName(const Slice& slice,
                      const std::string& operation = "insert") {
  return operation + " " + Format("%.0f", 100 * slice.from) + "-" +
         Format("%.0f", 100 * slice.to) + "%";
}

// One comparison in one repetition: both filters built fresh, the insert
// slices and the lookups of each side back to back.
template <typename MakeOurs, typename MakePeer>
void Compare(const Run& run, const std::string& comparison, MakeOurs make_ours,
             MakePeer make_peer, const Slices& slices = kSlices) {
  auto ours = make_ours();
  auto peer = make_peer();
  const uint64_t slots = ours->Slots();
  if (peer->Slots() != slots) {
    Fail(comparison + ": the peer has " + std::to_string(peer->Slots()) +
         " slots, ours " + std::to_string(slots));
  }
  const double byte_ratio = static_cast<double>(peer->SizeInBytes()) /
                            static_cast<double>(ours->SizeInBytes());
  if (byte_ratio < 0.75 || byte_ratio > 1.33) {
    Fail(comparison + ": the peer's table has " +
         std::to_string(peer->SizeInBytes()) + " bytes, ours " +
         std::to_string(ours->SizeInBytes()) + ": not the same table size");
  }
  const std::vector<uint64_t>& stored = run.keys->stored;
  const bool peer_first = run.repetition % 2 == 1;
  const auto in_order = [peer_first](auto&& ours_step, auto&& peer_step) {
    if (peer_first) {
      peer_step();
      ours_step();
    } else {
      ours_step();
      peer_step();
    }
  };

  size_t ours_stored = 0;
  size_t peer_stored = 0;
  std::vector<double> peer_slice_mops;
  for (const Slice& slice : slices) {
    const size_t first = KeysAtLoad(slice.from, slots);
    const size_t last = std::min(KeysAtLoad(slice.to, slots), stored.size());
    double ours_mops = kNoFigure;
    double peer_mops = kNoFigure;
    in_order(
        [&] {
          if (ours_stored != first) return;
          const InsertRun insert =
              TimeInserts<InsertWay::kSingle>(*ours, stored, first, last);
          ours_stored = insert.stored;
          ours_mops = insert.mops;
        },
        [&] {
          if (peer_stored != first) return;
          const InsertRun insert =
              TimeInserts<InsertWay::kSingle>(*peer, stored, first, last);
          peer_stored = insert.stored;
          peer_mops = insert.mops;
        });
    run.report->AddRate(run.size, comparison, SliceName(slice), ours_mops,
                        peer_mops);
    peer_slice_mops.push_back(peer_mops);
  }
  {
    // The same slices through InsertMany, into a filter of ours of its own.
    auto batched = make_ours();
    size_t batched_stored = 0;
    for (size_t i = 0; i < slices.size(); ++i) {
      const size_t first = KeysAtLoad(slices[i].from, slots);
      const size_t last =
          std::min(KeysAtLoad(slices[i].to, slots), stored.size());
      double mops = kNoFigure;
      if (batched_stored == first) {
        const InsertRun insert =
            TimeInserts<InsertWay::kMany>(*batched, stored, first, last);
        batched_stored = insert.stored;
        mops = insert.mops;
      }
      run.report->AddRate(
          run.size, comparison,
          SliceName(slices[i], "insert-many") + " (vs peer single)", mops,
          peer_slice_mops[i]);
    }
  }

  // Both sides at the load the emptier one reached.
  const size_t ours_reached = ours_stored;
  const size_t peer_reached = peer_stored;
  size_t common = std::min(ours_stored, peer_stored);
  while (ours_stored != common || peer_stored != common) {
    if (ours_stored > common) {
      ours = make_ours();
      ours_stored =
          InsertKeys<InsertWay::kSingle>(*ours, stored.data(), common);
    }
    if (peer_stored > common) {
      peer = make_peer();
      peer_stored =
          InsertKeys<InsertWay::kSingle>(*peer, stored.data(), common);
    }
    common = std::min(ours_stored, peer_stored);
  }
  if (common == 0) Fail(comparison + ": no key fitted");
  CheckAllFound(*ours, stored, common, comparison + ": ours");
  CheckAllFound(*peer, stored, common, comparison + ": the peer");
  const size_t target =
      std::min(KeysAtLoad(slices.back().to, slots), stored.size());
  run.report->AddFill(run.size, comparison, slots, ours_reached, peer_reached,
                      common, target);
  if (run.repetition == 0) {
    run.report->SetFprAndBytes(run.size, comparison,
                               MeasureFpr(*ours, run.keys->absent),
                               MeasureFpr(*peer, run.keys->absent),
                               ours->SizeInBytes(), peer->SizeInBytes());
  }

  using Ours = typename decltype(ours)::element_type;
  for (int percent : kPositivePercents) {
    const uint64_t* keys = run.keys->WithPositivePercent(percent).data();
    const std::string mix = std::to_string(percent) + "% positive";
    double ours_mops = 0;
    double peer_mops = 0;
    in_order(
        [&] {
          ours_mops = TimeLookups<LookupWay::kSingle>(*ours, keys, common,
                                                      run.min_seconds);
        },
        [&] {
          peer_mops = TimeLookups<LookupWay::kSingle>(*peer, keys, common,
                                                      run.min_seconds);
        });
    const double batched_mops =
        TimeLookups<LookupWay::kBatched>(*ours, keys, common, run.min_seconds);
    run.report->AddRate(run.size, comparison, "lookup " + mix, ours_mops,
                        peer_mops);
    run.report->AddRate(run.size, comparison,
                        "batch32 " + mix + " (vs peer single)", batched_mops,
                        peer_mops);
    if constexpr (Ours::kHasVisitLookup) {
      const double visit_mops = TimeLookups<LookupWay::kVisited>(
          *ours, keys, common, run.min_seconds);
      run.report->AddRate(run.size, comparison,
                          "visit " + mix + " (vs peer single)", visit_mops,
                          peer_mops);
    }
  }
}

// Ours against ours: the sharded filter's lookups (its default shards, 64)
// against one CuckooFilter's of as many buckets in all, plain 12-bit, both
// filled with the same keys to kShardedLoad. Each shard holds the keys its
// hash picks, so shards fill unevenly: at 95% on average the fullest would
// be at their limit.
constexpr double kShardedLoad = 0.90;

void CompareSharded(const Run& run) {
  const std::string comparison =
      "ours " + std::to_string(cuckoo::ConcurrentCuckooFilter::kDefaultShards) +
      " shards vs ours one filter, plain 12";
  const cuckoo::BucketLayout plain12{4, 12, false};
  ShardedFilter sharded(run.num_buckets, plain12);
  RuntimeInteger single(run.num_buckets, plain12);
  const uint64_t slots = single.Slots();
  if (sharded.Slots() != slots) {
    Fail(comparison + ": the shards have " + std::to_string(sharded.Slots()) +
         " slots, the filter " + std::to_string(slots));
  }
  const std::vector<uint64_t>& stored = run.keys->stored;
  const size_t count = KeysAtLoad(kShardedLoad, slots);
  for (size_t i = 0; i < count; ++i) {
    if (!sharded.Insert(stored[i]) || !single.Insert(stored[i])) {
      Fail(comparison + ": an insert failed below " +
           Format("%.0f", 100 * kShardedLoad) + "% load");
    }
  }
  CheckAllFound(sharded, stored, count, comparison + ": sharded");
  CheckAllFound(single, stored, count, comparison + ": one filter");
  const bool single_first = run.repetition % 2 == 1;
  for (int percent : kPositivePercents) {
    const uint64_t* keys = run.keys->WithPositivePercent(percent).data();
    const std::string mix = std::to_string(percent) + "% positive";
    const auto time = [&](const auto& filter, bool batched) {
      return batched ? TimeLookups<LookupWay::kBatched>(filter, keys, count,
                                                        run.min_seconds)
                     : TimeLookups<LookupWay::kSingle>(filter, keys, count,
                                                       run.min_seconds);
    };
    for (bool batched : {false, true}) {
      double sharded_mops = 0;
      double single_mops = 0;
      if (single_first) single_mops = time(single, batched);
      sharded_mops = time(sharded, batched);
      if (!single_first) single_mops = time(single, batched);
      run.report->AddRate(run.size, comparison,
                          (batched ? "batch32 " : "lookup ") + mix +
                              (batched ? " (vs one filter's batch32)" : ""),
                          sharded_mops, single_mops);
    }
  }
}

// Ours (typed, hashing with Hasher) against efficient/cuckoofilter's plain
// table (hashing with HashFamily), for 8, 12 and 16-bit fingerprints; the
// rows are labelled "efficient plain <bits>, <hashes>".
template <typename Hasher, typename HashFamily>
void ComparePlainWithEfficient(const Run& run, const std::string& hashes) {
  const auto compare = [&](auto bits) {
    constexpr int kBits = decltype(bits)::value;
    Compare(run, "efficient plain " + std::to_string(kBits) + ", " + hashes,
            MakeOurs<OursPlain<kBits, Hasher>>(
                run.num_buckets, cuckoo::BucketLayout{4, kBits, false}),
            MakePeer<Efficient<kBits, efficient_cuckoofilter::SingleTable,
                               HashFamily>>(4 * run.num_buckets));
  };
  compare(std::integral_constant<int, 8>{});
  compare(std::integral_constant<int, 12>{});
  compare(std::integral_constant<int, 16>{});
}

void RunComparisons(const Run& run) {
  const uint64_t buckets = run.num_buckets;
  const uint64_t slots = 4 * buckets;
  const cuckoo::BucketLayout plain12{4, 12, false};
  const cuckoo::BucketLayout semi13{4, 13, true};

  using cuckoo::Xxh3Hasher;
  ComparePlainWithEfficient<
      cuckoo::IntegerHasher,
      efficient_cuckoofilter::TwoIndependentMultiplyShift>(run, "own hash");
  Compare(run, "efficient semi-sorted 13, own hash",
          MakeOurs<OursSemiSorted13<>>(buckets, semi13),
          MakePeer<EfficientSemiSorted13>(slots));

  Compare(
      run, "efficient plain 12, own hash, ours any even",
      MakeOurs<
          OursPlain<12, cuckoo::IntegerHasher, cuckoo::BucketCounts::kAnyEven>>(
          buckets, plain12),
      MakePeer<EfficientPlain<12>>(slots));
  Compare(run, "efficient plain 12, own hash, ours runtime",
          MakeOurs<RuntimeInteger>(buckets, plain12),
          MakePeer<EfficientPlain<12>>(slots));
  Compare(run, "efficient semi-sorted 13, own hash, ours runtime",
          MakeOurs<RuntimeInteger>(buckets, semi13),
          MakePeer<EfficientSemiSorted13>(slots));

  ComparePlainWithEfficient<Xxh3Hasher, Xxh3HashFamily>(run, "XXH3 both");
  Compare(run, "efficient semi-sorted 13, XXH3 both",
          MakeOurs<OursSemiSorted13<Xxh3Hasher>>(buckets, semi13),
          MakePeer<EfficientSemiSorted13Xxh3>(slots));

  ComparePlainWithEfficient<cuckoo::IntegerHasher, IntegerHashFamily>(
      run, "HashInteger both");

  Compare(
      run, "fastfilter plain 12, own hash",
      MakeOurs<OursPlain<12>>(buckets, plain12),
      MakePeer<FastFilter<12, fastfilter_cuckoofilter::SingleTable>>(slots));
  Compare(
      run, "fastfilter semi-sorted 13, own hash",
      MakeOurs<OursSemiSorted13<>>(buckets, semi13),
      MakePeer<FastFilter<13, fastfilter_cuckoofilter::PackedTable>>(slots));

  Compare(run, "RedisBloom 2x8-bit, own hash",
          MakeOurs<OursTwoSlots8>(
              slots / RedisBloomFilter::kBucketSize,
              cuckoo::BucketLayout{RedisBloomFilter::kBucketSize, 8, false}),
          MakePeer<RedisBloomFilter>(slots), kRedisBloomSlices);

  CompareSharded(run);
}

#ifdef __clang__
constexpr char kCompiler[] = "clang " __clang_version__;
#else
constexpr char kCompiler[] = "GCC " __VERSION__;
#endif

std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown (no model name in /proc/cpuinfo)";
}

struct Settings {
  std::vector<int> log2_buckets = {18, 24};
  int repetitions = 5;
  double min_seconds = 0.2;
};

Settings ParseArguments(int argc, char** argv) {
  const char* usage =
      "usage: peers_bench [--quick] [--repetitions N] [--min-seconds S] "
      "[--log2-buckets K[,K...]]";
  Settings settings;
  int repetitions = 0;
  double min_seconds = 0;
  bool quick = false;
  std::vector<int> log2_buckets;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--quick") {
      quick = true;
    } else if (argument == "--repetitions" && i + 1 < argc) {
      repetitions = std::atoi(argv[++i]);
      if (repetitions < 1) Fail("--repetitions needs a count >= 1");
    } else if (argument == "--min-seconds" && i + 1 < argc) {
      min_seconds = std::atof(argv[++i]);
      if (!(min_seconds > 0)) Fail("--min-seconds needs a positive number");
    } else if (argument == "--log2-buckets" && i + 1 < argc) {
      for (const char* k = argv[++i]; *k != '\0';) {
        char* end = nullptr;
        const long value = std::strtol(k, &end, 10);
        if (end == k || value < 4 || value > 28) {
          Fail("--log2-buckets needs sizes from 4 to 28, comma-separated");
        }
        log2_buckets.push_back(static_cast<int>(value));
        k = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0') Fail(usage);
      }
    } else {
      Fail(usage);
    }
  }
  if (quick) settings = Settings{{16}, 2, 0.02};
  if (!log2_buckets.empty()) settings.log2_buckets = log2_buckets;
  if (repetitions != 0) settings.repetitions = repetitions;
  if (min_seconds != 0) settings.min_seconds = min_seconds;
  return settings;
}

void PrintHeader(const Settings& settings) {
  std::printf(
      "### Dynamic cuckoo filter vs peers\n\n"
      "- CPU: %s\n"
      "- compiler: %s (the same flags for ours and the peers)\n"
      "- keys: random 64-bit integers from std::mt19937_64(%llu): the "
      "stored ones fill %.0f%% of the slots, as many absent ones follow; "
      "the 50%% mix by a coin seeded %llu\n"
      "- %d repetitions; in each, every filter is built fresh and the two "
      "sides of a comparison run back to back (the peer first in odd "
      "repetitions); a lookup figure spans at least %.2f s, an insert "
      "figure one whole slice, each timed on the thread's CPU clock\n"
      "- ratio: ours / peer throughput in one repetition (above 1: ours is "
      "faster); the median over the repetitions, and the interval from the "
      "lowest to the highest of them. Mops/s: medians.\n"
      "- size: buckets of 4 slots; RedisBloom rows have as many slots in "
      "twice the buckets, of 2 slots, and their insert slices end at 15%%, "
      "below where RedisBloom's defaults first fail an insert\n"
      "- ours: cuckoo::TypedCuckooFilter of the peer's layout for 2^k "
      "buckets (BucketCounts::kPowerOfTwo, the peers' own constraint), in "
      "the \"ours any even\" rows for any even bucket count, in the "
      "\"ours runtime\" rows cuckoo::CuckooFilter; it hashes with "
      "cuckoo::HashInteger, except in the \"XXH3 both\" "
      "rows (cuckoo::HashKey, XXH3-64 of the 8 key bytes, which the "
      "reference gets as its HashFamily); in the \"HashInteger both\" rows "
      "the reference gets cuckoo::HashInteger as its HashFamily; peers' own "
      "hashes: efficient "
      "TwoIndependentMultiplyShift, fastfilter SimpleMixSplit (both seeded "
      "at random per filter), RedisBloom MurmurHash64A of the 8 key bytes\n"
      "- batch32: ours ContainsBatch, 32 keys a call, hashing included; "
      "visit (runtime rows): ours Contains in a loop inside VisitLookup; "
      "both against the peer's single lookups\n"
      "- insert-many: each insert slice as one call of ours InsertMany "
      "(hashing included), into a filter of its own; against the peer's "
      "single inserts of the same slice\n"
      "- RedisBloom's filter and hash are calls into separately compiled C "
      "objects, as in RedisBloom; the other filters are templates inlined "
      "into the timed loops (the loops are flattened, so that the compiler "
      "inlines the peers' calls as it inlines ours)\n"
      "- \"ours %u shards vs ours one filter\": no peer; "
      "cuckoo::ConcurrentCuckooFilter (%u shards) in the ours column, one "
      "cuckoo::CuckooFilter of as many buckets in the peer column, both "
      "filled with the same keys to %.0f%% (shards fill unevenly) and called "
      "alike, one lookup or 32 a call\n\n",
      CpuModel().c_str(), kCompiler, static_cast<unsigned long long>(kKeySeed),
      100 * kTargetLoad, static_cast<unsigned long long>(kMixSeed),
      settings.repetitions, settings.min_seconds,
      cuckoo::ConcurrentCuckooFilter::kDefaultShards,
      cuckoo::ConcurrentCuckooFilter::kDefaultShards, 100 * kShardedLoad);
}

}  // namespace

int main(int argc, char** argv) {
  const Settings settings = ParseArguments(argc, argv);
  Report report;
  for (int log2_buckets : settings.log2_buckets) {
    const uint64_t num_buckets = uint64_t{1} << log2_buckets;
    const KeySet keys = MakeKeys(4 * num_buckets);
    for (int repetition = 0; repetition < settings.repetitions; ++repetition) {
      std::fprintf(stderr, "peers_bench: 2^%d buckets, repetition %d of %d\n",
                   log2_buckets, repetition + 1, settings.repetitions);
      RunComparisons(Run{"2^" + std::to_string(log2_buckets), num_buckets,
                         &keys, repetition, settings.min_seconds, &report});
    }
  }
  PrintHeader(settings);
  report.Print(settings.repetitions);
  return 0;
}
