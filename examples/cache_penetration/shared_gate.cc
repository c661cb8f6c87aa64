// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The cache-penetration example with a shared gate: the same catalogue
// service, but its gate is the CF module (module/) in a Redis server, and
// the requests come from several client processes that all check that one
// filter, as application servers share a gate in front of a cache and a
// database.
//
// The service process (this program without --client) writes the
// catalogue, loads the gate from it (CF.RESERVE, then CF.INSERT in
// batches), and in each window:
//   1. applies the window's churn to the database and to the gate: CF.ADD
//      for an added item, CF.DEL for a deleted one;
//   2. writes the IDs that exist and those deleted to a snapshot file;
//   3. starts --clients client processes (this program with --client) and
//      waits for them.
// Each client opens the catalogue as a secondary instance beside the
// service's, connects to the server, and serves its share of the window's
// requests as the in-process mode does (85% existing IDs, 15% absent, half
// of those deleted ones): its own LRU cache, then CF.EXISTS on the shared
// gate, then the database, timing each gate check. The service sums the
// clients' counts and latencies into the in-process mode's table, with one
// gate ("shared_cf"), its MEMORY USAGE, and the gate's latency over the
// network. A false negative, or a database that disagrees with the
// snapshot, fails the run.
//
// usage: shared_gate --db DIR --port PORT [--clients N] [--items N]
//                    [--requests N] [--windows N] [--csv FILE]
//   (scripts/example-cache-penetration.sh --shared-gate starts the server)
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "catalogue.h"
#include "resp_client.h"
#include "rocksdb/db.h"

extern char** environ;

namespace {

namespace rdb = ROCKSDB_NAMESPACE;
using catalogue::Check;
using catalogue::GateCounts;
using catalogue::ItemKey;
using catalogue::ParseCount;

constexpr const char* kGate = "catalogue:gate";
// Gate-check latencies in microseconds: one bucket per microsecond up to
// kLatencyBuckets - 1, the last for anything slower.
constexpr size_t kLatencyBuckets = 10001;
using Latencies = std::vector<uint64_t>;

struct Flags {
  bool client = false;
  std::string db;
  int port = 0;
  uint64_t clients = 4;
  uint64_t items = 200000;
  uint64_t requests = 2000000;
  uint64_t windows = 20;
  std::string csv;
  // A client's: its snapshot, share of requests, seed, result file.
  std::string snapshot;
  uint64_t seed = 0;
  std::string out;
};

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "shared_gate: %s\nusage: shared_gate --db DIR --port PORT "
               "[--clients N] [--items N] [--requests N] [--windows N] "
               "[--csv FILE]\n",
               why.c_str());
  std::exit(2);
}

Flags ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--client") {
      flags.client = true;
      continue;
    }
    if (i + 1 >= argc) Usage("missing value after " + arg);
    const char* value = argv[++i];
    if (arg == "--db") {
      flags.db = value;
    } else if (arg == "--port") {
      flags.port = static_cast<int>(
          std::min<uint64_t>(ParseCount(value, "--port"), 65535));
    } else if (arg == "--clients") {
      flags.clients = std::min<uint64_t>(ParseCount(value, "--clients"), 64);
    } else if (arg == "--items") {
      flags.items = ParseCount(value, "--items");
    } else if (arg == "--requests") {
      flags.requests = ParseCount(value, "--requests");
    } else if (arg == "--windows") {
      flags.windows = std::min<uint64_t>(ParseCount(value, "--windows"), 1000);
    } else if (arg == "--csv") {
      flags.csv = value;
    } else if (arg == "--snapshot") {
      flags.snapshot = value;
    } else if (arg == "--seed") {
      flags.seed = std::strtoull(value, nullptr, 10);
    } else if (arg == "--out") {
      flags.out = value;
    } else {
      Usage("unknown flag " + arg);
    }
  }
  if (flags.db.empty() || flags.port == 0)
    Usage("--db and --port are required");
  return flags;
}

// The snapshot: the count of existing IDs, then they, then the deleted ones.
void WriteSnapshot(const std::string& path, const std::vector<uint64_t>& live,
                   const std::vector<uint64_t>& deleted) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const uint64_t count = live.size();
  out.write(reinterpret_cast<const char*>(&count), sizeof(count));
  out.write(reinterpret_cast<const char*>(live.data()),
            static_cast<std::streamsize>(live.size() * sizeof(uint64_t)));
  out.write(reinterpret_cast<const char*>(deleted.data()),
            static_cast<std::streamsize>(deleted.size() * sizeof(uint64_t)));
  if (!out) Usage("cannot write " + path);
}

void ReadSnapshot(const std::string& path, std::vector<uint64_t>* live,
                  std::vector<uint64_t>* deleted) {
  std::ifstream in(path, std::ios::binary);
  uint64_t count = 0;
  in.read(reinterpret_cast<char*>(&count), sizeof(count));
  std::vector<uint64_t> ids;
  for (uint64_t id; in.read(reinterpret_cast<char*>(&id), sizeof(id));) {
    ids.push_back(id);
  }
  if (count > ids.size()) Usage("a truncated snapshot " + path);
  live->assign(ids.begin(), ids.begin() + static_cast<ptrdiff_t>(count));
  deleted->assign(ids.begin() + static_cast<ptrdiff_t>(count), ids.end());
}

