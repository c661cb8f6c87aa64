// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Golden tests of the on-disk format: fixed key hashes, key positions and
// semi-sort codes, and committed filter blocks (tests/format/golden) that
// today's code must reproduce byte for byte and read with the recorded
// answers; likewise the dynamic filter's serialized forms (whole, in chunks,
// sharded). Every filter block RocksDB already stored was written this way: a
// change here makes those SSTs answer "no" for stored keys. RocksDB-free.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuckoo/bucket_table.h"
#include "cuckoo/hashing.h"
#include "cuckoo/semi_sort.h"
#include "cuckoo/sizing.h"
#include "filter_format.h"
#include "golden_blocks.h"
#include "golden_dynamic.h"

namespace {

using cuckoo_golden::GoldenBlockSpec;

std::string Alphabet(size_t length) {
  std::string text;
  for (size_t i = 0; i < length; ++i) text += static_cast<char>('a' + i % 26);
  return text;
}

// XXH3-64 with seed 0, as `xxhsum -H3` of xxHash 0.8.1 prints it. Keys over
// 240 bytes go through XXH3's vector kernel (AVX2, SSE2, NEON, scalar on
// s390x), which must not change the value.
TEST(GoldenHash, KeyHashIsXxh3WithSeedZero) {
  EXPECT_EQ(cuckoo::HashKey("", 0), 0x2d06800538d394c2ull);
  EXPECT_EQ(cuckoo::HashKey("a", 1), 0xe6c632b61e964e1full);
  EXPECT_EQ(cuckoo::HashKey("golden-key-0000000", 18), 0xf85e8bec414f3504ull);
  const std::string x241(241, 'x');
  EXPECT_EQ(cuckoo::HashKey(x241.data(), x241.size()), 0x14da9e5c301a6a1dull);
  const std::string alphabet = Alphabet(1000);
  EXPECT_EQ(cuckoo::HashKey(alphabet.data(), alphabet.size()),
            0xe153425558d7da5dull);
}

// HashInteger (KeyHasher::kInteger), as SplitMix64's first output for the
// seed `key` gives it: 0xe220a8397b1dcdaf is the first value of Vigna's
// splitmix64.c for the seed 0; the others are from a Python transcription of
// the formula in hashing.h.
TEST(GoldenHash, IntegerKeyHashIsSplitMix64sOutputFunction) {
  EXPECT_EQ(cuckoo::HashInteger(0), 0xe220a8397b1dcdafull);
  EXPECT_EQ(cuckoo::HashInteger(1), 0x910a2dec89025cc1ull);
  EXPECT_EQ(cuckoo::HashInteger(~uint64_t{0}), 0xe4d971771b652c20ull);
  EXPECT_EQ(cuckoo::HashInteger(0x0123456789abcdefull), 0x157a3807a48faa9dull);
}

struct GoldenPosition {
  uint64_t hash;
  uint32_t num_buckets;
  int fingerprint_bits;
  uint32_t bucket;
  uint32_t alternate;
  uint32_t fingerprint;
};

// Written by the current code and checked against the formulas of
// docs/filter-format.md by an independent implementation.
constexpr GoldenPosition kGoldenPositions[] = {
    {0x0000000000000000ull, 2u, 4, 0u, 1u, 0x1u},
    {0x0000000000000000ull, 2u, 16, 0u, 1u, 0x1u},
    {0x0000000000000000ull, 1000u, 32, 0u, 619u, 0x1u},
    {0x0000000000000000ull, 1048576u, 32, 0u, 648055u, 0x1u},
    {0x0000000000000000ull, 4294967294u, 4, 0u, 2654435759u, 0x1u},
    {0x0000000000000000ull, 4294967294u, 16, 0u, 2654435759u, 0x1u},
    {0x0000000000000001ull, 2u, 12, 0u, 1u, 0x1u},
    {0x0000000000000001ull, 1000u, 4, 0u, 619u, 0x1u},
    {0x0000000000000001ull, 1000u, 16, 0u, 619u, 0x1u},
    {0x0000000000000001ull, 1048576u, 4, 0u, 648055u, 0x1u},
    {0x0000000000000001ull, 1048576u, 16, 0u, 648055u, 0x1u},
    {0x0000000000000001ull, 4294967294u, 12, 0u, 2654435759u, 0x1u},
    {0xffffffffffffffffull, 2u, 32, 1u, 0u, 0xffffffffu},
    {0xffffffffffffffffull, 1000u, 12, 999u, 850u, 0xfffu},
    {0xffffffffffffffffull, 1048576u, 12, 1048575u, 890426u, 0xfffu},
    {0xffffffffffffffffull, 4294967294u, 32, 4294967293u, 1640531536u,
     0xffffffffu},
    {0x0123456789abcdefull, 2u, 4, 0u, 1u, 0x9u},
    {0x0123456789abcdefull, 2u, 16, 0u, 1u, 0x89acu},
    {0x0123456789abcdefull, 1000u, 32, 4u, 139u, 0x89abcdefu},
    {0x0123456789abcdefull, 1048576u, 32, 4660u, 144721u, 0x89abcdefu},
    {0x0123456789abcdefull, 4294967294u, 4, 19088742u, 2395996625u, 0x9u},
    {0x0123456789abcdefull, 4294967294u, 16, 19088742u, 4232197765u, 0x89acu},
    {0x8000000080000000ull, 2u, 12, 1u, 0u, 0x800u},
    {0x8000000080000000ull, 1000u, 4, 500u, 445u, 0x8u},
    {0x8000000080000000ull, 1000u, 16, 500u, 237u, 0x8000u},
    {0x8000000080000000ull, 1048576u, 4, 524288u, 465853u, 0x8u},
    {0x8000000080000000ull, 1048576u, 16, 524288u, 249225u, 0x8000u},
    {0x8000000080000000ull, 4294967294u, 12, 2147483647u, 1003325440u, 0x800u},
};

TEST(GoldenPositions, LocateGivesTheFixedBucketsAndFingerprints) {
  for (const GoldenPosition& golden : kGoldenPositions) {
    SCOPED_TRACE("hash " + std::to_string(golden.hash) + " m " +
                 std::to_string(golden.num_buckets) + " f " +
                 std::to_string(golden.fingerprint_bits));
    const cuckoo::CuckooHashing hashing(golden.num_buckets,
                                        golden.fingerprint_bits);
    const cuckoo::KeyPosition position = hashing.Locate(golden.hash);
    EXPECT_EQ(position.bucket, golden.bucket);
    EXPECT_EQ(position.fingerprint, golden.fingerprint);
    EXPECT_EQ(position.alternate, golden.alternate);
  }
}

TEST(GoldenPositions, AltBucketGivesTheFixedBucketBothWays) {
  for (const GoldenPosition& golden : kGoldenPositions) {
    const cuckoo::CuckooHashing hashing(golden.num_buckets,
                                        golden.fingerprint_bits);
    EXPECT_EQ(hashing.AltBucket(golden.bucket, golden.fingerprint),
              golden.alternate);
    EXPECT_EQ(hashing.AltBucket(golden.alternate, golden.fingerprint),
              golden.bucket);
  }
}

// Ranks of sorted nibble tuples: C(n0,1) + C(n1+1,2) + C(n2+2,3) + C(n3+3,4).
TEST(GoldenSemiSort, SortedNibblesHaveTheFixedCodes) {
  struct Code {
    uint32_t n0, n1, n2, n3, code;
  };
  const Code codes[] = {{0, 0, 0, 0, 0},     {0, 0, 0, 1, 1},
                        {0, 0, 1, 1, 2},     {1, 1, 1, 1, 4},
                        {0, 0, 0, 15, 3060}, {1, 2, 3, 4, 49},
                        {3, 7, 9, 12, 1561}, {15, 15, 15, 15, 3875}};
  for (const Code& c : codes) {
    EXPECT_EQ(cuckoo::semi_sort::EncodeSortedNibbles(c.n0, c.n1, c.n2, c.n3),
              c.code)
        << c.n0 << " " << c.n1 << " " << c.n2 << " " << c.n3;
  }
}

class GoldenBlocks : public testing::Test {
 protected:
  static std::vector<uint8_t> Committed(const GoldenBlockSpec& spec) {
    return cuckoo_golden::ReadFileBytes(
        cuckoo_golden::BlockPath(cuckoo_golden::GoldenDir(), spec.name));
  }
  const std::vector<cuckoo_golden::ManifestEntry> manifest_ =
      cuckoo_golden::ReadManifest(cuckoo_golden::GoldenDir());
};

TEST_F(GoldenBlocks, ManifestListsEveryBlockWithItsSize) {
  ASSERT_EQ(manifest_.size(), std::size(cuckoo_golden::kGoldenBlocks));
  for (const GoldenBlockSpec& spec : cuckoo_golden::kGoldenBlocks) {
    EXPECT_EQ(cuckoo_golden::FindEntry(manifest_, spec.name).bytes,
              Committed(spec).size())
        << spec.name;
  }
}

TEST_F(GoldenBlocks, TodaysBuildWritesTheCommittedBytes) {
  for (const GoldenBlockSpec& spec : cuckoo_golden::kGoldenBlocks) {
    const std::vector<uint8_t> committed = Committed(spec);
    const rocksdb_cuckoo::EncodedBlock built = rocksdb_cuckoo::EncodeTableBlock(
        cuckoo_golden::HashesOf(spec),
        cuckoo::ChooseForBitsPerKey(spec.bits_per_key));
    ASSERT_EQ(built.size, committed.size()) << spec.name;
    size_t first_difference = 0;
    while (first_difference < built.size &&
           static_cast<uint8_t>(built.data[first_difference]) ==
               committed[first_difference]) {
      ++first_difference;
    }
    EXPECT_EQ(first_difference, built.size)
        << spec.name << " differs from the committed block at byte "
        << first_difference;
  }
}

TEST_F(GoldenBlocks, CommittedBlocksMatchTheirKeysAndTheRecordedAbsentKeys) {
  for (const GoldenBlockSpec& spec : cuckoo_golden::kGoldenBlocks) {
    SCOPED_TRACE(spec.name);
    const std::vector<uint8_t> committed = Committed(spec);
    const rocksdb_cuckoo::DecodedBlock block =
        rocksdb_cuckoo::DecodeBlock(committed.data(), committed.size());
    ASSERT_TRUE(block.has_table) << block.reason;
    EXPECT_EQ(block.layout,
              cuckoo::ChooseForBitsPerKey(spec.bits_per_key).layout);
    // Keys with the same bucket and fingerprint share one slot.
    EXPECT_LE(block.num_keys, spec.num_keys);
    EXPECT_EQ(block.num_keys == 0, spec.num_keys == 0);
    cuckoo_golden::VisitBlockContains(block, [&](const auto& contains) {
      for (const std::string& key : cuckoo_golden::KeysOf(spec)) {
        ASSERT_TRUE(contains(key)) << key;
      }
    });
    const uint64_t absent_matches = cuckoo_golden::CountAbsentMatches(block);
    EXPECT_EQ(absent_matches,
              cuckoo_golden::FindEntry(manifest_, spec.name).absent_matches);
  }
}

// The dynamic filter's serialized forms (docs/dynamic-filter-format.md).
namespace golden = cuckoo_golden;

std::vector<uint8_t> CommittedFile(const std::string& name) {
  return golden::ReadFileBytes(golden::GoldenDir() + "/" + name);
}

uint64_t Field64(const std::vector<uint8_t>& bytes, size_t offset) {
  return cuckoo::byte_io::Load<uint64_t>(bytes.data() + offset);
}
uint32_t Field32(const std::vector<uint8_t>& bytes, size_t offset) {
  return cuckoo::byte_io::Load<uint32_t>(bytes.data() + offset);
}

// The last 8 bytes are the XXH3-64 of all before them.
void ExpectSealed(const std::vector<uint8_t>& bytes) {
  ASSERT_GT(bytes.size(), 8u);
  EXPECT_EQ(Field64(bytes, bytes.size() - 8),
            XXH3_64bits(bytes.data(), bytes.size() - 8));
}

TEST(GoldenDynamicFilter, TodaysCodeWritesTheCommittedBytes) {
  EXPECT_EQ(cuckoo::SerializeCuckooFilter(golden::PlainIntegerFilter().filter),
            CommittedFile(golden::kPlainIntegerFile));
  EXPECT_EQ(
      cuckoo::SerializeCuckooFilter(golden::GrownSemiSortedFilter().filter),
      CommittedFile(golden::kGrownSemiSortedFile));
  const std::vector<std::vector<uint8_t>> chunks = golden::PlainIntegerChunks();
  for (size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i], CommittedFile(golden::ChunkFile(i))) << i;
  }
  EXPECT_EQ(golden::ShardedIntegerFilterBytes(),
            CommittedFile(golden::kShardedFile));
}

