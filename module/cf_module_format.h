// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The CF module's persistent forms, as docs/cf-module-format.md gives them
// byte by byte, each writer beside its reader: the arguments chunk, and the
// RDB record (ForEachRecordBuffer; RecordReader for encoding version 2,
// ReadSingleBufferRecord for version 1). A dump's chunks (CF.SCANDUMP, the
// AOF rewrite) are the arguments chunk, when the value has one, then the
// filter's own chunks (FilterValue::DumpChunk, dynamic_filter_format.h).
// No server types: the module's data type (cf_module.cc) calls these.
//
// The arguments chunk
// -------------------
// What CF.RESERVE was given that the filter's serialization does not
// record: a BUCKETSIZE other than the layout's slots per bucket
// (cf_commands.cc, "Bucket size"). A value that has one saves it before the
// filter, in 16 checksummed bytes: CF.SCANDUMP's first chunk, and a record
// of its own kind. A value without one is saved as before the chunk
// existed, so older dumps load and older modules load what needs no chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "cf_value.h"
#include "cuckoo/dynamic_filter_format.h"

namespace cuckoo_cf {

// The first byte of an RDB record.
enum RecordKind : uint8_t {
  kFilterRecord = 0,           // then the serialized filter
  kLoadRecord = 1,             // then the chunks of a load in progress
  kArgumentsFilterRecord = 2,  // the arguments chunk, then as kFilterRecord
};

// The arguments chunk of a value reserved with `bucket_size`.
std::string ArgumentsChunk(int bucket_size);
// Whether the bytes start as an arguments chunk does.
bool IsArgumentsChunk(const char* data, size_t size);
// The BUCKETSIZE of an arguments chunk; 0 with *error set when the chunk is
// not one a writer produces.
int ParseArgumentsChunk(const char* data, size_t size, std::string* error);

// The RDB record of encoding version 2 as string buffers: a kind byte, then
// for a filter its arguments chunk if it has one and its serialization in
// three parts (the header and stash, the table as the filter holds it, and
// the checksum), or the chunks of a load in progress. Nothing the size of
// the table is copied.
size_t RecordBufferCount(const FilterValue& value);
void ForEachRecordBuffer(const FilterValue& value,
                         const std::function<void(const char*, size_t)>& emit);

// A value rebuilt from the buffers of ForEachRecordBuffer, given in order as
// they are read; every buffer is validated (untrusted bytes).
class RecordReader {
 public:
  // False, with *error set, when the buffer cannot continue a record.
  bool Add(const char* data, size_t size, std::string* error);
  // The value, once every buffer was added; nullopt with *error set when
  // the record is incomplete or invalid.
  std::optional<FilterValue> Finish(std::string* error);

 private:
  int kind_ = -1;
  size_t added_ = 0;
  int bucket_size_ = 0;  // from the record's arguments chunk
  // A filter's header and stash, kept until its table's size is known.
  std::string head_;
  std::optional<cuckoo::CuckooFilterLoader> loader_;
  // A load in progress, from its first chunk on.
  std::optional<FilterValue> loading_;
};

// The record of encoding version 1, one buffer: the kind byte, then the
// whole serialized filter, or u32 count and per chunk u64 size and bytes.
// Everything is validated; nullopt with *error set when a check fails.
std::optional<FilterValue> ReadSingleBufferRecord(const std::string& record,
                                                  std::string* error);

}  // namespace cuckoo_cf
