// Generation-checked handle tables: stale, forged, wrong-kind and NULL
// handles are refused; owners counted; objects die outside the lock.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "abi/handles.hpp"

using namespace sm;

namespace {
int expect_status(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.status();
  }
  return SM_OK;
}
}  // namespace

TEST(Handles, InsertGetRetainRelease) {
  HandleTable<int> t(HandleKind::Tensor, "tensor");
  void* h = t.insert(std::make_shared<int>(7));
  EXPECT_EQ(*t.get(h, "h"), 7);
  EXPECT_EQ(t.live(), 1);
  t.retain(h, "h");
  t.release(h, "h");
  EXPECT_EQ(*t.get(h, "h"), 7);  // one owner left
  t.release(h, "h");
  EXPECT_EQ(t.live(), 0);
  EXPECT_EQ(expect_status([&] { t.get(h, "h"); }), SM_ERR_INVALID_HANDLE);
  EXPECT_EQ(expect_status([&] { t.release(h, "h"); }), SM_ERR_INVALID_HANDLE);
}

TEST(Handles, ReusedSlotGetsANewGeneration) {
  HandleTable<int> t(HandleKind::Tensor, "tensor");
  void* a = t.insert(std::make_shared<int>(1));
  t.release(a, "a");
  void* b = t.insert(std::make_shared<int>(2));  // same slot
  EXPECT_NE(a, b);
  EXPECT_EQ(expect_status([&] { t.get(a, "a"); }), SM_ERR_INVALID_HANDLE);
  EXPECT_EQ(*t.get(b, "b"), 2);
  t.release(b, "b");
}

// A slot walked to its generation limit retires: it never hands out a
// generation it had before, so the very first handle of the table (the one
// a wrapping counter would meet again) stays stale for ever.
TEST(Handles, GenerationLimitRetiresTheSlotInsteadOfWrapping) {
  HandleTable<int> t(HandleKind::Tensor, "tensor");
  void* first = t.insert(std::make_shared<int>(0));
  t.release(first, "first");
  t.age_free_slot(first, 2, "first");  // 2 more reuses, then the limit
  std::vector<void*> issued{first};
  for (int cycle = 0; cycle < 8; ++cycle) {
    void* h = t.insert(std::make_shared<int>(cycle));
    for (void* old : issued) ASSERT_NE(h, old) << "cycle " << cycle << ": a handle value came back";
    EXPECT_EQ(*t.get(h, "h"), cycle);
    issued.push_back(h);
    t.release(h, "h");
    for (void* old : issued) EXPECT_EQ(expect_status([&] { t.get(old, "old"); }), SM_ERR_INVALID_HANDLE);
  }
  EXPECT_EQ(t.retired(), 1);  // the aged slot, after its last generation
  EXPECT_EQ(t.live(), 0);
  // Its stale handles cannot be aged again either: the slot is gone.
  EXPECT_EQ(expect_status([&] { t.age_free_slot(first, 0, "first"); }), SM_ERR_INVALID_ARGUMENT);
}

TEST(Handles, AgingRefusesLiveSlotsAndForgedHandles) {
  HandleTable<int> t(HandleKind::Tensor, "tensor");
  void* live = t.insert(std::make_shared<int>(1));
  EXPECT_EQ(expect_status([&] { t.age_free_slot(live, 1, "live"); }), SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(*t.get(live, "live"), 1);  // untouched
  EXPECT_EQ(expect_status([&] { t.age_free_slot(reinterpret_cast<void*>(0x1234), 1, "x"); }),
            SM_ERR_INVALID_HANDLE);
  t.release(live, "live");
  EXPECT_EQ(expect_status([&] { t.age_free_slot(live, -1, "live"); }), SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(expect_status([&] { t.age_free_slot(live, int64_t(1) << 28, "live"); }),
            SM_ERR_INVALID_ARGUMENT);
  // The most generations left is 2^28 - 2 (generation 1); this slot is at
  // generation 2 after one release, so that much would move it back.
  EXPECT_EQ(expect_status([&] { t.age_free_slot(live, (int64_t(1) << 28) - 2, "live"); }),
            SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(expect_status([&] { t.age_free_slot(live, (int64_t(1) << 28) - 3, "live"); }), SM_OK);
  // Aged to 4 left, used once: aging it to 4 left again would move it back
  // and reissue the handle just released.
  EXPECT_EQ(expect_status([&] { t.age_free_slot(live, 4, "live"); }), SM_OK);
  void* b = t.insert(std::make_shared<int>(2));
  t.release(b, "b");
  EXPECT_EQ(expect_status([&] { t.age_free_slot(b, 4, "b"); }), SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(expect_status([&] { t.age_free_slot(b, 3, "b"); }), SM_OK);  // where it is: fine
  void* c = t.insert(std::make_shared<int>(3));
  EXPECT_NE(c, b);
  t.release(c, "c");
}

// Freed slots are reused oldest first, so a just-released handle's slot is
// not the next one handed out while older free slots exist.
TEST(Handles, FreedSlotsAreReusedOldestFirst) {
  HandleTable<int> t(HandleKind::Tensor, "tensor");
  void* a = t.insert(std::make_shared<int>(1));
  void* b = t.insert(std::make_shared<int>(2));
  t.release(a, "a");
  t.release(b, "b");
  void* c = t.insert(std::make_shared<int>(3));
  const auto index = [](void* h) { return reinterpret_cast<uintptr_t>(h) & 0xFFFFFFFFu; };
  EXPECT_EQ(index(c), index(a));
  t.release(c, "c");
}

TEST(Handles, ForgedNullAndWrongKind) {
  HandleTable<int> tensors(HandleKind::Tensor, "tensor");
  HandleTable<int> stacks(HandleKind::Stack, "stack");
  void* s = stacks.insert(std::make_shared<int>(3));
  EXPECT_EQ(expect_status([&] { tensors.get(nullptr, "t"); }), SM_ERR_INVALID_HANDLE);
  EXPECT_EQ(expect_status([&] { tensors.get(reinterpret_cast<void*>(0xdeadbeef), "t"); }),
            SM_ERR_INVALID_HANDLE);
  EXPECT_EQ(expect_status([&] { tensors.get(s, "t"); }), SM_ERR_INVALID_HANDLE);
  EXPECT_EQ(expect_status([&] { tensors.get(reinterpret_cast<void*>(~uintptr_t(0)), "t"); }),
            SM_ERR_INVALID_HANDLE);
  stacks.release(s, "s");
}

TEST(Handles, ObjectOutlivesReleaseWhileBorrowed) {
  HandleTable<int> t(HandleKind::Tensor, "tensor");
  void* h = t.insert(std::make_shared<int>(5));
  std::shared_ptr<int> borrowed = t.get(h, "h");
  t.release(h, "h");
  EXPECT_EQ(*borrowed, 5);  // a concurrent user keeps it alive
}

TEST(Handles, ConcurrentInsertRelease) {
  HandleTable<int> t(HandleKind::Tensor, "tensor");
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&t, k] {
      for (int i = 0; i < 2000; ++i) {
        void* h = t.insert(std::make_shared<int>(k * 10000 + i));
        ASSERT_EQ(*t.get(h, "h"), k * 10000 + i);
        t.release(h, "h");
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(t.live(), 0);
}