// Each field where the format puts it, and the committed bytes load into a
// filter that finds every stored key.
TEST(GoldenDynamicFilter, PlainIntegerFilterFieldsAndKeys) {
  const std::vector<uint8_t> bytes = CommittedFile(golden::kPlainIntegerFile);
  const golden::GoldenDynamicFilter built = golden::PlainIntegerFilter();
  const uint32_t stash = built.filter.Stats().stash_size;
  ASSERT_GT(stash, 0u) << "the golden filter must use its stash";
  ASSERT_EQ(bytes.size(), 80 + 8 * stash + 4 * 16 / 8 + 7 + 8);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 4),
            std::string("CKF\x01", 4));
  EXPECT_EQ(cuckoo::byte_io::Load<uint16_t>(bytes.data() + 4), 2);
  EXPECT_EQ(bytes[6], 2);  // slots per bucket
  EXPECT_EQ(bytes[7], 8);  // key fingerprint bits
  EXPECT_EQ(bytes[8], 2);  // plain, key hasher 1 (integer)
  EXPECT_EQ(bytes[9] | bytes[10] | bytes[11], 0);  // no growth
  EXPECT_EQ(Field32(bytes, 12), 4u);               // buckets
  EXPECT_EQ(Field32(bytes, 16), 20u);              // max kicks
  EXPECT_EQ(Field32(bytes, 20), 4u);               // stash capacity
  EXPECT_EQ(Field32(bytes, 24), stash);
  EXPECT_GE(Field32(bytes, 28), stash);  // peak stash size
  EXPECT_EQ(Field64(bytes, 32), built.stored.size());
  EXPECT_EQ(Field64(bytes, 40), 7u);  // seed
  EXPECT_GT(Field64(bytes, 56), 0u);  // total kicks
  EXPECT_EQ(Field64(bytes, 64), 1u);  // the insert that found it full
  EXPECT_EQ(Field64(bytes, 72), 1u);  // key 1, erased
  ExpectSealed(bytes);
  std::string error;
  const std::optional<cuckoo::CuckooFilter> loaded =
      cuckoo::DeserializeCuckooFilter(bytes.data(), bytes.size(), &error);
  ASSERT_TRUE(loaded.has_value()) << error;
  EXPECT_EQ(loaded->options().hasher, cuckoo::KeyHasher::kInteger);
  for (uint64_t hash : built.stored) EXPECT_TRUE(loaded->Contains(hash));
}

