// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The thread-safe dynamic filter: CuckooFilter shards, each written under
// its own lock, read without taking any lock, and a reader protocol that
// keeps lookups off shared cache lines.
//
// Design
// ------
// A reader-writer lock around one filter makes every lookup write the lock's
// cache line, so two threads looking up keys pass that line between their
// cores on every call, and the second thread adds little. Here:
//
//   * The filter is split into shards, independent CuckooFilters; a key
//     belongs to the shard picked by bits of its hash that the shard's own
//     bucket and fingerprint do not use. An insert or erase locks only its
//     shard (its kick-out walk, and a growth, stay inside that shard), so
//     writers of different shards run in parallel.
//   * A lookup takes no lock. It announces itself in a reader slot (one
//     cache line per slot, written only by the threads mapped to it; more
//     threads than slots share them), checks that no writer is inside its
//     shard, reads, and leaves: the slot counts the readers inside it. A
//     writer raises its shard's flag, then waits until no slot has a reader
//     inside; a reader that arrives later sees the flag, leaves, and waits
//     outside for the writer to finish, so each slot empties soon. The
//     count and the flag are sequentially consistent against each other
//     (Dekker's pattern), so either the writer sees the reader or the reader
//     sees the writer. Readers write only their own slot; the flags are
//     read-mostly lines. The two read-modify-writes of a lookup are full
//     barriers on x86 and cost a single lookup its overlap with the next
//     one; ContainsBatch pays them once per kProbeChunk (32) keys.
//   * A batched lookup spends little on each key's shard. The shards made
//     together share one mapping of keys to buckets, and a probe record per
//     shard holds its table's bytes when its keys map by that shared
//     mapping with nothing in its stash, else null (its writer updates it
//     before lowering the flag). For a shard with bytes the batch locates
//     the key with the shared mapping and probes them, reading nothing else
//     of the shard; for any other it asks the shard's filter. And writers
//     also count themselves in one filter-wide counter: a batch that finds
//     it 0 when it announces itself reads every shard without testing their
//     flags, so that a key costs its shard's index and record and no more.
//     Every write changes the counter's line, so batches that overlap
//     frequent writes pay a miss on it for each chunk. The null records are
//     counted too: while there are none, which is the rule (a stash holds
//     keys only near a full shard), a batch takes each record as bytes
//     with no test. With the default shard count, a power of two compiled
//     into the batch's loops, a key's shard index is one shift.
//
// Memory ordering
// ---------------
// The operations, for one shard, its writer W and a reader R mapped to
// slot s:
//   R1  R: s.inside.fetch_add(1, seq_cst)         enter
//   R2  R: shard.writing.load(seq_cst)            false: go on; true: R4, R5
//   R3  R: reads the shard's filter and probe record (plain reads); a
//          batch after R2', the count of null records too (relaxed)
//   R4  R: s.inside.fetch_sub(1, release)         leave
//   R5  R: shard.writing.load(acquire) until false, then again from R1
//   W1  W: locks shard.mutex (writers of a shard one at a time)
//   W2  W: shard.writing.store(true, seq_cst); writers.fetch_add(1, seq_cst)
//   W3  W: s.inside.load(seq_cst), for each slot, until it reads 0
//   W4  W: writes the shard's filter, then its probe record (plain writes)
//          and, when the record turns null or back, the count of null
//          records (relaxed: writers of other shards update it too)
//   W5  W: writers.fetch_sub(1, release); shard.writing.store(false,
//          release); unlocks the mutex
// A batch may replace R2 by one R2' after R1 for all its keys:
//   R2' R: writers.load(seq_cst)                  0: R3 for any shard;
//                                                 else R2 for each key
// Claim: R3 never overlaps W4; each happens before the other. R1, R2, W2
// and W3 are seq_cst, so they take places in one total order S consistent
// with each thread's program order.
//   * If R2 reads false from the W5 of W (or of a later writer), R2, being
//     seq_cst and so acquire, synchronizes with that release store: W4
//     happens before R3.
//   * Otherwise R2 reads the initial false or a writer's W5 from before W2,
//     so R2 precedes W2 in S; then R1 precedes W's first W3 load of slot s
//     in S, and that load, like every later one, reads R1's increment or a
//     later modification of s.inside. While R4 is not among them the count
//     is at least 1 (each reader's decrement follows its own increment in
//     the modification order, whichever threads share the slot), so W3
//     reads 0 only from a modification that follows R4. All modifications
//     of s.inside are read-modify-writes, so they continue the release
//     sequence headed by R4, and W3 synchronizes with R4: R3 happens before
//     W4.
//   * If R2 reads true, R does not read the filter; R4 and R5 only wait.
// R2' reading 0 stands for R2 reading false in every shard. Say R2' reads
// from the modification M of writers. Either W's increment precedes M in
// writers' modification order: then so does W's decrement (a writer's
// decrement follows its own increment, and a count of 0 at M pairs every
// increment before M with a decrement before M), M continues the release
// sequence of that decrement, and R2' synchronizes with it: W4 happens
// before R3, as in the first case. Or the increment follows M: then R2'
// precedes it in S, so R1 precedes W's first W3 load of slot s in S, and
// R3 happens before W4, as in the second case. So the count of null
// records that such a batch reads is that of the records it reads.
// Writers of a shard are ordered by its mutex (W1 after the previous
// writer's unlock), so each sees all the writes before it. A count of the
// readers inside, rather than of entries and exits compared at W3, is what
// keeps this true for threads sharing a slot: a second thread entering
// after W3 and leaving at once must not stand for the first, still inside.
// The price: readers of other shards keep entering a writer's slots, so
// with many threads per slot the writer waits until their lookups happen
// not to overlap, typically microseconds.
//
// Guarantee: operations are linearizable. After Insert returns kOk, every
// lookup that starts later, in any thread, finds the key (until it is
// erased). Size(), Info() and Serialize() see each shard at one instant,
// the shards one after another.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuckoo/dynamic_filter_format.h"

