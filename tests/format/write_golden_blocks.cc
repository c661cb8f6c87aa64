// Writes the golden filter blocks and their MANIFEST (golden_blocks.h) into a
// folder. Run only when a new format version is introduced, and then as new
// blocks beside the old ones: the committed blocks are what SSTs already
// written contain, and the format tests require today's code to reproduce
// and read them byte for byte.
//
// usage: write_golden_blocks DIR
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cuckoo/bucket_table.h"
#include "cuckoo/hashing.h"
#include "cuckoo/sizing.h"
#include "cuckoo_filter_block.h"
#include "golden_blocks.h"

namespace {

std::vector<uint64_t> HashesOf(const cuckoo_golden::GoldenBlockSpec& spec) {
  std::vector<uint64_t> hashes;
  for (const std::string& key : cuckoo_golden::KeysOf(spec)) {
    hashes.push_back(cuckoo::HashKey(key.data(), key.size()));
  }
  return hashes;
}

uint64_t AbsentMatches(const rocksdb_cuckoo::EncodedBlock& encoded) {
  const rocksdb_cuckoo::DecodedBlock block = rocksdb_cuckoo::DecodeBlock(
      reinterpret_cast<const uint8_t*>(encoded.data.get()), encoded.size);
  const cuckoo::CuckooHashing hashing(block.num_buckets,
                                      block.layout.fingerprint_bits);
  const cuckoo::BucketTableView view(block.layout, block.num_buckets,
                                     block.table);
  uint64_t matches = 0;
  for (uint32_t i = 0; i < cuckoo_golden::kAbsentKeys; ++i) {
    const std::string key = cuckoo_golden::AbsentKey(i);
    matches +=
        view.Contains(hashing.Locate(cuckoo::HashKey(key.data(), key.size())));
  }
  return matches;
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
        HashesOf(spec), cuckoo::ChooseForBitsPerKey(spec.bits_per_key));
    std::ofstream out(cuckoo_golden::BlockPath(dir, spec.name),
                      std::ios::binary);
    out.write(block.data.get(), static_cast<std::streamsize>(block.size));
    manifest << spec.name << " " << block.size << " " << AbsentMatches(block)
             << "\n";
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", spec.name);
      return 1;
    }
  }
  return manifest ? 0 : 1;
}
