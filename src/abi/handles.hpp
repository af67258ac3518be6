// Generation-checked handle tables. A handle is not a pointer: it encodes a
// kind tag, a slot index and the slot's generation, so a released, forged or
// wrong-kind handle is detected by a table lookup (SM_ERR_INVALID_HANDLE)
// instead of dereferencing garbage.
//
// The guarantee is absolute, not probabilistic: a slot never carries the same
// generation twice. Each release moves the slot to its next generation; a
// slot whose generation reaches the 28-bit limit is retired instead of
// wrapping (never reused, its few bytes kept), so no stale handle can ever
// equal a live one. Freed slots are reused oldest-first, which spreads the
// generations over all free slots: one slot retires after 2^28 - 1 reuses,
// and running out of the 2^32 slot indices would take about 2^60
// create/release cycles.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "core/error.hpp"

namespace sm {

enum class HandleKind : uint64_t { Tensor = 1, Storage = 2, Stack = 3 };

template <typename T>
class HandleTable {
 public:
  explicit HandleTable(HandleKind kind, const char* noun) : kind_(kind), noun_(noun) {}

  // Registers obj with one owner; returns the handle value.
  void* insert(std::shared_ptr<T> obj) {
    std::lock_guard<std::mutex> lock(mu_);
    uint32_t index;
    if (!free_.empty()) {
      index = free_.front();
      free_.pop_front();
    } else {
      if (slots_.size() >= kMaxSlots) fail(SM_ERR_OUT_OF_MEMORY, "too many live %s handles", noun_);
      slots_.emplace_back();
      index = static_cast<uint32_t>(slots_.size() - 1);
    }
    Slot& s = slots_[index];
    s.obj = std::move(obj);
    s.owners = 1;
    ++live_;
    return encode(index, s.generation);
  }

  // The object behind a live handle (shared, so a concurrent release cannot
  // free it under the caller).
  std::shared_ptr<T> get(const void* h, const char* arg) {
    std::lock_guard<std::mutex> lock(mu_);
    return slot_locked(h, arg).obj;
  }

  void retain(const void* h, const char* arg) {
    std::lock_guard<std::mutex> lock(mu_);
    Slot& s = slot_locked(h, arg);
    ++s.owners;
  }

  // Drops one owner; the object itself is destroyed outside the lock (its
  // destructor may run user deleters that call back into the library).
  void release(const void* h, const char* arg) {
    std::shared_ptr<T> dying;
    {
      std::lock_guard<std::mutex> lock(mu_);
      Slot& s = slot_locked(h, arg);
      if (--s.owners > 0) return;
      dying = std::move(s.obj);
      s.obj.reset();
      --live_;
      if (s.generation == kGenMask) {
        ++retired_;  // its last generation: the slot is never handed out again
      } else {
        ++s.generation;
        try {
          free_.push_back(decode_index(h));
        } catch (...) {
          ++retired_;  // no memory to list it: the release still stands, the slot is dropped
        }
      }
    }
  }

  // Slots retired at their generation limit (tests and statistics).
  int64_t retired() {
    std::lock_guard<std::mutex> lock(mu_);
    return retired_;
  }

  // Test hook: the free slot a released handle names (its generation bits
  // are not compared) is given generation limit - generations_left and
  // becomes the next slot reused: its next use issues that generation, and
  // it retires after generations_left + 1 uses. Refused
  // (SM_ERR_INVALID_ARGUMENT) when the slot is live or retired (aging a live
  // slot would make its live handle stale) and when that would move the
  // generation back (old handles would be reissued).
  void age_free_slot(const void* h, int64_t generations_left, const char* arg) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint32_t index = index_locked(h, arg);
    if (generations_left < 0 || generations_left > static_cast<int64_t>(kGenMask) - 1)
      fail(SM_ERR_INVALID_ARGUMENT, "generations_left = %lld is outside 0..%lld",
           (long long)generations_left, (long long)kGenMask - 1);
    Slot& s = slots_[index];
    auto it = free_.end();
    for (auto f = free_.begin(); f != free_.end(); ++f)
      if (*f == index) it = f;
    if (s.obj || it == free_.end())
      fail(SM_ERR_INVALID_ARGUMENT, "%s (%p) names a %s slot that is %s, not free", arg, h, noun_,
           s.obj ? "live" : "retired");
    const uint32_t target = kGenMask - static_cast<uint32_t>(generations_left);
    // Generations only grow: moving one back would reissue old handles.
    if (target < s.generation)
      fail(SM_ERR_INVALID_ARGUMENT,
           "generations_left = %lld would move the %s slot of %s back from generation %u to %u",
           (long long)generations_left, noun_, arg, s.generation, target);
    s.generation = target;
    free_.erase(it);
    free_.push_front(index);
  }

  int64_t live() {
    std::lock_guard<std::mutex> lock(mu_);
    return live_;
  }

 private:
  struct Slot {
    std::shared_ptr<T> obj;
    int64_t owners = 0;
    uint32_t generation = 1;
  };
  // Layout of a handle value: [kind:4][generation:28][index+1:32].
  // Generations run 1..kGenMask (0 never names a live slot).
  static_assert(sizeof(void*) == 8, "handles carry 64 bits");
  static constexpr uint32_t kGenMask = (1u << 28) - 1;
  static constexpr size_t kMaxSlots = 0xFFFFFFF0u;

  void* encode(uint32_t index, uint32_t gen) const {
    const uint64_t v = (static_cast<uint64_t>(kind_) << 60) | (static_cast<uint64_t>(gen) << 32) |
                       (static_cast<uint64_t>(index) + 1);
    return reinterpret_cast<void*>(static_cast<uintptr_t>(v));
  }
  static uint32_t decode_index(const void* h) {
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(h) & 0xFFFFFFFFu) - 1;
  }

  // The slot index a handle of this table's kind names (any generation);
  // SM_ERR_INVALID_HANDLE for NULL, another kind or an index never issued.
  uint32_t index_locked(const void* h, const char* arg) const {
    const uint64_t v = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(h));
    if (v == 0) fail(SM_ERR_INVALID_HANDLE, "%s is NULL (not a %s handle)", arg, noun_);
    const uint64_t low = v & 0xFFFFFFFFu;
    if ((v >> 60) != static_cast<uint64_t>(kind_) || low == 0 || low > slots_.size())
      fail(SM_ERR_INVALID_HANDLE, "%s (%p) is not a %s handle (forged or of another kind)", arg, h, noun_);
    return static_cast<uint32_t>(low - 1);
  }

  Slot& slot_locked(const void* h, const char* arg) {
    const uint32_t gen =
        static_cast<uint32_t>((static_cast<uint64_t>(reinterpret_cast<uintptr_t>(h)) >> 32) & kGenMask);
    Slot& s = slots_[index_locked(h, arg)];
    if (s.generation != gen || !s.obj)
      fail(SM_ERR_INVALID_HANDLE, "%s (%p) is a stale %s handle (already released)", arg, h, noun_);
    return s;
  }

  HandleKind kind_;
  const char* noun_;
  std::mutex mu_;
  std::vector<Slot> slots_;
  std::deque<uint32_t> free_;  // oldest-freed first
  int64_t live_ = 0;
  int64_t retired_ = 0;
};

}  // namespace sm