namespace cuckoo {

class ConcurrentCuckooFilter {
 public:
  static constexpr uint32_t kDefaultShards = 64;

  // A filter of about num_buckets buckets in all, in `shards` shards of
  // num_buckets / shards buckets each (at least 2), with the options of
  // each shard (an expansion grows each shard on its own). Throws as
  // CuckooFilter does, and std::invalid_argument for 0 or over 2^16 shards.
  explicit ConcurrentCuckooFilter(uint64_t num_buckets,
                                  const CuckooFilterOptions& options = {},
                                  uint32_t shards = kDefaultShards)
      : shards_(CheckedShardCount(shards)) {
    const uint64_t per_shard = (num_buckets + shards - 1) / shards;
    for (uint32_t i = 0; i < shards; ++i) {
      CuckooFilterOptions shard_options = options;
      shard_options.seed = options.seed + i;
      shards_[i].filter.emplace(per_shard, shard_options);
    }
    ChooseBatchLookup();
  }

  InsertResult Insert(uint64_t hash) {
    return Write(hash,
                 [hash](CuckooFilter& filter) { return filter.Insert(hash); });
  }
  // CuckooFilter::InsertIfAbsent, with its false-positive caveat.
  InsertResult InsertIfAbsent(uint64_t hash) {
    return Write(hash, [hash](CuckooFilter& filter) {
      return filter.InsertIfAbsent(hash);
    });
  }
  bool Erase(uint64_t hash) {
    return Write(hash,
                 [hash](CuckooFilter& filter) { return filter.Erase(hash); });
  }
  void Clear() {
    for (Shard& shard : shards_) {
      WriteShard(shard, [](CuckooFilter& filter) {
        filter.Clear();
        return true;
      });
    }
  }

