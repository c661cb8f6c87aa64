// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/):
// valid filter blocks, serialized filters, key streams and operation
// sequences, so that mutations start from meaningful inputs. Run by
// scripts/fuzz.sh --seed-corpus; the output is committed.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cf_module_format.h"
#include "cuckoo/dynamic_filter_format.h"
#include "cuckoo_filter_policy.h"
#include "rocksdb/table.h"
#include "table/block_based/filter_policy_internal.h"

namespace {

void Write(const std::string& folder, const std::string& name,
           const std::string& bytes) {
  std::filesystem::create_directories(folder);
  std::ofstream(folder + "/" + name, std::ios::binary) << bytes;
}

// The CF module's seeds of one value: its record of encoding version 1
// (one buffer: the kind, then the serialized filter, or a u32 chunk count
// and each chunk after its u64 size), and its version-2 buffers, each after
// a u32 size as cf_record_fuzzer frames them.
void WriteRecords(const std::string& folder, const std::string& name,
                  const cuckoo_cf::FilterValue& value) {
  std::vector<std::string> buffers;
  cuckoo_cf::ForEachRecordBuffer(value, [&](const char* data, size_t size) {
    buffers.emplace_back(data, size);
  });
  std::string single = buffers[0];
  if (!value.ready()) {
    const uint32_t count = static_cast<uint32_t>(buffers.size() - 1);
    single.append(reinterpret_cast<const char*>(&count), 4);
  }
  std::string framed;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const uint32_t size = static_cast<uint32_t>(buffers[i].size());
    framed.append(reinterpret_cast<const char*>(&size), 4);
    framed += buffers[i];
    if (i == 0) continue;
    if (!value.ready()) {
      const uint64_t chunk_size = buffers[i].size();
      single.append(reinterpret_cast<const char*>(&chunk_size), 8);
    }
    single += buffers[i];
  }
  Write(folder, name, single);
  Write(folder, name + "_v2", framed);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seed_corpus CORPUS_ROOT\n");
    return 2;
  }
  const std::string root = argv[1];
  ROCKSDB_NAMESPACE::BlockBasedTableOptions table_options;
  ROCKSDB_NAMESPACE::FilterBuildingContext context(table_options);
  for (int bits : {4, 10, 16, 40}) {
    for (int keys : {0, 1, 7, 100}) {
      rocksdb_cuckoo::CuckooFilterPolicy policy(bits);
      std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsBuilder> builder(
          policy.GetBuilderWithContext(context));
      std::string stream(1, static_cast<char>(bits - 4));
      for (int i = 0; i < keys; ++i) {
        const std::string key = "key" + std::to_string(i * 7919);
        builder->AddKey(key);
        stream += static_cast<char>(key.size()) + key;
      }
      std::unique_ptr<const char[]> buffer;
      const ROCKSDB_NAMESPACE::Slice block = builder->Finish(&buffer);
      const std::string name =
          "bits" + std::to_string(bits) + "_keys" + std::to_string(keys);
      Write(root + "/filter_block_reader", name, block.ToString());
      Write(root + "/filter_builder", name, stream);
    }
  }
  for (int layout = 0; layout < 8; ++layout) {
    // 200: no expansion; 232 (bit 5 set): an expansion of 2.
    for (int flags : {200, 232}) {
      std::string ops = {static_cast<char>(layout), static_cast<char>(flags)};
      for (int i = 0; i < 200; ++i) ops += static_cast<char>((i * 37) & 0xBF);
      Write(root + "/cuckoo_filter_ops",
            "layout" + std::to_string(layout) + (flags == 232 ? "_grows" : ""),
            ops);
    }
  }
  const cuckoo::BucketLayout layouts[] = {
      {4, 12, false}, {4, 10, true}, {2, 7, false}, {8, 32, false}};
  for (const cuckoo::BucketLayout& layout : layouts) {
    cuckoo::CuckooFilterOptions options;
    options.layout = layout;
    options.max_kicks = 10;
    if (layout.fingerprint_bits < 32) {
      options.expansion = 2;
      options.max_growths = 3;
    }
    cuckoo::CuckooFilter filter(4, options);
    for (uint64_t i = 0; i < 40; ++i) filter.Insert(i * 0x9E3779B97F4A7C15ull);
    const std::vector<uint8_t> bytes = SerializeCuckooFilter(filter);
    const std::string name = "b" + std::to_string(layout.bucket_size) + "_f" +
                             std::to_string(layout.fingerprint_bits) +
                             (layout.semi_sorted ? "_semi" : "");
    // Even first byte: as is; odd: resealed by the target.
    Write(root + "/deserialize", name,
          std::string(1, '\0') + std::string(bytes.begin(), bytes.end()));
    Write(root + "/deserialize", name + "_reseal",
          std::string(1, '\1') + std::string(bytes.begin(), bytes.end()));
    // The CF module's records: a filter, and a load cut after each chunk.
    WriteRecords(root + "/cf_record", name + "_filter",
                 cuckoo_cf::FilterValue(filter));
    cuckoo::CuckooFilterDumper dumper(filter, 64);
    std::vector<uint8_t> chunk;
    std::optional<cuckoo_cf::FilterValue> load;
    std::string error;
    for (int n = 1; dumper.Next(&chunk); ++n) {
      const std::string piece(chunk.begin(), chunk.end());
      if (load) {
        load->LoadChunk(piece, &error);
      } else {
        load = cuckoo_cf::FilterValue::StartLoad(piece, &error);
      }
      if (!load || (!load->ready() && n > 3)) break;
      WriteRecords(root + "/cf_record", name + "_load" + std::to_string(n),
                   *load);
    }
  }
  return 0;
}
