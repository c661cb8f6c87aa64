// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The RocksDB glue: CuckooFilterPolicy, its builder (key hashes in, one
// statically built cuckoo table per filter out) and reader (zero-copy probes
// of a filter block), and the ObjectLibrary registrar.
#include "cuckoo_filter_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <new>
#include <optional>
#include <unordered_map>
#include <vector>

#if defined(__linux__) && __has_include(<malloc.h>)
#include <malloc.h>
#define ROCKSDB_CUCKOO_HAS_MALLOC_USABLE_SIZE 1
#endif

#include "cache/cache_reservation_manager.h"
#include "cuckoo/hashing.h"
#include "cuckoo/sizing.h"
#include "cuckoo/table_types.h"
#include "cuckoo_filter_block.h"
#include "rocksdb/env.h"
#include "rocksdb/utilities/options_type.h"
#include "rocksdb_cuckoo.h"
#include "rocksdb_interfaces.h"
#include "table/block_based/filter_policy_internal.h"

namespace rocksdb_cuckoo {

using ROCKSDB_NAMESPACE::CacheEntryRole;
using ROCKSDB_NAMESPACE::CacheReservationManager;
using ROCKSDB_NAMESPACE::CacheReservationManagerImpl;
using ROCKSDB_NAMESPACE::FilterBitsBuilder;
using ROCKSDB_NAMESPACE::FilterBitsReader;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

namespace {

// optimize_filters_for_memory
// ---------------------------
// RocksDB holds a filter block in an allocation of the block plus its 5-byte
// block trailer, and an allocator rounds every request up to one of its size
// classes: jemalloc's are up to a quarter apart at the sizes of filters, so a
// filter sized to its budget leaves up to a fifth of its allocation unused.
// With the option set, RocksDB's own builders size each filter to what the
// allocator really gives, and so does this one, with the format's freedom to
// take any even bucket count:
//   1. The planned table (the policy's layout at its load) sets the target
//      false-positive rate of this filter.
//   2. It asks the allocator what a request of a block plus the trailer
//      really gives (malloc_usable_size) and, unless that is more than 4/3 of
//      the request, spends the extra bytes: the most accurate table that fits
//      them (cuckoo::ChooseForTableBytes), which may have another layout.
//   3. The policy keeps an aggregate balance, the sum over its filters so far
//      of (expected FPR - target FPR), in units of 2^-32. When it is negative
//      (the filters so far are more accurate than their targets), the builder
//      tries requests of 3/4, 13/16, 7/8 and 15/16 of the planned block, each
//      filled as in step 2, and takes the first whose FPR stays within the
//      target plus that surplus, so that the average rate stays on target;
//      otherwise it fills the planned block's allocation.
//   4. The balance takes the built table's expected FPR.
// Without malloc_usable_size, step 2 fills nothing and only step 3 acts.
constexpr size_t kBlockTrailerBytes = 5;  // BlockBasedTable::kBlockTrailerSize

// The bytes an allocation of `bytes` really gives, or `bytes` where the
// allocator cannot say (or cannot allocate them now).
size_t UsableAllocationBytes(size_t bytes) noexcept {
#ifdef ROCKSDB_CUCKOO_HAS_MALLOC_USABLE_SIZE
  try {
    // Allocated as RocksDB allocates blocks, so that it comes from the same
    // allocator, and freed at once: the same request gets the same size
    // class again when the block is written.
    const std::unique_ptr<char[]> probe(new char[bytes]);
    return malloc_usable_size(probe.get());
  } catch (const std::bad_alloc&) {
    return bytes;
  }
#else
  return bytes;
#endif
}

// The FPR balance in the units of RocksDB's own builders: 2^-32.
int64_t BalanceUnits(double fpr_difference) {
  return static_cast<int64_t>(fpr_difference * 4294967296.0);
}

// The most accurate table for `entries` entries in what a request for a
// `block_bytes`-byte block and its trailer really gives, unless the
// allocator gives over 4/3 of the request (not worth filling, as in
// RocksDB); nothing when no table fits.
std::optional<cuckoo::TableGeometry> FillAllocation(uint64_t block_bytes,
                                                    uint64_t entries) {
  const uint64_t requested = block_bytes + kBlockTrailerBytes;
  uint64_t usable = UsableAllocationBytes(requested);
  if (usable < requested || usable - usable / 4 > requested) {
    usable = requested;
  }
  return cuckoo::ChooseForTableBytes(
      BlockDataBytes(usable - kBlockTrailerBytes), entries);
}

// Steps 1 to 3 above for `entries` (> 0) entries: the geometry to build, and
// the target FPR the balance is kept against. A smaller candidate is judged
// by the rate of the table that fills its allocation, which is what is
// built: under jemalloc the size class below the planned one, filled, is
// the step that a cuckoo table (whose rate jumps when its load passes what
// the build sustains) can take.
cuckoo::TableGeometry ChooseRoundedGeometry(const cuckoo::FilterConfig& config,
                                            uint64_t entries, int64_t balance,
                                            double* target_fpr) {
  const cuckoo::TableGeometry planned = PlannedGeometry(config, entries);
  *target_fpr = planned.expected_fpr;
  const uint64_t planned_bytes =
      TableBlockBytes(planned.layout, planned.num_buckets);
  if (balance < 0) {
    const double allowed_fpr = planned.expected_fpr - balance / 4294967296.0;
    constexpr uint64_t kSmallerSixteenths[] = {12, 13, 14, 15};
    for (uint64_t sixteenths : kSmallerSixteenths) {
      const std::optional<cuckoo::TableGeometry> smaller =
          FillAllocation(planned_bytes * sixteenths / 16, entries);
      if (smaller && smaller->expected_fpr <= allowed_fpr) return *smaller;
    }
  }
  const std::optional<cuckoo::TableGeometry> filled =
      FillAllocation(planned_bytes, entries);
  return filled && filled->expected_fpr < planned.expected_fpr ? *filled
                                                               : planned;
}

// Never less than the block a rounding builder writes for `entries` entries:
// the planned block plus the trailer, grown by at most 4/3 to the usable
// size, then grown as the static build allows for (kStaticGrowthAllowance
// steps of 1/64 and up to 3 buckets of at most 32 bytes each).
uint64_t MaxRoundedBlockBytes(const cuckoo::FilterConfig& config,
                              uint64_t entries) {
  const uint64_t unrounded = MaxBlockBytes(config, entries);
  if (entries == 0 || unrounded == kBlockHeaderBytes) return unrounded;
  const cuckoo::TableGeometry planned = PlannedGeometry(config, entries);
  const uint64_t requested =
      TableBlockBytes(planned.layout, planned.num_buckets) + kBlockTrailerBytes;
  uint64_t data = BlockDataBytes(requested * 4 / 3 + 1 - kBlockTrailerBytes);
  for (int step = 0; step < cuckoo::kStaticGrowthAllowance; ++step) {
    data += data / 64 + 3 * 32 + 1;
  }
  return std::max(unrounded,
                  kBlockHeaderBytes + data + cuckoo::kTablePaddingBytes);
}

// Charging construction memory to the block cache
// -----------------------------------------------
// With a block cache and CacheEntryRole::kFilterConstruction charged
// (BlockBasedTableOptions::cache_usage_options), a builder reserves what it
// holds in the cache, in the 256 KiB dummy entries of RocksDB's
// CacheReservationManager, as RocksDB's own builders do:
//   - the key hashes: one entry per 32768 hashes, reserved when the count
//     reaches the middle of each such run, released with the hashes, once
//     the placement has read them for the last time (after MaybePostVerify
//     with detect_filter_construct_corruption): those of the hashes that go
//     before the block is allocated go with them (ReleaseHashesFor);
//   - in Finish, before the table is built, the build's working memory
//     (cuckoo::StaticBuildWorkingBytes), released when the build ends;
//   - the block, from just before it is allocated until the builder is
//     destroyed (a partitioned filter's blocks wait in RocksDB until the
//     file is written).
// So the charge follows what the builder holds at each step, and its peak
// is the build's own: the hashes and the working memory, rounded up to
// whole entries.
// The hashes' and the finished block's reservations are best effort, as in
// RocksDB: a full cache does not stop them. A cache with a strict capacity
// that cannot take the build's working memory gets an always-match block
// instead of a table: nothing more is allocated, the flush or compaction
// goes on, and every read stays correct, without this filter. The policy
// counts it among its unbuilt filters and logs the first one.
using FilterConstructionReservations =
    CacheReservationManagerImpl<CacheEntryRole::kFilterConstruction>;
using ReservationHandle =
    std::unique_ptr<CacheReservationManager::CacheReservationHandle>;
constexpr size_t kHashesPerReservation =
    FilterConstructionReservations::GetDummyEntrySize() / sizeof(uint64_t);

// The reservation manager for a builder, or null when the options charge
// nothing.
std::shared_ptr<CacheReservationManager> NewConstructionReservations(
    const ROCKSDB_NAMESPACE::BlockBasedTableOptions& table_options) {
  using Decision = ROCKSDB_NAMESPACE::CacheEntryRoleOptions::Decision;
  const auto& usage = table_options.cache_usage_options;
  const auto overridden =
      usage.options_overrides.find(CacheEntryRole::kFilterConstruction);
  const Decision charged = overridden != usage.options_overrides.end()
                               ? overridden->second.charged
                               : usage.options.charged;
  if (table_options.block_cache == nullptr || charged != Decision::kEnabled) {
    return nullptr;
  }
  return std::make_shared<FilterConstructionReservations>(
      table_options.block_cache);
}

// Hashes of keys added since the last Finish, and the filter built from them.
class CuckooFilterBitsBuilder : public FilterBitsBuilder {
 public:
  CuckooFilterBitsBuilder(
      const cuckoo::FilterConfig& config, bool verify_after_construction,
      ROCKSDB_NAMESPACE::Logger* info_log,
      std::shared_ptr<CuckooFilterPolicy::FallbackCounters> fallbacks,
      std::shared_ptr<std::atomic<int64_t>> rounding_balance,
      std::shared_ptr<CacheReservationManager> reservations,
      BuildFaultHook fault_hook)
      : config_(config),
        verify_after_construction_(verify_after_construction),
        info_log_(info_log),
        fallbacks_(std::move(fallbacks)),
        rounding_balance_(std::move(rounding_balance)),
        reservations_(std::move(reservations)),
        fault_hook_(std::move(fault_hook)) {}