  bool Contains(uint64_t hash) const {
    return Read(ShardOf(hash), [hash](const CuckooFilter& filter) {
      return filter.Contains(hash);
    });
  }
  // Lookups of many keys, as one filter's ContainsBatch: for a chunk of
  // kProbeChunk keys, both buckets of each are located and prefetched in
  // their shards before any is probed, so that the chunk's cache misses
  // overlap, and one announcement in the reader slot covers the chunk: the
  // slot's atomic read-modify-writes (full barriers, which would keep
  // consecutive lookups' misses apart) are paid once per chunk. Keys of a
  // shard that a writer holds are retried after it.
  void ContainsBatch(const uint64_t* hashes, size_t count, bool* out) const {
    batch_lookup_(*this, hashes, count, out);
  }
  uint32_t Count(uint64_t hash) const {
    return Read(ShardOf(hash), [hash](const CuckooFilter& filter) {
      return filter.Count(hash);
    });
  }

  uint32_t NumShards() const { return static_cast<uint32_t>(shards_.size()); }
  // The hash function the shards were filled with (CuckooFilterOptions).
  KeyHasher hasher() const {
    return Read(shards_[0],
                [](const CuckooFilter& f) { return f.options().hasher; });
  }
  uint64_t Size() const {
    uint64_t size = 0;
    for (const Shard& shard : shards_) {
      size += Read(shard, [](const CuckooFilter& f) { return f.Size(); });
    }
    return size;
  }

  // The shards' CF.INFO fields added up; num_growths is the most any shard
  // has grown.
  CuckooFilterInfo Info() const {
    CuckooFilterInfo total;
    for (const Shard& shard : shards_) {
      const CuckooFilterInfo info =
          Read(shard, [](const CuckooFilter& f) { return f.Info(); });
      total.size_in_bytes += info.size_in_bytes;
      total.num_buckets += info.num_buckets;
      total.num_growths = std::max(total.num_growths, info.num_growths);
      total.items_stored += info.items_stored;
      total.items_deleted += info.items_deleted;
      total.bucket_size = info.bucket_size;
      total.expansion = info.expansion;
      total.max_iterations = info.max_iterations;
    }
    return total;
  }

  // The sharded form of dynamic_filter_format.h: each shard's serialized
  // filter, the shards one after the other.
  std::vector<uint8_t> Serialize() const {
    std::vector<std::vector<uint8_t>> parts;
    parts.reserve(shards_.size());
    for (const Shard& shard : shards_) {
      parts.push_back(Read(shard, [](const CuckooFilter& f) {
        return SerializeCuckooFilter(f);
      }));
    }
    return SerializeShardedFilter(parts);
  }

  // Reads Serialize()'s bytes; nullptr, with *error set, for bytes that are
  // not a valid filter.
  static std::unique_ptr<ConcurrentCuckooFilter> Deserialize(
      const uint8_t* data, size_t size, std::string* error) {
    std::optional<std::vector<CuckooFilter>> shards =
        DeserializeShardedFilter(data, size, error);
    if (!shards) return nullptr;
    std::unique_ptr<ConcurrentCuckooFilter> filter(
        new ConcurrentCuckooFilter(static_cast<uint32_t>(shards->size())));
    for (size_t i = 0; i < shards->size(); ++i) {
      filter->shards_[i].filter.emplace(std::move((*shards)[i]));
    }
    filter->ChooseBatchLookup();
    return filter;
  }

 private:
  static constexpr uint32_t kMaxShards = serialization::kMaxShards;
  static constexpr size_t kReaderSlots = 32;

  struct alignas(64) Shard {
    std::atomic<bool> writing{false};
    std::mutex mutex;  // held by the shard's writer
    std::optional<CuckooFilter> filter;
  };
  // The readers inside a shard's filter, of the threads mapped to the slot.
  struct alignas(64) ReaderSlot {
    std::atomic<uint64_t> inside{0};
  };

  explicit ConcurrentCuckooFilter(uint32_t shards) : shards_(shards) {}

  using BatchLookup = void (*)(const ConcurrentCuckooFilter&, const uint64_t*,
                               size_t, bool*);

