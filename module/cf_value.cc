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
};

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
  if (!value.LoadChunk(first_chunk, error)) return std::nullopt;
  return value;
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
  std::optional<cuckoo::CuckooFilter> filter = loader_->Finish(error);
  if (filter.has_value() && CheckHasher(*filter, error)) {
    filter_ = std::move(filter);
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
  for (const std::string& chunk : chunks_) {
    if (!loader_->Load(Bytes(chunk), chunk.size(), error)) return false;
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

size_t FilterValue::RecordBufferCount() const {
  return 1 + (ready() ? 3 : chunks_.size());
}

void FilterValue::ForEachRecordBuffer(
    const std::function<void(const char*, size_t)>& emit) const {
  const char kind = static_cast<char>(ready() ? kFilterRecord : kLoadRecord);
  emit(&kind, 1);
  if (!ready()) {
    for (const std::string& chunk : chunks_) emit(chunk.data(), chunk.size());
    return;
  }
  const cuckoo::CuckooFilterDumper dumper(*filter_, kChunkPayloadBytes,
                                          DumpChecksum());
  dumper.ForEachPart([&](const uint8_t* data, size_t size) {
    emit(reinterpret_cast<const char*>(data), size);
  });
}

bool RecordReader::Add(const char* data, size_t size, std::string* error) {
  const size_t index = added_++;
  if (index == 0) {
    if (size != 1 || (data[0] != kFilterRecord && data[0] != kLoadRecord)) {
      *error = "a CF record that does not start with its kind";
      return false;
    }
    kind_ = data[0];
    return true;
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
  *error = "a CF filter record of more than 4 buffers";
  return false;
}

std::optional<FilterValue> RecordReader::Finish(std::string* error) {
  if (kind_ == kLoadRecord && loading_.has_value()) {
    return std::move(*loading_);
  }
  if (kind_ != kFilterRecord || added_ != 4) {
    *error =
        "a CF record of " + std::to_string(added_) + " buffers is incomplete";
    return std::nullopt;
  }
  std::optional<cuckoo::CuckooFilter> filter = loader_->Finish(error);
  if (!filter.has_value() || !CheckHasher(*filter, error)) return std::nullopt;
  return FilterValue(std::move(*filter));
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
  cuckoo::CuckooFilterDumper dumper(*filter_, kChunkPayloadBytes);
  std::vector<uint8_t> chunk;
  for (uint64_t position = 1; dumper.Next(&chunk); ++position) {
    emit(position, std::string(chunk.begin(), chunk.end()));
  }
}

}  // namespace cuckoo_cf