  // The reservations must go before the manager they belong to.
  ~CuckooFilterBitsBuilder() override {
    hash_reservations_.clear();
    verify_reservations_.clear();
    block_reservations_.clear();
  }

  // Keys come in comparator order, with the versions of one key one after
  // another: a key equal to the previous one is not added again.
  void AddKey(const Slice& key) override {
    const uint64_t key_hash = cuckoo::HashKey(key.data(), key.size());
    if (!has_last_key_ || key_hash != last_key_hash_) AddHash(key_hash);
    last_key_hash_ = key_hash;
    has_last_key_ = true;
  }

  // A key and, as its alternate, its prefix, de-duplicated three ways as
  // RocksDB's own builders do: the key against the previous key, the alt
  // against the previous alt, and each against the other, also across
  // adjacent calls, since a whole key can be its own prefix (the partitioned
  // builder calls AddKeyAndAlt(p, p)). A later AddKey is compared with the
  // previous key only. Repeats that get through would share one table entry
  // anyway; de-duplicating here keeps EstimateEntriesAdded, and so the
  // filter's size, to the distinct entries.
  // RocksDB calls it from 9.6; before, it adds keys and prefixes with AddKey.
  void AddKeyAndAlt(const Slice& key,
                    const Slice& alt) ROCKSDB_CUCKOO_ADD_KEY_AND_ALT_OVERRIDE {
    const uint64_t key_hash = cuckoo::HashKey(key.data(), key.size());
    const uint64_t alt_hash = cuckoo::HashKey(alt.data(), alt.size());
    const bool key_repeats_last_key =
        has_last_key_ && key_hash == last_key_hash_;
    const bool key_repeats_last_alt =
        has_last_alt_ && key_hash == last_alt_hash_;
    const bool alt_repeats_last_alt =
        has_last_alt_ && alt_hash == last_alt_hash_;
    const bool alt_repeats_last_key =
        has_last_key_ && alt_hash == last_key_hash_;
    if (!alt_repeats_last_alt && !alt_repeats_last_key &&
        alt_hash != key_hash) {
      AddHash(alt_hash);
    }
    if (!key_repeats_last_key && !key_repeats_last_alt) AddHash(key_hash);
    last_key_hash_ = key_hash;
    has_last_key_ = true;
    last_alt_hash_ = alt_hash;
    has_last_alt_ = true;
  }