  // Chooses ContainsBatchWith for the FilterCore of shard 0's table type,
  // which every shard has until one grows, with shard 0's mapping as the
  // shared one, and sets every shard's probe record. For a filter not yet
  // shared with other threads.
  void ChooseBatchLookup() {
    const CuckooFilter& first = *shards_[0].filter;
    const bool default_shards = NumShards() == kDefaultShards;
    first.VisitOperations([this, default_shards](auto ops) {
      using Ops = decltype(ops);
      batch_lookup_ = &ContainsBatchWith<Ops, kAnyShardCount>;
      if constexpr (kSharedMapping<Ops>) {
        if (default_shards) {
          batch_lookup_ = &ContainsBatchWith<Ops, kDefaultShards>;
        }
      }
      probes_directly_ = &ProbesDirectly<Ops>;
    });
    shared_mapping_ = first.hashing().base();
    direct_tables_.assign(shards_.size(), nullptr);
    indirect_shards_.store(NumShards(), std::memory_order_relaxed);
    for (size_t index = 0; index < shards_.size(); ++index) {
      UpdateProbeRecord(index);
    }
  }

  // Whether a batch compiled for Ops can locate keys with one mapping for
  // every shard and probe a table from its bytes alone: Ops maps keys with
  // a fixed size, and its codec is compiled.
  template <typename Ops>
  static constexpr bool kSharedMapping =
      std::is_same_v<typename Ops::MappingType,
                     FixedSizeMapping<typename Ops::TableType>> &&
      !std::is_same_v<typename Ops::TableType::CodecType, AnyBucketCodec>;

  // Whether a batch compiled for Ops may probe `filter` directly: it has
  // Ops's table type and the shared mapping (a fixed-size mapping is its
  // bucket count), and its stash, which a direct probe does not read, is
  // empty.
  template <typename Ops>
  static bool ProbesDirectly(const CuckooFilter& filter,
                             const CuckooHashing& shared) {
    if constexpr (kSharedMapping<Ops>) {
      return filter.Uses<Ops>() && filter.stash().empty() &&
             filter.hashing().base().num_buckets() == shared.num_buckets();
    } else {
      return false;
    }
  }

