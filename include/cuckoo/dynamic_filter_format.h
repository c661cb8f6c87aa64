// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The serialized form of a dynamic CuckooFilter: writing it whole
// (SerializeCuckooFilter) or in chunks (CuckooFilterDumper, RedisBloom's
// CF.SCANDUMP), and reading it back from untrusted bytes with full
// validation, whole (DeserializeCuckooFilter), as a stream of its bytes
// (CuckooFilterLoader) or chunk by chunk (CuckooFilterChunkLoader,
// CF.LOADCHUNK).
//
// docs/dynamic-filter-format.md has the format, field by field: an 80-byte
// header (magic "CKF\x01", version 2, the layout, the growth fields, the
// limits and the history), the stash entries, the table as the filter holds
// it, and the XXH3-64 of every byte before it; all integers little-endian,
// no alignment assumed. Version 1 (written before growth existed: a 72-byte
// header with no "items deleted") is read too. A reader refuses a key
// hasher it does not know, rather than probe the filter with another hash.
//
// A reader rejects other versions, sizes that do not add up exactly, a wrong
// checksum, and contents no writer produces (limits out of range, stash
// entries out of range, a slot whose key fingerprint is 0, semi-sort codes
// >= 3876, nonzero padding, an item count that disagrees with the occupied
// slots). The checksum detects damage, not intent: anyone can recompute it,
// so every field is bounded as well.
//
// A chunked dump cuts the same bytes into slices, each framed (magic
// "CKC\x01", sequence number, dump id, offset, total size, payload size,
// chunk count, payload, XXH3-64 of the chunk) so that a loader can check it
// on its own before using it. Chunks must be loaded in order; a chunk that
// is damaged, out of order, from another dump, or reaching past the
// filter's end is refused with a reason and leaves the loader as it was, so
// the right chunk can follow. The filter must not change while it is being
// dumped.
//
// The sharded filter (ConcurrentCuckooFilter) is written as magic
// "CKS\x01", the shard count (4 bytes), then per shard its size (8) and its
// serialized filter, then the XXH3-64 of every byte before it
// (SerializeShardedFilter, DeserializeShardedFilter).
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

#include "cuckoo/byte_io.h"
#include "cuckoo/cuckoo_filter.h"

namespace cuckoo {
namespace serialization {

inline constexpr uint8_t kMagic[4] = {'C', 'K', 'F', 0x01};
inline constexpr uint16_t kFormatVersion = 2;
inline constexpr uint16_t kOldestFormatVersion = 1;
inline constexpr size_t kVersion1HeaderBytes = 72;
inline constexpr size_t kHeaderBytes = 80;
inline constexpr size_t kStashEntryBytes = 8;
inline constexpr size_t kChecksumBytes = 8;
// The flags byte.
inline constexpr uint8_t kSemiSortedFlag = 1;
inline constexpr int kHasherShift = 1;
inline constexpr uint8_t kHasherMask = 3 << kHasherShift;
inline constexpr uint8_t kKnownFlags = kSemiSortedFlag | kHasherMask;

inline constexpr uint8_t kChunkMagic[4] = {'C', 'K', 'C', 0x01};
inline constexpr size_t kChunkHeaderBytes = 40;
inline constexpr size_t kChunkChecksumBytes = 8;

inline constexpr uint8_t kShardedMagic[4] = {'C', 'K', 'S', 0x01};
inline constexpr uint32_t kMaxShards = 1u << 16;

}  // namespace serialization

// Reads a serialized filter from its bytes, given in order in any number of
// pieces. Each piece is checked as far as it can be on arrival (the header
// as soon as it is complete, the stash likewise); the contents are checked
// by Finish. A piece that is refused leaves the loader as it was.
class CuckooFilterLoader {
 public:
  // total_size, when not 0, is the size the serialized filter must have: a
  // header that describes another is refused before its table is allocated.
  explicit CuckooFilterLoader(uint64_t total_size = 0)
      : total_size_(total_size) {
    XXH3_64bits_reset(&hash_state_);
  }

