// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The operator new and delete replacements behind allocation_tracking.h.
#include "allocation_tracking.h"

#include <dlfcn.h>
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>

namespace filter_compare {
namespace allocation_tracking {
namespace {

std::atomic<bool> tracking{false};
std::atomic<int64_t> live_bytes{0};
std::atomic<int64_t> peak_bytes{0};

void Allocated(void* pointer) {
  if (pointer == nullptr || !tracking.load(std::memory_order_relaxed)) return;
  const int64_t now =
      live_bytes.fetch_add(static_cast<int64_t>(malloc_usable_size(pointer)),
                           std::memory_order_relaxed) +
      static_cast<int64_t>(malloc_usable_size(pointer));
  int64_t peak = peak_bytes.load(std::memory_order_relaxed);
  while (now > peak && !peak_bytes.compare_exchange_weak(
                           peak, now, std::memory_order_relaxed)) {
  }
}

void Freed(void* pointer) {
  if (pointer == nullptr || !tracking.load(std::memory_order_relaxed)) return;
  live_bytes.fetch_sub(static_cast<int64_t>(malloc_usable_size(pointer)),
                       std::memory_order_relaxed);
}

void* Allocate(std::size_t bytes) {
  void* pointer = std::malloc(bytes == 0 ? 1 : bytes);
  if (pointer == nullptr) throw std::bad_alloc();
  Allocated(pointer);
  return pointer;
}

void* AllocateAligned(std::size_t bytes, std::align_val_t alignment) {
  const std::size_t align = static_cast<std::size_t>(alignment);
  // aligned_alloc wants a multiple of the alignment.
  const std::size_t size =
      ((bytes == 0 ? 1 : bytes) + align - 1) / align * align;
  void* pointer = std::aligned_alloc(align, size);
  if (pointer == nullptr) throw std::bad_alloc();
  Allocated(pointer);
  return pointer;
}

void Release(void* pointer) noexcept {
  Freed(pointer);
  std::free(pointer);
}

}  // namespace

void Start() {
  live_bytes.store(0, std::memory_order_relaxed);
  peak_bytes.store(0, std::memory_order_relaxed);
  tracking.store(true, std::memory_order_seq_cst);
}

int64_t StopAndGetPeakBytes() {
  tracking.store(false, std::memory_order_seq_cst);
  return peak_bytes.load(std::memory_order_relaxed);
}

std::string AllocatorName() {
  return dlsym(RTLD_DEFAULT, "mallctl") != nullptr ? "jemalloc"
                                                   : "glibc malloc";
}

uint64_t UsableBytes(uint64_t bytes) {
  const std::unique_ptr<char[]> probe(new char[bytes]);
  return malloc_usable_size(probe.get());
}

}  // namespace allocation_tracking
}  // namespace filter_compare

namespace tracking = filter_compare::allocation_tracking;

void* operator new(std::size_t bytes) { return tracking::Allocate(bytes); }
void* operator new[](std::size_t bytes) { return tracking::Allocate(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return tracking::Allocate(bytes);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return tracking::Allocate(bytes);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new(std::size_t bytes, std::align_val_t alignment) {
  return tracking::AllocateAligned(bytes, alignment);
}
void* operator new[](std::size_t bytes, std::align_val_t alignment) {
  return tracking::AllocateAligned(bytes, alignment);
}
void operator delete(void* pointer) noexcept { tracking::Release(pointer); }
void operator delete[](void* pointer) noexcept { tracking::Release(pointer); }
void operator delete(void* pointer, std::size_t) noexcept {
  tracking::Release(pointer);
}
void operator delete[](void* pointer, std::size_t) noexcept {
  tracking::Release(pointer);
}
void operator delete(void* pointer, std::align_val_t) noexcept {
  tracking::Release(pointer);
}
void operator delete[](void* pointer, std::align_val_t) noexcept {
  tracking::Release(pointer);
}
void operator delete(void* pointer, std::size_t, std::align_val_t) noexcept {
  tracking::Release(pointer);
}
void operator delete[](void* pointer, std::size_t, std::align_val_t) noexcept {
  tracking::Release(pointer);
}