  // Written only when it changes: records of eight shards share a cache
  // line, which every batch reads. So is the count of null records.
  void UpdateProbeRecord(size_t index) {
    const CuckooFilter& filter = *shards_[index].filter;
    const uint8_t* table = probes_directly_(filter, shared_mapping_)
                               ? filter.table().view().data()
                               : nullptr;
    const uint8_t* const before = direct_tables_[index];
    if (before == table) return;
    direct_tables_[index] = table;
    if (before == nullptr) {
      indirect_shards_.fetch_sub(1, std::memory_order_relaxed);
    } else if (table == nullptr) {
      indirect_shards_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  // The chunks of ProbeChunk: with writers counted (R2 for each key), and
  // with none (a chunk with none and a record with bytes for every shard
  // is ProbeAllDirect's).
  enum class Chunk { kTestFlags, kNoWriter };
  // ContainsBatchWith's kShards when the shard count is not compiled in.
  static constexpr uint32_t kAnyShardCount = 0;

  // ContainsBatch, with the operations of the shards that use Ops compiled
  // into the loops, and with kShards, when it is not kAnyShardCount, as the
  // filter's shard count (a key's shard is then a shift of its mix: see
  // ShardIndex). Each chunk of keys is answered within one announcement
  // (R1 to R4 of "Memory ordering"): when no writer is counted (R2'), in
  // one pass with no flag tested, and with no record tested either while
  // every shard has bytes; else each key once its shard's flag reads false
  // (R2), keys of a shard that a writer holds after it.
  template <typename Ops, uint32_t kShards>
  static void ContainsBatchWith(const ConcurrentCuckooFilter& self,
                                const uint64_t* hashes, size_t count,
                                bool* out) {
    static_assert(kProbeChunk < 64);
    ReaderSlot& slot = self.MySlot();
    for (size_t begin = 0; begin < count; begin += kProbeChunk) {
      const size_t n = std::min(kProbeChunk, count - begin);
      uint64_t pending = (uint64_t{1} << n) - 1;
      for (int spins = 0; pending != 0; Pause(&spins)) {
        slot.inside.fetch_add(1, std::memory_order_seq_cst);
        if (self.writers_.load(std::memory_order_seq_cst) != 0) {
          pending = ProbeChunk<Ops, kShards, Chunk::kTestFlags>(
              self, hashes + begin, n, pending, out + begin);
        } else {
          pending = ProbeChunkWithoutWriters<Ops, kShards>(
              self, hashes + begin, n, pending, out + begin);
        }
        slot.inside.fetch_sub(1, std::memory_order_release);
      }
    }
  }

  // ProbeChunk when no writer is counted: the null records are counted
  // with the records (W4), so the count read after R2' is as current as
  // the records are.
  template <typename Ops, uint32_t kShards>
  CUCKOO_ALWAYS_INLINE static uint64_t ProbeChunkWithoutWriters(
      const ConcurrentCuckooFilter& self, const uint64_t* hashes, size_t n,
      uint64_t pending, bool* out) {
    if constexpr (kSharedMapping<Ops>) {
      if (self.indirect_shards_.load(std::memory_order_relaxed) == 0) {
        return ProbeAllDirect<Ops, kShards>(self, hashes, n, out);
      }
    }
    return ProbeChunk<Ops, kShards, Chunk::kNoWriter>(self, hashes, n, pending,
                                                      out);
  }

  // ProbeChunk when no writer is counted, with a shared mapping and a
  // record with bytes for every shard: each record is taken as bytes with
  // no test. The keys' records are read in a loop of their own, before the
  // loop that locates and prefetches, which then has the registers for the
  // mapping's constants. Answers all n keys.
  template <typename Ops, uint32_t kShards>
  CUCKOO_ALWAYS_INLINE static uint64_t ProbeAllDirect(
      const ConcurrentCuckooFilter& self, const uint64_t* hashes, size_t n,
      bool* out) {
    static_assert(kSharedMapping<Ops>);
    using Table = typename Ops::TableType;
    const CuckooHashing shared = self.shared_mapping_;
    const uint8_t* const* const direct_tables = self.direct_tables_.data();
    const uint32_t num_shards =
        kShards == kAnyShardCount ? self.NumShards() : kShards;
    const uint8_t* tables[kProbeChunk];
    KeyPosition positions[kProbeChunk];
    for (size_t k = 0; k < n; ++k) {
      tables[k] = direct_tables[ShardIndex(hashes[k], num_shards)];
    }
    for (size_t k = 0; k < n; ++k) {
      positions[k] = Table::Locate(shared, hashes[k]);
      Table::PrefetchInBytes(tables[k], positions[k]);
    }
    for (size_t k = 0; k < n; ++k) {
      out[k] = Table::ContainsInBytes(tables[k], positions[k]);
    }
    return 0;
  }

  // Answers the keys of `pending` among hashes[0, n) into out, within an
  // announcement, and returns those left pending: with kTestFlags, the
  // keys of shards whose flag is raised; without, when no writer is
  // counted, none (it answers all n keys). Both buckets of every key are
  // located and prefetched before any is probed.
  // Plain loops over the chunk rather than over the bits that are set:
  // almost always every bit is, and each key's work then depends on no
  // other key's.
  //
  // With a shared mapping, a shard whose record has bytes is probed
  // directly, and the keys of the others (a shard with a stash) get their
  // shard's Contains after the chunk. Otherwise a key of a shard that uses
  // Ops goes through that shard's filter, and a key of a shard of another
  // type (one that grew alone) gets that shard's Contains.
  template <typename Ops, uint32_t kShards, Chunk kChunk>
  CUCKOO_ALWAYS_INLINE static uint64_t ProbeChunk(
      const ConcurrentCuckooFilter& self, const uint64_t* hashes, size_t n,
      uint64_t pending, bool* out) {
    constexpr bool kTestFlags = kChunk == Chunk::kTestFlags;
    using Table = typename Ops::TableType;
    // Copies that stay in registers across the flags' seq_cst loads; all
    // are fixed when the filter is made.
    const CuckooHashing shared = self.shared_mapping_;
    const Shard* const shards = self.shards_.data();
    const uint8_t* const* const direct_tables = self.direct_tables_.data();
    const uint32_t num_shards =
        kShards == kAnyShardCount ? self.NumShards() : kShards;
    // Key k is probed directly at positions[k] of tables[k] (a shared
    // mapping) or of filters[k] (otherwise). With a shared mapping, a key
    // that its shard's Contains answers after the chunk is probed in a
    // stand-in, the first bucket of kNoBuckets, which holds no fingerprint:
    // with no flag tested, every key is probed with no test. A null pointer
    // marks a key not probed at all: without a shared mapping, one that its
    // shard's Contains answers; with kTestFlags, one left pending or
    // answered in an earlier pass, whose answer must stay.
    const FilterState* filters[kProbeChunk];
    const uint8_t* tables[kProbeChunk];
    KeyPosition positions[kProbeChunk];
    uint64_t others = 0;  // for their shard's Contains
    const auto not_probed = [&](size_t k) {
      tables[k] = nullptr;
      filters[k] = nullptr;
    };
    for (size_t k = 0; k < n; ++k) {
      const uint64_t bit = uint64_t{1} << k;
      if (kTestFlags && (pending & bit) == 0) {
        not_probed(k);
        continue;
      }
      const uint64_t hash = hashes[k];
      const uint32_t index = ShardIndex(hash, num_shards);
      if (kTestFlags) {
        if (shards[index].writing.load(std::memory_order_seq_cst)) {
          not_probed(k);
          continue;
        }
        pending &= ~bit;
      }
      if constexpr (kSharedMapping<Ops>) {
        const uint8_t* const table = direct_tables[index];
        if (table == nullptr) {
          others |= bit;
          tables[k] = kNoBuckets;
          positions[k] = KeyPosition{0, 0, 1};
          continue;
        }
        tables[k] = table;
        positions[k] = Table::Locate(shared, hash);
        Table::PrefetchInBytes(table, positions[k]);
      } else {
        const CuckooFilter& filter = *shards[index].filter;
        if (!filter.Uses<Ops>()) {
          others |= bit;
          not_probed(k);
          continue;
        }
        filters[k] = &filter.state();
        positions[k] = Ops::Locate(filter.state(), hash);
        filter.table().view().Prefetch(positions[k]);
      }
    }
    for (size_t k = 0; k < n; ++k) {
      if constexpr (kSharedMapping<Ops>) {
        if (!kTestFlags || tables[k] != nullptr) {
          out[k] = Table::ContainsInBytes(tables[k], positions[k]);
        }
      } else {
        if (filters[k] != nullptr) {
          out[k] = Ops::ContainsAt(*filters[k], positions[k]);
        }
      }
    }
    for (; others != 0; others &= others - 1) {
      const size_t k = static_cast<size_t>(__builtin_ctzll(others));
      out[k] =
          shards[ShardIndex(hashes[k], num_shards)].filter->Contains(hashes[k]);
    }
    return kTestFlags ? pending : 0;
  }

  static uint32_t CheckedShardCount(uint32_t shards) {
    if (shards == 0 || shards > kMaxShards) {
      throw std::invalid_argument(
          "concurrent cuckoo filter: " + std::to_string(shards) +
          " shards is not in [1, 65536]");
    }
    return shards;
  }

  // A shard from bits of the hash no shard uses for itself: the shard's
  // bucket and fingerprint come from the hash's high bits of each half and
  // its growth bits from the top of another mix, so this takes the high
  // bits of a third, independent mix. With 2^k shards, FastRange32 keeps
  // the mix's top k bits: a constant num_shards of 2^k (ContainsBatchWith's
  // kShards) compiles to one shift.
  CUCKOO_ALWAYS_INLINE static uint32_t ShardIndex(uint64_t hash,
                                                  uint32_t num_shards) {
    const uint64_t mixed = (hash ^ (hash >> 33)) * 0xFF51AFD7ED558CCDull;
    return FastRange32(static_cast<uint32_t>(mixed >> 32), num_shards);
  }
  const Shard& ShardOf(uint64_t hash) const {
    return shards_[ShardIndex(hash, NumShards())];
  }
  Shard& ShardOf(uint64_t hash) {
    return const_cast<Shard&>(std::as_const(*this).ShardOf(hash));
  }

  ReaderSlot& MySlot() const {
    static std::atomic<uint32_t> next_thread{0};
    thread_local const uint32_t thread_index = next_thread.fetch_add(1);
    return slots_[thread_index % kReaderSlots];
  }

  // Waits a little: spinning first (a reader or an insert is done in well
  // under a microsecond), then giving the core away (a growth is not).
  static void Pause(int* spins) {
    if (++*spins > 256) std::this_thread::yield();
  }

  template <typename Op>
  std::invoke_result_t<Op&, const CuckooFilter&> Read(const Shard& shard,
                                                      Op&& op) const {
    ReaderSlot& slot = MySlot();
    for (;;) {
      slot.inside.fetch_add(1, std::memory_order_seq_cst);
      if (!shard.writing.load(std::memory_order_seq_cst)) {
        auto result = op(*shard.filter);
        slot.inside.fetch_sub(1, std::memory_order_release);
        return result;
      }
      slot.inside.fetch_sub(1, std::memory_order_release);
      for (int spins = 0; shard.writing.load(std::memory_order_acquire);) {
        Pause(&spins);
      }
    }
  }

  template <typename Op>
  std::invoke_result_t<Op&, CuckooFilter&> Write(uint64_t hash, Op&& op) {
    return WriteShard(ShardOf(hash), std::forward<Op>(op));
  }

  template <typename Op>
  std::invoke_result_t<Op&, CuckooFilter&> WriteShard(Shard& shard, Op&& op) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    shard.writing.store(true, std::memory_order_seq_cst);
    writers_.fetch_add(1, std::memory_order_seq_cst);
    // Wait out the readers that entered before the flag went up; those that
    // enter later see it and leave (see "Memory ordering").
    for (ReaderSlot& slot : slots_) {
      for (int spins = 0; slot.inside.load(std::memory_order_seq_cst) != 0;) {
        Pause(&spins);
      }
    }
    // Whatever op did, even if it threw, the record is brought up to date
    // before the flag is lowered.
    struct Lower {
      ConcurrentCuckooFilter& self;
      Shard& shard;
      ~Lower() {
        self.UpdateProbeRecord(
            static_cast<size_t>(&shard - self.shards_.data()));
        self.writers_.fetch_sub(1, std::memory_order_release);
        shard.writing.store(false, std::memory_order_release);
      }
    } lower{*this, shard};
    return op(*shard.filter);
  }

  std::vector<Shard> shards_;
  mutable ReaderSlot slots_[kReaderSlots];
  // The writers between W2 and W5 of "Memory ordering", in any shard. It
  // starts a cache line that writers write and batches read, as they read
  // the fields after it, which do not change once the filter is made
  // except the count of null records, which changes only when a shard's
  // stash starts or stops holding keys.
  alignas(64) std::atomic<uint64_t> writers_{0};
  // The shards' probe records: shard i's table bytes when a batch may probe
  // them directly (ProbesDirectly), else null. Written with the shard's
  // filter and read as it is (W4 and R3 of "Memory ordering").
  std::vector<const uint8_t*> direct_tables_;
  // The null records among direct_tables_, updated with them (W4) and
  // read after R2' (ProbeChunkWithoutWriters). An atomic because writers
  // of different shards update it at once.
  std::atomic<uint32_t> indirect_shards_{0};
  // ContainsBatch's loops, compiled for the shards' table type, the test
  // of a shard for its direct probe, and the mapping shared by the shards
  // made together (ChooseBatchLookup).
  BatchLookup batch_lookup_ = nullptr;
  // The stand-in table of ProbeChunk: its first bucket, of any compiled
  // codec, reads as empty.
  alignas(8) static constexpr uint8_t kNoBuckets[16] = {};
  bool (*probes_directly_)(const CuckooFilter&, const CuckooHashing&) = nullptr;
  CuckooHashing shared_mapping_{2, kMinFingerprintBits};
};

}  // namespace cuckoo