  // Appends the next `size` bytes. False, with *error set, when they cannot
  // continue a valid serialized filter.
  bool Append(const uint8_t* data, size_t size, std::string* error) {
    const Snapshot before = TakeSnapshot();
    std::string why;
    if (!AppendPieces(data, size, &why)) {
      Restore(before);
      if (error != nullptr) *error = "cuckoo filter: " + why;
      return false;
    }
    return true;
  }

  uint64_t bytes_loaded() const { return loaded_; }
  bool complete() const {
    return expected_size_ != 0 && loaded_ == expected_size_;
  }

  // Checks the checksum and the contents and returns the filter; nullopt,
  // with *error set, for a truncated or invalid one. The loader is spent.
  std::optional<CuckooFilter> Finish(std::string* error) {
    auto fail = [error](const std::string& why) {
      if (error != nullptr) *error = "cuckoo filter: " + why;
      return std::nullopt;
    };
    if (!complete()) {
      if (expected_size_ == 0) {
        return fail("buffer of " + std::to_string(loaded_) +
                    " bytes is shorter than the header");
      }
      return fail("truncated: " + std::to_string(loaded_) + " of the " +
                  std::to_string(expected_size_) +
                  " bytes the header describes");
    }
    if (XXH3_64bits_digest(&hash_state_) !=
        byte_io::Load<uint64_t>(checksum_.data())) {
      return fail("checksum mismatch: the buffer is corrupt");
    }
    return CuckooFilter::Restore(options_, growths_, std::move(*table_),
                                 std::move(stash_), history_, error);
  }

 private:
  struct Snapshot {
    uint64_t loaded;
    size_t head_size;
    bool has_header;
    bool has_table;
    XXH3_state_t hash_state;
  };

  Snapshot TakeSnapshot() const {
    Snapshot snapshot{
        loaded_, head_.size(), expected_size_ != 0, table_.has_value(), {}};
    XXH3_copyState(&snapshot.hash_state, &hash_state_);
    return snapshot;
  }

  void Restore(const Snapshot& snapshot) {
    loaded_ = snapshot.loaded;
    head_.resize(snapshot.head_size);
    if (!snapshot.has_header) expected_size_ = head_bytes_ = 0;
    if (!snapshot.has_table) {
      table_.reset();
      stash_.clear();
    }
    XXH3_copyState(&hash_state_, &snapshot.hash_state);
  }

  bool AppendPieces(const uint8_t* data, size_t size, std::string* why) {
    if (size > 0 && data == nullptr) {
      *why = "null buffer of " + std::to_string(size) + " bytes";
      return false;
    }
    const uint64_t end = loaded_ + size;
    while (size > 0) {
      if (expected_size_ != 0 && size > expected_size_ - loaded_) {
        *why = "buffer has " + std::to_string(end) +
               " bytes but the header describes " +
               std::to_string(expected_size_);
        return false;
      }
      size_t taken = 0;
      if (!table_.has_value()) {
        if (!TakeHead(data, size, &taken, why)) return false;
      } else if (loaded_ < expected_size_ - serialization::kChecksumBytes) {
        taken = TakeTable(data, size);
      } else {
        taken = TakeChecksum(data, size);
      }
      data += taken;
      size -= taken;
    }
    return true;
  }

  // The header and the stash, buffered; parsed as soon as each is whole.
  bool TakeHead(const uint8_t* data, size_t size, size_t* taken,
                std::string* why) {
    const size_t wanted =
        head_bytes_ != 0 ? head_bytes_ : MinimumHeaderBytes(data, size);
    *taken = std::min(size, wanted - head_.size());
    head_.insert(head_.end(), data, data + *taken);
    XXH3_64bits_update(&hash_state_, data, *taken);
    loaded_ += *taken;
    if (head_.size() < wanted) return true;
    if (head_bytes_ == 0) {
      if (wanted == serialization::kVersion1HeaderBytes ||
          wanted == serialization::kHeaderBytes) {
        return ParseHeader(why);
      }
      // Only the version field was missing; read it next round.
      return CheckMagicAndVersion(why);
    }
    return ParseStash(why);
  }