  // Entries added since the last Finish, after the de-duplication above:
  // zero exactly when nothing was added.
  size_t EstimateEntriesAdded() override { return hashes_.size(); }

  Slice Finish(std::unique_ptr<const char[]>* buf) override {
    return Finish(buf, nullptr);
  }

  // With detect_filter_construct_corruption, the key hashes are checked
  // against the checksum taken as they arrived once the build has read them
  // for the last time, as RocksDB's own builders do: a hash altered before
  // or during the build (a bit flipped in memory) would have built a filter
  // that misses its key and still passes MaybePostVerify, which probes the
  // same altered hash. A mismatch returns Corruption, which fails the flush
  // or compaction, with an always-match block.
  Slice Finish(std::unique_ptr<const char[]>* buf, Status* status) override {
    // Whatever happens below, the next filter starts from nothing. The
    // hashes stay in hashes_ for the build: moving them out would leave an
    // empty deque behind, which allocates.
    struct StartOver {
      CuckooFilterBitsBuilder* builder;
      ~StartOver() {
        builder->hashes_.clear();
        builder->hash_reservations_.clear();
      }
    } start_over{this};
    std::deque<uint64_t>& hashes = hashes_;
    const uint64_t arrived_checksum = hashes_checksum_;
    hashes_checksum_ = 0;
    has_last_key_ = false;
    has_last_alt_ = false;
    verify_hashes_.clear();
    verify_reservations_.clear();
    if (status != nullptr) *status = Status::OK();

    const size_t entries = hashes.size();
    EncodedBlock block;
    try {
      if (fault_hook_) fault_hook_(BuildStage::kBeforeBuild, &hashes);
      const bool rounded = rounding_balance_ != nullptr && entries > 0;
      const cuckoo::TableGeometry geometry =
          rounded ? ChooseRounded(entries) : PlannedGeometry(config_, entries);
      ReservationHandle working;
      if (!ReserveWorkingMemory(geometry, entries, &working)) {
        return FinishAlwaysMatch(buf);
      }
      std::optional<cuckoo::StaticPlacement> placement =
          rounded ? cuckoo::PlaceStaticWithBuckets(hashes, geometry.layout,
                                                   geometry.num_buckets)
                  : cuckoo::PlaceStatic(hashes, config_.layout,
                                        config_.load_factor);
      if (fault_hook_) fault_hook_(BuildStage::kAfterBuild, &hashes);
      if (verify_after_construction_) {
        uint64_t checksum = 0;
        for (uint64_t hash : hashes) checksum ^= hash;
        if (checksum != arrived_checksum) {
          if (status != nullptr) {
            *status = Status::Corruption(
                "cuckoofilter: the key hashes changed while the filter was "
                "built (checksum mismatch)");
          }
          return FinishAlwaysMatch(buf);
        }
        verify_hashes_.swap(hashes);
        verify_reservations_.swap(hash_reservations_);
      } else {
        // The placement was the hashes' last reader (see ReleaseHashesFor).
        ReleaseHashesFor(kBlockHeaderBytes + placement->table_bytes());
      }
      ReserveFinishedBlock(
          static_cast<size_t>(kBlockHeaderBytes + placement->table_bytes()));
      block = EncodePlacement(*placement);
      hashes.clear();
      hash_reservations_.clear();
      if (rounded) UpdateRoundingBalance(*placement);
      placement.reset();
    } catch (const std::exception& e) {
      // Too many keys for one table (over 2^32 buckets) or out of memory: an
      // always-match filter keeps every read correct.
      fallbacks_->unbuilt_filters.fetch_add(1, std::memory_order_relaxed);
      if (info_log_ != nullptr) {
        ROCKSDB_NAMESPACE::Log(ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL,
                               info_log_,
                               "[cuckoofilter] cannot build a filter for %zu "
                               "keys (%s); writing an always-match filter",
                               entries, e.what());
      }
      return FinishAlwaysMatch(buf);
    }
    buf->reset(block.data.release());
    return Slice(buf->get(), block.size);
  }

