// The host-side rules of sharing storages between processes, without a
// second process or a GPU: the segment a caching-allocator block is shared
// as (CUDA IPC hands out whole allocations), the importer's one opening per
// segment, the descriptor's seal and checks, and shared host memory itself.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "engine/sharing.hpp"
#include "fake_device.hpp"
#include "memory/device_caching_allocator.hpp"
#include "memory/ipc_mapping_cache.hpp"
#include "memory/shared_host_memory.hpp"

namespace sm {
namespace {

uintptr_t at(const Allocation& a) { return reinterpret_cast<uintptr_t>(a.ptr); }

TEST(SegmentOf, BlocksNameTheWholeAllocationTheyWereCarvedFrom) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  Allocation a = alloc.allocate(100);      // small segment, first block
  Allocation b = alloc.allocate(3000);     // same small segment, later block
  Allocation big = alloc.allocate(12 * MiB);  // a large segment of its own
  void* base = nullptr;
  size_t size = 0;
  ASSERT_TRUE(alloc.segment_of(b, &base, &size));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base), at(a)) << "b's segment starts where a does";
  EXPECT_EQ(size, 2 * MiB);
  EXPECT_EQ(at(b) - reinterpret_cast<uintptr_t>(base), 512u) << "b's offset in it";
  ASSERT_TRUE(alloc.segment_of(a, &base, &size));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base), at(a));
  ASSERT_TRUE(alloc.segment_of(big, &base, &size));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base), at(big));
  EXPECT_EQ(size, 12 * MiB);
  // After neighbours merge and split again, the segment is still the same.
  alloc.deallocate(a);
  Allocation c = alloc.allocate(200);
  ASSERT_TRUE(alloc.segment_of(b, &base, &size));
  EXPECT_EQ(size, 2 * MiB);
  ASSERT_TRUE(alloc.segment_of(c, &base, &size));
  EXPECT_EQ(size, 2 * MiB);
  EXPECT_FALSE(alloc.segment_of(Allocation{}, &base, &size)) << "an empty allocation has none";
  alloc.deallocate(b);
  alloc.deallocate(c);
  alloc.deallocate(big);
}

class FakeIpc final : public IpcOps {
 public:
  void* open(int device, const IpcHandle& h) override {
    std::lock_guard<std::mutex> l(mu);
    if (h[0] == 0xFF) fail(SM_ERR_CUDA, "cudaIpcOpenMemHandle: invalid handle");
    ++opens;
    EXPECT_EQ(live.count({device, h}), 0u) << "opened twice while open";
    live.insert({device, h});
    return reinterpret_cast<void*>(uintptr_t(0x100000) * (h[0] + 1) + uintptr_t(device));
  }
  void close(int device, void* base) noexcept override {
    std::lock_guard<std::mutex> l(mu);
    ++closes;
    for (auto it = live.begin(); it != live.end(); ++it)
      if (it->first == device &&
          reinterpret_cast<void*>(uintptr_t(0x100000) * (it->second[0] + 1) + uintptr_t(device)) == base) {
        live.erase(it);
        return;
      }
    ADD_FAILURE() << "closed something never opened";
  }
  std::mutex mu;
  int opens = 0, closes = 0;
  std::set<std::pair<int, IpcHandle>> live;
};

IpcHandle handle(uint8_t first) {
  IpcHandle h{};
  h[0] = first;
  h[63] = 0x42;
  return h;
}

TEST(IpcMappingCache, OpensASegmentOnceAndClosesItWithTheLastHolder) {
  FakeIpc ops;
  IpcMappingCache cache(&ops);
  std::shared_ptr<void> a = cache.acquire(0, handle(1));
  std::shared_ptr<void> b = cache.acquire(0, handle(1));  // another storage of the same segment
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(ops.opens, 1);
  std::shared_ptr<void> other_dev = cache.acquire(1, handle(1));  // same bytes, other GPU
  std::shared_ptr<void> other = cache.acquire(0, handle(2));
  EXPECT_EQ(ops.opens, 3);
  EXPECT_EQ(cache.open_count(), 3u);
  a.reset();
  EXPECT_EQ(ops.closes, 0) << "b still holds it";
  b.reset();
  EXPECT_EQ(ops.closes, 1);
  EXPECT_EQ(cache.open_count(), 2u);
  // Opened again after its close.
  std::shared_ptr<void> again = cache.acquire(0, handle(1));
  EXPECT_EQ(ops.opens, 4);
  again.reset();
  other.reset();
  other_dev.reset();
  EXPECT_EQ(ops.closes, 4);
  EXPECT_EQ(cache.open_count(), 0u);
}

