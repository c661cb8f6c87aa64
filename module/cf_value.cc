// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The CF key's value and its persistent forms (see cf_value.h).
#include "cf_value.h"

#include <xxhash.h>

#include <cstring>

#include "cuckoo/byte_io.h"

namespace cuckoo_cf {
namespace {

// The first byte of an RDB record.
enum RecordKind : uint8_t {
  kFilterRecord = 0,  // then the serialized filter
  kLoadRecord = 1,    // then u32 count, and per chunk u64 size and bytes
  kArgumentsFilterRecord = 2,  // the arguments chunk, then as kFilterRecord
};

// The arguments chunk (cf_value.h).
constexpr uint8_t kArgumentsMagic[4] = {'C', 'F', 'A', 0x01};
constexpr size_t kArgumentsFieldBytes = 8;
constexpr size_t kArgumentsChunkBytes = kArgumentsFieldBytes + 8;

std::string ArgumentsChunk(int bucket_size) {
  uint8_t chunk[kArgumentsChunkBytes] = {};
  std::memcpy(chunk, kArgumentsMagic, sizeof(kArgumentsMagic));
  chunk[4] = static_cast<uint8_t>(bucket_size);
  cuckoo::byte_io::Store<uint64_t>(chunk + kArgumentsFieldBytes,
                                   XXH3_64bits(chunk, kArgumentsFieldBytes));
  return std::string(reinterpret_cast<const char*>(chunk), sizeof(chunk));
}

bool IsArgumentsChunk(const char* data, size_t size) {
  return size >= sizeof(kArgumentsMagic) &&
         std::memcmp(data, kArgumentsMagic, sizeof(kArgumentsMagic)) == 0;
}

// The BUCKETSIZE of an arguments chunk; 0 with *error set when the chunk is
// not one a writer produces.
int ParseArgumentsChunk(const char* data, size_t size, std::string* error) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(data);
  if (!IsArgumentsChunk(data, size) || size != kArgumentsChunkBytes) {
    *error = "a CF arguments chunk of " + std::to_string(size) + " bytes";
    return 0;
  }
  if (cuckoo::byte_io::Load<uint64_t>(bytes + kArgumentsFieldBytes) !=
      XXH3_64bits(bytes, kArgumentsFieldBytes)) {
    *error = "a CF arguments chunk with a wrong checksum";
    return 0;
  }
  if (bytes[4] == 0 || bytes[5] != 0 || bytes[6] != 0 || bytes[7] != 0) {
    *error = "a CF arguments chunk of BUCKETSIZE " + std::to_string(bytes[4]) +
             " with nonzero padding or no BUCKETSIZE";
    return 0;
  }
  return bytes[4];
}

const uint8_t* Bytes(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

// Module filters hash items with seeded XXH3 (see "Hashing"), which the
// serialization records as the XXH3 hasher: a filter of integer keys, made
// by the C++ API, answers nothing here.
bool CheckHasher(const cuckoo::CuckooFilter& filter, std::string* error) {
  if (filter.options().hasher == cuckoo::KeyHasher::kXxh3) return true;
  *error = std::string("the dump is of a filter of ") +
           cuckoo::KeyHasherName(filter.options().hasher) +
           " keys, not of a CF filter";
  return false;
}

}  // namespace

uint64_t HashItem(const cuckoo::CuckooFilter& filter, const char* data,
                  size_t size) {
  return XXH3_64bits_withSeed(data, size, filter.options().seed);
}

std::optional<FilterValue> FilterValue::StartLoad(
    const std::string& first_chunk, std::string* error) {
  FilterValue value;
  value.loader_.emplace(kMaxSerializedBytes);
  if (IsArgumentsChunk(first_chunk.data(), first_chunk.size())) {
    value.bucket_size_ =
        ParseArgumentsChunk(first_chunk.data(), first_chunk.size(), error);
    if (value.bucket_size_ == 0) return std::nullopt;
    value.chunks_.push_back(first_chunk);
    return value;
  }
  if (!value.LoadChunk(first_chunk, error)) return std::nullopt;
  return value;
}

bool FilterValue::Adopt(std::optional<cuckoo::CuckooFilter> filter,
                        std::string* error) {
  if (!filter.has_value() || !CheckHasher(*filter, error)) return false;
  if (bucket_size_ == filter->options().layout.bucket_size) {
    *error = "a CF arguments chunk naming the filter's own bucket size";
    return false;
  }
  filter_ = std::move(filter);
  return true;
}

uint64_t FilterValue::next_chunk_position() const {
  return ready() ? 0 : chunks_.size() + 1;
}

bool FilterValue::LoadChunk(const std::string& chunk, std::string* error) {
  if (ready()) {
    *error = "the filter is already complete";
    return false;
  }
  if (!loader_->Load(Bytes(chunk), chunk.size(), error)) return false;
  chunks_.push_back(chunk);
  if (!loader_->complete()) return true;
  if (Adopt(loader_->Finish(error), error)) {
    chunks_.clear();
    chunks_.shrink_to_fit();
    loader_.reset();
    return true;
  }
  // The spent loader is rebuilt from the chunks before this one.
  chunks_.pop_back();
  std::string replay_error;
  Replay(&replay_error);
  return false;
}

bool FilterValue::Replay(std::string* error) {
  loader_.emplace(kMaxSerializedBytes);
  // The arguments chunk, when there is one, is not the filter's.
  for (size_t i = bucket_size_ != 0 ? 1 : 0; i < chunks_.size(); ++i) {
    if (!loader_->Load(Bytes(chunks_[i]), chunks_[i].size(), error)) {
      return false;
    }
  }
  return true;
}

uint64_t FilterValue::DumpChecksum() const {
  if (!dump_checksum_.has_value()) {
    dump_checksum_ = cuckoo::CuckooFilterDumper::ImageChecksum(*filter_);
  }
  return *dump_checksum_;
}

size_t FilterValue::MemoryUsage() const {
  size_t bytes = sizeof(*this);
  if (ready()) return bytes + filter_->SizeInBytes() + filter_->WalkLogBytes();
  for (const std::string& chunk : chunks_) bytes += chunk.capacity();
  return bytes;
}

bool FilterValue::DumpChunk(uint64_t position,
                            std::vector<uint8_t>* chunk) const {
  if (bucket_size_ != 0) {
    if (position == 0) {
      const std::string arguments = ArgumentsChunk(bucket_size_);
      chunk->assign(arguments.begin(), arguments.end());
      return true;
    }
    --position;
  }
  cuckoo::CuckooFilterDumper dumper(*filter_, kChunkPayloadBytes,
                                    DumpChecksum());
  dumper.Seek(position);
  return dumper.Next(chunk);
}

size_t FilterValue::RecordBufferCount() const {
  if (!ready()) return 1 + chunks_.size();
  return 1 + (bucket_size_ != 0 ? 1 : 0) + 3;
}

void FilterValue::ForEachRecordBuffer(
    const std::function<void(const char*, size_t)>& emit) const {
  const char kind =
      static_cast<char>(!ready()            ? kLoadRecord
                        : bucket_size_ != 0 ? kArgumentsFilterRecord
                                            : kFilterRecord);
  emit(&kind, 1);
  if (!ready()) {
    for (const std::string& chunk : chunks_) emit(chunk.data(), chunk.size());
    return;
  }
  if (bucket_size_ != 0) {
    const std::string arguments = ArgumentsChunk(bucket_size_);
    emit(arguments.data(), arguments.size());
  }
  const cuckoo::CuckooFilterDumper dumper(*filter_, kChunkPayloadBytes,
                                          DumpChecksum());
  dumper.ForEachPart([&](const uint8_t* data, size_t size) {
    emit(reinterpret_cast<const char*>(data), size);
  });
}

bool RecordReader::Add(const char* data, size_t size, std::string* error) {
  size_t index = added_++;
  if (index == 0) {
    if (size != 1 || (data[0] != kFilterRecord && data[0] != kLoadRecord &&
                      data[0] != kArgumentsFilterRecord)) {
      *error = "a CF record that does not start with its kind";
      return false;
    }
    kind_ = data[0];
    return true;
  }
  if (kind_ == kArgumentsFilterRecord) {
    if (index == 1) {
      bucket_size_ = ParseArgumentsChunk(data, size, error);
      return bucket_size_ != 0;
    }
    --index;  // the rest is a filter record's
  }
  if (kind_ == kLoadRecord) {
    const std::string chunk(data, size);
    if (!loading_.has_value()) {
      loading_ = FilterValue::StartLoad(chunk, error);
      return loading_.has_value();
    }
    return loading_->LoadChunk(chunk, error);
  }
  if (index == 1) {
    head_.assign(data, size);
    return true;
  }
  if (index == 2) {
    // The whole size is known now: a header describing another table is
    // refused before the table is allocated.
    const uint64_t total =
        uint64_t{head_.size()} + size + cuckoo::serialization::kChecksumBytes;
    if (total > kMaxSerializedBytes) {
      *error = "a CF record of " + std::to_string(total) + " bytes";
      return false;
    }
    loader_.emplace(total);
    return loader_->Append(Bytes(head_), head_.size(), error) &&
           loader_->Append(reinterpret_cast<const uint8_t*>(data), size, error);
  }
  if (index == 3) {
    return loader_->Append(reinterpret_cast<const uint8_t*>(data), size, error);
  }
  *error = "a CF filter record of more buffers than its kind has";
  return false;
}

std::optional<FilterValue> RecordReader::Finish(std::string* error) {
  if (kind_ == kLoadRecord && loading_.has_value()) {
    return std::move(*loading_);
  }
  const size_t buffers = kind_ == kArgumentsFilterRecord ? 5 : 4;
  if (kind_ == kLoadRecord || added_ != buffers) {
    *error =
        "a CF record of " + std::to_string(added_) + " buffers is incomplete";
    return std::nullopt;
  }
  FilterValue value;
  value.bucket_size_ = bucket_size_;
  if (!value.Adopt(loader_->Finish(error), error)) return std::nullopt;
  return value;
}

std::optional<FilterValue> FilterValue::FromRecord(const std::string& record,
                                                   std::string* error) {
  if (record.empty() || record.size() - 1 > kMaxSerializedBytes * 2) {
    *error = "a CF record of " + std::to_string(record.size()) + " bytes";
    return std::nullopt;
  }
  const uint8_t* data = Bytes(record);
  if (data[0] == kFilterRecord) {
    std::optional<cuckoo::CuckooFilter> filter =
        cuckoo::DeserializeCuckooFilter(data + 1, record.size() - 1, error);
    if (!filter.has_value() || !CheckHasher(*filter, error)) {
      return std::nullopt;
    }
    return FilterValue(std::move(*filter));
  }
  if (data[0] != kLoadRecord || record.size() < 5) {
    *error = "a CF record of unknown kind " + std::to_string(data[0]);
    return std::nullopt;
  }
  const uint32_t count = cuckoo::byte_io::Load<uint32_t>(data + 1);
  size_t at = 5;
  std::vector<std::string> chunks;
  for (uint32_t i = 0; i < count; ++i) {
    if (record.size() - at < 8) {
      *error = "a CF load record ends inside chunk " + std::to_string(i);
      return std::nullopt;
    }
    const uint64_t size = cuckoo::byte_io::Load<uint64_t>(data + at);
    at += 8;
    if (size > record.size() - at) {
      *error = "a CF load record's chunk " + std::to_string(i) +
               " runs past its end";
      return std::nullopt;
    }
    chunks.emplace_back(record, at, static_cast<size_t>(size));
    at += static_cast<size_t>(size);
  }
  if (at != record.size() || chunks.empty()) {
    *error = "a CF load record of " + std::to_string(count) +
             " chunks has the wrong size";
    return std::nullopt;
  }
  std::optional<FilterValue> value = StartLoad(chunks[0], error);
  for (size_t i = 1; value.has_value() && i < chunks.size(); ++i) {
    if (!value->LoadChunk(chunks[i], error)) return std::nullopt;
  }
  return value;
}

void FilterValue::ForEachChunk(
    const std::function<void(uint64_t, const std::string&)>& emit) const {
  if (!ready()) {
    for (size_t i = 0; i < chunks_.size(); ++i) emit(i + 1, chunks_[i]);
    return;
  }
  std::vector<uint8_t> chunk;
  for (uint64_t position = 0; DumpChunk(position, &chunk); ++position) {
    emit(position + 1, std::string(chunk.begin(), chunk.end()));
  }
}

}  // namespace cuckoo_cf