  // Bytes the header needs: 6 until the version is known.
  size_t MinimumHeaderBytes(const uint8_t* data, size_t size) const {
    std::array<uint8_t, 6> start{};
    const size_t have = head_.size();
    if (have + size < start.size()) return start.size();
    const size_t from_head = std::min(have, start.size());
    std::copy(head_.begin(), head_.begin() + from_head, start.begin());
    std::copy(data, data + (start.size() - from_head),
              start.begin() + from_head);
    return byte_io::Load<uint16_t>(start.data() + 4) == 1
               ? serialization::kVersion1HeaderBytes
               : serialization::kHeaderBytes;
  }

  bool CheckMagicAndVersion(std::string* why) const {
    if (std::memcmp(head_.data(), serialization::kMagic,
                    sizeof(serialization::kMagic)) != 0) {
      *why = "bad magic: not a serialized cuckoo filter";
      return false;
    }
    const uint16_t version = byte_io::Load<uint16_t>(head_.data() + 4);
    if (version < serialization::kOldestFormatVersion ||
        version > serialization::kFormatVersion) {
      *why = "unsupported format version " + std::to_string(version) +
             " (this build reads versions " +
             std::to_string(serialization::kOldestFormatVersion) + " to " +
             std::to_string(serialization::kFormatVersion) + ")";
      return false;
    }
    return true;
  }

  bool ParseHeader(std::string* why) {
    if (!CheckMagicAndVersion(why)) return false;
    const uint8_t* data = head_.data();
    const bool version1 = byte_io::Load<uint16_t>(data + 4) == 1;
    CuckooFilterOptions& options = options_;
    options = CuckooFilterOptions{};
    options.layout.bucket_size = data[6];
    options.layout.fingerprint_bits = data[7];
    const uint8_t flags = data[8];
    if ((flags & ~serialization::kKnownFlags) != 0 ||
        (version1 && (data[9] | data[10] | data[11]))) {
      *why = "unknown flags or nonzero reserved bytes";
      return false;
    }
    options.layout.semi_sorted = (flags & serialization::kSemiSortedFlag) != 0;
    const uint8_t hasher =
        (flags & serialization::kHasherMask) >> serialization::kHasherShift;
    if (hasher > kMaxKeyHasherId) {
      *why =
          "key hasher " + std::to_string(hasher) + " is unknown to this build";
      return false;
    }
    options.hasher = static_cast<KeyHasher>(hasher);
    num_buckets_ = byte_io::Load<uint32_t>(data + 12);
    const std::string layout_problem = options.layout.Validate();
    if (!layout_problem.empty()) {
      *why = layout_problem;
      return false;
    }
    const int expansion_bits = data[9];
    const uint32_t max_growths = data[10];
    growths_ = data[11];
    const int spare_bits =
        kMaxFingerprintBits - options.layout.fingerprint_bits;
    if ((expansion_bits == 0 && (max_growths != 0 || growths_ != 0)) ||
        expansion_bits > spare_bits ||
        max_growths * static_cast<uint32_t>(expansion_bits) >
            static_cast<uint32_t>(spare_bits) ||
        growths_ > max_growths) {
      *why = "growth fields (expansion 2^" + std::to_string(expansion_bits) +
             ", limit " + std::to_string(max_growths) + ", growths " +
             std::to_string(growths_) + ") out of range";
      return false;
    }
    options.expansion = expansion_bits == 0 ? 0 : 1u << expansion_bits;
    options.max_growths = max_growths;
    options.max_kicks = byte_io::Load<uint32_t>(data + 16);
    options.stash_capacity = byte_io::Load<uint32_t>(data + 20);
    stash_size_ = byte_io::Load<uint32_t>(data + 24);
    peak_stash_size_ = byte_io::Load<uint32_t>(data + 28);
    options.seed = byte_io::Load<uint64_t>(data + 40);
    std::string problem = GeometryProblem(options, num_buckets_, growths_);
    if (!problem.empty()) {
      *why = problem;
      return false;
    }
    // Bounds the buffer of the stash; CuckooFilter::Restore checks the rest.
    if (stash_size_ > options.stash_capacity) {
      *why = "stash size " + std::to_string(stash_size_) +
             " exceeds the capacity " + std::to_string(options.stash_capacity);
      return false;
    }
    hashing_.emplace(HashingAfter(options, num_buckets_, growths_));
    const size_t header_bytes = version1 ? serialization::kVersion1HeaderBytes
                                         : serialization::kHeaderBytes;
    head_bytes_ = header_bytes + stash_size_ * serialization::kStashEntryBytes;
    const uint64_t table_bytes =
        TableDataBytes(SlotLayout(options, *hashing_), num_buckets_) +
        kTablePaddingBytes;
    expected_size_ = head_bytes_ + table_bytes + serialization::kChecksumBytes;
    if (total_size_ != 0 && expected_size_ != total_size_) {
      *why = "buffer has " + std::to_string(total_size_) +
             " bytes but the header describes " +
             std::to_string(expected_size_);
      return false;
    }
    if (head_.size() == head_bytes_) return ParseStash(why);
    return true;
  }

