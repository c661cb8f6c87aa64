// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Fuzz target: the plugin's reader over arbitrary bytes (a filter block is
// untrusted input: it may come from another machine). Never a crash or an
// out-of-bounds read; a block the decoder rejects must match every key.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "cuckoo_filter_policy.h"
#include "filter_format.h"
#include "table/block_based/filter_policy_internal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const rocksdb_cuckoo::CuckooFilterPolicy policy(10);
  // An exact-size copy, so that AddressSanitizer sees any read past the end.
  std::unique_ptr<char[]> block(new char[size == 0 ? 1 : size]);
  if (size > 0) std::memcpy(block.get(), data, size);
  const ROCKSDB_NAMESPACE::Slice contents(block.get(), size);
  std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsReader> reader(
      policy.GetFilterBitsReader(contents));
  const rocksdb_cuckoo::DecodedBlock decoded = rocksdb_cuckoo::DecodeBlock(
      reinterpret_cast<const uint8_t*>(block.get()), size);
  std::string keys[32];
  ROCKSDB_NAMESPACE::Slice slices[32];
  ROCKSDB_NAMESPACE::Slice* pointers[32];
  bool may_match[32];
  for (int i = 0; i < 32; ++i) {
    keys[i] = "key" + std::to_string(i * 7919);
    slices[i] = keys[i];
    pointers[i] = &slices[i];
    const bool single = reader->MayMatch(slices[i]);
    if (!decoded.has_table && !single) __builtin_trap();
  }
  reader->MayMatch(32, pointers, may_match);
  for (int i = 0; i < 32; ++i) {
    if (may_match[i] != reader->MayMatch(slices[i])) __builtin_trap();
  }
  return 0;
}
