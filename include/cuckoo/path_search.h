// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The breadth-first search for the shortest chain of moves that makes room
// for a fingerprint whose two buckets are full, and the moves along it. The
// dynamic filter's insert (filter_core.h) and the static builder's
// placement (static_builder.h) both run it; they differ only in what they
// give it: the table's operations (a Graph), the bounds, and whether a
// bucket is queued at most once (BucketMarks) or may be queued again
// (NoBucketMarks).
//
// The graph
// ---------
// Its nodes are buckets. A value v stored in bucket x may move to its other
// bucket, AltBucket(x, v): one edge out of x per slot. A path from one of
// the key's two buckets (a root) to a bucket with an empty slot frees a slot
// in the root when its moves run from the far end back: the last value moves
// into the empty slot, the one before it into the slot the last one left,
// and so on, and the root's freed slot takes the new fingerprint. Each
// value is written to its new slot before its old slot is overwritten, so
// at every moment of the moves it is in one of its own two buckets (for a
// moment in both), and no lookup misses it. Breadth-first order finds a
// path of fewest moves: the fewest writes, and the least disturbance of the
// table.
//
// The order of reads
// ------------------
// A bucket is tested for room when its parent is expanded, not when it comes
// off the queue: expanding a node loads its bucket, computes all its
// children, prefetches them together, and then tests them in order, so the
// children's misses overlap. The first child with room ends the search. A
// child without room is queued, and when it is expanded in turn its bucket
// is still in cache. The buckets read are those that a test at dequeue would
// read, in the same order; only the times of their misses differ.
//
// Bounds
// ------
// At most `capacity` nodes are queued, and paths have at most `max_depth`
// moves: the children of nodes max_depth - 1 moves from a root are tested
// but not queued. The roots count as nodes.
//
// Marks
// -----
// Without marks a bucket reached in several ways is queued each time. The
// path found still passes through no bucket twice: if it held bucket X at
// depths i < j, the moves below X at depth j would also lead from X at
// depth i (the table does not change during the search, so X has the same
// children), and the search, which generates nodes in order of depth and
// queues them in that order until it stops queuing, would have reached the
// end of the path j - i moves earlier. With marks (one bit per bucket, the
// static builder's), each bucket is queued at most once, which lets a large
// search cover more of the table; the marks are cleared before Run returns.
#pragma once

#include <cassert>
#include <cstdint>
#include <vector>

namespace cuckoo {

// A bucket of the search: reached from node `parent` (-1 for the key's own
// buckets) by moving the value in slot `slot` of the parent's bucket (as
// the graph's Load lists them) to its other bucket.
struct PathNode {
  uint32_t bucket;
  int16_t parent;
  uint8_t slot;
};

struct PathSearchResult {
  bool found = false;   // the fingerprint is stored
  uint32_t moves = 0;   // values moved to make room
  uint32_t queued = 0;  // nodes queued, the roots included
};

// No marks: a bucket may be queued again.
struct NoBucketMarks {
  bool Mark(uint32_t) { return true; }
  void Clear(uint32_t) {}
  void Prefetch(uint32_t) {}
};

// One bit per bucket, set for the buckets queued by the running search.
class BucketMarks {
 public:
  explicit BucketMarks(uint32_t num_buckets)
      : words_(num_buckets / 64 + 1, 0) {}

  // True if `bucket` was not marked; it is marked now.
  bool Mark(uint32_t bucket) {
    uint64_t& word = words_[bucket / 64];
    const uint64_t bit = uint64_t{1} << (bucket % 64);
    const bool was_marked = (word & bit) != 0;
    word |= bit;
    return !was_marked;
  }
  void Clear(uint32_t bucket) {
    words_[bucket / 64] &= ~(uint64_t{1} << (bucket % 64));
  }
  void Prefetch(uint32_t bucket) { __builtin_prefetch(&words_[bucket / 64]); }

  static uint64_t BytesFor(uint64_t num_buckets) {
    return (num_buckets / 64 + 1) * sizeof(uint64_t);
  }

