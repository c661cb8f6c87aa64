// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Little-endian fixed-width integers in byte buffers, for the serialized
// formats. Byte-by-byte, so it is independent of host order and alignment.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cuckoo {
namespace byte_io {

template <typename Int>
void Store(uint8_t* p, Int value) {
  for (size_t i = 0; i < sizeof(Int); ++i) {
    p[i] = static_cast<uint8_t>(static_cast<uint64_t>(value) >> (8 * i));
  }
}

// Writes consecutive fields into a buffer sized in advance.
class Writer {
 public:
  explicit Writer(uint8_t* out) : cursor_(out) {}
  template <typename Int>
  void Put(Int value) {
    Store<Int>(cursor_, value);
    cursor_ += sizeof(Int);
  }
  void PutBytes(const uint8_t* bytes, size_t size) {
    for (size_t i = 0; i < size; ++i) cursor_[i] = bytes[i];
    cursor_ += size;
  }

 private:
  uint8_t* cursor_;
};

template <typename Int>
Int Load(const uint8_t* p) {
  uint64_t value = 0;
  for (size_t i = 0; i < sizeof(Int); ++i) {
    value |= static_cast<uint64_t>(p[i]) << (8 * i);
  }
  return static_cast<Int>(value);
}

}  // namespace byte_io
}  // namespace cuckoo