  // With detect_filter_construct_corruption: every key hash of the last
  // Finish must match the filter it produced.
  Status MaybePostVerify(const Slice& filter_content) override {
    if (verify_hashes_.empty()) return Status::OK();
    // Released on return, whatever it is.
    struct Release {
      CuckooFilterBitsBuilder* builder;
      ~Release() {
        builder->verify_hashes_.clear();
        builder->verify_reservations_.clear();
      }
    } release{this};
    const std::deque<uint64_t>& hashes = verify_hashes_;
    const DecodedBlock block =
        DecodeBlock(reinterpret_cast<const uint8_t*>(filter_content.data()),
                    filter_content.size());
    if (!block.has_table) {
      return Status::Corruption(
          "cuckoofilter: the built filter block is unreadable: " +
          block.reason);
    }
    const cuckoo::CuckooHashing hashing(block.num_buckets,
                                        block.layout.fingerprint_bits);
    const cuckoo::BucketTableView view(block.layout, block.num_buckets,
                                       block.table);
    for (uint64_t hash : hashes) {
      if (!view.Contains(hashing.Locate(hash))) {
        return Status::Corruption(
            "cuckoofilter: a key added to the filter does not match it");
      }
    }
    return Status::OK();
  }

  size_t ApproximateNumEntries(size_t bytes) override {
    const size_t overhead = kBlockHeaderBytes + cuckoo::kTablePaddingBytes;
    if (bytes <= overhead) return 0;
    return static_cast<size_t>(static_cast<double>(bytes - overhead) * 8.0 /
                               config_.bits_per_key);
  }

