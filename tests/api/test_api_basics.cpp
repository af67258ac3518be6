// Version, dtypes, status strings, devices, thread settings, streams on a
// machine without a usable GPU.
#include <set>
#include <string>
#include <thread>

#include "api_test_util.hpp"

using namespace smt;

TEST(Basics, VersionMatchesHeader) {
  int major = -1, minor = -1, patch = -1;
  SM_ASSERT_OK(sm_version(&major, &minor, &patch));
  EXPECT_EQ(major, SM_VERSION_MAJOR);
  EXPECT_EQ(minor, SM_VERSION_MINOR);
  EXPECT_EQ(patch, SM_VERSION_PATCH);
}

TEST(Basics, DtypeSizes) {
  EXPECT_EQ(sm_dtype_size(SM_BOOL), 1u);
  EXPECT_EQ(sm_dtype_size(SM_UINT8), 1u);
  EXPECT_EQ(sm_dtype_size(SM_INT8), 1u);
  EXPECT_EQ(sm_dtype_size(SM_INT16), 2u);
  EXPECT_EQ(sm_dtype_size(SM_INT32), 4u);
  EXPECT_EQ(sm_dtype_size(SM_INT64), 8u);
  EXPECT_EQ(sm_dtype_size(SM_FLOAT16), 2u);
  EXPECT_EQ(sm_dtype_size(SM_BFLOAT16), 2u);
  EXPECT_EQ(sm_dtype_size(SM_FLOAT32), 4u);
  EXPECT_EQ(sm_dtype_size(SM_FLOAT64), 8u);
  EXPECT_EQ(sm_dtype_size(SM_NUM_DTYPES), 0u);
  EXPECT_EQ(sm_dtype_size(-1), 0u);
  EXPECT_EQ(sm_dtype_size(1000), 0u);
}

TEST(Basics, DtypeNames) {
  EXPECT_STREQ(sm_dtype_name(SM_FLOAT32), "float32");
  EXPECT_STREQ(sm_dtype_name(SM_BFLOAT16), "bfloat16");
  EXPECT_STREQ(sm_dtype_name(SM_FLOAT16), "float16");
  EXPECT_STREQ(sm_dtype_name(SM_FLOAT64), "float64");
  EXPECT_STREQ(sm_dtype_name(SM_INT32), "int32");
  EXPECT_STREQ(sm_dtype_name(SM_INT64), "int64");
  EXPECT_STREQ(sm_dtype_name(SM_UINT8), "uint8");
  EXPECT_STREQ(sm_dtype_name(SM_BOOL), "bool");
  std::set<std::string> names;
  for (sm_dtype d = 0; d < SM_NUM_DTYPES; ++d) {
    ASSERT_NE(sm_dtype_name(d), nullptr);
    EXPECT_STRNE(sm_dtype_name(d), "unknown") << d;
    names.insert(sm_dtype_name(d));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(SM_NUM_DTYPES)) << "dtype names must be distinct";
  EXPECT_STREQ(sm_dtype_name(SM_NUM_DTYPES), "unknown");
  EXPECT_STREQ(sm_dtype_name(-7), "unknown");
}

TEST(Basics, StatusStringsForAllCodes) {
  const sm_status codes[] = {SM_OK,           SM_ERR_INVALID_ARGUMENT, SM_ERR_INVALID_HANDLE,
                             SM_ERR_OUT_OF_MEMORY, SM_ERR_SHAPE,       SM_ERR_OUT_OF_BOUNDS,
                             SM_ERR_DTYPE,    SM_ERR_DEVICE,           SM_ERR_OVERLAP,
                             SM_ERR_OVERFLOW, SM_ERR_UNSUPPORTED,      SM_ERR_CUDA,
                             SM_ERR_INTERNAL, SM_ERR_READ_ONLY};
  std::set<std::string> seen;
  for (sm_status c : codes) {
    const char* s = sm_status_string(c);
    ASSERT_NE(s, nullptr) << c;
    EXPECT_GT(std::strlen(s), 0u) << c;
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), sizeof codes / sizeof codes[0]) << "status strings must be distinct";
  // Codes a later version might add, and nonsense, still give a string.
  for (sm_status c : {-1, 14, 99, INT32_MAX, INT32_MIN}) {
    const char* s = sm_status_string(c);
    ASSERT_NE(s, nullptr) << c;
    EXPECT_GT(std::strlen(s), 0u) << c;
  }
  // Frozen integers (the ABI).
  EXPECT_EQ(SM_OK, 0);
  EXPECT_EQ(SM_ERR_INVALID_ARGUMENT, 1);
  EXPECT_EQ(SM_ERR_INTERNAL, 12);
  EXPECT_EQ(SM_ERR_READ_ONLY, 13);
}

