// The handle guarantee through the C ABI: a stale handle is refused for the
// whole life of the process, also after its slot has been reused up to the
// generation limit (sm_debug_age_handle_slot walks a slot there in a few
// calls instead of 2^28 create/release cycles).
#include <set>

#include "api_test_util.hpp"

using namespace smt;

namespace {

const int64_t kShape4[1] = {4};

// Every handle a slot hands out from its last generations on is new, and
// every released one stays refused, by getters, writers and release alike.
TEST(HandleGenerations, TensorSlotRetiresAtItsLimit) {
  sm_tensor first = nullptr;
  SM_ASSERT_OK(sm_zeros(kShape4, 1, SM_FLOAT32, cpu(), &first));
  SM_ASSERT_OK(sm_tensor_release(first));
  SM_ASSERT_OK(sm_debug_age_handle_slot(first, 2));  // 2 reuses left, then retired
  std::set<sm_tensor> issued{first};
  Tensor keep;  // a live tensor a wrapped stale handle could hit
  SM_ASSERT_OK(sm_zeros(kShape4, 1, SM_FLOAT32, cpu(), keep.out()));
  issued.insert(keep.get());
  for (int cycle = 0; cycle < 6; ++cycle) {
    sm_tensor h = nullptr;
    SM_ASSERT_OK(sm_zeros(kShape4, 1, SM_FLOAT32, cpu(), &h));
    ASSERT_EQ(issued.count(h), 0u) << "cycle " << cycle << ": handle " << h << " was issued before";
    issued.insert(h);
    SM_ASSERT_OK(sm_tensor_release(h));
    for (sm_tensor old : issued) {
      if (old == keep.get()) continue;
      int64_t n = -1;
      SM_EXPECT_STATUS(sm_numel(old, &n), SM_ERR_INVALID_HANDLE);
      EXPECT_EQ(n, -1);
      SM_EXPECT_STATUS(sm_inplace_scalar(old, SM_OP_FILL, 7.0, 0.0), SM_ERR_INVALID_HANDLE);
      SM_EXPECT_STATUS(sm_tensor_release(old), SM_ERR_INVALID_HANDLE);
    }
  }
  // Nothing reached the live tensor.
  float v[4] = {1, 1, 1, 1};
  SM_ASSERT_OK(sm_copy_to_host(keep, v, sizeof v));
  for (float x : v) EXPECT_EQ(x, 0.0f);
  // The retired slot cannot be aged again: it is gone for good.
  SM_EXPECT_STATUS(sm_debug_age_handle_slot(first, 0), SM_ERR_INVALID_ARGUMENT);
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
