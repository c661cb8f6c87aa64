// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Tests of the shortest-path search (path_search.h) on small hand-made
// tables, where each path and its length are known: the path found is a
// shortest one, its moves keep every value in one of its buckets, the
// bounds hold, and marks keep a bucket from being queued twice.
#include "cuckoo/path_search.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace cuckoo {
namespace {

constexpr int kSlots = 2;
constexpr uint32_t kNoBound = 1000;

// A table of two-slot buckets in which every value names its two buckets.
// Write checks that the slot it overwrites holds what the search says, and
// that no stored value is ever out of both of its buckets.
class ToyGraph {
 public:
  explicit ToyGraph(uint32_t num_buckets) : buckets_(num_buckets) {}

  // Stores `value`, whose buckets are `home` and `other`, in `home`.
  void Put(uint32_t value, uint32_t home, uint32_t other) {
    homes_[value] = {home, other};
    stored_.insert(value);
    for (uint32_t& slot : buckets_[home]) {
      if (slot == 0) {
        slot = value;
        return;
      }
    }
    ADD_FAILURE() << "bucket " << home << " is full";
  }
  // A table of `num_buckets` buckets holding `values`, each {value, home,
  // other} stored in its home, and expecting the fingerprint 99, whose
  // buckets are 0 and 1.
  static ToyGraph Of(uint32_t num_buckets,
                     const std::vector<std::array<uint32_t, 3>>& values) {
    ToyGraph graph(num_buckets);
    for (const auto& [value, home, other] : values) {
      graph.Put(value, home, other);
    }
    graph.homes_[99] = {0, 1};
    return graph;
  }

  uint32_t slots() const { return kSlots; }
  void Prefetch(uint32_t) {}
  void Load(uint32_t bucket, uint32_t* values) {
    for (int slot = 0; slot < kSlots; ++slot) {
      values[slot] = buckets_[bucket][slot];
    }
  }
  uint32_t AltBucket(uint32_t bucket, uint32_t value) {
    const auto [home, other] = homes_.at(value);
    return bucket == home ? other : home;
  }
  int Room(uint32_t bucket) {
    for (int slot = 0; slot < kSlots; ++slot) {
      if (buckets_[bucket][slot] == 0) return slot;
    }
    return -1;
  }
  void Write(uint32_t bucket, int slot, uint32_t from, uint32_t to) {
    EXPECT_EQ(buckets_[bucket][slot], from) << "bucket " << bucket;
    buckets_[bucket][slot] = to;
    for (const auto& [value, homes] : homes_) {
      if (stored_.count(value) == 0) continue;
      const auto& [home, other] = homes;
      EXPECT_TRUE(Holds(home, value) || Holds(other, value))
          << "value " << value << " is out of the table";
    }
    ++writes_;
  }

  const std::array<uint32_t, kSlots>& bucket(uint32_t index) const {
    return buckets_[index];
  }
  std::vector<std::array<uint32_t, kSlots>> Snapshot() const {
    return buckets_;
  }
  // Whether every stored value is in one of its two buckets.
  bool EveryValueAtHome() const {
    for (uint32_t index = 0; index < buckets_.size(); ++index) {
      for (uint32_t value : buckets_[index]) {
        if (value == 0) continue;
        const auto [home, other] = homes_.at(value);
        if (index != home && index != other) return false;
      }
    }
    return true;
  }
  int writes() const { return writes_; }

 private:
  bool Holds(uint32_t bucket, uint32_t value) const {
    for (uint32_t held : buckets_[bucket]) {
      if (held == value) return true;
    }
    return false;
  }