  // Bytes of the block that Finish produces for num_entries entries, never
  // less (see MaxBlockBytes). RocksDB (10.9+) calls it with
  // EstimateEntriesAdded() whenever a data block is cut, to estimate the file
  // size against target_file_size.
  size_t CalculateSpace(size_t num_entries) ROCKSDB_CUCKOO_SPACE_OVERRIDE {
    return static_cast<size_t>(rounding_balance_ != nullptr
                                   ? MaxRoundedBlockBytes(config_, num_entries)
                                   : MaxBlockBytes(config_, num_entries));
  }

  // With optimize_filters_for_memory, the rate of the most accurate table
  // that fits the block, as Finish would choose it for that size.
  double EstimatedFpRate(size_t num_entries,
                         size_t bytes) ROCKSDB_CUCKOO_SPACE_OVERRIDE {
    if (rounding_balance_ != nullptr) {
      const std::optional<cuckoo::TableGeometry> geometry =
          cuckoo::ChooseForTableBytes(BlockDataBytes(bytes), num_entries);
      if (geometry) return geometry->expected_fpr;
    }
    return BlockFalsePositiveRate(config_, num_entries, bytes);
  }

 private:
  void AddHash(uint64_t hash) {
    hashes_.push_back(hash);
    if (verify_after_construction_) hashes_checksum_ ^= hash;
    if (reservations_ != nullptr &&
        hashes_.size() % kHashesPerReservation == kHashesPerReservation / 2) {
      hash_reservations_.emplace_back();
      reservations_
          ->MakeCacheReservation(
              FilterConstructionReservations::GetDummyEntrySize(),
              &hash_reservations_.back())
          .PermitUncheckedError();
    }
  }

  // Lets the first hashes go before the block of `block_bytes` is allocated,
  // and the rest (Finish) after it. The build's peak is then the hashes and
  // the placement, as if they all went first: what goes first is at most the
  // block's size. But the block is allocated while the last hashes are still
  // held, so that an allocator that serves a request which no free chunk
  // holds from the top of its heap (glibc's malloc) places the block above
  // them. Their release then leaves free memory below a live block instead of
  // at the top of the heap, where glibc would trim it past its trim threshold
  // (128 KiB in a fresh process) and fault it in again for the next filter's
  // hashes. What goes first is 15/16 of the block, which leaves room for the
  // allocator's per-chunk headers (1/32 of a deque's 512-byte chunks under
  // libstdc++) so that the free space it makes stays smaller than the block;
  // a deque frees only the chunks it empties, which only makes it smaller.
  // The reservations of the hashes that go first go with them, rounded as
  // they were made (one per 32768 hashes, at the middle of each run).
  void ReleaseHashesFor(uint64_t block_bytes) {
    const size_t first = static_cast<size_t>(std::min<uint64_t>(
        block_bytes / 16 * 15 / sizeof(uint64_t), hashes_.size()));
    hashes_.erase(hashes_.begin(), hashes_.begin() + first);
    const size_t released =
        (first + kHashesPerReservation / 2) / kHashesPerReservation;
    hash_reservations_.resize(hash_reservations_.size() -
                              std::min(hash_reservations_.size(), released));
  }

  // Reserves the build's working memory; false when the cache refuses it
  // (strict capacity), which the policy counts and logs once.
  bool ReserveWorkingMemory(const cuckoo::TableGeometry& geometry,
                            uint64_t entries, ReservationHandle* handle) {
    if (reservations_ == nullptr) return true;
    const uint64_t bytes = cuckoo::StaticBuildWorkingBytes(
        geometry.layout, geometry.num_buckets, entries);
    const Status reserved =
        reservations_->MakeCacheReservation(static_cast<size_t>(bytes), handle);
    if (reserved.ok()) return true;
    fallbacks_->unbuilt_filters.fetch_add(1, std::memory_order_relaxed);
    if (info_log_ != nullptr &&
        !fallbacks_->reported_uncharged_build.exchange(true)) {
      ROCKSDB_NAMESPACE::Log(
          ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL, info_log_,
          "[cuckoofilter] the block cache cannot take the %llu bytes of "
          "building a filter for %llu keys (%s): writing an always-match "
          "filter; later ones are only counted",
          static_cast<unsigned long long>(bytes),
          static_cast<unsigned long long>(entries),
          reserved.ToString().c_str());
    }
    return false;
  }

  // The block, charged from before it is allocated until the builder is
  // destroyed.
  void ReserveFinishedBlock(size_t bytes) {
    if (reservations_ == nullptr) return;
    block_reservations_.emplace_back();
    reservations_->MakeCacheReservation(bytes, &block_reservations_.back())
        .PermitUncheckedError();
  }