// A client process: one window's share of the requests.
int RunClient(const Flags& flags) {
  std::vector<uint64_t> live, deleted;
  ReadSnapshot(flags.snapshot, &live, &deleted);
  const std::unordered_set<uint64_t> exists(live.begin(), live.end());
  std::unique_ptr<rdb::DB> db = catalogue::OpenCatalogue(
      flags.db, catalogue::Access::kReader, flags.out + ".secondary");
  Check(db->TryCatchUpWithPrimary(), "catch up with the service");
  catalogue::RespClient gate(flags.port);
  catalogue::LruCache cache(std::max<size_t>(1, live.size() / 10));
  std::mt19937_64 rng(flags.seed);
  GateCounts counts;
  Latencies latencies(kLatencyBuckets, 0);
  for (uint64_t r = 0; r < flags.requests; ++r) {
    const uint64_t id = catalogue::NextRequestId(rng, live, deleted);
    const std::string key = ItemKey(id);
    const bool present = exists.count(id) != 0;
    const bool cached = present && cache.Get(key);
    const auto start = std::chrono::steady_clock::now();
    const bool pass = gate.Command({"CF.EXISTS", kGate, key}).integer != 0;
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
    ++latencies[std::min<size_t>(static_cast<size_t>(micros),
                                 kLatencyBuckets - 1)];
    if (!present) {
      ++counts.absent_requests;
      counts.passed_absent += pass;
    } else if (!pass) {
      ++counts.false_negatives;
    }
    if (cached) continue;
    if (!pass) {
      ++counts.db_reads_avoided;
      continue;
    }
    ++counts.db_reads;
    if (!catalogue::ReadThrough(*db, cache, key, present)) return 1;
  }
  std::ofstream out(flags.out, std::ios::trunc);
  out << counts.absent_requests << ' ' << counts.passed_absent << ' '
      << counts.db_reads << ' ' << counts.db_reads_avoided << ' '
      << counts.false_negatives << '\n';
  for (size_t bucket = 0; bucket < kLatencyBuckets; ++bucket) {
    if (latencies[bucket] != 0)
      out << bucket << ' ' << latencies[bucket] << '\n';
  }
  return out ? 0 : 1;
}

// Starts a client process: this program with --client.
pid_t SpawnClient(const Flags& flags, const std::string& snapshot,
                  uint64_t requests, uint64_t seed, const std::string& out) {
  const std::vector<std::string> args = {
      "shared_gate", "--client",
      "--db",        flags.db,
      "--port",      std::to_string(flags.port),
      "--snapshot",  snapshot,
      "--requests",  std::to_string(requests),
      "--seed",      std::to_string(seed),
      "--out",       out};
  std::vector<char*> argv;
  for (const std::string& arg : args)
    argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(),
                  environ) != 0) {
    Usage("cannot start a client process");
  }
  return pid;
}

// Adds a client's result file to the window's counts and latencies.
void AddResult(const std::string& path, GateCounts* counts,
               Latencies* latencies) {
  std::ifstream in(path);
  GateCounts c;
  in >> c.absent_requests >> c.passed_absent >> c.db_reads >>
      c.db_reads_avoided >> c.false_negatives;
  if (!in) Usage("a client wrote no result to " + path);
  counts->Add(c);
  for (size_t bucket, n; in >> bucket >> n;) {
    (*latencies)[std::min(bucket, kLatencyBuckets - 1)] += n;
  }
}

// The latency at `quantile` of the histogram, in microseconds.
uint64_t Percentile(const Latencies& latencies, double quantile) {
  uint64_t total = 0;
  for (uint64_t n : latencies) total += n;
  const uint64_t rank = static_cast<uint64_t>(quantile * total);
  uint64_t seen = 0;
  for (size_t bucket = 0; bucket < latencies.size(); ++bucket) {
    seen += latencies[bucket];
    if (seen > rank) return bucket;
  }
  return latencies.size() - 1;
}