  std::vector<std::array<uint32_t, kSlots>> buckets_;
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> homes_;
  std::set<uint32_t> stored_;
  int writes_ = 0;
};

template <typename Marks>
PathSearchResult RunSearch(ToyGraph& graph, Marks& marks, uint32_t first,
                           uint32_t second, uint32_t fingerprint,
                           uint32_t max_depth, uint32_t capacity) {
  std::vector<PathNode> nodes(capacity);
  ShortestPathSearch<kSlots, ToyGraph, Marks> search(graph, marks, nodes.data(),
                                                     capacity, max_depth);
  return search.Run(first, second, fingerprint);
}

// A search from roots 0 and 1 for fingerprint 99, without marks.
PathSearchResult RunSearch(ToyGraph& graph, uint32_t max_depth,
                           uint32_t capacity = 64) {
  NoBucketMarks marks;
  return RunSearch(graph, marks, 0, 1, 99, max_depth, capacity);
}

using Bucket = std::array<uint32_t, kSlots>;

// An unbounded search stores 99 with `moves` moves, one write per move and
// one for 99, and leaves the `expected` buckets so.
void ExpectStoredByMoves(ToyGraph& graph, uint32_t moves,
                         const std::map<uint32_t, Bucket>& expected) {
  const PathSearchResult result = RunSearch(graph, kNoBound);
  ASSERT_TRUE(result.found);
  EXPECT_EQ(result.moves, moves);
  EXPECT_EQ(graph.writes(), static_cast<int>(moves) + 1);
  for (const auto& [index, contents] : expected) {
    EXPECT_EQ(graph.bucket(index), contents) << "bucket " << index;
  }
  EXPECT_TRUE(graph.EveryValueAtHome());
}

// Roots 0 and 1, both full. From root 0, value 10 leads to bucket 2 and
// value 11 to bucket 3, both full, and bucket 2's value 20 leads to the
// empty bucket 6: two moves. From root 1, value 13 leads to bucket 5,
// which has room: one move, found although root 1 is searched second.
ToyGraph TwoPaths() {
  return ToyGraph::Of(8, {{10, 0, 2},
                          {11, 0, 3},
                          {12, 1, 4},
                          {13, 1, 5},
                          {20, 2, 6},
                          {21, 2, 7},
                          {30, 3, 7},
                          {31, 3, 7},
                          {40, 4, 7},
                          {41, 4, 7},
                          {50, 5, 7},
                          {60, 7, 3},
                          {61, 7, 4}});
}

TEST(PathSearchTest, TakesAShortestPath) {
  ToyGraph graph = TwoPaths();
  ExpectStoredByMoves(
      graph, 1, {{5, {50, 13}}, {1, {12, 99}}, {0, {10, 11}}, {6, {0, 0}}});
}

// Only a path of three moves: 0 -(10)-> 2 -(20)-> 3 -(30)-> 4, where
// bucket 4 has room. Everything else leads back into full buckets.
ToyGraph OnePathOfThreeMoves() {
  return ToyGraph::Of(6, {{10, 0, 2},
                          {11, 0, 1},
                          {12, 1, 0},
                          {13, 1, 0},
                          {20, 2, 3},
                          {21, 2, 1},
                          {30, 3, 4},
                          {31, 3, 0}});
}

TEST(PathSearchTest, MovesRunFromTheFarEndBack) {
  ToyGraph graph = OnePathOfThreeMoves();
  ExpectStoredByMoves(
      graph, 3, {{4, {30, 0}}, {3, {20, 31}}, {2, {10, 21}}, {0, {99, 11}}});
}

TEST(PathSearchTest, DepthAndNodeBoundsLeaveTheTableAsItWas) {
  for (const auto& [max_depth, capacity] :
       std::vector<std::pair<uint32_t, uint32_t>>{{2, 64}, {0, 64}, {3, 3}}) {
    SCOPED_TRACE("max_depth " + std::to_string(max_depth) + ", capacity " +
                 std::to_string(capacity));
    ToyGraph graph = OnePathOfThreeMoves();
    const auto before = graph.Snapshot();
    const PathSearchResult result = RunSearch(graph, max_depth, capacity);
    EXPECT_FALSE(result.found);
    EXPECT_EQ(result.moves, 0u);
    EXPECT_LE(result.queued, capacity);
    EXPECT_EQ(graph.writes(), 0);
    EXPECT_EQ(graph.Snapshot(), before);
  }
  // Exactly enough: three moves, and the nodes of the first two levels.
  ToyGraph graph = OnePathOfThreeMoves();
  EXPECT_TRUE(RunSearch(graph, 3).found);
}

// A full table of buckets that lead to each other in a cycle: no room
// anywhere. Without marks the search queues buckets again until its
// capacity; with them it queues each of the 4 buckets once, and clears its
// marks, so that a second search queues them again.
TEST(PathSearchTest, MarksQueueEachBucketOnceAndAreCleared) {
  ToyGraph graph(4);
  for (uint32_t bucket = 0; bucket < 4; ++bucket) {
    graph.Put(10 + bucket, bucket, (bucket + 1) % 4);
    graph.Put(20 + bucket, bucket, (bucket + 2) % 4);
  }
  const auto before = graph.Snapshot();
  constexpr uint32_t kCapacity = 40;
  const PathSearchResult unmarked = RunSearch(graph, kNoBound, kCapacity);
  EXPECT_FALSE(unmarked.found);
  EXPECT_EQ(unmarked.queued, kCapacity);

  BucketMarks marks(4);
  for (int run = 0; run < 2; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    const PathSearchResult marked =
        RunSearch(graph, marks, 0, 1, 99, kNoBound, kCapacity);
    EXPECT_FALSE(marked.found);
    EXPECT_EQ(marked.queued, 4u);
  }
  EXPECT_EQ(graph.Snapshot(), before);
}

}  // namespace
}  // namespace cuckoo