  // An always-match block: every read stays correct without this filter.
  static Slice FinishAlwaysMatch(std::unique_ptr<const char[]>* buf) {
    const std::vector<uint8_t> always = EncodeAlwaysMatchBlock();
    char* data = new char[always.size()];
    std::memcpy(data, always.data(), always.size());
    buf->reset(data);
    return Slice(data, always.size());
  }

  // optimize_filters_for_memory (above): the block at the rounded geometry,
  // and the balance updated with the table actually built, which is larger
  // in the rare build that has to grow.
  cuckoo::TableGeometry ChooseRounded(uint64_t entries) {
    return ChooseRoundedGeometry(config_, entries, rounding_balance_->load(),
                                 &rounded_target_fpr_);
  }
  void UpdateRoundingBalance(const cuckoo::StaticPlacement& placement) {
    const double built_fpr =
        cuckoo::GeometryOf(placement.layout(), placement.num_buckets(),
                           placement.stats().input_hashes)
            .expected_fpr;
    rounding_balance_->fetch_add(BalanceUnits(built_fpr - rounded_target_fpr_));
  }

  const cuckoo::FilterConfig config_;
  const bool verify_after_construction_;
  // The DB's info log (outlives the builder), or null.
  ROCKSDB_NAMESPACE::Logger* const info_log_;
  const std::shared_ptr<CuckooFilterPolicy::FallbackCounters> fallbacks_;
  // The policy's FPR balance with optimize_filters_for_memory, else null.
  const std::shared_ptr<std::atomic<int64_t>> rounding_balance_;
  // The target FPR of the filter ChooseRounded last chose for.
  double rounded_target_fpr_ = 0.0;
  // Charging to the block cache (above), or null.
  const std::shared_ptr<CacheReservationManager> reservations_;
  std::vector<ReservationHandle> hash_reservations_;
  std::vector<ReservationHandle> verify_reservations_;
  std::vector<ReservationHandle> block_reservations_;
  const BuildFaultHook fault_hook_;
  // A deque grows without copying, so its peak is the hashes themselves.
  std::deque<uint64_t> hashes_;
  // The last key and alt seen, for de-duplication.
  uint64_t last_key_hash_ = 0;
  bool has_last_key_ = false;
  uint64_t last_alt_hash_ = 0;
  bool has_last_alt_ = false;
  // With detect_filter_construct_corruption: the XOR of hashes_, taken as
  // they arrive, and the hashes of the last Finish, for MaybePostVerify.
  uint64_t hashes_checksum_ = 0;
  std::deque<uint64_t> verify_hashes_;
};

// Probes a filter block in place. Stateless and const after construction, so
// one reader serves all threads. Table is the block's table type
// (cuckoo::VisitTable): compiled for its layout and bucket count where it can
// be, else cuckoo::AnyLayoutTable.
template <typename Table>
class CuckooFilterBitsReader : public FilterBitsReader {
 public:
  explicit CuckooFilterBitsReader(const DecodedBlock& block)
      : hashing_(block.num_buckets, block.layout.fingerprint_bits),
        table_(block.layout, block.num_buckets, block.table) {}

  bool MayMatch(const Slice& key) override {
    const cuckoo::KeyPosition position =
        Table::Locate(hashing_, cuckoo::HashKey(key.data(), key.size()));
    // Both cache misses start before either bucket is decoded.
    Table::Prefetch(table_, position);
    return Table::Contains(table_, position);
  }

  // The MultiGet path: hash every key and prefetch both of its buckets
  // before the first probe, so the cache misses overlap.
  void MayMatch(int num_keys, Slice** keys, bool* may_match) override {
    cuckoo::LocatePrefetchProbe(
        num_keys < 0 ? 0 : static_cast<size_t>(num_keys),
        [&](size_t i) {
          const Slice& key = *keys[i];
          return Table::Locate(hashing_,
                               cuckoo::HashKey(key.data(), key.size()));
        },
        [&](const cuckoo::KeyPosition& position) {
          Table::Prefetch(table_, position);
        },
        [&](size_t i, const cuckoo::KeyPosition& position) {
          may_match[i] = Table::Contains(table_, position);
        });
  }

