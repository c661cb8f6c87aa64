// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Fuzz target: the CF module's RDB records (module/cf_module_format.h) on
// arbitrary bytes, as RDB loading and RESTORE hand them over. Each input is
// read two ways: as a record of encoding version 1 (ReadSingleBufferRecord: one
// buffer), and as the buffers of version 2 (RecordReader), framed here as a u32
// size before each buffer. Either refuses it with a reason or gives a value
// whose buffers read back as a value with the same buffers. Chunks are checked
// one by one as CF.LOADCHUNK checks them, so this also fuzzes the chunk
// loader behind a valid first chunk. It never reads outside the input.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cf_module_format.h"

namespace {

std::vector<std::string> Buffers(const cuckoo_cf::FilterValue& value) {
  std::vector<std::string> buffers;
  cuckoo_cf::ForEachRecordBuffer(value, [&](const char* data, size_t size) {
    buffers.emplace_back(data, size);
  });
  if (buffers.size() != cuckoo_cf::RecordBufferCount(value)) __builtin_trap();
  return buffers;
}

std::optional<cuckoo_cf::FilterValue> Read(
    const std::vector<std::string>& buffers, std::string* error) {
  cuckoo_cf::RecordReader reader;
  for (const std::string& buffer : buffers) {
    if (!reader.Add(buffer.data(), buffer.size(), error)) return std::nullopt;
  }
  return reader.Finish(error);
}

// A value read from the input: its buffers read back as the same buffers,
// and a filter answers every item it stores.
void Check(std::optional<cuckoo_cf::FilterValue> value,
           const std::string& error) {
  if (!value) {
    if (error.empty()) __builtin_trap();
    return;
  }
  const std::vector<std::string> buffers = Buffers(*value);
  std::string reread_error;
  const std::optional<cuckoo_cf::FilterValue> reread =
      Read(buffers, &reread_error);
  if (!reread || Buffers(*reread) != buffers ||
      reread->ready() != value->ready()) {
    __builtin_trap();
  }
  if (!value->ready()) return;
  for (uint64_t key = 0; key < 64; ++key) {
    const std::string item = "item" + std::to_string(key);
    const uint64_t hash =
        cuckoo_cf::HashItem(value->filter(), item.data(), item.size());
    cuckoo::CuckooFilter& filter = value->mutable_filter();
    filter.Contains(hash);
    if (filter.Insert(hash) == cuckoo::InsertResult::kOk &&
        !filter.Contains(hash)) {
      __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  const std::string record(reinterpret_cast<const char*>(input), size);
  std::string error;
  Check(cuckoo_cf::ReadSingleBufferRecord(record, &error), error);

  std::vector<std::string> buffers;
  for (size_t at = 0; size - at >= 4;) {
    uint32_t length;
    std::memcpy(&length, input + at, 4);
    at += 4;
    if (length > size - at) break;
    buffers.emplace_back(record, at, length);
    at += length;
  }
  error.clear();
  Check(Read(buffers, &error), error);
  return 0;
}