TEST(IpcMappingCache, AFailedOpenLeavesNothingBehind) {
  FakeIpc ops;
  IpcMappingCache cache(&ops);
  try {
    cache.acquire(0, handle(0xFF));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), SM_ERR_CUDA);
  }
  EXPECT_EQ(cache.open_count(), 0u);
  EXPECT_EQ(ops.closes, 0);
}

TEST(IpcMappingCache, ConcurrentHoldersNeverOpenTwice) {
  FakeIpc ops;  // FakeIpc::open fails the test on a second opening while open
  IpcMappingCache cache(&ops);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 2000; ++i) {
        std::shared_ptr<void> m = cache.acquire(0, handle(static_cast<uint8_t>((i + t) % 3)));
        std::shared_ptr<void> copy = m;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(cache.open_count(), 0u);
  EXPECT_EQ(ops.opens, ops.closes);
}

sm_share_desc sealed_cpu_desc() {
  sm_share_desc d;
  std::memset(&d, 0, sizeof d);
  d.kind = SM_SHARE_MEMFD;
  d.device = sm_device{SM_DEVICE_CPU, 0};
  d.nbytes = 100;
  d.object_bytes = 128;
  seal_share_desc(d);
  return d;
}

sm_status status_of(const sm_share_desc& d) {
  try {
    check_share_desc(d);
    return SM_OK;
  } catch (const Error& e) {
    return e.status();
  }
}

TEST(ShareDescriptor, SealStampsVersionAndChecksum) {
  const sm_share_desc d = sealed_cpu_desc();
  EXPECT_EQ(d.magic, SM_SHARE_MAGIC);
  EXPECT_EQ(d.format, SM_SHARE_FORMAT);
  EXPECT_EQ(d.struct_size, SM_SHARE_DESC_SIZE);
  EXPECT_EQ(d.library_version, static_cast<uint32_t>(SM_VERSION_NUMBER));
  EXPECT_EQ(d.checksum, share_checksum(d));
  EXPECT_EQ(status_of(d), SM_OK);
  // "SMSH" in memory on this (little-endian) machine.
  EXPECT_EQ(std::memcmp(&d.magic, "SMSH", 4), 0);
}

TEST(ShareDescriptor, EveryByteTheChecksumCoversMatters) {
  const sm_share_desc good = sealed_cpu_desc();
  // The first 8 bytes are checked before the checksum (magic, format, size);
  // every later byte up to the checksum is the checksum's.
  for (size_t i = 8; i < offsetof(sm_share_desc, checksum); ++i) {
    sm_share_desc d = good;
    reinterpret_cast<uint8_t*>(&d)[i] ^= 0x80;
    EXPECT_EQ(status_of(d), SM_ERR_INVALID_ARGUMENT) << "byte " << i;
  }
}