 private:
  const cuckoo::CuckooHashing hashing_;
  const cuckoo::BucketTableView table_;
};

FilterBitsReader* NewCuckooFilterBitsReader(const DecodedBlock& block) {
  FilterBitsReader* reader = nullptr;
  cuckoo::VisitTable(
      block.layout,
      cuckoo::CuckooHashing(block.num_buckets, block.layout.fingerprint_bits),
      [&](auto table) {
        reader = new CuckooFilterBitsReader<decltype(table)>(block);
      });
  return reader;
}

// For blocks this build cannot read: every key may match.
class AlwaysMatchBitsReader : public FilterBitsReader {
 public:
  bool MayMatch(const Slice&) override { return true; }
  void MayMatch(int num_keys, Slice**, bool* may_match) override {
    for (int i = 0; i < num_keys; ++i) may_match[i] = true;
  }
};

// The shortest plain decimal (no exponent) that reads back as the same
// double: "10", "9.5".
std::string FormatDecimal(double value) {
  char text[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, value);
    if (std::strchr(text, 'e') == nullptr &&
        std::strtod(text, nullptr) == value) {
      break;
    }
  }
  return text;
}

// bits_per_key is written to OPTIONS files as the shortest decimal that reads
// back exactly (RocksDB's default for doubles keeps six decimals, which would
// make GetId() and the stored option disagree, and the OPTIONS file fail its
// verification).
std::unordered_map<std::string, ROCKSDB_NAMESPACE::OptionTypeInfo>
    policy_option_info = {
        {"bits_per_key",
         ROCKSDB_NAMESPACE::OptionTypeInfo(
             offsetof(struct CuckooFilterPolicyOptions, bits_per_key),
             ROCKSDB_NAMESPACE::OptionType::kDouble,
             ROCKSDB_NAMESPACE::OptionVerificationType::kNormal,
             ROCKSDB_NAMESPACE::OptionTypeFlags::kNone)
             .SetSerializeFunc([](const ROCKSDB_NAMESPACE::ConfigOptions&,
                                  const std::string&, const void* address,
                                  std::string* value) {
               *value = FormatDecimal(*static_cast<const double*>(address));
               return Status::OK();
             })},
};

}  // namespace

std::string CheckBitsPerKey(double bits_per_key) {
  if (!(bits_per_key >= kMinBitsPerKey && bits_per_key <= kMaxBitsPerKey)) {
    return std::string(CuckooFilterPolicy::kClassName()) + ": bits_per_key " +
           FormatDecimal(bits_per_key) + " is outside the allowed range [" +
           FormatDecimal(kMinBitsPerKey) + ", " +
           FormatDecimal(kMaxBitsPerKey) + "]";
  }
  return "";
}

double UsableBitsPerKey(double bits_per_key) {
  if (std::isnan(bits_per_key)) return kDefaultBitsPerKey;
  return std::min(kMaxBitsPerKey, std::max(kMinBitsPerKey, bits_per_key));
}

CuckooFilterPolicy::CuckooFilterPolicy(double bits_per_key) {
  options_.bits_per_key = bits_per_key;
  RegisterOptions("CuckooFilterPolicyOptions", &options_, &policy_option_info);
}

std::string CuckooFilterPolicy::GetId() const {
  return std::string(kClassName()) + ":" + FormatDecimal(options_.bits_per_key);
}

Status CuckooFilterPolicy::PrepareOptions(
    const ROCKSDB_NAMESPACE::ConfigOptions& config_options) {
  const std::string problem = CheckBitsPerKey(options_.bits_per_key);
  if (!problem.empty()) return Status::InvalidArgument(problem);
  return FilterPolicy::PrepareOptions(config_options);
}

Status CuckooFilterPolicy::ValidateOptions(
    const ROCKSDB_NAMESPACE::DBOptions& db_options,
    const ROCKSDB_NAMESPACE::ColumnFamilyOptions& cf_options) const {
  const std::string problem = CheckBitsPerKey(options_.bits_per_key);
  if (!problem.empty()) return Status::InvalidArgument(problem);
  return FilterPolicy::ValidateOptions(db_options, cf_options);
}