TEST(Basics, LastErrorIsEmptyInAFreshThreadAndSetAfterAFailure) {
  std::string fresh = "unset";
  std::thread th([&] { fresh = sm_last_error(); });
  th.join();
  EXPECT_EQ(fresh, "");

  EXPECT_EQ(sm_numel(nullptr, nullptr), SM_ERR_INVALID_HANDLE);
  EXPECT_STRNE(sm_last_error(), "");
  // A successful call does not clear it (valid until the next failing call).
  int a = 0, b = 0, c = 0;
  const std::string before = sm_last_error();
  SM_ASSERT_OK(sm_version(&a, &b, &c));
  EXPECT_EQ(before, sm_last_error());
}

TEST(Devices, CudaDeviceCountIsOk) {
  int32_t n = -1;
  SM_ASSERT_OK(sm_cuda_device_count(&n));
  EXPECT_GE(n, 0);
}

// Without a usable GPU every CUDA call says so, and the CPU path keeps working.
TEST(Devices, CudaCallsWithoutGpuReturnDevice) {
  int32_t n = -1;
  SM_ASSERT_OK(sm_cuda_device_count(&n));
  if (n > 0) GTEST_SKIP() << "a GPU is usable here; tests/api/test_cuda_*.cpp cover it";
  const int64_t shape[1] = {4};
  Tensor t = iota({4});
  const GlobalSnap g0 = global_snap();
  sm_tensor out = sentinel_tensor();
  EXPECT_EQ(sm_empty(shape, 1, SM_FLOAT32, cuda(0), &out), SM_ERR_DEVICE);
  EXPECT_EQ(out, sentinel_tensor());
  EXPECT_STRNE(sm_last_error(), "");
  EXPECT_EQ(sm_zeros(shape, 1, SM_FLOAT32, cuda(0), &out), SM_ERR_DEVICE);
  EXPECT_EQ(sm_empty(shape, 1, SM_FLOAT32, sm_device{SM_DEVICE_CUDA_HOST, 0}, &out),
            SM_ERR_DEVICE);
  EXPECT_EQ(out, sentinel_tensor());

  EXPECT_EQ(sm_to(t, cuda(0), SM_FLOAT32, &out, nullptr), SM_ERR_DEVICE);
  EXPECT_EQ(out, sentinel_tensor());
  expect_error_mentions({"sm_to"});

  sm_stack s = sentinel_stack();
  EXPECT_EQ(sm_stack_create(cuda(0), 1024, &s), SM_ERR_DEVICE);
  EXPECT_EQ(s, sentinel_stack());

  sm_memory_stats_t st;
  std::memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  EXPECT_EQ(sm_memory_stats(cuda(0), &st), SM_ERR_DEVICE);
  EXPECT_EQ(sm_synchronize(cuda(0)), SM_ERR_DEVICE);
  EXPECT_EQ(sm_empty_cache(cuda(0)), SM_ERR_DEVICE);
  EXPECT_EQ(sm_reset_peak_stats(cuda(0)), SM_ERR_DEVICE);
  EXPECT_EQ(sm_set_stream(cuda(0), nullptr), SM_ERR_DEVICE);
  void* stream = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(sm_get_stream(cuda(0), &stream), SM_ERR_DEVICE);
  EXPECT_EQ(stream, reinterpret_cast<void*>(0x1));
  expect_error_mentions({"sm_get_stream"});
  EXPECT_EQ(global_snap(), g0);

  // The CPU keeps working.
  EXPECT_EQ(read<float>(t), (std::vector<float>{0, 1, 2, 3}));
}

