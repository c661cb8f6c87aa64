// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The cache-penetration example: a small catalogue service over a RocksDB
// database (itself using the cuckoofilter policy), with an LRU cache and a
// gate in front of it. A request for an ID goes to the cache, then to the
// gate, and reaches the database only when the gate says the ID may exist,
// so requests for IDs that do not exist (a scraper, an attack, stale links)
// are answered without a database read.
//
// Three gates run side by side on the same traffic:
//   cuckoo          the thread-safe dynamic cuckoo filter: loaded from the
//                   database at start, kept in sync on every put and delete,
//                   growing as the catalogue grows;
//   bloom           a Bloom filter of equal false-positive target: it cannot
//                   delete, so deleted IDs keep passing it, and it must be
//                   sized for the largest catalogue up front;
//   counting_bloom  a blocked counting Bloom filter (4-bit counters): it can
//                   delete, at about 4.3 times the Bloom filter's memory.
//
// Traffic, in windows: 85% of requests for IDs that exist, 15% for IDs that
// do not (about half of them IDs deleted earlier in the run); over the run
// 5% of the items are deleted and 20% more are added. Per window and gate it
// writes the gate's false-positive rate, the database reads it avoided and
// let through, its false negatives (existing IDs it turned away, which must
// be 0), and its memory.
//
// usage: cache_penetration --db DIR [--items N] [--requests N]
//                          [--windows N] [--csv FILE]
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "blocked_counting_bloom_filter.h"
#include "catalogue.h"
#include "cuckoo/concurrent_cuckoo_filter.h"
#include "rocksdb/db.h"

namespace {

namespace rdb = ROCKSDB_NAMESPACE;
using catalogue::Check;
using catalogue::GateCounts;
using catalogue::ItemKey;
using catalogue::KeyHash;
using catalogue::LruCache;
using catalogue::ParseCount;

struct Flags {
  std::string db;
  uint64_t items = 200000;
  uint64_t requests = 2000000;
  int windows = 20;
  std::string csv;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "cache_penetration: %s\nusage: cache_penetration --db DIR "
               "[--items N] [--requests N] [--windows N] [--csv FILE]\n",
               why);
  std::exit(2);
}

Flags ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) Usage(("missing value after " + arg).c_str());
    const char* value = argv[++i];
    if (arg == "--db") {
      flags.db = value;
    } else if (arg == "--items") {
      flags.items = ParseCount(value, "--items");
    } else if (arg == "--requests") {
      flags.requests = ParseCount(value, "--requests");
    } else if (arg == "--windows") {
      flags.windows = static_cast<int>(
          std::min<uint64_t>(ParseCount(value, "--windows"), 1000));
    } else if (arg == "--csv") {
      flags.csv = value;
    } else {
      Usage(("unknown flag " + arg).c_str());
    }
  }
  if (flags.db.empty()) Usage("--db is required");
  return flags;
}

// A plain Bloom filter over key hashes: k probes by double hashing into one
// bit array. No delete.
class BloomGate {
 public:
  BloomGate(uint64_t capacity, double bits_per_key)
      : bits_(std::max<uint64_t>(
            64, static_cast<uint64_t>(bits_per_key * capacity))),
        words_((bits_ + 63) / 64, 0),
        probes_(std::max(
            1, static_cast<int>(std::lround(bits_per_key * std::log(2.0))))) {}
  void Add(uint64_t hash) {
    for (int i = 0; i < probes_; ++i) {
      const uint64_t bit = Probe(hash, i);
      words_[bit / 64] |= uint64_t{1} << (bit % 64);
    }
  }
  bool MayContain(uint64_t hash) const {
    for (int i = 0; i < probes_; ++i) {
      const uint64_t bit = Probe(hash, i);
      if ((words_[bit / 64] >> (bit % 64) & 1) == 0) return false;
    }
    return true;
  }
  size_t SizeInBytes() const { return words_.size() * sizeof(uint64_t); }

 private:
  uint64_t Probe(uint64_t hash, int i) const {
    const uint64_t h = static_cast<uint32_t>(hash) +
                       static_cast<uint64_t>(i) * ((hash >> 32) | 1);
    return static_cast<uint64_t>(
        (static_cast<unsigned __int128>(h * 0x9E3779B97F4A7C15ull) * bits_) >>
        64);
  }
  uint64_t bits_;
  std::vector<uint64_t> words_;
  int probes_;
};