TEST(GoldenDynamicFilter, GrownSemiSortedFilterFieldsAndKeys) {
  const std::vector<uint8_t> bytes =
      CommittedFile(golden::kGrownSemiSortedFile);
  const golden::GoldenDynamicFilter built = golden::GrownSemiSortedFilter();
  ASSERT_EQ(built.filter.Growths(), 2u);
  const uint32_t stash = built.filter.Stats().stash_size;
  // 8 buckets of 4 semi-sorted slots of 8 + 1 bits: 4 (9 - 1) bits each.
  ASSERT_EQ(bytes.size(), 80 + 8 * stash + 8 * 32 / 8 + 7 + 8);
  EXPECT_EQ(bytes[6], 4);
  EXPECT_EQ(bytes[7], 8);
  EXPECT_EQ(bytes[8], 1);   // semi-sorted, key hasher 0 (XXH3)
  EXPECT_EQ(bytes[9], 1);   // expansion 2^1
  EXPECT_EQ(bytes[10], 3);  // growth limit
  EXPECT_EQ(bytes[11], 2);  // growths
  EXPECT_EQ(Field32(bytes, 12), 8u);
  EXPECT_EQ(Field64(bytes, 32), built.stored.size());
  ExpectSealed(bytes);
  std::string error;
  const std::optional<cuckoo::CuckooFilter> loaded =
      cuckoo::DeserializeCuckooFilter(bytes.data(), bytes.size(), &error);
  ASSERT_TRUE(loaded.has_value()) << error;
  EXPECT_EQ(loaded->options().hasher, cuckoo::KeyHasher::kXxh3);
  EXPECT_EQ(loaded->Growths(), 2u);
  for (uint64_t hash : built.stored) EXPECT_TRUE(loaded->Contains(hash));
}