 private:
  std::vector<uint64_t> words_;
};

// The search over `graph`, with `kMaxSlots` at least its slots per bucket.
// A Graph has:
//   uint32_t slots()                      slots per bucket
//   void Prefetch(bucket)
//   void Load(bucket, uint32_t* values)   values[0, slots()), 0 = empty
//   uint32_t AltBucket(bucket, value)     the other bucket of a stored value
//   int Room(bucket)                      where the bucket has an empty
//                                         slot, as a slot for Write; -1
//                                         when it has none
//   void Write(bucket, slot, from, to)    the bucket's `slot`, which holds
//                                         `from` (0: the empty slot that
//                                         Room named), gets `to`
// Write's slot is where Load listed `from`; a graph whose buckets find a
// value by itself (a semi-sorted one, whose slot order Write changes) may
// ignore it. Each bucket of a path is loaded before it is written.
template <int kMaxSlots, typename Graph, typename Marks>
class ShortestPathSearch {
 public:
  ShortestPathSearch(Graph& graph, Marks& marks, PathNode* nodes,
                     uint32_t capacity, uint32_t max_depth)
      : graph_(graph),
        marks_(marks),
        nodes_(nodes),
        capacity_(capacity),
        max_depth_(max_depth) {
    assert(capacity <= kMaxCapacity);
  }

  // Stores `fingerprint`, whose buckets `first` and `second` are both full
  // (the first one searched first), by the moves of a shortest path; with
  // found false and the table unchanged when the bounded search finds none.
  PathSearchResult Run(uint32_t first, uint32_t second, uint32_t fingerprint) {
    PathSearchResult result;
    if (max_depth_ == 0 || capacity_ < 2) return result;
    uint32_t queued = 0;
    if (marks_.Mark(first)) nodes_[queued++] = {first, -1, 0};
    if (marks_.Mark(second)) nodes_[queued++] = {second, -1, 0};
    const uint32_t slots = graph_.slots();
    uint32_t depth = 0;  // of nodes_[head]
    uint32_t level_end = queued;
    for (uint32_t head = 0; head < queued; ++head) {
      if (head == level_end) {
        ++depth;
        level_end = queued;
      }
      const uint32_t bucket = nodes_[head].bucket;
      uint32_t values[kMaxSlots];
      graph_.Load(bucket, values);
      uint32_t children[kMaxSlots];
      for (uint32_t slot = 0; slot < slots; ++slot) {
        children[slot] = graph_.AltBucket(bucket, values[slot]);
        graph_.Prefetch(children[slot]);
        marks_.Prefetch(children[slot]);
      }
      const bool queue_children = depth + 1 < max_depth_;
      for (uint32_t slot = 0; slot < slots; ++slot) {
        const int room = graph_.Room(children[slot]);
        if (room >= 0) {
          result.found = true;
          result.moves = ShiftAlongPath(head, slot, values[slot],
                                        children[slot], room, fingerprint);
          break;
        }
        if (queue_children && queued < capacity_ &&
            marks_.Mark(children[slot])) {
          nodes_[queued++] = {children[slot], static_cast<int16_t>(head),
                              static_cast<uint8_t>(slot)};
        }
      }
      if (result.found) break;
    }
    for (uint32_t i = 0; i < queued; ++i) marks_.Clear(nodes_[i].bucket);
    result.queued = queued;
    return result;
  }

  // PathNode's parent and slot fields bound the queue and the slots.
  static constexpr uint32_t kMaxCapacity = 32768;
  static_assert(kMaxSlots <= 256);

 private:
  // The value `moving`, in slot `slot` of nodes_[last]'s bucket, moves to
  // its other bucket `target`, into the empty slot `room`; then, from
  // nodes_[last] back to a root, each bucket's freed slot takes the value
  // its parent moves out, and the root's takes `fingerprint`. Returns the
  // number of values moved.
  uint32_t ShiftAlongPath(uint32_t last, uint32_t slot, uint32_t moving,
                          uint32_t target, int room, uint32_t fingerprint) {
    graph_.Write(target, room, 0, moving);
    uint32_t moves = 1;
    for (const PathNode* node = &nodes_[last];;) {
      uint32_t arriving = fingerprint;
      if (node->parent >= 0) {
        const PathNode& parent = nodes_[node->parent];
        uint32_t values[kMaxSlots];
        graph_.Load(parent.bucket, values);
        arriving = values[node->slot];
      }
      graph_.Write(node->bucket, static_cast<int>(slot), moving, arriving);
      if (node->parent < 0) return moves;
      ++moves;
      moving = arriving;
      slot = node->slot;
      node = &nodes_[node->parent];
    }
  }

  Graph& graph_;
  Marks& marks_;
  PathNode* nodes_;
  uint32_t capacity_;
  uint32_t max_depth_;
};

}  // namespace cuckoo
