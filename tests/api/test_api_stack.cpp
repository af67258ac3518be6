// The stack of views: aligned pushes from one preallocated storage, LIFO
// mark/pop_to, invalidation of popped tensors, capacity, release order.
#include "api_test_util.hpp"
#include "stridemem_dlpack.h"

using namespace smt;

namespace {

Tensor push(sm_stack s, const Shape& shape, sm_dtype dtype = SM_FLOAT32) {
  Tensor t;
  const sm_status st = sm_stack_push(s, shape.empty() ? nullptr : shape.data(),
                                     static_cast<int32_t>(shape.size()), dtype, t.out());
  EXPECT_EQ(st, SM_OK) << "sm_stack_push: " << sm_last_error();
  return t;
}

int64_t used(sm_stack s, int64_t* cap = nullptr) {
  int64_t u = -1, c = -1;
  const sm_status st = sm_stack_used(s, &u, &c);
  EXPECT_EQ(st, SM_OK) << "sm_stack_used: " << sm_last_error();
  if (cap) *cap = c;
  return u;
}

int64_t mark(sm_stack s) {
  int64_t m = -1;
  const sm_status st = sm_stack_mark(s, &m);
  EXPECT_EQ(st, SM_OK) << "sm_stack_mark: " << sm_last_error();
  return m;
}

uintptr_t addr(sm_tensor t) { return reinterpret_cast<uintptr_t>(data_ptr_of(t)); }

}  // namespace

TEST(Stack, CreateAllocatesOneStorage) {
  const sm_memory_stats_t s0 = stats();
  Stack s;
  SM_ASSERT_OK(sm_stack_create(cpu(), 64 * 1024, s.out()));
  const sm_memory_stats_t s1 = stats();
  EXPECT_EQ(s1.num_allocs, s0.num_allocs + 1);
  EXPECT_GE(s1.allocated_bytes - s0.allocated_bytes, 64 * 1024);
  int64_t cap = -1;
  EXPECT_EQ(used(s, &cap), 0);
  EXPECT_EQ(cap, 64 * 1024);
  // Pushes allocate nothing.
  Tensor a = push(s, {10});
  Tensor b = push(s, {3, 3}, SM_FLOAT64);
  EXPECT_EQ(stats().num_allocs, s1.num_allocs);
  EXPECT_EQ(same_storage(a, b), 1);
  s.reset();
}

TEST(Stack, PushesAreAlignedRowMajorViews) {
  Stack s;
  SM_ASSERT_OK(sm_stack_create(cpu(), 4096, s.out()));
  Tensor a = push(s, {10});  // 40 bytes
  Tensor b = push(s, {2, 3}, SM_FLOAT64);
  Tensor c = push(s, {1}, SM_INT8);
  Tensor d = push(s, {}, SM_INT16);
  for (sm_tensor t : {a.get(), b.get(), c.get(), d.get()}) {
    EXPECT_EQ(addr(t) % SM_STACK_ALIGNMENT, 0u) << "absolute address aligned";
    EXPECT_EQ(offset_of(t) * static_cast<int64_t>(sm_dtype_size(dtype_of(t))) %
                  SM_STACK_ALIGNMENT,
              0)
        << "offset within the buffer aligned";
    EXPECT_EQ(is_contig(t, SM_CONTIGUOUS), 1);
  }
  expect_layout(b, {2, 3}, {3, 1}, offset_of(b));
  EXPECT_EQ(dtype_of(b), SM_FLOAT64);
  EXPECT_EQ(ndim_of(d), 0);
  // Each push starts on the next aligned address after the previous one.
  EXPECT_EQ(addr(b) - addr(a), static_cast<uintptr_t>(SM_STACK_ALIGNMENT));
  EXPECT_EQ(addr(c) - addr(b), static_cast<uintptr_t>(SM_STACK_ALIGNMENT));
  EXPECT_EQ(addr(d) - addr(c), static_cast<uintptr_t>(SM_STACK_ALIGNMENT));
  EXPECT_GE(used(s), 3 * SM_STACK_ALIGNMENT + 2);
  EXPECT_LE(used(s), 4 * SM_STACK_ALIGNMENT);
  // Usable like any tensor; writes do not bleed into neighbours.
  SM_ASSERT_OK(sm_inplace_scalar(a, SM_OP_FILL, 1, 0));
  SM_ASSERT_OK(sm_inplace_scalar(b, SM_OP_FILL, 2, 0));
  EXPECT_EQ(read<float>(a), std::vector<float>(10, 1));
  EXPECT_EQ(read<double>(b), std::vector<double>(6, 2));
  Tensor v;
  SM_ASSERT_OK(sm_transpose(b, 0, 1, v.out()));
  EXPECT_EQ(read<double>(v), std::vector<double>(6, 2));
  // The storage is the whole buffer.
  EXPECT_EQ(storage_nbytes_of(a), 4096);
}

