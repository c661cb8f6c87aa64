// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// RelocatableArray: the heap storage of a dynamic filter's table, stash and
// walk log. It holds trivially copyable values as std::vector does, with
// the one thing a std::vector cannot do: its owner can hand the storage to
// a memory defragmenter that moves it (Relocate), as a Redis server's
// active defragmentation moves the allocations of a module's values
// (RedisModule_DefragAlloc). A std::vector's buffer cannot be re-seated.
//
// The storage comes from the global operator new, which a program (the CF
// module) may route to its own allocator; whatever moves it must leave
// storage that operator delete frees.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <new>
#include <type_traits>
#include <utility>

namespace cuckoo {

template <typename T>
class RelocatableArray {
  static_assert(std::is_trivially_copyable_v<T>,
                "moving the storage copies its bytes");
  static_assert(alignof(T) <= alignof(std::max_align_t),
                "operator new(size_t) aligns to max_align_t");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<T*>;

  RelocatableArray() = default;
  // `size` copies of `value`.
  RelocatableArray(size_t size, const T& value) {
    reserve(size);
    std::fill(data_, data_ + size, value);
    size_ = size;
  }
  RelocatableArray(const T* first, const T* last) {
    reserve(static_cast<size_t>(last - first));
    CopyFrom(first, static_cast<size_t>(last - first));
  }
  RelocatableArray(const RelocatableArray& other)
      : RelocatableArray(other.begin(), other.end()) {}
  RelocatableArray& operator=(const RelocatableArray& other) {
    if (this != &other) {
      RelocatableArray copy(other);
      swap(copy);
    }
    return *this;
  }
  // Moving keeps the storage, so pointers into it stay valid.
  RelocatableArray(RelocatableArray&& other) noexcept { swap(other); }
  RelocatableArray& operator=(RelocatableArray&& other) noexcept {
    RelocatableArray taken(std::move(other));
    swap(taken);
    return *this;
  }
  ~RelocatableArray() { ::operator delete(data_); }

  void swap(RelocatableArray& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
  }

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }

  // Room for `capacity` values; never shrinks. Throws std::bad_alloc with
  // the array unchanged.
  void reserve(size_t capacity) {
    if (capacity <= capacity_) return;
    T* grown = static_cast<T*>(::operator new(capacity * sizeof(T)));
    if (size_ != 0) std::memcpy(grown, data_, size_ * sizeof(T));
    ::operator delete(data_);
    data_ = grown;
    capacity_ = capacity;
  }
  void push_back(const T& value) {
    if (size_ == capacity_) reserve(std::max<size_t>(1, 2 * capacity_));
    data_[size_++] = value;
  }
  // Removes the value at `position`, keeping the others' order.
  void erase(T* position) {
    std::memmove(position, position + 1,
                 static_cast<size_t>(end() - position - 1) * sizeof(T));
    --size_;
  }
  void clear() { size_ = 0; }

  // Hands the storage to `move`, a callable taking the storage's address
  // (void*) and returning where it copied the storage's bytes to, having
  // freed it, or nullptr when it left it in place. Returns whether it
  // moved. Pointers into the storage are invalid after a move.
  template <typename Move>
  bool Relocate(Move&& move) {
    if (data_ == nullptr) return false;
    void* moved = move(static_cast<void*>(data_));
    if (moved == nullptr) return false;
    data_ = static_cast<T*>(moved);
    return true;
  }

  friend bool operator==(const RelocatableArray& a, const RelocatableArray& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  void CopyFrom(const T* values, size_t count) {
    if (count != 0) std::memcpy(data_, values, count * sizeof(T));
    size_ = count;
  }

  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace cuckoo
