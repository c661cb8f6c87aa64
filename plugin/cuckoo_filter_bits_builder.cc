// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The policy's FilterBitsBuilder (see the header).
#include "cuckoo_filter_bits_builder.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <exception>
#include <optional>
#include <vector>

#include "allocator_rounding.h"
#include "construction_charge.h"
#include "cuckoo/hashing.h"
#include "cuckoo/table_types.h"
#include "cuckoo_filter_bits_reader.h"
#include "filter_format.h"
#include "rocksdb_interfaces.h"

namespace rocksdb_cuckoo {

using ROCKSDB_NAMESPACE::FilterBitsBuilder;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

namespace {

// Hashes of keys added since the last Finish, and the filter built from them.
class CuckooFilterBitsBuilder : public FilterBitsBuilder {
 public:
  CuckooFilterBitsBuilder(
      const cuckoo::FilterConfig& config, bool verify_after_construction,
      ROCKSDB_NAMESPACE::Logger* info_log,
      std::shared_ptr<CuckooFilterPolicy::FallbackCounters> fallbacks,
      std::shared_ptr<std::atomic<int64_t>> rounding_balance,
      std::shared_ptr<ReservationManager> reservations,
      BuildFaultHook fault_hook, FinishedFilterCounts counts)
      : config_(config),
        verify_after_construction_(verify_after_construction),
        info_log_(info_log),
        fallbacks_(std::move(fallbacks)),
        rounding_balance_(std::move(rounding_balance)),
        reservations_(std::move(reservations)),
        fault_hook_(std::move(fault_hook)),
        counts_(std::move(counts)) {}

  // The reservations must go before the manager they belong to.
  ~CuckooFilterBitsBuilder() override {
    hash_reservations_.clear();
    verify_reservations_.clear();
    block_reservations_.clear();
  }

  // Keys come in comparator order, with the versions of one key one after
  // another: a key equal to the previous one is not added again.
  // Before 9.6, RocksDB adds a key's prefix with AddKey too, right after the
  // key, as a slice of the key's own bytes (the prefix extractor's
  // Transform): a shorter slice at the same address as the previous one is
  // counted as an entry but not as a key (FinishedFilterCounts).
  void AddKey(const Slice& key) override {
    const bool prefix_of_last =
        key.data() == last_slice_data_ && key.size() < last_slice_size_;
    last_slice_data_ = key.data();
    last_slice_size_ = key.size();
    const uint64_t key_hash = cuckoo::HashKey(key.data(), key.size());
    if (!has_last_key_ || key_hash != last_key_hash_) {
      AddHash(key_hash);
      if (!prefix_of_last) ++keys_;
    }
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
    if (!key_repeats_last_key) ++keys_;
    last_slice_data_ = nullptr;
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
  Slice Finish(std::unique_ptr<const char[]>* buf,
               Status* status) ROCKSDB_CUCKOO_POST_VERIFY_OVERRIDE {
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
    last_slice_data_ = nullptr;
    const uint64_t keys = keys_;
    keys_ = 0;
    verify_hashes_.clear();
    verify_reservations_.clear();
    if (status != nullptr) *status = Status::OK();

    const size_t entries = hashes.size();
    EncodedBlock block;
    try {
      if (counts_) counts_(keys, entries);
      if (fault_hook_) fault_hook_(BuildStage::kBeforeBuild, &hashes);
      const bool rounded = rounding_balance_ != nullptr && entries > 0;
      const cuckoo::TableGeometry geometry =
          rounded ? ChooseRounded(entries) : PlannedGeometry(config_, entries);
      ReservationHandle working;
      if (!ReserveWorkingMemory(geometry, entries, &working)) {
        return FinishAlwaysMatch(buf);
      }
      const cuckoo::StaticPlacement placement =
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
            *status = Corruption(
                "cuckoofilter: the key hashes changed while the filter was "
                "built (checksum mismatch)");
          }
          return FinishAlwaysMatch(buf);
        }
        verify_hashes_.swap(hashes);
        verify_reservations_.swap(hash_reservations_);
      } else {
        // The placement was the hashes' last reader (see ReleaseHashesFor).
        ReleaseHashesFor(kBlockHeaderBytes + placement.table_bytes());
      }
      ReserveFinishedBlock(
          static_cast<size_t>(kBlockHeaderBytes + placement.table_bytes()));
      block = EncodePlacement(placement);
      hashes.clear();
      hash_reservations_.clear();
      if (rounded) UpdateRoundingBalance(placement);
    } catch (const std::exception& e) {
      // Too many keys for one table (over 2^32 buckets) or out of memory: an
      // always-match filter keeps every read correct.
      fallbacks_->unbuilt_filters.fetch_add(1, std::memory_order_relaxed);
      if (info_log_ != nullptr) {
        InfoLog(ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL, info_log_,
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
  Status MaybePostVerify(const Slice& filter_content)
      ROCKSDB_CUCKOO_POST_VERIFY_OVERRIDE {
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
      return Corruption("cuckoofilter: the built filter block is unreadable: " +
                        block.reason);
    }
    if (!MayMatchEveryHash(block, hashes)) {
      return Corruption(
          "cuckoofilter: a key added to the filter does not match it");
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
          ->MakeCacheReservation(kReservationEntryBytes,
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
    const auto reserved =
        reservations_->MakeCacheReservation(static_cast<size_t>(bytes), handle);
    if (reserved.ok()) return true;
    fallbacks_->unbuilt_filters.fetch_add(1, std::memory_order_relaxed);
    if (info_log_ != nullptr &&
        !fallbacks_->reported_uncharged_build.exchange(true)) {
      InfoLog(ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL, info_log_,
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
  const std::shared_ptr<ReservationManager> reservations_;
  std::vector<ReservationHandle> hash_reservations_;
  std::vector<ReservationHandle> verify_reservations_;
  std::vector<ReservationHandle> block_reservations_;
  const BuildFaultHook fault_hook_;
  const FinishedFilterCounts counts_;
  // A deque grows without copying, so its peak is the hashes themselves.
  std::deque<uint64_t> hashes_;
  // Distinct keys added since the last Finish, and the last slice AddKey
  // was given, to tell a prefix from a key.
  uint64_t keys_ = 0;
  const char* last_slice_data_ = nullptr;
  size_t last_slice_size_ = 0;
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

}  // namespace

FilterBitsBuilder* NewCuckooFilterBitsBuilder(
    const cuckoo::FilterConfig& config, bool verify_after_construction,
    ROCKSDB_NAMESPACE::Logger* info_log,
    std::shared_ptr<CuckooFilterPolicy::FallbackCounters> fallbacks,
    std::shared_ptr<std::atomic<int64_t>> rounding_balance,
    std::shared_ptr<ReservationManager> reservations, BuildFaultHook fault_hook,
    FinishedFilterCounts counts) {
  return new CuckooFilterBitsBuilder(
      config, verify_after_construction, info_log, std::move(fallbacks),
      std::move(rounding_balance), std::move(reservations),
      std::move(fault_hook), std::move(counts));
}

}  // namespace rocksdb_cuckoo
