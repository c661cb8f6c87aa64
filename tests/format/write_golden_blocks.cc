// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Writes the golden filter blocks and their MANIFEST (golden_blocks.h), and
// the golden dynamic filters, chunks and sharded filter (golden_dynamic.h),
// into a folder. Run only when a new format version is introduced, and then as
// new blocks beside the old ones: the committed blocks are what SSTs already
// written contain, and the format tests require today's code to reproduce
// and read them byte for byte.
//
// usage: write_golden_blocks DIR
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cuckoo/sizing.h"
#include "filter_format.h"
#include "golden_blocks.h"
#include "golden_dynamic.h"

namespace {

bool WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) std::fprintf(stderr, "cannot write %s\n", path.c_str());
  return static_cast<bool>(out);
}

bool WriteDynamicGoldens(const std::string& dir) {
  namespace golden = cuckoo_golden;
  bool ok = WriteFile(
      dir + "/" + golden::kPlainIntegerFile,
      cuckoo::SerializeCuckooFilter(golden::PlainIntegerFilter().filter));
  ok &= WriteFile(
      dir + "/" + golden::kGrownSemiSortedFile,
      cuckoo::SerializeCuckooFilter(golden::GrownSemiSortedFilter().filter));
  const std::vector<std::vector<uint8_t>> chunks = golden::PlainIntegerChunks();
  for (size_t i = 0; i < chunks.size(); ++i) {
    ok &= WriteFile(dir + "/" + golden::ChunkFile(i), chunks[i]);
  }
  ok &= WriteFile(dir + "/" + golden::kShardedFile,
                  golden::ShardedIntegerFilterBytes());
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_golden_blocks DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::ofstream manifest(dir + "/MANIFEST");
  manifest << cuckoo_golden::kManifestHeader << "\n";
  for (const cuckoo_golden::GoldenBlockSpec& spec :
       cuckoo_golden::kGoldenBlocks) {
    const rocksdb_cuckoo::EncodedBlock block = rocksdb_cuckoo::EncodeTableBlock(
        cuckoo_golden::HashesOf(spec),
        cuckoo::ChooseForBitsPerKey(spec.bits_per_key));
    std::ofstream out(cuckoo_golden::BlockPath(dir, spec.name),
                      std::ios::binary);
    out.write(block.data.get(), static_cast<std::streamsize>(block.size));
    manifest << spec.name << " " << block.size << " "
             << cuckoo_golden::CountAbsentMatches(rocksdb_cuckoo::DecodeBlock(
                    reinterpret_cast<const uint8_t*>(block.data.get()),
                    block.size))
             << "\n";
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", spec.name);
      return 1;
    }
  }
  return manifest && WriteDynamicGoldens(dir) ? 0 : 1;
}
