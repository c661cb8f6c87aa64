// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Peak memory of a stretch of code: the program that links this replaces the
// global operator new and delete (librocksdb's allocations included, since
// the executable's definitions take precedence), and while tracking is on it
// counts the bytes live in them as the allocator reports them
// (malloc_usable_size), and their peak. Off, it costs one relaxed load per
// allocation.
#pragma once

#include <cstdint>
#include <string>

namespace filter_compare {
namespace allocation_tracking {

// Starts counting from zero on this thread's and every other thread's
// allocations.
void Start();
// Stops, and returns the peak of (bytes allocated - bytes freed) since
// Start: what the stretch held at most beyond what it started with.
int64_t StopAndGetPeakBytes();

// The allocator behind malloc: "jemalloc" when its mallctl is linked or
// preloaded, else "glibc malloc".
std::string AllocatorName();

// What an allocation of `bytes` really gives (malloc_usable_size).
uint64_t UsableBytes(uint64_t bytes);

}  // namespace allocation_tracking
}  // namespace filter_compare