  bool ParseStash(std::string* why) {
    const uint8_t* data = head_.data();
    const bool version1 = byte_io::Load<uint16_t>(data + 4) == 1;
    history_ = CuckooFilterHistory{};
    history_.items = byte_io::Load<uint64_t>(data + 32);
    history_.generator_state = byte_io::Load<uint64_t>(data + 48);
    history_.total_kicks = byte_io::Load<uint64_t>(data + 56);
    history_.failed_inserts = byte_io::Load<uint64_t>(data + 64);
    history_.deleted = version1 ? 0 : byte_io::Load<uint64_t>(data + 72);
    history_.peak_stash_size = peak_stash_size_;
    const uint8_t* cursor =
        data + (version1 ? serialization::kVersion1HeaderBytes
                         : serialization::kHeaderBytes);
    std::vector<StashEntry> stash;
    for (uint32_t i = 0; i < stash_size_;
         ++i, cursor += serialization::kStashEntryBytes) {
      const StashEntry entry{byte_io::Load<uint32_t>(cursor),
                             byte_io::Load<uint32_t>(cursor + 4)};
      if (!CuckooFilter::ValidStashEntry(*hashing_, entry)) {
        *why = "stash entry " + std::to_string(i) + " is out of range";
        return false;
      }
      stash.push_back(entry);
    }
    stash_ = std::move(stash);
    table_.emplace(SlotLayout(options_, *hashing_), num_buckets_);
    return true;
  }

  size_t TakeTable(const uint8_t* data, size_t size) {
    const uint64_t offset = loaded_ - head_bytes_;
    RelocatableArray<uint8_t>& bytes = table_->mutable_bytes();
    const size_t taken =
        static_cast<size_t>(std::min<uint64_t>(size, bytes.size() - offset));
    std::memcpy(bytes.data() + offset, data, taken);
    XXH3_64bits_update(&hash_state_, data, taken);
    loaded_ += taken;
    return taken;
  }

  size_t TakeChecksum(const uint8_t* data, size_t size) {
    const size_t offset = static_cast<size_t>(
        loaded_ - (expected_size_ - serialization::kChecksumBytes));
    const size_t taken = std::min(size, checksum_.size() - offset);
    std::memcpy(checksum_.data() + offset, data, taken);
    loaded_ += taken;
    return taken;
  }

  uint64_t total_size_;
  std::vector<uint8_t> head_;
  size_t head_bytes_ = 0;  // header and stash, once the header is read
  uint64_t expected_size_ = 0;
  uint64_t loaded_ = 0;
  CuckooFilterOptions options_;
  uint32_t growths_ = 0;
  uint32_t num_buckets_ = 0;
  uint32_t stash_size_ = 0;
  uint32_t peak_stash_size_ = 0;
  std::optional<GrowableHashing> hashing_;
  // Once the header and the stash are read: the table, filled as its bytes
  // arrive, the stash and the history.
  std::optional<BucketTable> table_;
  std::vector<StashEntry> stash_;
  CuckooFilterHistory history_;
  std::array<uint8_t, serialization::kChecksumBytes> checksum_{};
  XXH3_state_t hash_state_;
};

inline std::optional<CuckooFilter> DeserializeCuckooFilter(const uint8_t* data,
                                                           size_t size,
                                                           std::string* error) {
  if (data == nullptr) {
    if (error != nullptr) *error = "cuckoo filter: null buffer";
    return std::nullopt;
  }
  CuckooFilterLoader loader(size);
  if (!loader.Append(data, size, error)) return std::nullopt;
  return loader.Finish(error);
}

// CF.SCANDUMP: the serialized filter in framed chunks of at most
// max_payload_bytes of it each.
class CuckooFilterDumper {
 public:
  explicit CuckooFilterDumper(const CuckooFilter& filter,
                              size_t max_payload_bytes = size_t{1} << 20)
      : CuckooFilterDumper(filter, max_payload_bytes, ImageChecksum(filter)) {}