// The chunk frames cut the serialized filter at multiples of the payload
// size; loaded in order, they give the same filter.
TEST(GoldenDynamicFilter, ChunkFramesCarryTheSerializedFilter) {
  const std::vector<uint8_t> whole = CommittedFile(golden::kPlainIntegerFile);
  const size_t num_chunks = (whole.size() + golden::kGoldenChunkPayload - 1) /
                            golden::kGoldenChunkPayload;
  cuckoo::CuckooFilterChunkLoader loader;
  std::string error;
  for (size_t i = 0; i < num_chunks; ++i) {
    SCOPED_TRACE("chunk " + std::to_string(i));
    const std::vector<uint8_t> chunk = CommittedFile(golden::ChunkFile(i));
    const size_t offset = i * golden::kGoldenChunkPayload;
    const size_t payload =
        std::min(golden::kGoldenChunkPayload, whole.size() - offset);
    ASSERT_EQ(chunk.size(), 40 + payload + 8);
    EXPECT_EQ(std::string(chunk.begin(), chunk.begin() + 4),
              std::string("CKC\x01", 4));
    EXPECT_EQ(Field32(chunk, 4), i);                                 // sequence
    EXPECT_EQ(Field64(chunk, 8), Field64(whole, whole.size() - 8));  // dump id
    EXPECT_EQ(Field64(chunk, 16), offset);
    EXPECT_EQ(Field64(chunk, 24), whole.size());
    EXPECT_EQ(Field32(chunk, 32), payload);
    EXPECT_EQ(Field32(chunk, 36), num_chunks);
    EXPECT_TRUE(
        std::equal(chunk.begin() + 40, chunk.end() - 8,
                   whole.begin() + static_cast<std::ptrdiff_t>(offset)));
    ExpectSealed(chunk);
    ASSERT_TRUE(loader.Load(chunk.data(), chunk.size(), &error)) << error;
  }
  const std::optional<cuckoo::CuckooFilter> loaded = loader.Finish(&error);
  ASSERT_TRUE(loaded.has_value()) << error;
  EXPECT_EQ(cuckoo::SerializeCuckooFilter(*loaded), whole);
}