TEST(Devices, NonexistentDevicesAreDeviceErrors) {
  const int64_t shape[1] = {4};
  const GlobalSnap g0 = global_snap();
  for (sm_device d : {sm_device{99, 0}, sm_device{0, 0}, sm_device{-1, 0},
                      sm_device{SM_DEVICE_CUDA, 4096}, sm_device{SM_DEVICE_CUDA, -1},
                      sm_device{SM_DEVICE_CPU, 1}, sm_device{SM_DEVICE_CPU, -1}}) {
    sm_tensor out = sentinel_tensor();
    EXPECT_EQ(sm_empty(shape, 1, SM_FLOAT32, d, &out), SM_ERR_DEVICE)
        << "device {" << d.type << ", " << d.index << "}: " << sm_last_error();
    EXPECT_EQ(out, sentinel_tensor());
    EXPECT_STRNE(sm_last_error(), "");
    sm_memory_stats_t st;
    std::memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    EXPECT_EQ(sm_memory_stats(d, &st), SM_ERR_DEVICE) << d.type << "/" << d.index;
    EXPECT_EQ(sm_synchronize(d), SM_ERR_DEVICE) << d.type << "/" << d.index;
  }
  // Type 99 named in the message.
  sm_tensor out = sentinel_tensor();
  EXPECT_EQ(sm_zeros(shape, 1, SM_FLOAT32, sm_device{99, 0}, &out), SM_ERR_DEVICE);
  expect_error_mentions({"sm_zeros", "99"});
  EXPECT_EQ(global_snap(), g0);
}

TEST(Devices, SynchronizeCpuReturnsAtOnce) { SM_EXPECT_OK(sm_synchronize(cpu())); }

TEST(Threads, SetAndGetNumThreads) {
  int32_t orig = -1;
  SM_ASSERT_OK(sm_get_num_threads(&orig));
  EXPECT_GE(orig, 0);

  SM_ASSERT_OK(sm_set_num_threads(3));
  int32_t n = -1;
  SM_ASSERT_OK(sm_get_num_threads(&n));
  EXPECT_EQ(n, 3);
  SM_ASSERT_OK(sm_set_num_threads(1));
  SM_ASSERT_OK(sm_get_num_threads(&n));
  EXPECT_EQ(n, 1);

  // 0 = one per core: whatever it reports, it is a usable count.
  SM_ASSERT_OK(sm_set_num_threads(0));
  SM_ASSERT_OK(sm_get_num_threads(&n));
  EXPECT_GE(n, 0);

  EXPECT_EQ(sm_set_num_threads(-2), SM_ERR_INVALID_ARGUMENT);
  expect_error_mentions({"sm_set_num_threads", "-2"});
  int32_t after = -1;
  SM_ASSERT_OK(sm_get_num_threads(&after));
  EXPECT_EQ(after, n) << "a refused set changes nothing";

  SM_ASSERT_OK(sm_set_num_threads(orig));
}

// Large strided copies give the same result with 1 and several workers.
TEST(Threads, CopyResultIndependentOfWorkerCount) {
  int32_t orig = -1;
  SM_ASSERT_OK(sm_get_num_threads(&orig));
  Tensor base = iota<float>({512, 1024});
  Tensor tr;
  SM_ASSERT_OK(sm_transpose(base, 0, 1, tr.out()));
  std::vector<float> results[2];
  int i = 0;
  for (int32_t n : {1, 4}) {
    SM_ASSERT_OK(sm_set_num_threads(n));
    Tensor c;
    SM_ASSERT_OK(sm_contiguous(tr, SM_CONTIGUOUS, c.out(), nullptr));
    results[i++] = read<float>(c);
  }
  SM_ASSERT_OK(sm_set_num_threads(orig));
  ASSERT_EQ(results[0].size(), 512u * 1024u);
  EXPECT_EQ(results[0], results[1]);
  // Spot checks: c[j][i] = base[i][j] = i*1024 + j.
  EXPECT_EQ(results[0][0], 0.0f);
  EXPECT_EQ(results[0][1], 1024.0f);            // c[0][1] = base[1][0]
  EXPECT_EQ(results[0][512], 1.0f);             // c[1][0] = base[0][1]
  EXPECT_EQ(results[0][1023 * 512 + 511], 511.0f * 1024 + 1023);
}

// Streams are a CUDA notion; on the CPU they are harmless no-ops.
TEST(Devices, StreamCallsOnTheCpu) {
  Tensor t = iota({4});
  const TensorSnap before = snap(t);
  SM_EXPECT_OK(sm_record_stream(t, nullptr));
  // Any pointer: never looked at (the CPU allocator has no streams to wait for).
  SM_EXPECT_OK(sm_record_stream(t, reinterpret_cast<void*>(0x1234)));
  EXPECT_EQ(snap(t), before);
  const sm_status set = sm_set_stream(cpu(), nullptr);
  expect_status_in(set, {SM_OK, SM_ERR_DEVICE}, "sm_set_stream(cpu)");
  if (set == SM_OK) {
    void* s = reinterpret_cast<void*>(0x1);
    SM_EXPECT_OK(sm_get_stream(cpu(), &s));
    EXPECT_EQ(s, nullptr);
  }
  SM_EXPECT_OK(sm_synchronize(cpu()));
}
