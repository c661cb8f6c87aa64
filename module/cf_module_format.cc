// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The CF module's persistent forms (see cf_module_format.h).
#include "cf_module_format.h"

#include <xxhash.h>

#include <cstring>

#include "cuckoo/byte_io.h"

namespace cuckoo_cf {
namespace {

constexpr uint8_t kArgumentsMagic[4] = {'C', 'F', 'A', 0x01};
constexpr size_t kArgumentsFieldBytes = 8;
constexpr size_t kArgumentsChunkBytes = kArgumentsFieldBytes + 8;

const uint8_t* Bytes(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

}  // namespace

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

size_t RecordBufferCount(const FilterValue& value) {
  if (!value.ready()) return 1 + value.loaded_chunks().size();
  return 1 + (value.arguments_bucket_size() != 0 ? 1 : 0) + 3;
}

void ForEachRecordBuffer(const FilterValue& value,
                         const std::function<void(const char*, size_t)>& emit) {
  const char kind = static_cast<char>(!value.ready() ? kLoadRecord
                                      : value.arguments_bucket_size() != 0
                                          ? kArgumentsFilterRecord
                                          : kFilterRecord);
  emit(&kind, 1);
  if (!value.ready()) {
    for (const std::string& chunk : value.loaded_chunks()) {
      emit(chunk.data(), chunk.size());
    }
    return;
  }
  if (value.arguments_bucket_size() != 0) {
    const std::string arguments = ArgumentsChunk(value.arguments_bucket_size());
    emit(arguments.data(), arguments.size());
  }
  const cuckoo::CuckooFilterDumper dumper(value.filter(), kChunkPayloadBytes,
                                          value.DumpChecksum());
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
  return FilterValue::OfLoaded(loader_->Finish(error), bucket_size_, error);
}

std::optional<FilterValue> ReadSingleBufferRecord(const std::string& record,
                                                  std::string* error) {
  if (record.empty() || record.size() - 1 > kMaxSerializedBytes * 2) {
    *error = "a CF record of " + std::to_string(record.size()) + " bytes";
    return std::nullopt;
  }
  const uint8_t* data = Bytes(record);
  if (data[0] == kFilterRecord) {
    return FilterValue::OfLoaded(
        cuckoo::DeserializeCuckooFilter(data + 1, record.size() - 1, error), 0,
        error);
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
  std::optional<FilterValue> value = FilterValue::StartLoad(chunks[0], error);
  for (size_t i = 1; value.has_value() && i < chunks.size(); ++i) {
    if (!value->LoadChunk(chunks[i], error)) return std::nullopt;
  }
  return value;
}

}  // namespace cuckoo_cf
