// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The key scheme of the comparison: 16-byte keys in groups that share an
// 8-byte prefix, absent keys that sort between present ones (as db_bench's
// readmissing), and absent prefixes between stored ones. The prefix extractor
// of every DB takes the first kPrefixBytes, so filters hold keys and prefixes.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace filter_compare {

constexpr size_t kPrefixBytes = 8;

class KeyScheme {
 public:
  explicit KeyScheme(uint64_t keys_per_prefix)
      : keys_per_prefix_(keys_per_prefix) {}

  // Key i: an 8-digit even prefix number shared by keys_per_prefix keys,
  // then an 8-digit suffix.
  std::string Key(uint64_t i) const {
    return Prefix(2 * (i / keys_per_prefix_)) + Digits(i % keys_per_prefix_);
  }
  std::string AbsentKey(uint64_t i) const { return Key(i) + "x"; }
  std::string PrefixOf(uint64_t i) const {
    return Prefix(2 * (i / keys_per_prefix_));
  }
  // An odd prefix number: between two stored prefixes.
  std::string AbsentPrefix(uint64_t i) const {
    return Prefix(2 * (i / keys_per_prefix_) + 1);
  }

 private:
  static std::string Digits(uint64_t value) {
    char buffer[24];
    std::snprintf(buffer, sizeof(buffer), "%08llu",
                  static_cast<unsigned long long>(value));
    return buffer;
  }
  static std::string Prefix(uint64_t prefix_number) {
    return Digits(prefix_number);
  }
  uint64_t keys_per_prefix_;
};

}  // namespace filter_compare
