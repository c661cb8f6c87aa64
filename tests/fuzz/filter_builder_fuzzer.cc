// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Fuzz target: the plugin's builder on arbitrary key streams (duplicates,
// empty keys, long keys, any order). Every added key must match the finished
// filter, post-verification must pass, and a reused builder must start empty.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuckoo_filter_policy.h"
#include "rocksdb/table.h"
#include "table/block_based/filter_policy_internal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  // First byte: the budget; then keys, each a length byte and its bytes.
  const double bits_per_key = 4 + (data[0] % 61);
  rocksdb_cuckoo::CuckooFilterPolicy policy(bits_per_key);
  ROCKSDB_NAMESPACE::BlockBasedTableOptions table_options;
  table_options.detect_filter_construct_corruption = true;
  ROCKSDB_NAMESPACE::FilterBuildingContext context(table_options);
  std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsBuilder> builder(
      policy.GetBuilderWithContext(context));
  std::vector<std::string> keys;
  for (size_t at = 1; at < size;) {
    const size_t length = std::min<size_t>(data[at], size - at - 1);
    keys.emplace_back(reinterpret_cast<const char*>(data + at + 1), length);
    at += 1 + length;
  }
  for (int round = 0; round < 2; ++round) {
    for (const std::string& key : keys) builder->AddKey(key);
    if (builder->EstimateEntriesAdded() > keys.size()) __builtin_trap();
    if (!keys.empty() && builder->EstimateEntriesAdded() == 0) __builtin_trap();
    std::unique_ptr<const char[]> buffer;
    ROCKSDB_NAMESPACE::Status status;
    const ROCKSDB_NAMESPACE::Slice block = builder->Finish(&buffer, &status);
    if (!status.ok() || !builder->MaybePostVerify(block).ok()) __builtin_trap();
    if (builder->EstimateEntriesAdded() != 0) __builtin_trap();
    std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsReader> reader(
        policy.GetFilterBitsReader(block));
    for (const std::string& key : keys) {
      if (!reader->MayMatch(key)) __builtin_trap();
    }
  }
  return 0;
}