int RunService(const Flags& flags) {
  catalogue::Catalogue items(flags.db, flags.items);
  rdb::DB* db = &items.db();

  // The gate, loaded from the database as a restarted service would:
  // 12-bit fingerprints in 4-slot buckets, growing with the catalogue.
  catalogue::RespClient gate(flags.port);
  gate.Command({"DEL", kGate});
  gate.Command({"CF.RESERVE", kGate, std::to_string(flags.items), "BUCKETSIZE",
                "4", "BITS", "12", "EXPANSION", "1"});
  {
    std::unique_ptr<rdb::Iterator> it(db->NewIterator(rdb::ReadOptions()));
    std::vector<std::string> batch = {"CF.INSERT", kGate, "ITEMS"};
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      batch.push_back(it->key().ToString());
      if (batch.size() == 1003) {
        gate.Command(batch);
        batch.resize(3);
      }
    }
    Check(it->status(), "scan");
    if (batch.size() > 3) gate.Command(batch);
  }

  FILE* csv = flags.csv.empty() ? nullptr : std::fopen(flags.csv.c_str(), "w");
  if (!flags.csv.empty() && csv == nullptr) Usage("cannot write " + flags.csv);
  if (csv != nullptr) {
    std::fprintf(csv,
                 "window,gate,items,false_positive_rate,db_reads,"
                 "db_reads_avoided,false_negatives,memory_bytes,"
                 "gate_p50_us,gate_p99_us\n");
  }
  std::printf("%-6s %-15s %9s %9s %10s %10s %6s %10s %8s %8s\n", "window",
              "gate", "items", "fpr", "db_reads", "avoided", "fn", "memory_KiB",
              "p50_us", "p99_us");
  const uint64_t additions = flags.items / 5;
  const uint64_t deletions = flags.items / 20;
  std::mt19937_64 rng(42);
  GateCounts totals;
  Latencies all_latencies(kLatencyBuckets, 0);
  const uint64_t per_window = flags.requests / flags.windows;
  const std::string snapshot = flags.db + ".snapshot";
  for (uint64_t window = 0; window < flags.windows; ++window) {
    for (uint64_t i = 0; i < additions / flags.windows; ++i) {
      gate.Command({"CF.ADD", kGate, ItemKey(items.Add())});
    }
    for (uint64_t i = 0; i < deletions / flags.windows; ++i) {
      gate.Command({"CF.DEL", kGate, ItemKey(items.DeleteOne(rng))});
    }
    Check(db->Flush(rdb::FlushOptions()), "flush");
    WriteSnapshot(snapshot, items.live(), items.deleted());

    std::vector<pid_t> clients;
    std::vector<std::string> outs;
    for (uint64_t c = 0; c < flags.clients; ++c) {
      outs.push_back(flags.db + ".client-" + std::to_string(c));
      clients.push_back(SpawnClient(flags, snapshot, per_window / flags.clients,
                                    window * 1000 + c, outs.back()));
    }
    bool failed = false;
    for (pid_t pid : clients) {
      int status = 0;
      failed |= waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
                WEXITSTATUS(status) != 0;
    }
    if (failed) {
      std::fprintf(stderr, "shared_gate: a client process failed\n");
      return 1;
    }
    GateCounts counts;
    Latencies latencies(kLatencyBuckets, 0);
    for (const std::string& out : outs) AddResult(out, &counts, &latencies);
    const double fpr = counts.absent_requests == 0
                           ? 0.0
                           : static_cast<double>(counts.passed_absent) /
                                 counts.absent_requests;
    const long long memory = gate.Command({"MEMORY", "USAGE", kGate}).integer;
    const uint64_t p50 = Percentile(latencies, 0.5);
    const uint64_t p99 = Percentile(latencies, 0.99);
    std::printf("%-6" PRIu64 " %-15s %9zu %9.5f %10" PRIu64 " %10" PRIu64
                " %6" PRIu64 " %10.1f %8" PRIu64 " %8" PRIu64 "\n",
                window, "shared_cf", items.live().size(), fpr, counts.db_reads,
                counts.db_reads_avoided, counts.false_negatives,
                memory / 1024.0, p50, p99);
    if (csv != nullptr) {
      std::fprintf(csv,
                   "%" PRIu64 ",shared_cf,%zu,%.6f,%" PRIu64 ",%" PRIu64
                   ",%" PRIu64 ",%lld,%" PRIu64 ",%" PRIu64 "\n",
                   window, items.live().size(), fpr, counts.db_reads,
                   counts.db_reads_avoided, counts.false_negatives, memory, p50,
                   p99);
    }
    totals.Add(counts);
    for (size_t b = 0; b < kLatencyBuckets; ++b)
      all_latencies[b] += latencies[b];
  }
  if (csv != nullptr) std::fclose(csv);
  std::printf("\nover the run (%" PRIu64 " requests from %" PRIu64
              " client processes): fpr %.5f, db_reads %" PRIu64
              ", avoided %" PRIu64 ", false negatives %" PRIu64
              ", gate check p50 %" PRIu64 " us, p99 %" PRIu64 " us\n",
              per_window / flags.clients * flags.clients * flags.windows,
              flags.clients,
              static_cast<double>(totals.passed_absent) /
                  std::max<uint64_t>(1, totals.absent_requests),
              totals.db_reads, totals.db_reads_avoided, totals.false_negatives,
              Percentile(all_latencies, 0.5), Percentile(all_latencies, 0.99));
  if (totals.false_negatives != 0) {
    std::fprintf(stderr,
                 "shared_gate: the gate turned away an existing ID (a false "
                 "negative)\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  try {
    return flags.client ? RunClient(flags) : RunService(flags);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shared_gate: %s\n", e.what());
    return 1;
  }
}