// Magic, shard count, then each shard's length and serialized filter, then
// the checksum; the keys are found through the loaded sharded filter.
TEST(GoldenDynamicFilter, ShardedFilterFramesEachShard) {
  const std::vector<uint8_t> bytes = CommittedFile(golden::kShardedFile);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 4),
            std::string("CKS\x01", 4));
  ASSERT_EQ(Field32(bytes, 4), 2u);
  size_t at = 8;
  uint64_t items = 0;
  std::string error;
  for (int shard = 0; shard < 2; ++shard) {
    const size_t length = static_cast<size_t>(Field64(bytes, at));
    at += 8;
    ASSERT_LE(at + length, bytes.size() - 8);
    const std::optional<cuckoo::CuckooFilter> filter =
        cuckoo::DeserializeCuckooFilter(bytes.data() + at, length, &error);
    ASSERT_TRUE(filter.has_value()) << "shard " << shard << ": " << error;
    EXPECT_EQ(filter->options().seed, 9u + static_cast<uint64_t>(shard));
    EXPECT_EQ(filter->NumBuckets(), 8u);
    items += filter->Size();
    at += length;
  }
  EXPECT_EQ(at, bytes.size() - 8);
  EXPECT_EQ(items, golden::kGoldenShardedKeys);
  ExpectSealed(bytes);
  const std::unique_ptr<cuckoo::ConcurrentCuckooFilter> loaded =
      cuckoo::ConcurrentCuckooFilter::Deserialize(bytes.data(), bytes.size(),
                                                  &error);
  ASSERT_NE(loaded, nullptr) << error;
  EXPECT_EQ(loaded->hasher(), cuckoo::KeyHasher::kInteger);
  for (uint64_t key = 0; key < golden::kGoldenShardedKeys; ++key) {
    EXPECT_TRUE(loaded->Contains(cuckoo::HashInteger(key))) << key;
  }
}

}  // namespace