  // With the filter's ImageChecksum, computed earlier: a caller that dumps
  // one chunk per call (CF.SCANDUMP) keeps it while the filter is unchanged
  // instead of reading the whole table again for each chunk.
  CuckooFilterDumper(const CuckooFilter& filter, size_t max_payload_bytes,
                     uint64_t image_checksum)
      : filter_(filter),
        head_(HeadOf(filter)),
        max_payload_(max_payload_bytes) {
    if (max_payload_bytes == 0 || max_payload_bytes > (size_t{1} << 31)) {
      throw std::invalid_argument("cuckoo filter: a chunk payload of " +
                                  std::to_string(max_payload_bytes) +
                                  " bytes is not in [1, 2^31]");
    }
    byte_io::Store<uint64_t>(checksum_.data(), image_checksum);
    total_ = head_.size() + filter.table().bytes().size() + checksum_.size();
    num_chunks_ = (total_ + max_payload_ - 1) / max_payload_;
    if (num_chunks_ > UINT32_MAX) {
      throw std::invalid_argument(
          "cuckoo filter: chunks of " + std::to_string(max_payload_bytes) +
          " bytes would make a dump of more than 2^32 chunks");
    }
  }

  uint64_t num_chunks() const { return num_chunks_; }

  // Calls emit(data, size) with the serialized filter in three parts whose
  // concatenation is SerializeCuckooFilter's output: the header and stash,
  // the table (the filter's own bytes, not a copy) and the checksum.
  template <typename Emit>
  void ForEachPart(Emit&& emit) const {
    const RelocatableArray<uint8_t>& table = filter_.table().bytes();
    emit(head_.data(), head_.size());
    emit(table.data(), table.size());
    emit(checksum_.data(), checksum_.size());
  }

  // The checksum of the serialized filter, which every chunk carries: XXH3
  // of its header, stash and table.
  static uint64_t ImageChecksum(const CuckooFilter& filter) {
    const std::vector<uint8_t> head = HeadOf(filter);
    const RelocatableArray<uint8_t>& table = filter.table().bytes();
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, head.data(), head.size());
    XXH3_64bits_update(&state, table.data(), table.size());
    return XXH3_64bits_digest(&state);
  }

  // Makes chunk `sequence` the next one Next gives (num_chunks() or more:
  // none), for a caller that dumps one chunk per call (CF.SCANDUMP).
  void Seek(uint64_t sequence) {
    sequence = std::min(sequence, num_chunks_);
    offset_ = std::min(total_, sequence * max_payload_);
    sequence_ = static_cast<uint32_t>(sequence);
  }

  // Writes the next chunk into *chunk; false once all have been given.
  bool Next(std::vector<uint8_t>* chunk) {
    if (offset_ == total_) return false;
    const size_t payload =
        static_cast<size_t>(std::min<uint64_t>(max_payload_, total_ - offset_));
    chunk->assign(serialization::kChunkHeaderBytes + payload +
                      serialization::kChunkChecksumBytes,
                  0);
    byte_io::Writer writer(chunk->data());
    writer.PutBytes(serialization::kChunkMagic,
                    sizeof(serialization::kChunkMagic));
    writer.Put<uint32_t>(sequence_);
    writer.Put<uint64_t>(byte_io::Load<uint64_t>(checksum_.data()));
    writer.Put<uint64_t>(offset_);
    writer.Put<uint64_t>(total_);
    writer.Put<uint32_t>(static_cast<uint32_t>(payload));
    writer.Put<uint32_t>(static_cast<uint32_t>(num_chunks_));
    CopyImage(offset_, payload,
              chunk->data() + serialization::kChunkHeaderBytes);
    const size_t body = serialization::kChunkHeaderBytes + payload;
    byte_io::Store<uint64_t>(chunk->data() + body,
                             XXH3_64bits(chunk->data(), body));
    offset_ += payload;
    ++sequence_;
    return true;
  }

