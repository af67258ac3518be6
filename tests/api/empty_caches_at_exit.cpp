// A global tear-down for the API test program: empties the caching
// allocators of the CPU, pinned host and every CUDA device when all tests have
// run, so that compute-sanitizer's leak check (scripts/gpu-check.sh sanitize)
// reports only memory that something still holds, not the cache the library
// keeps for the life of the process by design.
#include <gtest/gtest.h>

#include "api_test_util.hpp"

namespace smt {
namespace {

class EmptyCachesAtExit : public ::testing::Environment {
 public:
  void TearDown() override {
    int32_t n = 0;
    if (sm_cuda_device_count(&n) != SM_OK) n = 0;
    for (int32_t i = 0; i < n; ++i) {
      EXPECT_EQ(sm_synchronize(cuda(i)), SM_OK) << sm_last_error();
      EXPECT_EQ(sm_empty_cache(cuda(i)), SM_OK) << sm_last_error();
    }
    if (n > 0) EXPECT_EQ(sm_empty_cache(sm_device{SM_DEVICE_CUDA_HOST, 0}), SM_OK) << sm_last_error();
    EXPECT_EQ(sm_empty_cache(cpu()), SM_OK) << sm_last_error();
  }
};

// Registered before main() runs (gtest_main); GoogleTest owns it.
const ::testing::Environment* const registered =
    ::testing::AddGlobalTestEnvironment(new EmptyCachesAtExit);

}  // namespace
}  // namespace smt
