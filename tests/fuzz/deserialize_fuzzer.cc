// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Fuzz target: DeserializeCuckooFilter on arbitrary bytes. It either
// rejects them with a reason or accepts a filter whose serialization gives
// back exactly the same bytes (a version 1 input: the same filter, written
// as version 2), and that takes lookups and inserts; it never reads outside
// the buffer. A CuckooFilterLoader given the same bytes in two pieces, cut
// where the first byte says, reaches the same verdict. When the first byte
// is odd, the rest gets a correct checksum first, so that the validation
// behind the checksum is explored too.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuckoo/dynamic_filter_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t input_size) {
  if (input_size < 1) return 0;
  const bool reseal = (input[0] & 1) != 0;
  const size_t size = input_size - 1;
  std::unique_ptr<uint8_t[]> copy(new uint8_t[size == 0 ? 1 : size]);
  if (size > 0) std::memcpy(copy.get(), input + 1, size);
  if (reseal && size >= 8) {
    cuckoo::byte_io::Store<uint64_t>(copy.get() + size - 8,
                                     XXH3_64bits(copy.get(), size - 8));
  }
  const uint8_t* data = copy.get();
  std::string error;
  std::optional<cuckoo::CuckooFilter> filter =
      cuckoo::DeserializeCuckooFilter(copy.get(), size, &error);
  cuckoo::CuckooFilterLoader loader(size);
  const size_t cut = size * (input[0] >> 1) / 127;
  std::string piece_error;
  const bool pieces_accepted =
      loader.Append(data, cut, &piece_error) &&
      loader.Append(data + cut, size - cut, &piece_error) &&
      loader.Finish(&piece_error).has_value();
  if (pieces_accepted != filter.has_value()) __builtin_trap();
  if (!filter) {
    if (error.empty()) __builtin_trap();
    return 0;
  }
  const std::vector<uint8_t> again = SerializeCuckooFilter(*filter);
  if (cuckoo::byte_io::Load<uint16_t>(data + 4) == 1) {
    std::optional<cuckoo::CuckooFilter> upgraded =
        cuckoo::DeserializeCuckooFilter(again.data(), again.size(), &error);
    if (!upgraded || SerializeCuckooFilter(*upgraded) != again ||
        upgraded->Size() != filter->Size()) {
      __builtin_trap();
    }
  } else if (again.size() != size ||
             std::memcmp(again.data(), data, size) != 0) {
    __builtin_trap();
  }
  for (uint64_t key = 0; key < 64; ++key) {
    filter->Contains(key * 0x9E3779B97F4A7C15ull);
  }
  // Inserts walk at most max_kicks steps: a limit taken from the bytes
  // unchecked would show up here as a timeout.
  for (uint64_t key = 0; key < 16; ++key) {
    filter->Insert(key * 0xC2B2AE3D27D4EB4Full + 1);
  }
  return 0;
}