 private:
  static std::vector<uint8_t> HeadOf(const CuckooFilter& filter);

  // Copies bytes [offset, offset + size) of the serialized filter.
  void CopyImage(uint64_t offset, size_t size, uint8_t* out) const {
    const RelocatableArray<uint8_t>& table = filter_.table().bytes();
    const uint8_t* parts[3] = {head_.data(), table.data(), checksum_.data()};
    const uint64_t sizes[3] = {head_.size(), table.size(), checksum_.size()};
    uint64_t part_begin = 0;
    for (int part = 0; part < 3 && size > 0; ++part) {
      const uint64_t part_end = part_begin + sizes[part];
      if (offset < part_end) {
        const size_t n =
            static_cast<size_t>(std::min<uint64_t>(size, part_end - offset));
        std::memcpy(out, parts[part] + (offset - part_begin), n);
        out += n;
        offset += n;
        size -= n;
      }
      part_begin = part_end;
    }
  }

  const CuckooFilter& filter_;
  std::vector<uint8_t> head_;
  std::array<uint8_t, serialization::kChecksumBytes> checksum_{};
  uint64_t max_payload_;
  uint64_t total_ = 0;
  uint64_t num_chunks_ = 0;
  uint64_t offset_ = 0;
  uint32_t sequence_ = 0;
};

// The header and stash of the current format.
inline std::vector<uint8_t> CuckooFilterDumper::HeadOf(
    const CuckooFilter& filter) {
  namespace s = serialization;
  std::vector<uint8_t> out(
      s::kHeaderBytes + filter.stash().size() * s::kStashEntryBytes, 0);
  const int expansion_bits = ExpansionBits(filter.options());
  byte_io::Writer writer(out.data());
  writer.PutBytes(s::kMagic, sizeof(s::kMagic));
  writer.Put<uint16_t>(s::kFormatVersion);
  writer.Put<uint8_t>(static_cast<uint8_t>(filter.layout().bucket_size));
  writer.Put<uint8_t>(static_cast<uint8_t>(filter.layout().fingerprint_bits));
  writer.Put<uint8_t>(static_cast<uint8_t>(
      (filter.layout().semi_sorted ? s::kSemiSortedFlag : 0) |
      static_cast<uint8_t>(filter.options().hasher) << s::kHasherShift));
  writer.Put<uint8_t>(static_cast<uint8_t>(expansion_bits));
  writer.Put<uint8_t>(static_cast<uint8_t>(
      expansion_bits == 0 ? 0 : filter.options().max_growths));
  writer.Put<uint8_t>(static_cast<uint8_t>(filter.Growths()));
  writer.Put<uint32_t>(filter.NumBuckets());
  writer.Put<uint32_t>(filter.options().max_kicks);
  writer.Put<uint32_t>(filter.options().stash_capacity);
  writer.Put<uint32_t>(static_cast<uint32_t>(filter.stash().size()));
  writer.Put<uint32_t>(filter.history().peak_stash_size);
  writer.Put<uint64_t>(filter.history().items);
  writer.Put<uint64_t>(filter.options().seed);
  writer.Put<uint64_t>(filter.history().generator_state);
  writer.Put<uint64_t>(filter.history().total_kicks);
  writer.Put<uint64_t>(filter.history().failed_inserts);
  writer.Put<uint64_t>(filter.history().deleted);
  for (const StashEntry& entry : filter.stash()) {
    writer.Put<uint32_t>(entry.bucket);
    writer.Put<uint32_t>(entry.fingerprint);
  }
  return out;
}