class Gates {
 public:
  static constexpr int kCount = 3;
  static constexpr const char* kNames[kCount] = {"cuckoo", "bloom",
                                                 "counting_bloom"};

  Gates(uint64_t initial_items, uint64_t max_items)
      : cuckoo_(CuckooGateBuckets(initial_items), CuckooGateOptions()),
        bloom_(max_items, kBloomBitsPerKey),
        counting_(counting_bloom::BlockedCountingBloomFilter::ForCapacity(
            max_items, kTargetFalsePositiveRate)) {}

  void Add(uint64_t hash) {
    if (cuckoo_.Insert(hash) != cuckoo::InsertResult::kOk) {
      std::fprintf(stderr, "cache_penetration: the cuckoo gate is full\n");
      std::exit(1);
    }
    bloom_.Add(hash);
    counting_.Add(hash);
  }
  void Remove(uint64_t hash) {
    cuckoo_.Erase(hash);
    counting_.Remove(hash);
  }
  bool MayContain(int gate, uint64_t hash) const {
    switch (gate) {
      case 0:
        return cuckoo_.Contains(hash);
      case 1:
        return bloom_.MayContain(hash);
      default:
        return counting_.Contains(hash);
    }
  }
  size_t SizeInBytes(int gate) const {
    switch (gate) {
      case 0:
        return cuckoo_.Info().size_in_bytes;
      case 1:
        return bloom_.SizeInBytes();
      default:
        return static_cast<size_t>(counting_.SizeInBytes());
    }
  }
  uint32_t CuckooGrowths() const { return cuckoo_.Info().num_growths; }

 private:
  // 1% target for all three: 12-bit fingerprints (about 0.2% at 95% load),
  // 10 bits per key for the Bloom filter (about 0.8%), and the counting
  // Bloom filter sized for 1%.
  static constexpr double kTargetFalsePositiveRate = 0.01;
  static constexpr double kBloomBitsPerKey = 10;

  static cuckoo::CuckooFilterOptions CuckooGateOptions() {
    cuckoo::CuckooFilterOptions options;
    options.layout = cuckoo::BucketLayout{4, 12, false};
    // Each allowed growth reserves a bit per slot (see cuckoo_filter.h):
    // two growths double the catalogue twice over.
    options.expansion = 2;
    options.max_growths = 2;
    return options;
  }
  // Sized for the catalogue at start, with the dynamic filter's margin; it
  // grows as the catalogue does.
  static uint64_t CuckooGateBuckets(uint64_t items) {
    return static_cast<uint64_t>(std::ceil(items / (4 * 0.9)));
  }

