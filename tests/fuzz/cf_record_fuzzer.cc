// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Fuzz target: the CF module's RDB record (module/cf_value.h) on arbitrary
// bytes, as RDB loading and RESTORE hand it over. FromRecord either refuses
// it with a reason or gives a value whose record reads back as the same
// value: a filter, or a load in progress whose record is exactly the input
// (its chunks are kept as they came). Chunks are checked one by one as
// CF.LOADCHUNK checks them, so this also fuzzes the chunk loader behind a
// valid first chunk. It never reads outside the buffer.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "cf_value.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  const std::string record(reinterpret_cast<const char*>(input), size);
  std::string error;
  std::optional<cuckoo_cf::FilterValue> value =
      cuckoo_cf::FilterValue::FromRecord(record, &error);
  if (!value) {
    if (error.empty()) __builtin_trap();
    return 0;
  }
  const std::string again = value->ToRecord();
  if (!value->ready() && again != record) __builtin_trap();
  std::optional<cuckoo_cf::FilterValue> reread =
      cuckoo_cf::FilterValue::FromRecord(again, &error);
  if (!reread || reread->ToRecord() != again ||
      reread->ready() != value->ready()) {
    __builtin_trap();
  }
  if (value->ready()) {
    for (uint64_t key = 0; key < 64; ++key) {
      const std::string item = "item" + std::to_string(key);
      const uint64_t hash =
          cuckoo_cf::HashItem(value->filter(), item.data(), item.size());
      value->filter().Contains(hash);
      if (value->filter().Insert(hash) == cuckoo::InsertResult::kOk &&
          !value->filter().Contains(hash)) {
        __builtin_trap();
      }
    }
  }
  return 0;
}