// The whole serialized filter in one buffer.
inline std::vector<uint8_t> SerializeCuckooFilter(const CuckooFilter& filter) {
  std::vector<uint8_t> out;
  CuckooFilterDumper(filter).ForEachPart(
      [&out](const uint8_t* data, size_t size) {
        out.insert(out.end(), data, data + size);
      });
  return out;
}

// CF.LOADCHUNK: rebuilds a filter from the chunks of a CuckooFilterDumper,
// given in order. Each chunk is checked before it is used.
class CuckooFilterChunkLoader {
 public:
  // A dump of more than max_size serialized bytes is refused at its first
  // chunk, before anything is allocated for it: a server bounds what one
  // command may make it allocate.
  explicit CuckooFilterChunkLoader(
      uint64_t max_size = std::numeric_limits<uint64_t>::max())
      : max_size_(max_size) {}

  // False, with *error set and nothing changed, for a refused chunk.
  bool Load(const uint8_t* chunk, size_t size, std::string* error) {
    namespace s = serialization;
    auto fail = [error](const std::string& why) {
      if (error != nullptr) *error = "cuckoo filter chunk: " + why;
      return false;
    };
    if (chunk == nullptr ||
        size < s::kChunkHeaderBytes + 1 + s::kChunkChecksumBytes) {
      return fail("a chunk of " + std::to_string(size) +
                  " bytes is shorter than its frame");
    }
    if (std::memcmp(chunk, s::kChunkMagic, sizeof(s::kChunkMagic)) != 0) {
      return fail("bad magic: not a cuckoo filter dump chunk");
    }
    const uint32_t payload = byte_io::Load<uint32_t>(chunk + 32);
    if (payload == 0 || uint64_t{payload} != size - s::kChunkHeaderBytes -
                                                 s::kChunkChecksumBytes) {
      return fail("the chunk has " + std::to_string(size) +
                  " bytes but its frame describes a payload of " +
                  std::to_string(payload));
    }
    const size_t body = size - s::kChunkChecksumBytes;
    if (XXH3_64bits(chunk, body) != byte_io::Load<uint64_t>(chunk + body)) {
      return fail("checksum mismatch: the chunk is corrupt");
    }
    const uint32_t sequence = byte_io::Load<uint32_t>(chunk + 4);
    const uint64_t dump_id = byte_io::Load<uint64_t>(chunk + 8);
    const uint64_t offset = byte_io::Load<uint64_t>(chunk + 16);
    const uint64_t total_size = byte_io::Load<uint64_t>(chunk + 24);
    const uint32_t num_chunks = byte_io::Load<uint32_t>(chunk + 36);
    if (sequence != next_sequence_) {
      return fail("chunk " + std::to_string(sequence) +
                  " arrived where chunk " + std::to_string(next_sequence_) +
                  " was expected");
    }
    if (sequence > 0 && (dump_id != dump_id_ || num_chunks != num_chunks_ ||
                         total_size != total_size_)) {
      return fail("the chunk belongs to another dump");
    }
    if (total_size > max_size_) {
      return fail("a dump of " + std::to_string(total_size) +
                  " bytes exceeds the limit of " + std::to_string(max_size_));
    }
    if (sequence >= num_chunks) {
      return fail("chunk " + std::to_string(sequence) + " of a dump of " +
                  std::to_string(num_chunks) + " chunks");
    }
    // Chunk 0 starts a fresh loader, built in place: move-assigning one
    // whose table is still empty trips GCC 12's -Wmaybe-uninitialized in
    // C++20 builds.
    if (sequence == 0) loader_.emplace(total_size);
    if (offset != loader_->bytes_loaded()) {
      return fail("the chunk starts at byte " + std::to_string(offset) +
                  ", not at " + std::to_string(loader_->bytes_loaded()));
    }
    if (!loader_->Append(chunk + s::kChunkHeaderBytes, payload, error)) {
      return false;
    }
    dump_id_ = dump_id;
    num_chunks_ = num_chunks;
    total_size_ = total_size;
    ++next_sequence_;
    return true;
  }

  bool complete() const {
    return next_sequence_ != 0 && next_sequence_ == num_chunks_ &&
           loader_->complete();
  }

