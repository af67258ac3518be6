// The handle guarantee through the C ABI: a stale handle is refused for the
// whole life of the process, also after its slot has been reused up to the
// generation limit (sm_debug_age_handle_slot walks a slot there in a few
// calls instead of 2^28 create/release cycles).
#include <set>
#include <string>
#include <vector>

#include "api_test_util.hpp"

using namespace smt;

namespace {

const int64_t kShape4[1] = {4};

// White-box: a handle value is [kind:4][generation:28][slot index + 1:32]
// (src/abi/handles.hpp). Decoding it is how a test sees which slot a handle
// names, and so tells a retired slot from one that is merely in use.
constexpr uint32_t kLastGeneration = (1u << 28) - 1;
uint32_t slot_of(const void* h) { return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(h) & 0xFFFFFFFFu); }
uint32_t generation_of(const void* h) {
  return static_cast<uint32_t>((reinterpret_cast<uintptr_t>(h) >> 32) & kLastGeneration);
}

// One slot driven to its generation limit and past it: each use issues its
// next generation, up to the last; once that handle is released the slot is
// retired. Nothing holds it then, so every check below sees retirement
// itself: the hook refuses the slot as retired, every handle it issued stays
// refused, and later handles come from other slots (up to a freshly made
// one, which the table only makes when no freed slot is left to reuse).
TEST(HandleGenerations, TensorSlotRetiresAtItsLimit) {
  const int64_t kEmpty[1] = {0};  // no data: handles only
  sm_tensor first = nullptr;
  SM_ASSERT_OK(sm_empty(kEmpty, 1, SM_FLOAT32, cpu(), &first));
  const uint32_t slot = slot_of(first);
  SM_ASSERT_OK(sm_tensor_release(first));
  std::vector<sm_tensor> issued{first};
  // Freed slots are reused oldest-first; aging makes this one the next
  // reused, so it is aged before every use (to the generation it already has,
  // after the first time) to keep the walk on it.
  for (int64_t left = 2; left >= 0; --left) {
    SM_ASSERT_OK(sm_debug_age_handle_slot(issued.back(), left));
    sm_tensor h = nullptr;
    SM_ASSERT_OK(sm_empty(kEmpty, 1, SM_FLOAT32, cpu(), &h));
    ASSERT_EQ(slot_of(h), slot) << "the aged slot was not the next one reused: " << h;
    EXPECT_EQ(generation_of(h), kLastGeneration - static_cast<uint32_t>(left)) << h;
    for (sm_tensor old : issued) EXPECT_NE(h, old) << "handle issued twice";
    int32_t nd = -1;
    SM_EXPECT_OK(sm_ndim(h, &nd));
    EXPECT_EQ(nd, 1);
    SM_ASSERT_OK(sm_tensor_release(h));
    issued.push_back(h);
  }
  ASSERT_EQ(generation_of(issued.back()), kLastGeneration);

  // Retired, not free (nothing is live there): the hook refuses it, saying so.
  SM_EXPECT_STATUS(sm_debug_age_handle_slot(issued.back(), 0), SM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sm_last_error()).find("retired"), std::string::npos) << sm_last_error();

  // Every handle the slot issued is stale: getters, writers and release refuse it.
  for (sm_tensor old : issued) {
    int64_t n = -1;
    SM_EXPECT_STATUS(sm_numel(old, &n), SM_ERR_INVALID_HANDLE);
    EXPECT_EQ(n, -1);
    SM_EXPECT_STATUS(sm_inplace_scalar(old, SM_OP_FILL, 7.0, 0.0), SM_ERR_INVALID_HANDLE);
    SM_EXPECT_STATUS(sm_tensor_release(old), SM_ERR_INVALID_HANDLE);
  }

  // New handles, all held, use up every freed slot until one is made fresh
  // (generation 1: a slot that was never released). A retired slot put back
  // among the free ones would be handed out before that.
  std::vector<Tensor> held;
  bool fresh = false;
  while (!fresh && held.size() < (size_t(1) << 20)) {
    held.emplace_back();
    SM_ASSERT_OK(sm_empty(kEmpty, 1, SM_FLOAT32, cpu(), held.back().out()));
    const sm_tensor h = held.back().get();
    ASSERT_NE(slot_of(h), slot) << "the retired slot was handed out again: " << h << " after "
                                << held.size() - 1 << " other handles";
    for (sm_tensor old : issued) ASSERT_NE(h, old) << "handle issued twice";
    fresh = generation_of(h) == 1;
  }
  EXPECT_TRUE(fresh) << held.size() << " new handles, none from a fresh slot";
  // Still retired with other slots coming and going.
  held.clear();
  SM_EXPECT_STATUS(sm_debug_age_handle_slot(issued.back(), 0), SM_ERR_INVALID_ARGUMENT);
}

// The storage case of the report: releasing a stale storage handle must not
// drop a reference another owner holds.
TEST(HandleGenerations, StaleStorageReleaseNeverDropsAnotherOwnersReference) {
  Tensor t;
  SM_ASSERT_OK(sm_zeros(kShape4, 1, SM_FLOAT32, cpu(), t.out()));
  sm_storage s1 = nullptr;
  SM_ASSERT_OK(sm_tensor_storage(t, &s1));
  SM_ASSERT_OK(sm_storage_release(s1));
  SM_ASSERT_OK(sm_debug_age_handle_slot(s1, 0));  // its next use is its last
  sm_storage s2 = nullptr;
  SM_ASSERT_OK(sm_tensor_storage(t, &s2));
  EXPECT_NE(s2, s1);
  SM_ASSERT_OK(sm_storage_release(s2));  // the slot retires here
  Storage s3;
  SM_ASSERT_OK(sm_tensor_storage(t, s3.out()));
  EXPECT_NE(s3.get(), s1);
  EXPECT_NE(s3.get(), s2);
  SM_EXPECT_STATUS(sm_storage_release(s1), SM_ERR_INVALID_HANDLE);
  SM_EXPECT_STATUS(sm_storage_release(s2), SM_ERR_INVALID_HANDLE);
  int64_t nbytes = -1;
  SM_ASSERT_OK(sm_storage_size(s3, &nbytes));  // still owned by s3
  EXPECT_EQ(nbytes, 16);
}

TEST(HandleGenerations, StackSlotRetiresToo) {
  sm_stack k = nullptr;
  SM_ASSERT_OK(sm_stack_create(cpu(), 1024, &k));
  SM_ASSERT_OK(sm_stack_release(k));
  SM_ASSERT_OK(sm_debug_age_handle_slot(k, 1));
  std::set<sm_stack> issued{k};
  for (int cycle = 0; cycle < 4; ++cycle) {
    sm_stack h = nullptr;
    SM_ASSERT_OK(sm_stack_create(cpu(), 1024, &h));
    ASSERT_EQ(issued.count(h), 0u) << "cycle " << cycle;
    issued.insert(h);
    SM_ASSERT_OK(sm_stack_release(h));
  }
  for (sm_stack old : issued) {
    int64_t used = -1, cap = -1;
    SM_EXPECT_STATUS(sm_stack_used(old, &used, &cap), SM_ERR_INVALID_HANDLE);
  }
}

}  // namespace
