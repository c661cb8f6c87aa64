// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// One allocator state for every build benchmark: glibc's malloc thresholds
// set as a process that has run a while has them.
#pragma once

#include <cstddef>
#include <cstdlib>

namespace bench_support {

// glibc raises its mmap threshold to the size of each mmapped block freed
// (up to 32 MiB) and its trim threshold to twice that, so a fresh process
// gives memory back to the kernel, and faults it in again, at sizes where a
// process that has run a while (a RocksDB that has freed memtable arenas and
// filter blocks) keeps it. Which filter's build order then meets a trim
// depends on the benchmarks that ran before it. Freeing one block just under
// 32 MiB at the start puts the thresholds where a long-running process has
// them, for every benchmark alike; other allocators are unaffected.
inline void SettleMallocThresholds() {
  constexpr size_t kUnderLargestDynamicThreshold = (size_t{32} << 20) - 65536;
  // Through a volatile pointer, so that the pair is not optimized away.
  void* volatile block = std::malloc(kUnderLargestDynamicThreshold);
  std::free(block);
}

}  // namespace bench_support
