// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The CF key's value (see cf_value.h).
#include "cf_value.h"

#include <xxhash.h>

#include "cf_module_format.h"

namespace cuckoo_cf {
namespace {

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

std::optional<FilterValue> FilterValue::OfLoaded(
    std::optional<cuckoo::CuckooFilter> filter, int bucket_size,
    std::string* error) {
  FilterValue value;
  value.bucket_size_ = bucket_size;
  if (!value.Adopt(std::move(filter), error)) return std::nullopt;
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