FilterBitsBuilder* CuckooFilterPolicy::GetBuilderWithContext(
    const ROCKSDB_NAMESPACE::FilterBuildingContext& context) const {
  ROCKSDB_NAMESPACE::Logger* const info_log = context.info_log;
  // A policy constructed in code is validated only when a DB opens with it;
  // SstFileWriter never does. A budget outside the range (or not a number)
  // is built at the nearest bound (the default for NaN), and said so.
  const double bits_per_key = UsableBitsPerKey(options_.bits_per_key);
  if (!(bits_per_key == options_.bits_per_key) && info_log != nullptr) {
    ROCKSDB_NAMESPACE::Log(ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL,
                           info_log, "[cuckoofilter] %s; building at %g",
                           CheckBitsPerKey(options_.bits_per_key).c_str(),
                           bits_per_key);
  }
  // Measured (bench/RESULTS.md): at 8 bits/key the cuckoo FPR is 1.18x
  // Bloom's, at 10 it is 0.73x; the curves cross near 9. Below that, say so
  // once per filter builder, as RocksDB's legacy Bloom builder does for its
  // own poor settings.
  constexpr double kBloomCrossoverBitsPerKey = 9.0;
  if (bits_per_key < kBloomCrossoverBitsPerKey && info_log != nullptr) {
    ROCKSDB_NAMESPACE::Log(
        ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL, info_log,
        "[cuckoofilter] %g bits/key: below about %g bits per key a Bloom "
        "filter (bloomfilter, or ribbonfilter for less space) has a lower "
        "false-positive rate in the same space",
        bits_per_key, kBloomCrossoverBitsPerKey);
  }
  // Nothing may throw into RocksDB. Without a builder it writes the file
  // without a filter, which reads correctly.
  try {
    return new CuckooFilterBitsBuilder(
        cuckoo::ChooseForBitsPerKey(bits_per_key),
        context.table_options.detect_filter_construct_corruption, info_log,
        fallbacks_,
        context.table_options.optimize_filters_for_memory ? rounding_balance_
                                                          : nullptr,
        NewConstructionReservations(context.table_options), fault_hook_);
  } catch (const std::exception& e) {
    if (info_log != nullptr) {
      ROCKSDB_NAMESPACE::Log(ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL,
                             info_log,
                             "[cuckoofilter] cannot create a filter builder "
                             "(%s): this file gets no filter",
                             e.what());
    }
    return nullptr;
  }
}

FilterBitsReader* CuckooFilterPolicy::GetFilterBitsReader(
    const Slice& contents) const {
  const DecodedBlock block = DecodeBlock(
      reinterpret_cast<const uint8_t*>(contents.data()), contents.size());
  if (!block.has_table) {
    fallbacks_->always_match_readers.fetch_add(1, std::memory_order_relaxed);
    if (!fallbacks_->reported_reader.exchange(true)) {
      std::fprintf(stderr,
                   "rocksdb-cuckoo: a cuckoofilter block is not used (%s): "
                   "its file is read without the filter; later ones are "
                   "only counted (CuckooFilterPolicy::fallback_counts)\n",
                   block.reason.c_str());
    }
    return new AlwaysMatchBitsReader();
  }
  return NewCuckooFilterBitsReader(block);
}

FallbackCounts CuckooFilterPolicy::fallback_counts() const {
  FallbackCounts counts;
  counts.always_match_readers =
      fallbacks_->always_match_readers.load(std::memory_order_relaxed);
  counts.unbuilt_filters =
      fallbacks_->unbuilt_filters.load(std::memory_order_relaxed);
  return counts;
}

extern "C" int cuckoo_filter_register(ROCKSDB_NAMESPACE::ObjectLibrary& library,
                                      const std::string& /*arg*/) {
  library.AddFactory<const ROCKSDB_NAMESPACE::FilterPolicy>(
      ROCKSDB_NAMESPACE::ObjectLibrary::PatternEntry(
          CuckooFilterPolicy::kClassName(), /*optional=*/true)
          .AddNumber(":", /*is_int=*/false),
      [](const std::string& uri,
         std::unique_ptr<const ROCKSDB_NAMESPACE::FilterPolicy>* guard,
         std::string* errmsg) -> const ROCKSDB_NAMESPACE::FilterPolicy* {
        double bits_per_key = kDefaultBitsPerKey;
        const size_t colon = uri.find(':');
        if (colon != std::string::npos) {
          const std::string number = uri.substr(colon + 1);
          char* end = nullptr;
          bits_per_key = std::strtod(number.c_str(), &end);
          if (number.empty() || end != number.c_str() + number.size()) {
            *errmsg = std::string(CuckooFilterPolicy::kClassName()) +
                      ": bits_per_key '" + number + "' is not a number";
            return nullptr;
          }
        }
        const std::string problem = CheckBitsPerKey(bits_per_key);
        if (!problem.empty()) {
          *errmsg = problem;
          return nullptr;
        }
        guard->reset(new CuckooFilterPolicy(bits_per_key));
        return guard->get();
      });
  size_t num_types = 0;
  return static_cast<int>(library.GetFactoryCount(&num_types));
}

}  // namespace rocksdb_cuckoo

// Once per process, whichever comes first: the program's call, or the
// loading of librocksdb_cuckoo.so (cuckoo_autoregister.cc).
extern "C" int rocksdb_cuckoo_register_default(void) {
  static const int result = [] {
    try {
      rocksdb_cuckoo::cuckoo_filter_register(
          *ROCKSDB_NAMESPACE::ObjectLibrary::Default(), "cuckoo");
      return 0;
    } catch (const std::exception&) {
      return -1;
    }
  }();
  return result;
}
