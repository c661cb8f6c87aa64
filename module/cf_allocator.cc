// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The module's C++ allocations go through the server's allocator
// (RedisModule_TryAlloc and RedisModule_Free), so that a filter's memory
// counts in the server's used_memory, which maxmemory, eviction and the
// deny-oom flag act on, as RedisBloom's filters do. The operators are the
// module's own: the version script keeps them, like every symbol but the
// entry point, out of the server's sight. A failed allocation throws
// std::bad_alloc, which the commands turn into an error reply.
//
// The over-aligned forms (types aligned beyond what operator new(size_t)
// guarantees, such as XXH3's hash state) take their memory from the same
// allocator: the module API has no aligned allocation, so they allocate
// enough to align within and keep the allocation's address just before the
// aligned one. Such memory is never offered to active defragmentation,
// which would move the allocation, not the aligned address.
//
// The module API is filled in by RedisModule_Init, in RedisModule_OnLoad;
// an allocation before it (none is made: the module has no static objects
// that allocate) would take malloc's memory, which the server's allocator is
// on Debian (redis-server links jemalloc in as malloc).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "redis_module_api.h"

namespace {

void* Allocate(std::size_t size) {
  if (size == 0) size = 1;
  void* p = RedisModule_TryAlloc != nullptr ? RedisModule_TryAlloc(size)
                                            : std::malloc(size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void Release(void* p) noexcept {
  if (p == nullptr) return;
  if (RedisModule_Free != nullptr) {
    RedisModule_Free(p);
  } else {
    std::free(p);
  }
}

void* AllocateAligned(std::size_t size, std::align_val_t alignment) {
  const std::size_t align = static_cast<std::size_t>(alignment);
  const std::size_t room = align - 1 + sizeof(void*);
  if (size > SIZE_MAX - room) throw std::bad_alloc();
  void* raw = Allocate(size + room);
  const std::uintptr_t at =
      (reinterpret_cast<std::uintptr_t>(raw) + room) & ~(align - 1);
  std::memcpy(reinterpret_cast<void*>(at - sizeof(void*)), &raw, sizeof(raw));
  return reinterpret_cast<void*>(at);
}

void ReleaseAligned(void* p) noexcept {
  if (p == nullptr) return;
  void* raw;
  std::memcpy(&raw, static_cast<char*>(p) - sizeof(void*), sizeof(raw));
  Release(raw);
}

}  // namespace

void* operator new(std::size_t size) { return Allocate(size); }
void* operator new[](std::size_t size) { return Allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return Allocate(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
  return operator new(size, tag);
}
void operator delete(void* p) noexcept { Release(p); }
void operator delete[](void* p) noexcept { Release(p); }
void operator delete(void* p, std::size_t) noexcept { Release(p); }
void operator delete[](void* p, std::size_t) noexcept { Release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { Release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { Release(p); }

void* operator new(std::size_t size, std::align_val_t align) {
  return AllocateAligned(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return AllocateAligned(size, align);
}
void* operator new(std::size_t size, std::align_val_t align,
                   const std::nothrow_t&) noexcept {
  try {
    return AllocateAligned(size, align);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, std::align_val_t align,
                     const std::nothrow_t& tag) noexcept {
  return operator new(size, align, tag);
}
void operator delete(void* p, std::align_val_t) noexcept { ReleaseAligned(p); }
void operator delete[](void* p, std::align_val_t) noexcept {
  ReleaseAligned(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  ReleaseAligned(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  ReleaseAligned(p);
}
void operator delete(void* p, std::align_val_t,
                     const std::nothrow_t&) noexcept {
  ReleaseAligned(p);
}
void operator delete[](void* p, std::align_val_t,
                       const std::nothrow_t&) noexcept {
  ReleaseAligned(p);
}
