// CUDA devices through the C API: discovery and its errors, round trips,
// creation, the caching allocator's statistics, streams, pinned memory,
// several GPUs. Without a usable GPU every test but the first is skipped
// with the reason; the first checks the no-GPU answers themselves.
#include "stridemem_dlpack.h"
#include "test_cuda_util.hpp"

#include <thread>

namespace smt {
namespace {

TEST(CudaDevice, AnswersClearlyWhetherOrNotAGpuIsUsable) {
  const int32_t n = cuda_count();
  ASSERT_GE(n, 0);
  const int64_t shape[1] = {4};
  Tensor t;
  const sm_status st = sm_empty(shape, 1, SM_FLOAT32, cuda(0), t.out());
  if (n == 0) {
    // No GPU: a clear SM_ERR_DEVICE, for pinned memory too, and the CPU keeps working.
    EXPECT_EQ(st, SM_ERR_DEVICE);
    const std::string msg = sm_last_error();
    std::printf("[ INFO     ] %s\n", msg.c_str());
    expect_error_mentions({"cuda:0"});
    // Why: no GPU usable at run time, or a build without the CUDA backend.
    EXPECT_TRUE(msg.find("no usable CUDA device") != std::string::npos ||
                msg.find("built without CUDA") != std::string::npos)
        << msg;
    Tensor p;
    EXPECT_EQ(sm_empty(shape, 1, SM_FLOAT32, pinned(), p.out()), SM_ERR_DEVICE);
    expect_error_mentions({"cuda_host"});
    Tensor c;
    SM_EXPECT_OK(sm_zeros(shape, 1, SM_FLOAT32, cpu(), c.out()));
  } else {
    SM_EXPECT_OK(st);
    // One past the last device does not exist.
    Tensor u;
    EXPECT_EQ(sm_empty(shape, 1, SM_FLOAT32, cuda(n), u.out()), SM_ERR_DEVICE);
    expect_error_mentions({"does not exist"});
  }
  Tensor neg;
  EXPECT_EQ(sm_empty(shape, 1, SM_FLOAT32, cuda(-1), neg.out()), SM_ERR_DEVICE);
}

TEST(CudaDevice, RoundTripsEveryDtype) {
  SMT_REQUIRE_CUDA();
  for (sm_dtype dt = 0; dt < SM_NUM_DTYPES; ++dt) {
    for (const Shape& shape : {Shape{}, Shape{0}, Shape{1}, Shape{7, 13}, Shape{3, 1, 1000}}) {
      Tensor c = random_cpu(shape, dt, 100 + static_cast<uint32_t>(dt));
      Tensor g = to_device(c, cuda(0));
      sm_device dev{};
      SM_ASSERT_OK(sm_device_of(g, &dev));
      EXPECT_EQ(dev.type, SM_DEVICE_CUDA);
      EXPECT_EQ(dev.index, 0);
      expect_same(c, g, std::string("round trip ") + sm_dtype_name(dt));
      // And back through sm_to.
      Tensor back = to_device(g, cpu());
      EXPECT_EQ(read_bytes(back), read_bytes(c));
    }
  }
}

TEST(CudaDevice, Creation) {
  SMT_REQUIRE_CUDA();
  const Shape shape = {5, 6};
  Tensor z, f, a;
  SM_ASSERT_OK(sm_zeros(shape.data(), 2, SM_FLOAT32, cuda(0), z.out()));
  EXPECT_EQ(read<float>(z), std::vector<float>(30, 0.0f));
  SM_ASSERT_OK(sm_full(shape.data(), 2, 2.5, SM_FLOAT64, cuda(0), f.out()));
  EXPECT_EQ(read<double>(f), std::vector<double>(30, 2.5));
  SM_ASSERT_OK(sm_arange(3.0, 2.0, 10, SM_INT32, cuda(0), a.out()));
  std::vector<int32_t> want(10);
  for (int i = 0; i < 10; ++i) want[static_cast<size_t>(i)] = 3 + 2 * i;
  EXPECT_EQ(read<int32_t>(a), want);
  // sm_full's conversion matches the CPU's for every dtype (f16 rounding, bool),
  // and so do its refusals (a value the dtype cannot hold is SM_ERR_DTYPE on both).
  int refused = 0;
  for (sm_dtype dt = 0; dt < SM_NUM_DTYPES; ++dt) {
    for (double v : {0.1, -1.5, 300.0, 65519.0, 1e10, -0.0}) {
      Tensor c, g;
      const std::string what = std::string("sm_full ") + sm_dtype_name(dt) + " " + std::to_string(v);
      const sm_status sc = sm_full(shape.data(), 2, v, dt, cpu(), c.out());
      const sm_status sg = sm_full(shape.data(), 2, v, dt, cuda(0), g.out());
      ASSERT_EQ(sc, sg) << what << ": " << sm_last_error();
      if (sc == SM_OK) {
        expect_same(c, g, what);
      } else {
        EXPECT_EQ(sc, SM_ERR_DTYPE) << what;
        EXPECT_EQ(g.get(), nullptr) << what;
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 0);  // -1.5 as uint8, 1e10 as int32, ...
  // Strided and negative-stride storages.
  Tensor s;
  const int64_t strides[2] = {-1, 5};
  SM_ASSERT_OK(sm_empty_strided(shape.data(), strides, 2, SM_INT16, cuda(0), s.out()));
  SM_ASSERT_OK(sm_inplace_scalar(s, SM_OP_FILL, 7, 0));
  EXPECT_EQ(read<int16_t>(s), std::vector<int16_t>(30, 7));
}

TEST(CudaDevice, CachingAllocatorStatistics) {
  SMT_REQUIRE_CUDA();
  SM_ASSERT_OK(sm_synchronize(cuda(0)));
  SM_ASSERT_OK(sm_empty_cache(cuda(0)));
  const sm_memory_stats_t s0 = stats(cuda(0));
  const int64_t shape[1] = {1000};  // 4000 bytes -> 4096
  {
    Tensor t;
    SM_ASSERT_OK(sm_empty(shape, 1, SM_FLOAT32, cuda(0), t.out()));
    const sm_memory_stats_t s1 = stats(cuda(0));
    EXPECT_EQ(s1.allocated_bytes - s0.allocated_bytes, 4096);
    EXPECT_EQ(s1.requested_bytes - s0.requested_bytes, 4000);
    EXPECT_EQ(s1.num_allocs - s0.num_allocs, 1);
    EXPECT_GE(s1.reserved_bytes - s0.reserved_bytes, 0);
    EXPECT_EQ(s1.active_storages - s0.active_storages, 1);
    EXPECT_EQ(s1.active_views - s0.active_views, 1);
  }
  const sm_memory_stats_t s2 = stats(cuda(0));
  EXPECT_EQ(s2.allocated_bytes, s0.allocated_bytes);
  EXPECT_EQ(s2.num_frees - s0.num_frees, 1);
  // The block is cached: the same request is a cache hit, no device allocation.
  {
    Tensor t;
    SM_ASSERT_OK(sm_empty(shape, 1, SM_FLOAT32, cuda(0), t.out()));
    const sm_memory_stats_t s3 = stats(cuda(0));
    EXPECT_EQ(s3.cache_hits - s2.cache_hits, 1);
    EXPECT_EQ(s3.device_allocs, s2.device_allocs);
  }
  // Large blocks: a 64 MiB tensor reserves its own segment, freed by empty_cache.
  {
    const int64_t big[1] = {16 << 20};
    Tensor t;
    SM_ASSERT_OK(sm_empty(big, 1, SM_FLOAT32, cuda(0), t.out()));
    EXPECT_GE(stats(cuda(0)).reserved_bytes - s2.reserved_bytes, int64_t(64) << 20);
    SM_ASSERT_OK(sm_empty_cache(cuda(0)));  // live: stays; the cached small segment goes
    const sm_memory_stats_t s = stats(cuda(0));
    EXPECT_GE(s.reserved_bytes, int64_t(64) << 20);
    EXPECT_EQ(s.reserved_bytes, s.allocated_bytes);
  }
  SM_ASSERT_OK(sm_empty_cache(cuda(0)));
  const sm_memory_stats_t s4 = stats(cuda(0));
  EXPECT_EQ(s4.reserved_bytes, s4.allocated_bytes);  // nothing cached is left
  EXPECT_GT(s4.device_frees, s2.device_frees);
  EXPECT_GE(s4.peak_reserved_bytes, int64_t(64) << 20);
  SM_ASSERT_OK(sm_reset_peak_stats(cuda(0)));
  EXPECT_EQ(stats(cuda(0)).peak_reserved_bytes, stats(cuda(0)).reserved_bytes);
  char buf[4096];
  SM_ASSERT_OK(sm_memory_summary(cuda(0), buf, sizeof buf, nullptr));
  EXPECT_GT(std::strlen(buf), 20u);
}

TEST(CudaDevice, OutOfMemoryIsReportedAndNothingLeaks) {
  SMT_REQUIRE_CUDA();
  const sm_memory_stats_t s0 = stats(cuda(0));
  const int64_t huge[1] = {int64_t(1) << 50};  // 1 PiB
  Tensor t;
  EXPECT_EQ(sm_empty(huge, 1, SM_UINT8, cuda(0), t.out()), SM_ERR_OUT_OF_MEMORY);
  expect_error_mentions({"cuda:0", "out of memory"});
  EXPECT_FALSE(t);
  const sm_memory_stats_t s1 = stats(cuda(0));
  EXPECT_EQ(s1.allocated_bytes, s0.allocated_bytes);
  EXPECT_EQ(s1.active_storages, s0.active_storages);
  // Fault injection reaches CUDA allocations too.
  SM_ASSERT_OK(sm_debug_fail_alloc(1));
  const int64_t small[1] = {10};
  EXPECT_EQ(sm_empty(small, 1, SM_FLOAT32, cuda(0), t.out()), SM_ERR_OUT_OF_MEMORY);
  SM_ASSERT_OK(sm_debug_fail_alloc(0));
  SM_EXPECT_OK(sm_empty(small, 1, SM_FLOAT32, cuda(0), t.out()));
}

TEST(CudaDevice, StreamsPerThread) {
  SMT_REQUIRE_CUDA();
  Cudart& rt = Cudart::get();
  if (!rt.ok()) GTEST_SKIP() << "libcudart.so could not be loaded to create streams: " << dlerror();
  void* s = nullptr;
  ASSERT_EQ(rt.set_device(0), 0);
  ASSERT_EQ(rt.stream_create(&s, 1 /* cudaStreamNonBlocking */), 0);
  void* got = reinterpret_cast<void*>(1);
  SM_ASSERT_OK(sm_get_stream(cuda(0), &got));
  EXPECT_EQ(got, nullptr);
  SM_ASSERT_OK(sm_set_stream(cuda(0), s));
  SM_ASSERT_OK(sm_get_stream(cuda(0), &got));
  EXPECT_EQ(got, s);
  // Another thread still has the default stream.
  std::thread([&] {
    void* other = reinterpret_cast<void*>(1);
    EXPECT_EQ(sm_get_stream(cuda(0), &other), SM_OK);
    EXPECT_EQ(other, nullptr);
  }).join();
  // Work on the stream: results are right once the stream is synchronized.
  Pair p = random_pair({256, 300}, SM_FLOAT32, 5);
  const int32_t perm[2] = {1, 0};
  Pair tp = both(p, [&](sm_tensor t, sm_tensor* o) { return sm_permute(t, perm, 2, o); });
  Tensor cc, gc;
  SM_ASSERT_OK(sm_contiguous(tp.c, SM_CONTIGUOUS, cc.out(), nullptr));
  SM_ASSERT_OK(sm_contiguous(tp.g, SM_CONTIGUOUS, gc.out(), nullptr));
  SM_ASSERT_OK(sm_inplace_scalar(gc, SM_OP_MUL, 2.0, 0));
  SM_ASSERT_OK(sm_inplace_scalar(cc, SM_OP_MUL, 2.0, 0));
  ASSERT_EQ(rt.stream_sync(s), 0);
  expect_same_values(cc, gc, "work on a user stream");
  // record_stream: a tensor used on another stream is not reused before that work ends.
  SM_ASSERT_OK(sm_set_stream(cuda(0), nullptr));
  {
    Tensor t;
    const int64_t shape[1] = {1 << 20};
    SM_ASSERT_OK(sm_zeros(shape, 1, SM_FLOAT32, cuda(0), t.out()));
    SM_ASSERT_OK(sm_record_stream(t, s));
  }
  SM_ASSERT_OK(sm_synchronize(cuda(0)));
  ASSERT_EQ(rt.stream_sync(s), 0);
  SM_ASSERT_OK(sm_empty_cache(cuda(0)));  // waits for the recorded use, then frees
  // A stream of the wrong kind is refused.
  EXPECT_EQ(sm_set_stream(cpu(), s), SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sm_set_stream(pinned(), s), SM_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(rt.stream_destroy(s), 0);
}

TEST(CudaDevice, PinnedHostMemory) {
  SMT_REQUIRE_CUDA();
  Tensor c = random_cpu({64, 1000}, SM_FLOAT32, 9);
  Tensor h = to_device(c, pinned());
  sm_device dev{};
  SM_ASSERT_OK(sm_device_of(h, &dev));
  EXPECT_EQ(dev.type, SM_DEVICE_CUDA_HOST);
  EXPECT_EQ(read_bytes(h), read_bytes(c));
  // pinned -> GPU is asynchronous on the current stream; the GPU's own work
  // is ordered after it, and results read back are complete.
  Tensor g = to_device(h, cuda(0));
  SM_ASSERT_OK(sm_inplace_scalar(g, SM_OP_ADD, 1.0, 0));
  Tensor h2 = to_device(g, pinned());  // GPU -> pinned: readable on return
  SM_ASSERT_OK(sm_inplace_scalar(c, SM_OP_ADD, 1.0, 0));
  expect_same_values(c, h2, "cpu -> pinned -> cuda -> pinned");
  // Releasing a pinned source right after an asynchronous copy is safe: the
  // block is not handed out again until the copy is done.
  for (int i = 0; i < 20; ++i) {
    Tensor src = to_device(c, pinned());
    Tensor dst;
    SM_ASSERT_OK(sm_to(src, cuda(0), SM_FLOAT32, dst.out(), nullptr));
    src.reset();
    Tensor scribble;  // likely the same pinned block, if it were reused too early
    const int64_t shape[2] = {64, 1000};
    SM_ASSERT_OK(sm_full(shape, 2, -7.0, SM_FLOAT32, pinned(), scribble.out()));
    expect_same_values(c, dst, "pinned source released during the copy");
  }
  const sm_memory_stats_t ps = stats(pinned());
  EXPECT_GT(ps.num_allocs, 0);
  SM_EXPECT_OK(sm_synchronize(pinned()));
  SM_EXPECT_OK(sm_empty_cache(pinned()));
}

// sm_to_dlpack_ex with the consumer's device: a CPU tensor asked for on
// cuda:0 is exported there as a copy (flagged); NO_COPY refuses it.
TEST(CudaDevice, DLPackExportToTheConsumersDevice) {
  SMT_REQUIRE_CUDA();
  Tensor c = random_cpu({16, 9}, SM_FLOAT32, 11);
  Tensor t;
  SM_ASSERT_OK(sm_transpose(c, 0, 1, t.out()));
  const sm_device gpu = cuda(0);
  void* raw = nullptr;
  int copied = -1;
  SM_EXPECT_STATUS(sm_to_dlpack_ex(t, SM_DLPACK_VERSIONED | SM_DLPACK_NO_COPY, &gpu, &raw, &copied),
                   SM_ERR_UNSUPPORTED);
  EXPECT_EQ(copied, -1);
  SM_ASSERT_OK(sm_to_dlpack_ex(t, SM_DLPACK_VERSIONED, &gpu, &raw, &copied));
  EXPECT_EQ(copied, 1);
  auto* m = static_cast<sm_DLManagedTensorVersioned*>(raw);
  EXPECT_EQ(static_cast<int>(m->dl_tensor.device.device_type), SM_DEVICE_CUDA);
  EXPECT_NE(m->flags & SM_DLPACK_FLAG_BITMASK_IS_COPIED, 0u);
  Tensor back;  // imported back: the GPU copy holds t's values
  SM_ASSERT_OK(sm_from_dlpack(m, 1, back.out()));
  expect_same_values(t, to_device(back, cpu()), "exported to cuda:0 and imported back");
}

TEST(CudaDevice, SeveralGpus) {
  SMT_REQUIRE_CUDA();
  if (cuda_count() < 2) GTEST_SKIP() << "one GPU only: peer copies need two";
  Tensor c = random_cpu({333, 517}, SM_FLOAT64, 3);
  Tensor g0 = to_device(c, cuda(0));
  Tensor g1 = to_device(g0, cuda(1));
  sm_device dev{};
  SM_ASSERT_OK(sm_device_of(g1, &dev));
  EXPECT_EQ(dev.index, 1);
  expect_same(c, g1, "cuda:0 -> cuda:1");
  // A strided view across devices, converted on the way.
  Tensor t0, t1;
  SM_ASSERT_OK(sm_transpose(g0, 0, 1, t0.out()));
  Tensor dst;
  const int64_t shape[2] = {517, 333};
  SM_ASSERT_OK(sm_empty(shape, 2, SM_FLOAT32, cuda(1), dst.out()));
  SM_ASSERT_OK(sm_copy_into(dst, t0));
  Tensor tc, ref;
  SM_ASSERT_OK(sm_transpose(c, 0, 1, tc.out()));
  SM_ASSERT_OK(sm_empty(shape, 2, SM_FLOAT32, cpu(), ref.out()));
  SM_ASSERT_OK(sm_copy_into(ref, tc));
  expect_same_values(ref, dst, "transposed copy_into across GPUs");
  SM_EXPECT_OK(sm_synchronize(cuda(1)));
}

}  // namespace
}  // namespace smt