  cuckoo::ConcurrentCuckooFilter cuckoo_;
  BloomGate bloom_;
  counting_bloom::BlockedCountingBloomFilter counting_;
};

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  catalogue::Catalogue items(flags.db, flags.items);
  rdb::DB* db = &items.db();
  const uint64_t additions = flags.items / 5;
  const uint64_t deletions = flags.items / 20;

  // The gates are loaded from the database, as a restarted service would.
  Gates gates(flags.items, flags.items + additions);
  {
    std::unique_ptr<rdb::Iterator> it(db->NewIterator(rdb::ReadOptions()));
    uint64_t loaded = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++loaded) {
      gates.Add(KeyHash(it->key().ToString()));
    }
    Check(it->status(), "scan");
    if (loaded != flags.items) {
      std::fprintf(stderr,
                   "cache_penetration: loaded %" PRIu64 " of %" PRIu64
                   " items\n",
                   loaded, flags.items);
      return 1;
    }
  }

  LruCache cache(flags.items / 10);
  std::mt19937_64 rng(42);
  FILE* csv = flags.csv.empty() ? nullptr : std::fopen(flags.csv.c_str(), "w");
  if (!flags.csv.empty() && csv == nullptr) {
    std::fprintf(stderr, "cache_penetration: cannot write %s\n",
                 flags.csv.c_str());
    return 1;
  }
  if (csv != nullptr) {
    std::fprintf(csv,
                 "window,gate,items,false_positive_rate,db_reads,"
                 "db_reads_avoided,false_negatives,memory_bytes\n");
  }
  std::printf("%-6s %-15s %9s %9s %10s %10s %6s %10s\n", "window", "gate",
              "items", "fpr", "db_reads", "avoided", "fn", "memory_KiB");
  GateCounts totals[Gates::kCount];
  const uint64_t per_window = flags.requests / flags.windows;
  for (int window = 0; window < flags.windows; ++window) {
    // This window's share of the churn, spread over its requests.
    const uint64_t adds = additions / flags.windows;
    const uint64_t dels = deletions / flags.windows;
    const uint64_t churn_every =
        std::max<uint64_t>(1, per_window / std::max<uint64_t>(1, adds + dels));
    uint64_t added = 0, removed = 0;
    GateCounts counts[Gates::kCount];
    for (uint64_t r = 0; r < per_window; ++r) {
      if (r % churn_every == 0 && (added < adds || removed < dels)) {
        if (added * dels <= removed * adds && added < adds) {
          gates.Add(KeyHash(ItemKey(items.Add())));
          ++added;
        } else {
          const uint64_t id = items.DeleteOne(rng);
          gates.Remove(KeyHash(ItemKey(id)));
          cache.Erase(ItemKey(id));
          ++removed;
        }
      }
      const uint64_t id =
          catalogue::NextRequestId(rng, items.live(), items.deleted());
      const std::string key = ItemKey(id);
      const bool exists = items.Exists(id);
      const bool cached = exists && cache.Get(key);
      const uint64_t hash = KeyHash(key);
      for (int gate = 0; gate < Gates::kCount; ++gate) {
        const bool pass = gates.MayContain(gate, hash);
        GateCounts& c = counts[gate];
        if (!exists) {
          ++c.absent_requests;
          c.passed_absent += pass;
        } else if (!pass) {
          ++c.false_negatives;
        }
        if (!cached) {
          if (pass) {
            ++c.db_reads;
          } else {
            ++c.db_reads_avoided;
          }
        }
      }
      // The service itself reads through the cuckoo gate.
      if (!cached && gates.MayContain(0, hash) &&
          !catalogue::ReadThrough(*db, cache, key, exists)) {
        return 1;
      }
    }
    for (int gate = 0; gate < Gates::kCount; ++gate) {
      const GateCounts& c = counts[gate];
      const double fpr =
          c.absent_requests == 0
              ? 0.0
              : static_cast<double>(c.passed_absent) / c.absent_requests;
      const size_t memory = gates.SizeInBytes(gate);
      std::printf("%-6d %-15s %9zu %9.5f %10" PRIu64 " %10" PRIu64 " %6" PRIu64
                  " %10.1f\n",
                  window, Gates::kNames[gate], items.live().size(), fpr,
                  c.db_reads, c.db_reads_avoided, c.false_negatives,
                  memory / 1024.0);
      if (csv != nullptr) {
        std::fprintf(csv,
                     "%d,%s,%zu,%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%zu\n",
                     window, Gates::kNames[gate], items.live().size(), fpr,
                     c.db_reads, c.db_reads_avoided, c.false_negatives, memory);
      }
      totals[gate].Add(c);
    }
  }
  if (csv != nullptr) std::fclose(csv);
  std::printf("\nover the run (%" PRIu64
              " requests; the cuckoo gate grew %u "
              "times):\n",
              per_window * flags.windows, gates.CuckooGrowths());
  std::printf("%-15s %9s %12s %12s %6s %10s\n", "gate", "fpr", "db_reads",
              "avoided", "fn", "memory_KiB");
  bool lost = false;
  for (int gate = 0; gate < Gates::kCount; ++gate) {
    const GateCounts& c = totals[gate];
    std::printf("%-15s %9.5f %12" PRIu64 " %12" PRIu64 " %6" PRIu64 " %10.1f\n",
                Gates::kNames[gate],
                static_cast<double>(c.passed_absent) / c.absent_requests,
                c.db_reads, c.db_reads_avoided, c.false_negatives,
                gates.SizeInBytes(gate) / 1024.0);
    lost |= c.false_negatives != 0;
  }
  if (lost) {
    std::fprintf(stderr,
                 "cache_penetration: a gate turned away an existing "
                 "ID (a false negative)\n");
    return 1;
  }
  return 0;
}
