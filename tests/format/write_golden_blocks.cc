// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
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

#include "cuckoo/sizing.h"
#include "cuckoo_filter_block.h"
#include "golden_blocks.h"

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
  return manifest ? 0 : 1;
}