  // After the last chunk: the filter, or nullopt with *error set (missing
  // chunks, or contents that fail validation). The loader is spent.
  std::optional<CuckooFilter> Finish(std::string* error) {
    if (next_sequence_ != num_chunks_ || next_sequence_ == 0) {
      if (error != nullptr) {
        *error = "cuckoo filter chunk: " + std::to_string(next_sequence_) +
                 " of " + std::to_string(num_chunks_) + " chunks loaded";
      }
      return std::nullopt;
    }
    return loader_->Finish(error);
  }

 private:
  // Engaged from chunk 0 on: next_sequence_ > 0 implies a loader.
  std::optional<CuckooFilterLoader> loader_;
  uint64_t max_size_;
  uint32_t next_sequence_ = 0;
  uint32_t num_chunks_ = 0;
  uint64_t dump_id_ = 0;
  uint64_t total_size_ = 0;
};

// The sharded form of the shards' serialized filters, in shard order.
inline std::vector<uint8_t> SerializeShardedFilter(
    const std::vector<std::vector<uint8_t>>& shards) {
  constexpr size_t kFixed = sizeof(serialization::kShardedMagic) + 4 + 8;
  size_t size = kFixed;
  for (const std::vector<uint8_t>& shard : shards) size += 8 + shard.size();
  std::vector<uint8_t> out(size);
  byte_io::Writer writer(out.data());
  writer.PutBytes(serialization::kShardedMagic,
                  sizeof(serialization::kShardedMagic));
  writer.Put<uint32_t>(static_cast<uint32_t>(shards.size()));
  for (const std::vector<uint8_t>& shard : shards) {
    writer.Put<uint64_t>(shard.size());
    writer.PutBytes(shard.data(), shard.size());
  }
  writer.Put<uint64_t>(XXH3_64bits(out.data(), size - 8));
  return out;
}

// Reads SerializeShardedFilter's bytes: each shard's filter, in shard order;
// nullopt, with *error set, for bytes that are not a sharded filter whose
// shards all share one key hasher.
inline std::optional<std::vector<CuckooFilter>> DeserializeShardedFilter(
    const uint8_t* data, size_t size, std::string* error) {
  auto fail = [error](const std::string& why) {
    if (error != nullptr) *error = "concurrent cuckoo filter: " + why;
    return std::nullopt;
  };
  const uint8_t(&magic)[4] = serialization::kShardedMagic;
  constexpr size_t kFixed = sizeof(magic) + 4 + 8;
  if (data == nullptr || size < kFixed ||
      std::memcmp(data, magic, sizeof(magic)) != 0) {
    return fail("not a serialized concurrent cuckoo filter");
  }
  if (XXH3_64bits(data, size - 8) != byte_io::Load<uint64_t>(data + size - 8)) {
    return fail("checksum mismatch: the buffer is corrupt");
  }
  const uint32_t count = byte_io::Load<uint32_t>(data + sizeof(magic));
  if (count == 0 || count > serialization::kMaxShards) {
    return fail(std::to_string(count) + " shards");
  }
  std::vector<CuckooFilter> shards;
  shards.reserve(count);
  size_t at = sizeof(magic) + 4;
  const size_t end = size - 8;
  for (uint32_t i = 0; i < count; ++i) {
    if (end - at < 8) return fail("truncated at shard " + std::to_string(i));
    const uint64_t length = byte_io::Load<uint64_t>(data + at);
    at += 8;
    if (length > end - at) {
      return fail("shard " + std::to_string(i) + " runs past the end");
    }
    std::string why;
    std::optional<CuckooFilter> shard =
        DeserializeCuckooFilter(data + at, static_cast<size_t>(length), &why);
    if (!shard) return fail("shard " + std::to_string(i) + ": " + why);
    if (i > 0 && shard->options().hasher != shards[0].options().hasher) {
      return fail("shard " + std::to_string(i) +
                  " was filled with another key hasher than shard 0");
    }
    shards.push_back(std::move(*shard));
    at += static_cast<size_t>(length);
  }
  if (at != end) return fail("bytes after the last shard");
  return shards;
}

}  // namespace cuckoo