TEST(ShareDescriptor, RangesAndKindsAreChecked) {
  struct Case {
    const char* what;
    std::function<void(sm_share_desc&)> edit;
    sm_status want;
  };
  const std::vector<Case> cases = {
      {"exactly fills the object", [](sm_share_desc& d) { d.nbytes = 28; d.offset = 100; }, SM_OK},
      {"one byte past", [](sm_share_desc& d) { d.nbytes = 29; d.offset = 100; }, SM_ERR_OUT_OF_BOUNDS},
      {"offset past", [](sm_share_desc& d) { d.nbytes = 0; d.offset = 129; }, SM_ERR_OUT_OF_BOUNDS},
      {"negative object", [](sm_share_desc& d) { d.object_bytes = -1; d.nbytes = 0; }, SM_ERR_OUT_OF_BOUNDS},
      {"huge offset + nbytes",
       [](sm_share_desc& d) { d.object_bytes = INT64_MAX; d.offset = INT64_MAX; d.nbytes = 1; },
       SM_ERR_OUT_OF_BOUNDS},
      {"memfd on CUDA", [](sm_share_desc& d) { d.device = sm_device{SM_DEVICE_CUDA, 0}; }, SM_ERR_INVALID_ARGUMENT},
      {"memfd on cpu:1", [](sm_share_desc& d) { d.device.index = 1; }, SM_ERR_INVALID_ARGUMENT},
      {"CUDA on the CPU", [](sm_share_desc& d) { d.kind = SM_SHARE_CUDA_IPC; }, SM_ERR_INVALID_ARGUMENT},
      {"CUDA index 64",
       [](sm_share_desc& d) { d.kind = SM_SHARE_CUDA_IPC; d.device = sm_device{SM_DEVICE_CUDA, 64}; },
       SM_ERR_INVALID_ARGUMENT},
      {"CUDA index 63",
       [](sm_share_desc& d) { d.kind = SM_SHARE_CUDA_IPC; d.device = sm_device{SM_DEVICE_CUDA, 63}; },
       SM_OK},
      {"kind 0", [](sm_share_desc& d) { d.kind = 0; }, SM_ERR_INVALID_ARGUMENT},
      {"same major, other minor", [](sm_share_desc& d) { d.library_version = SM_VERSION_MAJOR * 10000 + 9999; },
       SM_OK},
      {"other major", [](sm_share_desc& d) { d.library_version += 10000; }, SM_ERR_UNSUPPORTED},
  };
  for (const Case& c : cases) {
    sm_share_desc d = sealed_cpu_desc();
    c.edit(d);
    const uint32_t version = d.library_version;
    seal_share_desc(d);
    d.library_version = version;  // seal stamps ours; keep the case's
    d.checksum = share_checksum(d);
    EXPECT_EQ(status_of(d), c.want) << c.what;
  }
}

TEST(SharedHostMemory, CreatedSealedAndCountedUntilTheLastHolder) {
  const int64_t live0 = SharedHostMemory::live_count(), bytes0 = SharedHostMemory::live_bytes();
  std::shared_ptr<SharedHostMemory> m = SharedHostMemory::create(10000);
  ASSERT_NE(m->data(), nullptr);
  EXPECT_EQ(SharedHostMemory::live_count(), live0 + 1);
  EXPECT_EQ(SharedHostMemory::live_bytes(), bytes0 + 10000);
  const int fd = m->dup_fd();
  ASSERT_GE(fd, 0);
  const int seals = fcntl(fd, F_GET_SEALS);
  EXPECT_TRUE(seals & F_SEAL_SHRINK);
  EXPECT_TRUE(seals & F_SEAL_GROW);
  EXPECT_NE(ftruncate(fd, 10), 0) << "nobody may shrink it under the mappings";
  std::memset(m->data(), 0x33, 10000);
  std::shared_ptr<SharedHostMemory> o = SharedHostMemory::open(fd, m->inode(), m->dev(), 0, 10000);
  close(fd);  // the import keeps its own
  EXPECT_EQ(static_cast<const uint8_t*>(o->data())[9999], 0x33);
  m.reset();
  EXPECT_EQ(static_cast<const uint8_t*>(o->data())[0], 0x33) << "alive while a mapping is";
  o.reset();
  EXPECT_EQ(SharedHostMemory::live_count(), live0);
  EXPECT_EQ(SharedHostMemory::live_bytes(), bytes0);
}

TEST(SharedHostMemory, RefusesPastTheHostLimit) {
  try {
    SharedHostMemory::create(int64_t(1) << 60);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), SM_ERR_OUT_OF_MEMORY);
    EXPECT_NE(std::string(e.what()).find("physical memory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sm