TEST(Stack, PushPastCapacityIsOutOfMemoryAndChangesNothing) {
  Stack s;
  SM_ASSERT_OK(sm_stack_create(cpu(), 1024, s.out()));
  Tensor a = push(s, {100});  // 400 bytes
  const int64_t u0 = used(s);
  const int64_t m0 = mark(s);
  const GlobalSnap g0 = global_snap();
  sm_tensor out = sentinel_tensor();
  const int64_t big[1] = {200};  // 800 bytes after 512 used: no room
  EXPECT_EQ(sm_stack_push(s, big, 1, SM_FLOAT32, &out), SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(out, sentinel_tensor());
  expect_error_mentions({"sm_stack_push"});
  EXPECT_EQ(used(s), u0);
  EXPECT_EQ(mark(s), m0);
  EXPECT_EQ(global_snap(), g0);
  // What fits still fits, right up to the end.
  Tensor b = push(s, {128});  // 512 bytes at offset 512: exactly full
  int64_t cap = -1;
  EXPECT_EQ(used(s, &cap), 1024);
  EXPECT_EQ(cap, 1024);
  const int64_t one[1] = {1};
  EXPECT_EQ(sm_stack_push(s, one, 1, SM_INT8, &out), SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(out, sentinel_tensor());
  // Overflowing sizes and bad shapes are refused, not wrapped.
  const int64_t huge[2] = {int64_t(1) << 40, int64_t(1) << 40};
  EXPECT_EQ(sm_stack_push(s, huge, 2, SM_FLOAT32, &out), SM_ERR_OVERFLOW);
  const int64_t neg[1] = {-1};
  EXPECT_EQ(sm_stack_push(s, neg, 1, SM_FLOAT32, &out), SM_ERR_SHAPE);
  EXPECT_EQ(out, sentinel_tensor());
  EXPECT_EQ(used(s), 1024);
}

TEST(Stack, EmptyAndZeroSizedPushes) {
  Stack s;
  SM_ASSERT_OK(sm_stack_create(cpu(), 1024, s.out()));
  Tensor e = push(s, {0, 5});
  EXPECT_EQ(numel_of(e), 0);
  Tensor a = push(s, {4});
  SM_ASSERT_OK(sm_inplace_scalar(a, SM_OP_FILL, 3, 0));
  EXPECT_EQ(read<float>(a), std::vector<float>(4, 3));
  // A zero-capacity stack can still hand out empty tensors or refuse; it
  // must not crash. A non-empty push is refused.
  Stack z;
  SM_ASSERT_OK(sm_stack_create(cpu(), 0, z.out()));
  sm_tensor out = sentinel_tensor();
  const int64_t one[1] = {1};
  EXPECT_EQ(sm_stack_push(z, one, 1, SM_FLOAT32, &out), SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(out, sentinel_tensor());
}

TEST(Stack, MarkAndPopToAreLifo) {
  Stack s;
  SM_ASSERT_OK(sm_stack_create(cpu(), 8192, s.out()));
  const int64_t m0 = mark(s);
  Tensor keep = push(s, {4});
  SM_ASSERT_OK(sm_inplace_scalar(keep, SM_OP_FILL, 7, 0));
  const int64_t m1 = mark(s);
  const int64_t u1 = used(s);
  Tensor a = push(s, {100});
  const uintptr_t a_addr = addr(a);
  const int64_t m2 = mark(s);
  const int64_t u2 = used(s);
  Tensor b = push(s, {100});
  Tensor c = push(s, {100});
  EXPECT_GT(used(s), u2);
  // Pop the inner region first.
  SM_ASSERT_OK(sm_stack_pop_to(s, m2));
  EXPECT_EQ(used(s), u2);
  EXPECT_EQ(mark(s), m2);
  b.reset();
  c.reset();
  // Then the outer one.
  SM_ASSERT_OK(sm_stack_pop_to(s, m1));
  EXPECT_EQ(used(s), u1);
  a.reset();
  // The region is reused by the next push.
  Tensor again = push(s, {100});
  EXPECT_EQ(addr(again), a_addr);
  // Data below the mark survives.
  EXPECT_EQ(read<float>(keep), std::vector<float>(4, 7));
  // pop_to the current top is a no-op.
  const int64_t m3 = mark(s);
  SM_ASSERT_OK(sm_stack_pop_to(s, m3));
  EXPECT_EQ(mark(s), m3);
  EXPECT_EQ(read<float>(again).size(), 100u);
  // Popping to the mark of the empty stack empties it.
  SM_ASSERT_OK(sm_stack_pop_to(s, m0));
  EXPECT_EQ(used(s), 0);
}

TEST(Stack, PoppingToAMarkAboveTheTopIsRefused) {
  Stack s;
  SM_ASSERT_OK(sm_stack_create(cpu(), 4096, s.out()));
  Tensor a = push(s, {10});
  const int64_t m = mark(s);
  Tensor b = push(s, {10});
  const int64_t high = mark(s);
  SM_ASSERT_OK(sm_stack_pop_to(s, m));
  const int64_t u = used(s);
  const sm_status st = sm_stack_pop_to(s, high);
  EXPECT_NE(st, SM_OK) << "a mark above the top cannot be popped to";
  expect_status_in(st, {SM_ERR_INVALID_ARGUMENT, SM_ERR_OUT_OF_BOUNDS}, "pop_to above top");
  EXPECT_EQ(used(s), u);
  expect_status_in(sm_stack_pop_to(s, -1), {SM_ERR_INVALID_ARGUMENT, SM_ERR_OUT_OF_BOUNDS},
                   "pop_to(-1)");
  expect_status_in(sm_stack_pop_to(s, 1 << 20), {SM_ERR_INVALID_ARGUMENT, SM_ERR_OUT_OF_BOUNDS},
                   "pop_to past capacity");
  EXPECT_EQ(used(s), u);
  EXPECT_EQ(numel_of(a), 10);
}

TEST(Stack, PoppedTensorsAndTheirViewsAreInvalid) {
  Stack s;
  SM_ASSERT_OK(sm_stack_create(cpu(), 4096, s.out()));
  const int64_t m = mark(s);
  sm_tensor a = nullptr;
  const int64_t shape[2] = {4, 4};
  SM_ASSERT_OK(sm_stack_push(s, shape, 2, SM_FLOAT32, &a));
  SM_ASSERT_OK(sm_inplace_scalar(a, SM_OP_FILL, 5, 0));
  sm_tensor v = nullptr, vv = nullptr, cl = nullptr;
  SM_ASSERT_OK(sm_transpose(a, 0, 1, &v));
  SM_ASSERT_OK(sm_select(v, 0, 1, &vv));
  SM_ASSERT_OK(sm_clone(a, SM_CONTIGUOUS, &cl));  // a copy is independent
  SM_ASSERT_OK(sm_stack_pop_to(s, m));
  for (sm_tensor t : {a, v, vv}) {
    int64_t n = kSentinel64;
    EXPECT_EQ(sm_numel(t, &n), SM_ERR_INVALID_HANDLE);
    EXPECT_EQ(n, kSentinel64);
    expect_error_mentions({"sm_numel"});
    std::vector<uint8_t> buf(64, 0xAB);
    EXPECT_EQ(sm_copy_to_host(t, buf.data(), buf.size()), SM_ERR_INVALID_HANDLE);
    EXPECT_EQ(buf[0], 0xAB);
    EXPECT_EQ(sm_inplace_scalar(t, SM_OP_ZERO, 0, 0), SM_ERR_INVALID_HANDLE);
    sm_tensor out = sentinel_tensor();
    EXPECT_EQ(sm_unsqueeze(t, 0, &out), SM_ERR_INVALID_HANDLE);
    EXPECT_EQ(sm_clone(t, SM_CONTIGUOUS, &out), SM_ERR_INVALID_HANDLE);
    EXPECT_EQ(out, sentinel_tensor());
    const sm_status rs = sm_tensor_retain(t);
    EXPECT_EQ(rs, SM_ERR_INVALID_HANDLE) << "retain of a popped tensor";
    if (rs == SM_OK) sm_tensor_release(t);  // keep the owner count right for what follows
    EXPECT_EQ(sm_copy_into(cl, t), SM_ERR_INVALID_HANDLE) << "as a source too";
  }
  // A new push reuses the region; the old handles stay dead, the new one works.
  Tensor fresh;
  SM_ASSERT_OK(sm_stack_push(s, shape, 2, SM_FLOAT32, fresh.out()));
  SM_ASSERT_OK(sm_inplace_scalar(fresh, SM_OP_FILL, 9, 0));
  int64_t n = kSentinel64;
  EXPECT_EQ(sm_numel(vv, &n), SM_ERR_INVALID_HANDLE);
  EXPECT_EQ(read<float>(fresh), std::vector<float>(16, 9));
  // The clone is untouched.
  EXPECT_EQ(read<float>(cl), std::vector<float>(16, 5));
  // Release still works on every popped handle.
  const Live before = live();
  SM_EXPECT_OK(sm_tensor_release(vv));
  SM_EXPECT_OK(sm_tensor_release(v));
  SM_EXPECT_OK(sm_tensor_release(a));
  EXPECT_EQ(live().tensors, before.tensors - 3);
  SM_EXPECT_OK(sm_tensor_release(cl));
  // Released now: a second release is an invalid handle.
  EXPECT_EQ(sm_tensor_release(a), SM_ERR_INVALID_HANDLE);
}

// The stack reuses its buffer after pop_to, so nothing may hold a stack
// tensor's memory beyond the tensor handles it can invalidate.
TEST(Stack, StackTensorsRefuseStorageHandlesAndDlpackExport) {
  Stack s;
  SM_ASSERT_OK(sm_stack_create(cpu(), 1024, s.out()));
  Tensor a = push(s, {4});
  Tensor v;
  SM_ASSERT_OK(sm_transpose(push(s, {2, 2}), 0, 1, v.out()));
  const Live l0 = live();
  for (sm_tensor t : {a.get(), v.get()}) {
    sm_storage st = sentinel_storage();
    const sm_status s1 = sm_tensor_storage(t, &st);
    EXPECT_EQ(s1, SM_ERR_UNSUPPORTED);
    if (s1 == SM_OK) sm_storage_release(st);  // keep counts right for what follows
    else expect_error_mentions({"sm_tensor_storage"});
    EXPECT_EQ(st, s1 == SM_OK ? st : sentinel_storage());
    for (int versioned : {0, 1}) {
      void* m = reinterpret_cast<void*>(uintptr_t(1));
      const sm_status s2 = sm_to_dlpack(t, versioned, &m);
      EXPECT_EQ(s2, SM_ERR_UNSUPPORTED) << "versioned " << versioned;
      if (s2 == SM_OK) {
        if (versioned) {
          auto* mv = static_cast<sm_DLManagedTensorVersioned*>(m);
          mv->deleter(mv);
        } else {
          auto* ml = static_cast<sm_DLManagedTensor*>(m);
          ml->deleter(ml);
        }
      } else {
        EXPECT_EQ(m, reinterpret_cast<void*>(uintptr_t(1)));
        expect_error_mentions({"sm_to_dlpack"});
      }
    }
  }
  EXPECT_EQ(live(), l0);
  // A clone can be exported.
  Tensor c;
  SM_ASSERT_OK(sm_clone(a, SM_CONTIGUOUS, c.out()));
  void* m = nullptr;
  SM_ASSERT_OK(sm_to_dlpack(c, 0, &m));
  auto* mt = static_cast<sm_DLManagedTensor*>(m);
  mt->deleter(mt);
}

TEST(Stack, ReleaseWithLiveTensorsKeepsThemValid) {
  const Live l0 = live();
  const sm_memory_stats_t s0 = stats();
  sm_stack s = nullptr;
  SM_ASSERT_OK(sm_stack_create(cpu(), 2048, &s));
  Tensor a = push(s, {8});
  Tensor b = push(s, {2, 2}, SM_INT32);
  SM_ASSERT_OK(sm_inplace_scalar(a, SM_OP_FILL, 1.5, 0));
  SM_ASSERT_OK(sm_stack_release(s));
  EXPECT_EQ(live().stacks, l0.stacks);
  // The tensors pin the buffer and keep working.
  EXPECT_EQ(read<float>(a), std::vector<float>(8, 1.5f));
  SM_ASSERT_OK(sm_inplace_scalar(b, SM_OP_FILL, 4, 0));
  EXPECT_EQ(read<int32_t>(b), std::vector<int32_t>(4, 4));
  Tensor v;
  SM_ASSERT_OK(sm_unsqueeze(a, 0, v.out()));
  EXPECT_EQ(shape_of(v), (Shape{1, 8}));
  EXPECT_GE(stats().allocated_bytes - s0.allocated_bytes, 2048);
  // The stack handle itself is dead.
  int64_t u = kSentinel64, c = kSentinel64;
  EXPECT_EQ(sm_stack_used(s, &u, &c), SM_ERR_INVALID_HANDLE);
  EXPECT_EQ(u, kSentinel64);
  EXPECT_EQ(sm_stack_release(s), SM_ERR_INVALID_HANDLE);
  // Releasing the last tensor frees the buffer.
  a.reset();
  b.reset();
  v.reset();
  EXPECT_EQ(live(), l0);
  EXPECT_EQ(stats().allocated_bytes, s0.allocated_bytes);
  SM_EXPECT_OK(sm_stack_release(nullptr));
}

TEST(Stack, ReleasingTensorsBeforeTheStackIsFine) {
  const Live l0 = live();
  Stack s;
  SM_ASSERT_OK(sm_stack_create(cpu(), 1024, s.out()));
  {
    Tensor a = push(s, {2});
    Tensor b = push(s, {2});
  }
  EXPECT_GT(used(s), 0) << "releasing tensors does not pop the stack";
  s.reset();
  EXPECT_EQ(live(), l0);
}

TEST(Stack, BadArguments) {
  Stack s;
  SM_ASSERT_OK(sm_stack_create(cpu(), 1024, s.out()));
  sm_stack so = sentinel_stack();
  EXPECT_EQ(sm_stack_create(cpu(), -1, &so), SM_ERR_INVALID_ARGUMENT);
  expect_error_mentions({"sm_stack_create", "-1"});
  EXPECT_EQ(sm_stack_create(cpu(), int64_t(1) << 45, &so), SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(sm_stack_create(sm_device{77, 0}, 1024, &so), SM_ERR_DEVICE);
  EXPECT_EQ(sm_stack_create(cpu(), 1024, nullptr), SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(so, sentinel_stack());
  sm_tensor out = sentinel_tensor();
  const int64_t shape[1] = {2};
  expect_status_in(sm_stack_push(s, shape, 1, 99, &out), {SM_ERR_INVALID_ARGUMENT, SM_ERR_DTYPE},
                   "push dtype 99");
  EXPECT_EQ(sm_stack_push(s, nullptr, 1, SM_FLOAT32, &out), SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sm_stack_push(s, shape, 1, SM_FLOAT32, nullptr), SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sm_stack_push(s, shape, SM_MAX_DIMS + 1, SM_FLOAT32, &out), SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out, sentinel_tensor());
  EXPECT_EQ(used(s), 0);
  EXPECT_EQ(sm_stack_mark(s, nullptr), SM_ERR_INVALID_ARGUMENT);
  int64_t u = kSentinel64;
  EXPECT_EQ(sm_stack_used(s, &u, nullptr), SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(u, kSentinel64);
  for (sm_stack bad : {static_cast<sm_stack>(nullptr), forged_stack()}) {
    EXPECT_EQ(sm_stack_push(bad, shape, 1, SM_FLOAT32, &out), SM_ERR_INVALID_HANDLE);
    int64_t m = kSentinel64;
    EXPECT_EQ(sm_stack_mark(bad, &m), SM_ERR_INVALID_HANDLE);
    EXPECT_EQ(m, kSentinel64);
    EXPECT_EQ(sm_stack_pop_to(bad, 0), SM_ERR_INVALID_HANDLE);
    int64_t c = kSentinel64;
    EXPECT_EQ(sm_stack_used(bad, &m, &c), SM_ERR_INVALID_HANDLE);
    EXPECT_EQ(c, kSentinel64);
  }
  EXPECT_EQ(sm_stack_release(forged_stack()), SM_ERR_INVALID_HANDLE);
  EXPECT_EQ(out, sentinel_tensor());
}
